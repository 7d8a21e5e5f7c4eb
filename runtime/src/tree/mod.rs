//! Pytrees: nested values whose leaves are arrays, as JAX's `jax.tree_util`.
//!
//! [`Tree`] flattens a value into its leaves (in a fixed order) and a [`TreeDef`] describing
//! everything else: tuples, sequence lengths, struct fields, static (non-array) fields.
//! [`Unflatten`] rebuilds a value from a `TreeDef` and leaves. Traced functions use both: their
//! arguments are flattened into the leaves that become the program's inputs, and the tree
//! structure is part of the compile-cache key (a `Vec` of a new length is a new
//! specialization). `#[derive(Tree)]` implements both traits for structs.
//!
//! ```
//! use rjax_runtime::{jnp, tree, Array};
//! let params = vec![(jnp::ones([2, 2]), jnp::zeros([2])), (jnp::ones([2, 1]), jnp::zeros([1]))];
//! let (leaves, def) = tree::flatten(&params);
//! assert_eq!(leaves.len(), 4);
//! assert_eq!(def.to_string(), "[(*, *), (*, *)]");
//! let doubled: Vec<(Array, Array)> = tree::map(&params, |a| a * 2.0);
//! assert_eq!(doubled[0].0.to_vec::<f32>().unwrap(), vec![2.0; 4]);
//! ```

mod impls;

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::array::Array;

/// A value made of arrays that can be flattened into its leaves.
pub trait Tree {
    /// Appends this value's structure to `def` and its leaves to `leaves`, in order.
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>);
}

/// A [`Tree`] that can be rebuilt from a structure and leaves.
pub trait Unflatten: Tree + Sized {
    /// Reads this value's structure from `def` and takes its leaves from `leaves`.
    ///
    /// Panics when the structure does not describe a value of this type.
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self;
}

/// One node of a tree's structure, in pre-order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// An array.
    Leaf,
    /// Nothing (`()`).
    Unit,
    /// A tuple of this many children.
    Tuple(usize),
    /// A `Vec`, slice or fixed array of this many children.
    Seq(usize),
    /// A string-keyed map (`BTreeMap<String, _>`, `HashMap<String, _>`): its keys in sorted
    /// order (as JAX orders a dict's keys), children in that order.
    Map(Vec<String>),
    /// `None`, or `Some` followed by its child.
    Option(bool),
    /// A struct: its name and its fields (positions for tuple structs), children in order.
    Struct { name: &'static str, fields: &'static [&'static str] },
    /// A static (non-array) field of a struct: part of the structure, not a leaf.
    Static(StaticValue),
}

/// A static field's value, kept in the structure so unflattening can restore it and
/// compile-cache keys can tell values apart.
#[derive(Clone)]
pub struct StaticValue {
    value: Arc<dyn Any + Send + Sync>,
    text: String,
    hash: u64,
}

impl StaticValue {
    /// Wraps a static field's value.
    pub fn new<T: Any + Send + Sync + Clone + Hash + fmt::Debug>(value: &T) -> StaticValue {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        value.hash(&mut h);
        StaticValue { value: Arc::new(value.clone()), text: format!("{value:?}"), hash: h.finish() }
    }

    /// The value, if it is a `T`.
    pub fn get<T: Any + Clone>(&self) -> Option<T> {
        self.value.downcast_ref::<T>().cloned()
    }
}

impl PartialEq for StaticValue {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.text == other.text
    }
}

impl Eq for StaticValue {}

impl Hash for StaticValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.hash.hash(state);
    }
}

impl fmt::Debug for StaticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The structure of a flattened tree: everything but its leaves (JAX's `PyTreeDef`).
///
/// Prints like JAX's, with `*` for each leaf: `[(*, *), (*, *)]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TreeDef {
    nodes: Vec<Node>,
}

impl TreeDef {
    /// An empty structure, to flatten into.
    pub fn new() -> TreeDef {
        TreeDef::default()
    }

    /// Empties the structure, to flatten another tree into it.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
    }

    /// Appends a node (used by `Tree` implementations).
    pub fn push(&mut self, node: Node) {
        self.nodes.push(node);
    }

    /// The nodes in pre-order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// How many leaves a tree of this structure has.
    pub fn num_leaves(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n, Node::Leaf)).count()
    }

    /// The structure of a tuple of trees of these structures.
    pub fn tuple(parts: &[TreeDef]) -> TreeDef {
        let mut nodes = vec![Node::Tuple(parts.len())];
        for p in parts {
            nodes.extend_from_slice(&p.nodes);
        }
        TreeDef { nodes }
    }

    /// The structures of a tuple's elements, or `None` when this is not a tuple.
    pub fn tuple_elements(&self) -> Option<Vec<TreeDef>> {
        let Some(Node::Tuple(n)) = self.nodes.first() else { return None };
        let mut pos = 1;
        let mut parts = Vec::with_capacity(*n);
        for _ in 0..*n {
            let end = self.subtree_end(pos);
            parts.push(TreeDef { nodes: self.nodes[pos..end].to_vec() });
            pos = end;
        }
        Some(parts)
    }

    /// The position just past the subtree that starts at `pos`.
    fn subtree_end(&self, pos: usize) -> usize {
        let children = match &self.nodes[pos] {
            Node::Tuple(n) | Node::Seq(n) => *n,
            Node::Map(keys) => keys.len(),
            Node::Option(some) => usize::from(*some),
            Node::Struct { fields, .. } => fields.len(),
            Node::Leaf | Node::Unit | Node::Static(_) => 0,
        };
        (0..children).fold(pos + 1, |p, _| self.subtree_end(p))
    }

    /// Each leaf's path from the root, in leaf order: struct field names and sequence or
    /// tuple positions joined by `.` (`"layers.0.w"`); `Some` adds nothing. A lone array's
    /// path is empty.
    ///
    /// ```
    /// use rjax_runtime::{jnp, tree};
    /// let params = vec![(jnp::ones([2]), jnp::zeros([2]))];
    /// assert_eq!(tree::structure(&params).leaf_paths(), ["0.0", "0.1"]);
    /// ```
    pub fn leaf_paths(&self) -> Vec<String> {
        let mut paths = Vec::with_capacity(self.num_leaves());
        self.collect_paths(0, &mut Vec::new(), &mut paths);
        paths
    }

    /// Walks the subtree at `pos` with `prefix` as its path; returns the position after it.
    fn collect_paths(&self, pos: usize, prefix: &mut Vec<String>, out: &mut Vec<String>) -> usize {
        let labels: Vec<String> = match &self.nodes[pos] {
            Node::Leaf => {
                out.push(prefix.join("."));
                return pos + 1;
            }
            Node::Unit | Node::Static(_) => return pos + 1,
            Node::Tuple(n) | Node::Seq(n) => (0..*n).map(|i| i.to_string()).collect(),
            Node::Map(keys) => keys.clone(),
            Node::Option(false) => Vec::new(),
            Node::Option(true) => return self.collect_paths(pos + 1, prefix, out),
            Node::Struct { fields, .. } => fields.iter().map(|f| f.to_string()).collect(),
        };
        let mut next = pos + 1;
        for label in labels {
            prefix.push(label);
            next = self.collect_paths(next, prefix, out);
            prefix.pop();
        }
        next
    }

    /// Appends another structure's nodes (a [`Tree`] implementation that holds a flattened
    /// tree uses it).
    pub fn extend(&mut self, other: &TreeDef) {
        self.nodes.extend_from_slice(&other.nodes);
    }

    /// A reader over the nodes, for [`Unflatten::unflatten_from`].
    pub fn reader(&self) -> DefReader<'_> {
        DefReader { nodes: &self.nodes, pos: 0 }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, pos: &mut usize) -> fmt::Result {
        let node = &self.nodes[*pos];
        *pos += 1;
        let children = |f: &mut fmt::Formatter<'_>, pos: &mut usize, n: usize| -> fmt::Result {
            for i in 0..n {
                if i > 0 {
                    f.write_str(", ")?;
                }
                self.write(f, pos)?;
            }
            Ok(())
        };
        match node {
            Node::Leaf => f.write_str("*"),
            Node::Unit => f.write_str("()"),
            Node::Tuple(n) => {
                f.write_str("(")?;
                children(f, pos, *n)?;
                f.write_str(if *n == 1 { ",)" } else { ")" })
            }
            Node::Seq(n) => {
                f.write_str("[")?;
                children(f, pos, *n)?;
                f.write_str("]")
            }
            Node::Map(keys) => {
                f.write_str("{")?;
                for (i, key) in keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key:?}: ")?;
                    self.write(f, pos)?;
                }
                f.write_str("}")
            }
            Node::Option(false) => f.write_str("None"),
            Node::Option(true) => {
                f.write_str("Some(")?;
                self.write(f, pos)?;
                f.write_str(")")
            }
            Node::Struct { name, fields: [] } => f.write_str(name),
            Node::Struct { name, fields } => {
                write!(f, "{name} {{ ")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}: ")?;
                    self.write(f, pos)?;
                }
                f.write_str(" }")
            }
            Node::Static(v) => write!(f, "{v:?}"),
        }
    }
}

impl fmt::Display for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pos = 0;
        let mut first = true;
        while pos < self.nodes.len() {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            self.write(f, &mut pos)?;
        }
        Ok(())
    }
}

/// Reads a [`TreeDef`]'s nodes in order while unflattening.
pub struct DefReader<'a> {
    nodes: &'a [Node],
    pos: usize,
}

impl DefReader<'_> {
    /// The next node; panics (naming `what` was expected) when the structure has ended.
    #[track_caller]
    pub fn next(&mut self, what: &str) -> &Node {
        let node = self.nodes.get(self.pos).unwrap_or_else(|| {
            panic!("unflatten: the tree structure ended where {what} was expected")
        });
        self.pos += 1;
        node
    }

    /// Panics with a message naming what was expected and what the structure holds.
    #[track_caller]
    pub fn mismatch(&self, expected: &str, found: &Node) -> ! {
        panic!("unflatten: expected {expected} in the tree structure, found {found:?}")
    }
}

/// Flattens a tree into its leaves and structure.
pub fn flatten<T: Tree + ?Sized>(tree: &T) -> (Vec<Array>, TreeDef) {
    let mut def = TreeDef::new();
    let mut leaves = Vec::new();
    tree.flatten_into(&mut def, &mut leaves);
    (leaves, def)
}

/// The leaves of a tree, in order.
pub fn leaves<T: Tree + ?Sized>(tree: &T) -> Vec<Array> {
    flatten(tree).0
}

/// The structure of a tree.
pub fn structure<T: Tree + ?Sized>(tree: &T) -> TreeDef {
    flatten(tree).1
}

/// Rebuilds a `T` from a structure and leaves.
///
/// Panics when `def` does not describe a `T`, or the number of leaves differs from its.
#[track_caller]
pub fn unflatten<T: Unflatten>(def: &TreeDef, leaves: impl IntoIterator<Item = Array>) -> T {
    let mut reader = def.reader();
    let mut leaves = leaves.into_iter();
    let value = T::unflatten_from(&mut reader, &mut leaves);
    if reader.pos != def.nodes.len() || leaves.next().is_some() {
        panic!("unflatten: the structure {def} has more to it than the type being rebuilt");
    }
    value
}

/// Applies `f` to every leaf, keeping the structure (`jax.tree.map`).
pub fn map<T: Unflatten>(tree: &T, f: impl FnMut(&Array) -> Array) -> T {
    let (leaves, def) = flatten(tree);
    unflatten(&def, leaves.iter().map(f).collect::<Vec<_>>())
}

/// Applies `f` to matching leaves of any number of trees of one structure (`jax.tree.map(f,
/// *trees)`): `f` gets the leaves at one position, one per tree, in the order of `trees`.
///
/// Panics when `trees` is empty or the structures differ, showing both.
///
/// ```
/// use rjax_runtime::{jnp, tree, Array};
/// let (a, b, c) = (vec![jnp::ones([2])], vec![jnp::ones([2])], vec![jnp::zeros([2])]);
/// let sum: Vec<Array> = tree::map_n(&[&a, &b, &c], |x| x[0] + x[1] + x[2]);
/// assert_eq!(sum[0].to_vec::<f32>().unwrap(), vec![2.0, 2.0]);
/// ```
#[track_caller]
pub fn map_n<T: Unflatten>(trees: &[&T], mut f: impl FnMut(&[&Array]) -> Array) -> T {
    let Some((first, rest)) = trees.split_first() else {
        panic!("tree::map_n: no trees to map over");
    };
    let (leaves, def) = flatten(*first);
    let mut columns: Vec<Vec<Array>> = vec![leaves];
    for (k, t) in rest.iter().enumerate() {
        let (l, d) = flatten(*t);
        if d != def {
            panic!("tree::map_n: tree {} has the structure {d}, tree 0 has {def}", k + 1);
        }
        columns.push(l);
    }
    let mapped: Vec<Array> = (0..def.num_leaves())
        .map(|i| {
            let at: Vec<&Array> = columns.iter().map(|c| &c[i]).collect();
            f(&at)
        })
        .collect();
    unflatten(&def, mapped)
}

/// Applies `f` to matching leaves of two trees of the same structure.
///
/// Panics when the structures differ, showing both.
#[track_caller]
pub fn map2<T: Unflatten>(a: &T, b: &T, mut f: impl FnMut(&Array, &Array) -> Array) -> T {
    let (la, da) = flatten(a);
    let (lb, db) = flatten(b);
    if da != db {
        panic!("tree::map2: the trees have different structures: {da} and {db}");
    }
    unflatten(&da, la.iter().zip(&lb).map(|(x, y)| f(x, y)).collect::<Vec<_>>())
}

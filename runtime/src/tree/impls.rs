//! [`Tree`] and [`Unflatten`] for arrays, Rust scalars and the standard containers.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use super::{DefReader, Node, Tree, TreeDef, Unflatten};
use crate::array::Array;

impl Tree for Array {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Leaf);
        leaves.push(self.clone());
    }
}

impl Unflatten for Array {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        match def.next("an array") {
            Node::Leaf => leaves.next().expect("unflatten: fewer leaves than the structure has"),
            other => {
                let other = other.clone();
                def.mismatch("an array", &other)
            }
        }
    }
}

/// Rust floats are leaves too: a traced `f32` parameter is a 0-d `float32` array, an `f64` a
/// weakly typed 0-d array of the default float type, as a Python float is in JAX.
impl Tree for f32 {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Leaf);
        leaves.push(Array::from(*self));
    }
}

impl Tree for f64 {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Leaf);
        leaves.push(Array::weak_scalar(*self));
    }
}

/// The integers that are data are leaves too, weakly typed as Python ints are in JAX: a traced
/// `u32` step counter is a 0-d weak `uint32` array.
macro_rules! integer_leaf {
    ($($t:ty),*) => {$(
        impl Tree for $t {
            fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
                def.push(Node::Leaf);
                leaves.push(Array::weak_scalar(*self));
            }
        }
    )*};
}
integer_leaf!(i32, u32, i64);

impl Tree for () {
    fn flatten_into(&self, def: &mut TreeDef, _leaves: &mut Vec<Array>) {
        def.push(Node::Unit);
    }
}

impl Unflatten for () {
    fn unflatten_from(def: &mut DefReader<'_>, _leaves: &mut dyn Iterator<Item = Array>) -> Self {
        match def.next("()") {
            Node::Unit => (),
            other => {
                let other = other.clone();
                def.mismatch("()", &other)
            }
        }
    }
}

impl<T: Tree + ?Sized> Tree for &T {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        (**self).flatten_into(def, leaves);
    }
}

impl<T: Tree + ?Sized> Tree for Box<T> {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        (**self).flatten_into(def, leaves);
    }
}

impl<T: Unflatten> Unflatten for Box<T> {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        Box::new(T::unflatten_from(def, leaves))
    }
}

impl<T: Tree> Tree for [T] {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Seq(self.len()));
        for x in self {
            x.flatten_into(def, leaves);
        }
    }
}

impl<T: Tree> Tree for Vec<T> {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        self.as_slice().flatten_into(def, leaves);
    }
}

/// Reads a sequence node and returns its length.
fn seq_len(def: &mut DefReader<'_>) -> usize {
    match def.next("a sequence") {
        Node::Seq(n) => *n,
        other => {
            let other = other.clone();
            def.mismatch("a sequence", &other)
        }
    }
}

impl<T: Unflatten> Unflatten for Vec<T> {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        let n = seq_len(def);
        (0..n).map(|_| T::unflatten_from(def, leaves)).collect()
    }
}

impl<T: Tree, const N: usize> Tree for [T; N] {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        self.as_slice().flatten_into(def, leaves);
    }
}

impl<T: Unflatten, const N: usize> Unflatten for [T; N] {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        let n = seq_len(def);
        if n != N {
            panic!(
                "unflatten: the structure has a sequence of {n} where an array of {N} was expected"
            );
        }
        std::array::from_fn(|_| T::unflatten_from(def, leaves))
    }
}

impl<T: Tree> Tree for Option<T> {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Option(self.is_some()));
        if let Some(x) = self {
            x.flatten_into(def, leaves);
        }
    }
}

impl<T: Unflatten> Unflatten for Option<T> {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        match def.next("an option") {
            Node::Option(true) => Some(T::unflatten_from(def, leaves)),
            Node::Option(false) => None,
            other => {
                let other = other.clone();
                def.mismatch("an option", &other)
            }
        }
    }
}

/// String-keyed maps are pytrees with their keys in the structure, in sorted order, as JAX
/// sorts a dict's keys: a `HashMap` flattens like the `BTreeMap` with its entries.
fn flatten_map<'a, T: Tree + 'a>(
    entries: impl Iterator<Item = (&'a String, &'a T)>,
    def: &mut TreeDef,
    leaves: &mut Vec<Array>,
) {
    let mut entries: Vec<_> = entries.collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    def.push(Node::Map(entries.iter().map(|(k, _)| (*k).clone()).collect()));
    for (_, v) in entries {
        v.flatten_into(def, leaves);
    }
}

/// Reads a map node: its keys with their values, in order.
fn unflatten_map<T: Unflatten>(
    def: &mut DefReader<'_>,
    leaves: &mut dyn Iterator<Item = Array>,
) -> Vec<(String, T)> {
    let keys = match def.next("a map") {
        Node::Map(keys) => keys.clone(),
        other => {
            let other = other.clone();
            def.mismatch("a map", &other)
        }
    };
    keys.into_iter().map(|k| (k, T::unflatten_from(def, leaves))).collect()
}

impl<T: Tree> Tree for BTreeMap<String, T> {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        flatten_map(self.iter(), def, leaves);
    }
}

impl<T: Unflatten> Unflatten for BTreeMap<String, T> {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        unflatten_map(def, leaves).into_iter().collect()
    }
}

impl<T: Tree, S> Tree for HashMap<String, T, S> {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        flatten_map(self.iter(), def, leaves);
    }
}

impl<T: Unflatten, S: BuildHasher + Default> Unflatten for HashMap<String, T, S> {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        unflatten_map(def, leaves).into_iter().collect()
    }
}

macro_rules! tuple_tree {
    ($n:literal; $($t:ident . $i:tt),+) => {
        impl<$($t: Tree),+> Tree for ($($t,)+) {
            fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
                def.push(Node::Tuple($n));
                $(self.$i.flatten_into(def, leaves);)+
            }
        }

        impl<$($t: Unflatten),+> Unflatten for ($($t,)+) {
            fn unflatten_from(
                def: &mut DefReader<'_>,
                leaves: &mut dyn Iterator<Item = Array>,
            ) -> Self {
                match def.next("a tuple") {
                    Node::Tuple($n) => {}
                    other => {
                        let other = other.clone();
                        def.mismatch(concat!("a tuple of ", $n), &other)
                    }
                }
                ($($t::unflatten_from(def, leaves),)+)
            }
        }
    };
}

tuple_tree!(1; A.0);
tuple_tree!(2; A.0, B.1);
tuple_tree!(3; A.0, B.1, C.2);
tuple_tree!(4; A.0, B.1, C.2, D.3);
tuple_tree!(5; A.0, B.1, C.2, D.3, E.4);
tuple_tree!(6; A.0, B.1, C.2, D.3, E.4, F.5);
tuple_tree!(7; A.0, B.1, C.2, D.3, E.4, F.5, G.6);
tuple_tree!(8; A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);

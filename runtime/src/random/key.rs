//! [`Key`]: a PRNG key or an array of keys, like JAX's typed keys.

use std::fmt;

use crate::array::Array;
use crate::dtype::DType;
use crate::shape::ShapeDisplay;
use crate::tree::{DefReader, Node, Tree, TreeDef, Unflatten};

/// A threefry2x32 PRNG key, or an n-dimensional array of keys, like the typed keys of
/// `jax.random.key`.
///
/// Its [`shape`](Key::shape) counts keys: the two `uint32` words of each key's data are not an
/// axis (`key_data` has shape `(*key.shape(), 2)`). Samplers take a single key (shape `()`);
/// [`split`](super::split) makes key arrays, whose keys [`get`](Key::get) or iteration pick out.
///
/// ```
/// use rjax_runtime::random;
/// let keys = random::split(&random::key(0), 3);
/// assert_eq!(keys.shape(), &[3]);
/// let firsts: Vec<f32> = keys.iter().map(|k| random::normal(&k, [1]).item().unwrap()).collect();
/// assert_eq!(firsts.len(), 3);
/// assert_eq!(keys.get(1), random::fold_in(&random::key(0), 1));
/// ```
#[derive(Clone)]
pub struct Key {
    /// `uint32` key data whose last axis has length 2.
    data: Array,
}

impl Key {
    /// Wraps key data, checking that it is `uint32` with a trailing axis of 2.
    #[track_caller]
    pub(crate) fn from_data(op: &str, data: Array) -> Key {
        if data.dtype() != DType::U32 || data.shape().last() != Some(&2) {
            panic!(
                "{op}: key data must be uint32 with a trailing axis of length 2, got {}{}",
                data.dtype(),
                ShapeDisplay(data.shape())
            );
        }
        Key { data }
    }

    /// The key data: `uint32` of shape `(*self.shape(), 2)`.
    pub fn data(&self) -> &Array {
        &self.data
    }

    /// The shape of the key array: `()` for one key, `(n,)` after `split(&key, n)`.
    pub fn shape(&self) -> &[usize] {
        let s = self.data.shape();
        &s[..s.len() - 1]
    }

    /// Number of axes of the key array.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of keys.
    pub fn size(&self) -> usize {
        self.data.size() / 2
    }

    /// Length of the leading axis (panics for a single key, which has none).
    #[track_caller]
    pub fn len(&self) -> usize {
        match self.shape().first() {
            Some(&n) => n,
            None => panic!("Key::len: a single key has no axis to measure"),
        }
    }

    /// Whether the leading axis is empty (panics for a single key).
    #[track_caller]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key `i` along the leading axis, like `keys[i]` in JAX.
    ///
    /// Panics for a single key or an index out of range.
    #[track_caller]
    pub fn get(&self, i: usize) -> Key {
        let n = self.len();
        if i >= n {
            panic!(
                "Key::get: index {i} is out of range for a key array of shape {}",
                self.shape_text()
            );
        }
        // A slice, so indexing works on traced keys too (keys split inside a traced function).
        Key { data: self.data.slice(crate::s![i]) }
    }

    /// The keys along the leading axis, in order.
    #[track_caller]
    pub fn iter(&self) -> KeyIter<'_> {
        KeyIter { keys: self, next: 0, end: self.len() }
    }

    /// The data of a single key, for samplers; panics naming `op` for a key array.
    #[track_caller]
    pub(crate) fn single(&self, op: &str) -> &Array {
        if self.ndim() != 0 {
            panic!(
                "{op}: expected a single key, but got a key array of shape {}; \
                 pick one with keys.get(i) or iterate over them",
                self.shape_text()
            );
        }
        &self.data
    }

    fn shape_text(&self) -> String {
        ShapeDisplay(self.shape()).to_string()
    }
}

impl PartialEq for Key {
    /// Keys are equal when their shapes and data are.
    fn eq(&self, other: &Key) -> bool {
        self.data.shape() == other.data.shape()
            && self.data.as_slice::<u32>() == other.data.as_slice::<u32>()
    }
}

impl Eq for Key {}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = ShapeDisplay(self.shape());
        match self.data.as_slice::<u32>() {
            Some(words) => write!(f, "Key(shape={shape}, data={words:?})"),
            // Inside a trace the words are not known yet.
            None => write!(f, "Key(shape={shape}, data=traced {})", self.data.aval()),
        }
    }
}

/// A key is a pytree with its data as the one leaf, so `#[jit]`, `#[vmap]` and `#[pmap]`
/// functions can take keys (and structs holding keys): under `vmap`/`pmap` a key array's
/// leading axis maps like any array's, giving each lane or device its own key.
impl Tree for Key {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.push(Node::Struct { name: "Key", fields: &["data"] });
        self.data.flatten_into(def, leaves);
    }
}

impl Unflatten for Key {
    #[track_caller]
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        match def.next("a Key") {
            Node::Struct { name: "Key", .. } => {}
            other => {
                let other = other.clone();
                def.mismatch("a Key", &other)
            }
        }
        let data = Array::unflatten_from(def, leaves);
        Key::from_data("Key", data)
    }
}

/// Iterator over the keys of a key array's leading axis ([`Key::iter`]).
pub struct KeyIter<'a> {
    keys: &'a Key,
    next: usize,
    end: usize,
}

impl Iterator for KeyIter<'_> {
    type Item = Key;

    fn next(&mut self) -> Option<Key> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.keys.get(self.next - 1)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for KeyIter<'_> {}

impl<'a> IntoIterator for &'a Key {
    type Item = Key;
    type IntoIter = KeyIter<'a>;

    fn into_iter(self) -> KeyIter<'a> {
        self.iter()
    }
}

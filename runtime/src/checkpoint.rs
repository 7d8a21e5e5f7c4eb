//! Checkpoints: any pytree of arrays saved to and loaded from a safetensors file.
//!
//! Each leaf is one tensor named by its path in the tree ([`TreeDef::leaf_paths`]:
//! `"0.w"`, `"layers.1.bias"`), and the tree's structure is kept in the file's metadata.
//! [`load`] takes a value of the expected type and shape (the freshly initialized
//! parameters, say) and checks the file against it leaf by leaf, so a checkpoint of another
//! model, a truncated or corrupt file, or a leaf of another shape or dtype is an
//! [`Error::Checkpoint`] that names the file and the leaf, never a panic or a silently wrong
//! value. [`save`] writes a temporary file beside the target and renames it over the target,
//! so a crash mid-save leaves the previous checkpoint intact.
//!
//! ```
//! use rjax_runtime::{checkpoint, jnp, Array};
//! let params = vec![(jnp::ones([2, 3]), jnp::zeros([3]))];
//! let path = std::env::temp_dir().join(format!("rjax-doc-{}.safetensors", std::process::id()));
//! checkpoint::save(&path, &params).unwrap();
//! let restored: Vec<(Array, Array)> = checkpoint::load(&path, &params).unwrap();
//! assert_eq!(restored[0].0.to_vec::<f32>().unwrap(), vec![1.0; 6]);
//! # std::fs::remove_file(&path).unwrap();
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::Write;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::error::Error;
use crate::tree::{self, TreeDef, Unflatten};

/// The metadata key holding the tree's structure.
const STRUCTURE_KEY: &str = "rjax.structure";

/// Saves every leaf of `tree` to `path` in the safetensors format, atomically.
///
/// Traced arrays cannot be saved (call `save` outside `#[jit]`); two leaves with the same
/// path (a struct's static field does not count) are impossible by construction.
pub fn save<T: tree::Tree + ?Sized>(path: impl AsRef<Path>, tree: &T) -> Result<(), Error> {
    let path = path.as_ref();
    let (leaves, def) = tree::flatten(tree);
    let names = tensor_names(&def);
    let bytes: Vec<Vec<u8>> = leaves.iter().map(leaf_bytes).collect::<Result<_, _>>()?;
    let views = names
        .iter()
        .zip(&leaves)
        .zip(&bytes)
        .map(|((name, leaf), data)| {
            let view = TensorView::new(file_dtype(leaf.dtype()), leaf.shape().to_vec(), data)
                .map_err(|e| failure(path, Some(name), e.to_string()))?;
            Ok((name.clone(), view))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let metadata = HashMap::from([(STRUCTURE_KEY.to_string(), def.to_string())]);
    let serialized = safetensors::serialize(views, Some(metadata))
        .map_err(|e| failure(path, None, e.to_string()))?;
    write_atomically(path, &serialized)
}

/// Loads the tree saved at `path`, checking it against `like`: the same leaves (by path),
/// and each leaf of `like`'s shape and dtype.
pub fn load<T: Unflatten>(path: impl AsRef<Path>, like: &T) -> Result<T, Error> {
    let path = path.as_ref();
    let bytes = fs::read(path).map_err(|e| failure(path, None, format!("cannot read it: {e}")))?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| {
        failure(path, None, format!("not a readable safetensors file (truncated or corrupt?): {e}"))
    })?;
    let (expected, def) = tree::flatten(like);
    let names = tensor_names(&def);
    check_same_leaves(path, &file, &names)?;
    let leaves = names
        .iter()
        .zip(&expected)
        .map(|(name, want)| read_leaf(path, &file, name, want))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(tree::unflatten(&def, leaves))
}

/// Tensor names for the leaves of `def` (a lone array is called `value`).
fn tensor_names(def: &TreeDef) -> Vec<String> {
    def.leaf_paths()
        .into_iter()
        .map(|p| if p.is_empty() { "value".to_string() } else { p })
        .collect()
}

/// Errors unless the file holds exactly the tensors `names`.
fn check_same_leaves(path: &Path, file: &SafeTensors<'_>, names: &[String]) -> Result<(), Error> {
    let stored: BTreeSet<String> = file.names().into_iter().map(str::to_string).collect();
    let wanted: BTreeSet<String> = names.iter().cloned().collect();
    if let Some(missing) = wanted.difference(&stored).next() {
        let held: Vec<&String> = stored.iter().take(8).collect();
        return Err(failure(
            path,
            Some(missing),
            format!("the file has no such tensor (it holds {held:?}{})", more(stored.len(), 8)),
        ));
    }
    if let Some(extra) = stored.difference(&wanted).next() {
        return Err(failure(
            path,
            Some(extra),
            "the file holds this tensor but the structure being loaded has no such leaf; \
             the checkpoint is of a different structure"
                .to_string(),
        ));
    }
    Ok(())
}

fn more(total: usize, shown: usize) -> String {
    if total > shown {
        format!(" and {} more", total - shown)
    } else {
        String::new()
    }
}

/// One leaf, checked against the leaf it replaces.
fn read_leaf(
    path: &Path,
    file: &SafeTensors<'_>,
    name: &str,
    want: &Array,
) -> Result<Array, Error> {
    let view = file.tensor(name).map_err(|e| failure(path, Some(name), e.to_string()))?;
    let dtype = array_dtype(view.dtype()).ok_or_else(|| {
        failure(
            path,
            Some(name),
            format!("the file stores {:?}, which rjax has no dtype for", view.dtype()),
        )
    })?;
    if dtype != want.dtype() {
        let msg =
            format!("the file stores {dtype}, but the structure being loaded has {}", want.dtype());
        return Err(failure(path, Some(name), msg));
    }
    if view.shape() != want.shape() {
        let msg = format!(
            "the file stores shape {:?}, but the structure being loaded has {:?}",
            view.shape(),
            want.shape()
        );
        return Err(failure(path, Some(name), msg));
    }
    Ok(crate::with_dtype!(dtype, |T| Array::from_shape_vec(view.shape(), decode::<T>(view.data()))))
}

/// The little-endian bytes of a concrete leaf.
fn leaf_bytes(leaf: &Array) -> Result<Vec<u8>, Error> {
    crate::with_dtype!(leaf.dtype(), |T| {
        let values = leaf.to_vec::<T>()?;
        let mut out = Vec::with_capacity(values.len() * std::mem::size_of::<T>());
        for v in values {
            out.extend_from_slice(&LeBytes::to_le(v));
        }
        Ok(out)
    })
}

/// Elements from little-endian bytes (whose length safetensors has checked against the
/// shape and dtype).
fn decode<T: LeBytes>(data: &[u8]) -> Vec<T> {
    data.chunks_exact(std::mem::size_of::<T>()).map(T::from_le).collect()
}

/// Fixed-size little-endian encoding of one element.
trait LeBytes: Element {
    fn to_le(self) -> Vec<u8>;
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn to_le(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}

le_bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, half::f16, half::bf16);

impl LeBytes for bool {
    fn to_le(self) -> Vec<u8> {
        vec![u8::from(self)]
    }
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

fn file_dtype(dtype: DType) -> Dtype {
    match dtype {
        DType::Bool => Dtype::BOOL,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::U8 => Dtype::U8,
        DType::U16 => Dtype::U16,
        DType::U32 => Dtype::U32,
        DType::U64 => Dtype::U64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
    }
}

fn array_dtype(dtype: Dtype) -> Option<DType> {
    DType::ALL.into_iter().find(|&d| file_dtype(d) == dtype)
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk, then renames it
/// over `path` (a rename within one directory is atomic).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let file_name = path
        .file_name()
        .ok_or_else(|| failure(path, None, "the path names no file".to_string()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let write = || -> std::io::Result<()> {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&temp);
        failure(path, None, format!("cannot write it: {e}"))
    })
}

fn failure(path: &Path, leaf: Option<&str>, problem: String) -> Error {
    Error::Checkpoint { path: path.display().to_string(), leaf: leaf.map(str::to_string), problem }
}

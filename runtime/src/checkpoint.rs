//! Checkpoints: any pytree of arrays saved to and loaded from a safetensors file.
//!
//! Each leaf is one tensor named by its path in the tree ([`TreeDef::leaf_paths`]:
//! `"0.w"`, `"layers.1.bias"`). The file's `__metadata__` (string to string, as the format
//! allows, so every safetensors reader still opens it) also carries:
//!
//! - `rjax.crc32.<tensor name>`: the CRC-32 of that tensor's bytes, as 8 hex digits;
//! - `rjax.tree`: the tree's structure, one line per node in pre-order (`layers.0: struct
//!   Layer { w, b, name }`), which [`load`] compares with the structure being loaded;
//! - `rjax.structure`: the same structure printed as [`TreeDef`] prints it, for people
//!   reading the header.
//!
//! [`load`] takes a value of the expected type and shape (the freshly initialized
//! parameters, say) and checks the file against it leaf by leaf, so a checkpoint of another
//! model, a truncated or corrupt file, a file damaged after it was written, or a leaf of
//! another shape or dtype is an [`Error::Checkpoint`] that names the file and the leaf, never
//! a panic or a silently wrong value. [`save`] writes a temporary file beside the target and
//! renames it over the target, so a crash mid-save leaves the previous checkpoint intact.
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
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::error::Error;
use crate::exec::cpu::alloc;
use crate::tree::{self, Node, TreeDef, Unflatten};

/// The metadata key holding the tree's structure as [`TreeDef`] prints it (not checked on
/// load: it shows static fields' values, which `load` takes from `like`).
const STRUCTURE_KEY: &str = "rjax.structure";

/// The metadata key holding the tree's structure one node a line ([`structure_lines`]),
/// which `load` checks.
const TREE_KEY: &str = "rjax.tree";

/// The prefix of each tensor's checksum key; the tensor's name follows it.
const CHECKSUM_PREFIX: &str = "rjax.crc32.";

/// Saves every leaf of `tree` to `path` in the safetensors format, atomically.
///
/// Besides the tensors, the file's metadata records each tensor's CRC-32 and the tree's
/// structure, which [`load`] verifies; they are plain string entries of `__metadata__`, so
/// the file stays a standard safetensors file.
///
/// Traced arrays cannot be saved (call `save` outside `#[jit]`); two leaves with the same
/// path (a struct's static field does not count) are impossible by construction.
pub fn save<T: tree::Tree + ?Sized>(path: impl AsRef<Path>, tree: &T) -> Result<(), Error> {
    // Memory for the tensors' bytes that runs out is an `Error::OutOfMemory`, not an abort.
    let path = path.as_ref();
    alloc::try_run(|| alloc::named(|| "checkpoint::save".to_string(), || save_file(path, tree)))?
}

fn save_file<T: tree::Tree + ?Sized>(path: &Path, tree: &T) -> Result<(), Error> {
    let (leaves, def) = tree::flatten(tree);
    let names = tensor_names(&def);
    if let Some((name, leaf)) = names.iter().zip(&leaves).find(|(_, l)| l.dtype().is_complex()) {
        let msg = format!("safetensors has no {} dtype; save its real and imaginary parts as two float arrays instead", leaf.dtype());
        return Err(failure(path, Some(name), msg));
    }
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
    let mut metadata = HashMap::from([
        (STRUCTURE_KEY.to_string(), def.to_string()),
        (TREE_KEY.to_string(), structure_text(&def)),
    ]);
    for (name, data) in names.iter().zip(&bytes) {
        metadata.insert(format!("{CHECKSUM_PREFIX}{name}"), format!("{:08x}", checksum(data)));
    }
    // Streamed to the file: the whole file is never one buffer in memory.
    write_atomically(path, |temp| {
        safetensors::serialize_to_file(views, Some(metadata), temp).map_err(std::io::Error::other)
    })
}

/// Loads the tree saved at `path`, checking it against `like`.
///
/// Verified, each failure an [`Error::Checkpoint`] naming the file and, where one is to
/// blame, the leaf (or the subtree, by its path) and what is wrong:
///
/// - the file is a readable safetensors file (not truncated, not garbage);
/// - it holds the same leaves as `like` (by path), each of `like`'s shape and dtype;
/// - when the file records its tree structure (`save` does), that structure is `like`'s:
///   the same tuples, sequences, options and structs (by name and fields) in the same
///   places. Static fields' values are not compared: the loaded value takes them from
///   `like`;
/// - when the file records checksums (`save` does, for every tensor), each tensor's bytes
///   still have the CRC-32 recorded when it was written, so a file damaged after it was
///   written is reported rather than loaded.
///
/// Files without the structure and checksums (written by earlier rjax versions or other
/// tools) still load, checked by leaf paths, shapes and dtypes only. A file that records
/// one but not the other, or checksums for some tensors only, has a damaged header and is
/// an error.
pub fn load<T: Unflatten>(path: impl AsRef<Path>, like: &T) -> Result<T, Error> {
    // A file too large for memory is an `Error::OutOfMemory`, not an abort.
    let path = path.as_ref();
    alloc::try_run(|| alloc::named(|| "checkpoint::load".to_string(), || load_file(path, like)))?
}

fn load_file<T: Unflatten>(path: &Path, like: &T) -> Result<T, Error> {
    let bytes = fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::OutOfMemory {
            let size = fs::metadata(path).map_or(usize::MAX, |m| m.len() as usize);
            alloc::out_of_memory(size);
        }
        failure(path, None, format!("cannot read it: {e}"))
    })?;
    let unreadable = |e: safetensors::SafeTensorError| {
        failure(path, None, format!("not a readable safetensors file (truncated or corrupt?): {e}"))
    };
    let file = SafeTensors::deserialize(&bytes).map_err(unreadable)?;
    // `SafeTensors` keeps the `__metadata__` map to itself; reading the header again is
    // how the crate hands it out.
    let (_, header) = SafeTensors::read_metadata(&bytes).map_err(unreadable)?;
    let metadata = header.metadata().clone().unwrap_or_default();
    let (expected, def) = tree::flatten(like);
    let names = tensor_names(&def);
    check_same_leaves(path, &file, &names)?;
    let checksums = check_header(path, &metadata, &def, &names)?;
    let leaves = names
        .iter()
        .zip(&expected)
        .zip(checksums)
        .map(|((name, want), sum)| read_leaf(path, &file, name, want, sum))
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

/// The CRC-32 (ISO-HDLC: zlib's, gzip's and PNG's) of a tensor's bytes.
///
/// `crc32fast` because it is small, widely used and maintained, and computes this standard
/// CRC with carry-less multiplication where the CPU has it (so checksumming a large
/// checkpoint costs little beside writing it); the standard polynomial lets any tool
/// (Python's `zlib.crc32`, say) check a tensor independently of rjax.
fn checksum(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Checks what the file's metadata records against `def` (the structure being loaded) and
/// returns each tensor's recorded checksum, in the order of `names`.
fn check_header(
    path: &Path,
    metadata: &HashMap<String, String>,
    def: &TreeDef,
    names: &[String],
) -> Result<Vec<Option<u32>>, Error> {
    let stored_tree = metadata.get(TREE_KEY);
    let any_checksum = metadata.keys().any(|k| k.starts_with(CHECKSUM_PREFIX));
    if stored_tree.is_none() && !any_checksum {
        // Written before rjax recorded these, or by another tool: nothing more to verify.
        return Ok(vec![None; names.len()]);
    }
    let Some(stored_tree) = stored_tree else {
        return Err(failure(
            path,
            None,
            format!(
                "the file records checksums but not its tree structure (`{TREE_KEY}`), though \
                 rjax writes both: its header was damaged"
            ),
        ));
    };
    check_structure(path, stored_tree, def)?;
    names
        .iter()
        .map(|name| {
            let key = format!("{CHECKSUM_PREFIX}{name}");
            let Some(text) = metadata.get(&key) else {
                return Err(failure(
                    path,
                    Some(name),
                    format!(
                        "the file records no checksum for this tensor (`{key}`), though rjax \
                         writes one for every tensor: its header was damaged"
                    ),
                ));
            };
            // Exactly 8 hex digits: `from_str_radix` alone would also take a sign.
            let parsed = Some(text)
                .filter(|t| t.len() == 8 && t.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|t| u32::from_str_radix(t, 16).ok());
            parsed.map(Some).ok_or_else(|| {
                failure(
                    path,
                    Some(name),
                    format!(
                        "the recorded checksum {text:?} is not a CRC-32 (8 hex digits): the \
                         file's header was damaged"
                    ),
                )
            })
        })
        .collect()
}

/// Errors unless `stored` (the file's `rjax.tree`) describes the structure `def`, naming
/// the first node where they part.
fn check_structure(path: &Path, stored: &str, def: &TreeDef) -> Result<(), Error> {
    let wanted = structure_lines(def);
    let mut stored_lines = stored.lines();
    let different = |at: &str, found: String, loading: String| {
        let place = if at.is_empty() { "at the root".to_string() } else { format!("at `{at}`") };
        failure(
            path,
            (!at.is_empty()).then_some(at),
            format!(
                "the checkpoint is of a different structure: {place} the file has {found}, \
                 but the structure being loaded has {loading}"
            ),
        )
    };
    for (at, kind) in &wanted {
        let line = format!("{at}: {kind}");
        match stored_lines.next() {
            Some(found) if found == line => {}
            Some(found) => {
                // The same path but another node is the usual case; a path that differs
                // too (a damaged file) is shown whole.
                let found = match found.split_once(": ") {
                    Some((p, k)) if p == at => k.to_string(),
                    _ => format!("`{found}`"),
                };
                return Err(different(at, found, kind.clone()));
            }
            None => return Err(different(at, "nothing more".to_string(), kind.clone())),
        }
    }
    if let Some(extra) = stored_lines.next() {
        let (at, found) = extra.split_once(": ").unwrap_or(("", extra));
        return Err(different(at, found.to_string(), "nothing more".to_string()));
    }
    Ok(())
}

/// [`structure_lines`] as stored in the file: `path: node`, one a line.
fn structure_text(def: &TreeDef) -> String {
    let lines: Vec<String> =
        structure_lines(def).into_iter().map(|(at, kind)| format!("{at}: {kind}")).collect();
    lines.join("\n")
}

/// Each node of `def` in pre-order, with its path (as [`TreeDef::leaf_paths`] names paths)
/// and what it is, without static fields' values. One line per node, rather than
/// [`TreeDef`]'s one-line print, lets a mismatch be reported by the path where it is.
fn structure_lines(def: &TreeDef) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(def.nodes().len());
    let mut pos = 0;
    while pos < def.nodes().len() {
        pos = describe_node(def.nodes(), pos, &mut Vec::new(), &mut out);
    }
    out
}

/// Describes the subtree at `pos` (whose path is `prefix`) into `out`; returns the position
/// after it.
fn describe_node(
    nodes: &[Node],
    pos: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(String, String)>,
) -> usize {
    let at = prefix.join(".");
    let (kind, labels): (String, Vec<String>) = match &nodes[pos] {
        Node::Leaf => ("array".to_string(), Vec::new()),
        Node::Unit => ("()".to_string(), Vec::new()),
        Node::Tuple(n) => (format!("tuple of {n}"), (0..*n).map(|i| i.to_string()).collect()),
        Node::Seq(n) => (format!("sequence of {n}"), (0..*n).map(|i| i.to_string()).collect()),
        Node::Map(keys) => (format!("map of {}", keys.len()), keys.clone()),
        Node::Option(false) => ("None".to_string(), Vec::new()),
        Node::Option(true) => {
            // `Some` adds nothing to its child's path.
            out.push((at, "Some".to_string()));
            return describe_node(nodes, pos + 1, prefix, out);
        }
        Node::Struct { name, fields: [] } => (format!("struct {name}"), Vec::new()),
        Node::Struct { name, fields } => (
            format!("struct {name} {{ {} }}", fields.join(", ")),
            fields.iter().map(|f| f.to_string()).collect(),
        ),
        Node::Static(_) => ("static field".to_string(), Vec::new()),
    };
    out.push((at, kind));
    let mut next = pos + 1;
    for label in labels {
        prefix.push(label);
        next = describe_node(nodes, next, prefix, out);
        prefix.pop();
    }
    next
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

/// One leaf, checked against its recorded checksum (when there is one) and the leaf it
/// replaces.
fn read_leaf(
    path: &Path,
    file: &SafeTensors<'_>,
    name: &str,
    want: &Array,
    stored_checksum: Option<u32>,
) -> Result<Array, Error> {
    let view = file.tensor(name).map_err(|e| failure(path, Some(name), e.to_string()))?;
    if let Some(stored) = stored_checksum {
        let computed = checksum(view.data());
        if computed != stored {
            let msg = format!(
                "checksum mismatch: stored crc32 0x{stored:08x}, computed 0x{computed:08x}: \
                 the file was damaged after it was written"
            );
            return Err(failure(path, Some(name), msg));
        }
    }
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
    Ok(crate::with_real_dtype!(dtype, |T| {
        Array::from_shape_vec(view.shape(), decode::<T>(view.data()))
    }))
}

/// The little-endian bytes of a concrete leaf.
fn leaf_bytes(leaf: &Array) -> Result<Vec<u8>, Error> {
    crate::with_real_dtype!(leaf.dtype(), |T| {
        let values = leaf.to_vec::<T>()?;
        // No overflow: an array's byte size fits in `isize`.
        let mut out = alloc::with_capacity(values.len() * std::mem::size_of::<T>());
        for v in values {
            v.write_le(&mut out);
        }
        Ok(out)
    })
}

/// Elements from little-endian bytes (whose length safetensors has checked against the
/// shape and dtype).
fn decode<T: LeBytes>(data: &[u8]) -> Vec<T> {
    alloc::collect(data.chunks_exact(std::mem::size_of::<T>()).map(T::from_le))
}

/// Fixed-size little-endian encoding of one element.
trait LeBytes: Element {
    fn write_le(self, out: &mut Vec<u8>);
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}

le_bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, half::f16, half::bf16);

impl LeBytes for bool {
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
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
        DType::C64 | DType::C128 => unreachable!("`save` refuses complex leaves first"),
    }
}

fn array_dtype(dtype: Dtype) -> Option<DType> {
    DType::ALL.into_iter().filter(|d| !d.is_complex()).find(|&d| file_dtype(d) == dtype)
}

/// Has `write_temp` write a temporary file beside `path`, flushes it to disk, then renames
/// it over `path` (a rename within one directory is atomic).
fn write_atomically(
    path: &Path,
    write_temp: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), Error> {
    let file_name = path
        .file_name()
        .ok_or_else(|| failure(path, None, "the path names no file".to_string()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let write = || -> std::io::Result<()> {
        write_temp(&temp)?;
        fs::File::open(&temp)?.sync_all()?;
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

//! Checkpoints that say when they were damaged: the checksums and tree structure `save`
//! records in the safetensors metadata, what `load` verifies with them, files without them
//! (older rjax, other tools), and damaged files (flipped bytes anywhere, truncation,
//! garbage) failing with an error rather than a panic or wrong values.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use rjax::prelude::*;
use rjax::tree::Unflatten;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};

#[derive(Clone, Debug, Tree)]
struct Layer {
    w: Array,
    b: Option<Array>,
    #[tree(static)]
    name: &'static str,
}

#[derive(Clone, Debug, Tree)]
struct Model {
    layers: Vec<Layer>,
    scale: (Array, Array),
    steps: Array,
}

/// Two structs with the same fields: their checkpoints hold the same tensor names.
#[derive(Clone, Debug, Tree)]
struct Dense {
    w: Array,
    b: Array,
}

#[derive(Clone, Debug, Tree)]
struct Conv {
    w: Array,
    b: Array,
}

fn model() -> Model {
    Model {
        layers: vec![
            Layer {
                w: Array::from_shape_vec([2, 3], vec![0.5f32, -1.0, 1.5, 0.25, -0.75, 2.0]),
                b: Some(jnp::array([0.1f32, -0.2, 0.3])),
                name: "first",
            },
            Layer {
                w: Array::from_shape_vec([3, 1], vec![1.0f64, 2.0, 3.0]),
                b: None,
                name: "last",
            },
        ],
        scale: (jnp::array([true, false]), jnp::array([1.5f32]).astype(DType::BF16)),
        steps: Array::from(41i32),
    }
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rjax-checkpoint-damage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Whether two trees have the same structure and exactly the same leaves.
fn identical<T: rjax::tree::Tree>(a: &T, b: &T) -> bool {
    let (la, da) = tree::flatten(a);
    let (lb, db) = tree::flatten(b);
    da == db
        && la.len() == lb.len()
        && la.iter().zip(&lb).all(|(x, y)| {
            x.shape() == y.shape()
                && x.dtype() == y.dtype()
                && x.astype(DType::F64).to_vec::<f64>().unwrap()
                    == y.astype(DType::F64).to_vec::<f64>().unwrap()
        })
}

/// The error of a failed load, which must name the file and (when given) the leaf.
#[track_caller]
fn load_error<T: Unflatten>(path: &Path, like: &T, leaf: Option<&str>) -> String {
    let err = rjax::checkpoint::load(path, like).err().expect("the load must fail");
    let Error::Checkpoint { path: p, leaf: l, .. } = &err else {
        panic!("not a checkpoint error: {err:?}")
    };
    assert_eq!(p, &path.display().to_string());
    assert_eq!(l.as_deref(), leaf, "{err}");
    err.to_string()
}

/// The standard CRC-32 (zlib's), bit by bit: an independent check of the stored checksums.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The metadata and each tensor's byte range in the whole file.
fn header(bytes: &[u8]) -> (HashMap<String, String>, HashMap<String, (usize, usize)>) {
    let (n, metadata) = SafeTensors::read_metadata(bytes).unwrap();
    let start = 8 + n;
    let ranges = metadata
        .tensors()
        .into_iter()
        .map(|(name, info)| (name, (start + info.data_offsets.0, start + info.data_offsets.1)))
        .collect();
    (metadata.metadata().clone().unwrap_or_default(), ranges)
}

/// Rewrites the checkpoint at `path` as another program would: the same tensors, with
/// `edit` applied to its metadata.
fn rewrite_metadata(path: &Path, edit: impl FnOnce(&mut HashMap<String, String>)) {
    let bytes = std::fs::read(path).unwrap();
    let (mut metadata, _) = header(&bytes);
    edit(&mut metadata);
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let tensors = file.tensors();
    let out = safetensors::serialize(tensors, Some(metadata)).unwrap();
    std::fs::write(path, out).unwrap();
}

#[test]
fn a_round_trip_records_standard_checksums_and_the_structure() {
    let _x64 = rjax::config::x64_scope(true);
    let path = temp_path("round_trip.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    let back = rjax::checkpoint::load(&path, &m).unwrap();
    assert!(identical(&m, &back));
    assert_eq!(back.layers[1].name, "last");

    // Any safetensors reader opens the file; the metadata holds one checksum per tensor, the
    // standard CRC-32 of its bytes, and the structure by node.
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let (metadata, _) = header(&bytes);
    let names = tree::structure(&m).leaf_paths();
    assert_eq!(file.len(), names.len());
    for name in &names {
        let stored = &metadata[&format!("rjax.crc32.{name}")];
        assert_eq!(stored, &format!("{:08x}", crc32(file.tensor(name).unwrap().data())), "{name}");
    }
    assert_eq!(metadata["rjax.structure"], tree::structure(&m).to_string());
    let tree_lines: Vec<&str> = metadata["rjax.tree"].lines().collect();
    assert_eq!(
        tree_lines,
        [
            ": struct Model { layers, scale, steps }",
            "layers: sequence of 2",
            "layers.0: struct Layer { w, b, name }",
            "layers.0.w: array",
            "layers.0.b: Some",
            "layers.0.b: array",
            "layers.0.name: static field",
            "layers.1: struct Layer { w, b, name }",
            "layers.1.w: array",
            "layers.1.b: None",
            "layers.1.name: static field",
            "scale: tuple of 2",
            "scale.0: array",
            "scale.1: array",
            "steps: array",
        ]
    );
    assert_eq!(metadata.len(), names.len() + 2, "{metadata:?}");

    // A lone array and an empty tree round trip too.
    let lone = jnp::array([1.0f32, 2.0]);
    rjax::checkpoint::save(&path, &lone).unwrap();
    assert!(identical(&lone, &rjax::checkpoint::load(&path, &lone).unwrap()));
    rjax::checkpoint::save(&path, &()).unwrap();
    rjax::checkpoint::load(&path, &()).unwrap();
}

#[test]
fn a_flipped_byte_in_a_tensor_names_that_tensor() {
    let path = temp_path("flipped.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    let original = std::fs::read(&path).unwrap();
    let (_, ranges) = header(&original);
    for (name, &(start, end)) in &ranges {
        for at in [start, (start + end) / 2, end - 1] {
            let mut bytes = original.clone();
            bytes[at] ^= 0x10;
            std::fs::write(&path, &bytes).unwrap();
            let err = load_error(&path, &m, Some(name));
            assert!(err.contains("checksum mismatch: stored crc32 0x"), "{err}");
            assert!(err.contains(", computed 0x"), "{err}");
            assert!(err.contains("the file was damaged after it was written"), "{err}");
        }
    }
}

#[test]
fn a_checkpoint_of_another_structure_with_the_same_tensor_names_is_an_error() {
    let path = temp_path("structure.safetensors");
    let (a, b) = (jnp::array([1.0f32, 2.0]), jnp::array([3.0f32]));

    // A tuple and a Vec both name their leaves "0" and "1".
    rjax::checkpoint::save(&path, &(a.clone(), b.clone())).unwrap();
    let err = load_error(&path, &vec![a.clone(), b.clone()], None);
    assert!(err.contains("different structure"), "{err}");
    assert!(err.contains("at the root the file has tuple of 2"), "{err}");
    assert!(err.contains("being loaded has sequence of 2"), "{err}");

    // Two structs with the same fields.
    rjax::checkpoint::save(&path, &Dense { w: a.clone(), b: b.clone() }).unwrap();
    let err = load_error(&path, &Conv { w: a.clone(), b: b.clone() }, None);
    assert!(err.contains("struct Dense { w, b }"), "{err}");
    assert!(err.contains("struct Conv { w, b }"), "{err}");

    // Deeper down, the error names the path of the node that differs.
    rjax::checkpoint::save(&path, &vec![(a.clone(), b.clone())]).unwrap();
    let err = load_error(&path, &vec![vec![a.clone(), b.clone()]], Some("0"));
    assert!(err.contains("at `0` the file has tuple of 2"), "{err}");

    // `Some` adds nothing to a path, so `Some(a)` and `a` both hold one tensor "value".
    rjax::checkpoint::save(&path, &Some(a.clone())).unwrap();
    let err = load_error(&path, &a, None);
    assert!(err.contains("the file has Some, but the structure being loaded has array"), "{err}");

    // Static fields are part of the structure, but their values come from `like`.
    rjax::checkpoint::save(&path, &model()).unwrap();
    let mut renamed = model();
    renamed.layers[0].name = "renamed";
    let back = rjax::checkpoint::load(&path, &renamed).unwrap();
    assert_eq!(back.layers[0].name, "renamed");
}

#[test]
fn files_without_the_metadata_still_load() {
    let path = temp_path("foreign.safetensors");
    let w = [0.5f32, -1.0, 2.0, 4.0];
    let w_bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    let b_bytes = 7i32.to_le_bytes().to_vec();
    let like = (jnp::zeros([2, 2]), Array::from(0i32));
    let tensors = || {
        vec![
            ("0".to_string(), TensorView::new(Dtype::F32, vec![2, 2], &w_bytes).unwrap()),
            ("1".to_string(), TensorView::new(Dtype::I32, vec![], &b_bytes).unwrap()),
        ]
    };
    let check = |metadata: Option<HashMap<String, String>>| {
        std::fs::write(&path, safetensors::serialize(tensors(), metadata).unwrap()).unwrap();
        let (x, y) = rjax::checkpoint::load(&path, &like).unwrap();
        assert_eq!(x.to_vec::<f32>().unwrap(), w);
        assert_eq!(y.item::<i32>().unwrap(), 7);
    };
    // No metadata at all, another tool's, and what rjax wrote before it recorded checksums.
    check(None);
    check(Some(HashMap::from([("format".to_string(), "pt".to_string())])));
    check(Some(HashMap::from([("rjax.structure".to_string(), "(*, *)".to_string())])));
}

#[test]
fn a_damaged_or_partial_header_is_an_error() {
    let path = temp_path("header.safetensors");
    let m = model();
    let save = || rjax::checkpoint::save(&path, &m).unwrap();

    save();
    rewrite_metadata(&path, |meta| {
        meta.remove("rjax.tree");
    });
    assert!(load_error(&path, &m, None).contains("records checksums but not its tree structure"));

    save();
    rewrite_metadata(&path, |meta| {
        meta.remove("rjax.crc32.scale.1");
    });
    assert!(load_error(&path, &m, Some("scale.1")).contains("no checksum for this tensor"));

    save();
    rewrite_metadata(&path, |meta| {
        meta.insert("rjax.crc32.steps".to_string(), "12345".to_string());
    });
    assert!(load_error(&path, &m, Some("steps")).contains("is not a CRC-32"));

    save();
    rewrite_metadata(&path, |meta| {
        meta.insert("rjax.crc32.steps".to_string(), "+1234567".to_string());
    });
    assert!(load_error(&path, &m, Some("steps")).contains("is not a CRC-32"));

    save();
    rewrite_metadata(&path, |meta| {
        let tree = meta["rjax.tree"].replace("layers.1.b: None\n", "");
        meta.insert("rjax.tree".to_string(), tree);
    });
    let err = load_error(&path, &m, Some("layers.1.b"));
    assert!(err.contains("the file has `layers.1.name: static field`"), "{err}");

    save();
    rewrite_metadata(&path, |meta| {
        let tree = format!("{}\nextra: array", meta["rjax.tree"]);
        meta.insert("rjax.tree".to_string(), tree);
    });
    let err = load_error(&path, &m, Some("extra"));
    assert!(
        err.contains("the file has array, but the structure being loaded has nothing"),
        "{err}"
    );

    save();
    rewrite_metadata(&path, |meta| {
        let tree = meta["rjax.tree"].replace("\nsteps: array", "");
        meta.insert("rjax.tree".to_string(), tree);
    });
    let err = load_error(&path, &m, Some("steps"));
    assert!(err.contains("the file has nothing more"), "{err}");
}

#[test]
fn truncated_and_garbage_files_are_errors() {
    let path = temp_path("truncated.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    let original = std::fs::read(&path).unwrap();
    for len in 0..original.len() {
        std::fs::write(&path, &original[..len]).unwrap();
        let err = load_error(&path, &m, None);
        assert!(err.contains("truncated or corrupt"), "{len} bytes: {err}");
    }

    let garbage: [&[u8]; 5] = [
        b"",
        &[0; 8],
        b"\xff\xff\xff\xff\xff\xff\xff\x7fnot a header",
        b"\x0c\x00\x00\x00\x00\x00\x00\x00not a header",
        b"\x02\x00\x00\x00\x00\x00\x00\x00{}trailing bytes",
    ];
    for bytes in garbage {
        std::fs::write(&path, bytes).unwrap();
        let err = load_error(&path, &m, None);
        assert!(err.contains("truncated or corrupt"), "{bytes:?}: {err}");
    }
}

/// SplitMix64: a fixed, seeded sequence of masks for the byte flips.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A mask that changes a byte.
    fn mask(&mut self) -> u8 {
        1 + self.below(255) as u8
    }
}

/// What loading a damaged file gave.
enum Outcome {
    /// Exactly what was saved.
    Same,
    /// A checkpoint error naming this leaf (if any) and problem.
    Failed(Option<String>, String),
}

/// Loads `bytes` as a checkpoint of `like`, failing the test on a panic, on values that
/// differ from `like`'s, or on an error other than `Error::Checkpoint`.
fn load_damaged(path: &Path, bytes: &[u8], like: &Model, what: &str) -> Outcome {
    std::fs::write(path, bytes).unwrap();
    let loaded = catch_unwind(AssertUnwindSafe(|| rjax::checkpoint::load(path, like)))
        .unwrap_or_else(|_| panic!("{what}: the load panicked"));
    match loaded {
        Ok(back) => {
            assert!(identical(like, &back), "{what}: loaded values that differ from those saved");
            Outcome::Same
        }
        Err(Error::Checkpoint { leaf, problem, .. }) => Outcome::Failed(leaf, problem),
        Err(other) => panic!("{what}: not a checkpoint error: {other:?}"),
    }
}

/// Every byte of the file, changed in turn by a random mask (a fixed seed): a load never
/// panics, and either fails or gives back exactly what was saved (a change in the
/// metadata's human-readable copy of the structure, say, is harmless). A change anywhere in
/// a tensor's data always fails, naming that tensor. Then 200 files with one to four bytes
/// changed at random places.
#[test]
fn changed_bytes_anywhere_fail_or_change_nothing() {
    let _x64 = rjax::config::x64_scope(true);
    let path = temp_path("fuzz.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    let original = std::fs::read(&path).unwrap();
    let (_, ranges) = header(&original);
    let mut rng = SplitMix(0x5eed_c4ec_4b01);

    let mut harmless = 0;
    for at in 0..original.len() {
        let mask = rng.mask();
        let mut bytes = original.clone();
        bytes[at] ^= mask;
        let what = format!("byte {at} ^ {mask:#04x}");
        let owner = ranges.iter().find(|(_, &(s, e))| (s..e).contains(&at)).map(|(n, _)| n);
        match (load_damaged(&path, &bytes, &m, &what), owner) {
            (Outcome::Same, None) => harmless += 1,
            (Outcome::Same, Some(owner)) => {
                panic!("{what}: the change to `{owner}` went unnoticed")
            }
            (Outcome::Failed(..), None) => {}
            (Outcome::Failed(leaf, problem), Some(owner)) => {
                assert_eq!(leaf.as_ref(), Some(owner), "{what}: {problem}");
                assert!(problem.starts_with("checksum mismatch"), "{what}: {problem}");
            }
        }
    }
    // Changes to the header's unchecked parts can be harmless; most of the header is not.
    assert!(
        harmless < original.len() / 2,
        "{harmless} of {} changes were harmless",
        original.len()
    );

    for case in 0..200 {
        let mut bytes = original.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            bytes[at] ^= rng.mask();
        }
        load_damaged(&path, &bytes, &m, &format!("case {case}"));
    }
}

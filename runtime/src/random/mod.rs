//! Pseudo-random numbers, like `jax.random`: JAX's counter-based threefry2x32 PRNG, giving
//! JAX's numbers bit for bit.
//!
//! There is no hidden state. A [`Key`] is made from a seed with [`key`], split into independent
//! keys with [`split`] or [`fold_in`], and passed to samplers ([`uniform`], [`normal`],
//! [`bernoulli`], [`categorical`], ...), which always return the same values for the same key,
//! shape and dtype: the values `jax.random` returns with its default settings
//! (`jax_default_prng_impl=threefry2x32`, `jax_threefry_partitionable=True`).
//!
//! ```
//! use rjax_runtime::{random, DType};
//! let key = random::key(0);
//! let keys = random::split(&key, 2);
//! let (key, subkey) = (keys.get(0), keys.get(1));
//! let x = random::normal(&subkey, [3]);
//! assert_eq!(x.dtype(), DType::F32);
//! assert_eq!(random::key_data(&key).to_vec::<u32>().unwrap(), vec![1797259609, 2579123966]);
//! ```
//!
//! # Conventions
//! - Seeds follow JAX's default 32-bit mode: [`key`] keeps the low 32 bits of the seed, so
//!   `key(-1)` is `[0, 0xFFFFFFFF]`. [`key_x64`] follows x64 mode (`[hi32, lo32]` of a 64-bit
//!   seed).
//! - Functions without a dtype return JAX's 32-bit defaults (`float32`, `int32`, `uint32`); the
//!   `_dtype` variants take one. `float64` samplers draw 64 bits per value, as JAX does with
//!   `jax_enable_x64`, so they match JAX's x64 numbers.
//! - Shapes are given as `[usize]` and counts as `usize`, so negative sizes cannot be written.
//!   Other bad input (a key array where one key is needed, `minval > maxval` for a float
//!   sampler, a sample without replacement larger than its population, categories or a
//!   population of size 0, a non-float dtype for a float sampler) panics with a message that
//!   names the function. [`randint`] follows JAX instead: an empty range gives `minval`, and
//!   bounds outside the dtype are clipped to it.
//! - `float16`/`bfloat16` samples are not supported.
//!
//! # Primitives
//! The hash is the [`Threefry2x32`](crate::primitives::random::Threefry2x32) primitive; key
//! splitting, folding and bit drawing are `random_split`, `random_fold_in` and `random_bits`,
//! and the float samplers are one `random_sample` primitive each (JAX's fused `jit` of bits and
//! elementwise ops), so transformations see them as primitives. [`randint`], [`permutation`],
//! [`choice`] and [`categorical`] are built from array operations as JAX builds them
//! (remainders, arg-maxes, gathers, and sorts by random keys with the `sort` and `top_k`
//! primitives), so they trace under `#[jit]`, `vmap` and `lax::scan` too.
//!
//! The rejection samplers are `lax::while_loop`s as in JAX: [`gamma`] (and [`beta`],
//! [`dirichlet`], [`t`], [`chisquare`], [`f`], [`generalized_normal`] and [`ball`], built on
//! it), [`poisson`] and [`binomial`]; [`multinomial`] is a `lax::scan` of binomials. The
//! linear-algebra samplers [`multivariate_normal`] and [`orthogonal`] factor matrices with
//! `jnp::linalg`. All of them take traced parameters, so they run under `#[jit]`, `vmap` over
//! keys and inside `lax::scan` bodies.
//!
//! Weight initializers in the style of `jax.nn.initializers` are in [`init`].

mod continuous;
mod counts;
mod discrete;
mod families;
mod from_gamma;
mod gamma;
pub mod init;
mod key;
mod linear;
mod seed;

pub use continuous::*;
pub use counts::*;
pub use discrete::*;
pub use families::*;
pub use from_gamma::*;
pub use gamma::*;
pub use key::{Key, KeyIter};
pub use linear::*;
pub use seed::Seed;

use crate::array::Array;
use crate::dtype::DType;
use crate::primitives::bind1;
use crate::primitives::random::{RandomBits, RandomFoldIn, RandomSplit};

/// A key from an integer seed, as `jax.random.key(seed)`: a Rust integer is taken as JAX's
/// default 32-bit mode takes a Python int, its low 32 bits becoming the key data
/// `[0, seed as u32]`, so `key(-1)` is `[0, 0xFFFFFFFF]` and `key(2^40 + 3)` is `[0, 3]`. The seed
/// may also be a 0-d integer array, traced inside `#[jit]`: a 32-bit (or narrower) one gives
/// `[0, seed as u32]`, a 64-bit one `[hi32(seed), lo32(seed)]` as in JAX's x64 mode.
///
/// ```
/// use rjax_runtime::{random, Array};
/// let data = random::key_data(&random::key(-1)).to_vec::<u32>().unwrap();
/// assert_eq!(data, vec![0, 0xFFFF_FFFF]);
/// assert_eq!(random::key(Array::from(7i32)), random::key(7));
/// ```
#[track_caller]
pub fn key(seed: impl Seed) -> Key {
    let seed = seed.into_seed("key");
    Key::from_data("key", seed::seed_words(&seed))
}

/// A key from a 64-bit seed, as `jax.random.key(seed)` with `jax_enable_x64`: the key data is
/// `[hi32(seed), lo32(seed)]`, so `key_x64(-1)` is `[0xFFFFFFFF, 0xFFFFFFFF]` and
/// `key_x64(2^40 + 3)` is `[256, 3]`. Equal to [`key`] for seeds in `0..2^31`.
pub fn key_x64(seed: i64) -> Key {
    let s = seed as u64;
    Key::from_data("key_x64", Array::from_shape_vec([2], vec![(s >> 32) as u32, s as u32]))
}

/// The key data of a key array: `uint32` of shape `(*key.shape(), 2)` (`jax.random.key_data`).
pub fn key_data(key: &Key) -> Array {
    key.data().clone()
}

/// Keys from their data (`jax.random.wrap_key_data`): `data` must be `uint32` with a trailing
/// axis of length 2, which the key array's shape excludes.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let key = random::wrap_key_data(&jnp::array(&[0u32, 42]));
/// assert_eq!(key, random::key(42));
/// ```
#[track_caller]
pub fn wrap_key_data(data: &Array) -> Key {
    Key::from_data("wrap_key_data", data.clone())
}

/// `num` new keys from one (`jax.random.split(key, num)`): a key array of shape `(num,)`.
///
/// ```
/// use rjax_runtime::random;
/// let keys = random::split(&random::key(0), 8);
/// assert_eq!(keys.shape(), &[8]);
/// ```
#[track_caller]
pub fn split(key: &Key, num: usize) -> Key {
    split_shape(key, [num])
}

/// New keys in an array of `shape` (`jax.random.split(key, shape)`).
#[track_caller]
pub fn split_shape(key: &Key, shape: impl AsRef<[usize]>) -> Key {
    let data = key.single("split");
    let prim = RandomSplit { shape: shape.as_ref().to_vec() };
    Key::from_data("split", bind1(&prim, &[data]))
}

/// The key for `data` (`jax.random.fold_in`): a deterministic function of the key and the
/// integer, statistically independent of other `data`. Equals `split(key, n).get(data)` for any
/// `n > data`. `data` is a Rust integer or a 0-d integer array (a traced step counter inside
/// `#[jit]` or `lax::scan`); either is taken modulo 2^32, as JAX converts it to `uint32`.
///
/// ```
/// use rjax_runtime::{random, Array};
/// let key = random::key(0);
/// assert_eq!(random::fold_in(&key, Array::from(3i32)), random::fold_in(&key, 3));
/// ```
#[track_caller]
pub fn fold_in(key: &Key, data: impl Seed) -> Key {
    let key_data = key.single("fold_in");
    let data = data.into_seed("fold_in").astype(DType::U32);
    Key::from_data("fold_in", bind1(&RandomFoldIn, &[key_data, &data]))
}

/// Uniformly random `uint32` bits of `shape` (`jax.random.bits`).
///
/// ```
/// use rjax_runtime::random;
/// let b = random::bits(&random::key(0), [2]);
/// assert_eq!(b.to_vec::<u32>().unwrap(), vec![4070199207, 4202968722]);
/// ```
#[track_caller]
pub fn bits(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    bits_dtype(key, shape, DType::U32)
}

/// Uniformly random bits as an unsigned `dtype` (`U8`, `U16`, `U32` or `U64`). 64-bit values
/// are `(y0 << 32) | y1` of the hash, as in JAX's x64 mode.
#[track_caller]
pub fn bits_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let data = key.single("bits");
    if !dtype.is_unsigned_int() {
        panic!("bits: dtype must be an unsigned integer type, got {dtype}");
    }
    let dtype = crate::dtype::canonicalize(dtype);
    crate::shape::check("bits", shape.as_ref(), dtype);
    bind1(&RandomBits { shape: shape.as_ref().to_vec(), dtype }, &[data])
}

/// The raw Threefry-2x32 hash, as `jax.extend.random.threefry_2x32(keypair, count)`: the
/// `uint32` counts (any shape) are flattened and split into halves `x0` and `x1` (a zero is
/// appended to an odd count), hashed pairwise under `keypair` (`uint32` of shape `(2,)`), and the
/// outputs `y0`, `y1` concatenated and trimmed back to the counts' shape.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let key = jnp::array(&[0x1319_8A2Eu32, 0x0370_7344]);
/// let out = random::threefry_2x32(&key, &jnp::array(&[0x243F_6A88u32, 0x85A3_08D3]));
/// assert_eq!(out.to_vec::<u32>().unwrap(), vec![0xC492_3A9C, 0x483D_F7A0]);
/// ```
#[track_caller]
pub fn threefry_2x32(keypair: &Array, count: &Array) -> Array {
    let key = Key::from_data("threefry_2x32", keypair.clone());
    let [k0, k1] = key.single("threefry_2x32").to_vec::<u32>().unwrap()[..] else {
        unreachable!("a single key has two words")
    };
    let Some(counts) = count.as_slice::<u32>() else {
        panic!("threefry_2x32: counts must be uint32, got {}", count.dtype());
    };
    let half = counts.len().div_ceil(2);
    let mut padded = counts.to_vec();
    padded.resize(2 * half, 0);
    let x0 = Array::from_shape_vec([half], padded[..half].to_vec());
    let x1 = Array::from_shape_vec([half], padded[half..].to_vec());
    let prim = crate::primitives::random::Threefry2x32;
    let y = crate::primitives::bind(&prim, &[&Array::from(k0), &Array::from(k1), &x0, &x1]);
    let mut out = y[0].to_vec::<u32>().unwrap();
    out.extend(y[1].to_vec::<u32>().unwrap());
    out.truncate(counts.len());
    Array::from_shape_vec(count.shape(), out)
}

//! Static arguments of `#[jit]` functions: how they key the compile cache and how the compile
//! log shows them.
//!
//! A static argument keys the cache through [`StaticKey`] when its type has it (Rust floats,
//! keyed by their bits, and containers of them) and through `Hash` otherwise, so any
//! `Hash + Eq + Clone` type can be named in `static_argnames`. The macros pick between the two
//! at the call site (autoref dispatch: [`KeyedStatic`] is tried before [`HashedStatic`]).

use std::collections::hash_map::DefaultHasher;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};

use crate::dtype::DType;

/// A value that can key a compile cache although it may not be `Hash`: Rust floats are keyed
/// by their bits (so `0.1` and `0.1` share a plan, and a NaN keys like itself).
pub trait StaticKey {
    /// Feeds the value's key into `state`.
    fn key_into(&self, state: &mut dyn Hasher);
}

macro_rules! key_by_hash {
    ($($t:ty),*) => {$(
        impl StaticKey for $t {
            fn key_into(&self, mut state: &mut dyn Hasher) {
                self.hash(&mut state);
            }
        }
    )*};
}
key_by_hash!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool, char, str, String, DType
);

impl StaticKey for f32 {
    fn key_into(&self, state: &mut dyn Hasher) {
        state.write_u32(self.to_bits());
    }
}

impl StaticKey for f64 {
    fn key_into(&self, state: &mut dyn Hasher) {
        state.write_u64(self.to_bits());
    }
}

impl<T: StaticKey + ?Sized> StaticKey for &T {
    fn key_into(&self, state: &mut dyn Hasher) {
        (**self).key_into(state);
    }
}

impl<T: StaticKey> StaticKey for [T] {
    fn key_into(&self, state: &mut dyn Hasher) {
        state.write_usize(self.len());
        self.iter().for_each(|x| x.key_into(state));
    }
}

impl<T: StaticKey, const N: usize> StaticKey for [T; N] {
    fn key_into(&self, state: &mut dyn Hasher) {
        self[..].key_into(state);
    }
}

impl<T: StaticKey> StaticKey for Vec<T> {
    fn key_into(&self, state: &mut dyn Hasher) {
        self[..].key_into(state);
    }
}

impl<T: StaticKey> StaticKey for Option<T> {
    fn key_into(&self, state: &mut dyn Hasher) {
        state.write_u8(self.is_some() as u8);
        if let Some(x) = self {
            x.key_into(state);
        }
    }
}

macro_rules! key_tuple {
    ($($name:ident),+) => {
        impl<$($name: StaticKey),+> StaticKey for ($($name,)+) {
            #[allow(non_snake_case)]
            fn key_into(&self, state: &mut dyn Hasher) {
                let ($($name,)+) = self;
                $($name.key_into(state);)+
            }
        }
    };
}
key_tuple!(A);
key_tuple!(A, B);
key_tuple!(A, B, C);
key_tuple!(A, B, C, D);
key_tuple!(A, B, C, D, E);
key_tuple!(A, B, C, D, E, F);

/// One static argument of a call, as the compile cache and its log see it.
#[derive(Clone, Debug)]
pub struct StaticArg {
    /// The parameter's name.
    pub name: &'static str,
    /// Its key (see [`StaticKey`]).
    pub hash: u64,
    /// Its value as the compile log prints it; computed only while the log is on.
    pub shown: Option<String>,
}

/// A static argument on its way to the cache key: `(&Static(&x)).static_hash()` keys `x`
/// through [`StaticKey`] when its type has it, through `Hash` otherwise.
pub struct Static<'a, T: ?Sized>(pub &'a T);

/// Keys a static argument through [`StaticKey`] (tried first).
pub trait KeyedStatic {
    fn static_hash(&self) -> u64;
}

impl<T: StaticKey + ?Sized> KeyedStatic for Static<'_, T> {
    fn static_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.0.key_into(&mut h);
        h.finish()
    }
}

/// Keys a static argument through `Hash` (when its type has no [`StaticKey`]).
pub trait HashedStatic {
    fn static_hash(&self) -> u64;
}

impl<T: Hash + ?Sized> HashedStatic for &Static<'_, T> {
    fn static_hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.0.hash(&mut h);
        h.finish()
    }
}

/// Shows a static argument through `Debug` (tried first).
pub trait DebugStatic {
    fn static_shown(&self) -> String;
}

impl<T: Debug + ?Sized> DebugStatic for Static<'_, T> {
    fn static_shown(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Shows a static argument whose type has no `Debug` by its type.
pub trait OpaqueStatic {
    fn static_shown(&self) -> String;
}

impl<T: ?Sized> OpaqueStatic for &Static<'_, T> {
    fn static_shown(&self) -> String {
        format!("a value of type `{}`", std::any::type_name::<T>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Hash)]
    struct Opaque(u8);

    #[test]
    fn floats_key_by_bits_and_hash_types_by_hash() {
        let key = |x: f32| Static(&x).static_hash();
        assert_eq!(key(0.1), key(0.1));
        assert_ne!(key(0.1), key(0.2));
        assert_eq!(key(f32::NAN), key(f32::NAN));
        let pair = |x: (usize, f64)| Static(&x).static_hash();
        assert_ne!(pair((1, 0.5)), pair((1, 0.25)));
        let opaque = |x: u8| (&Static(&Opaque(x))).static_hash();
        assert_eq!(opaque(3), opaque(3));
        assert_ne!(opaque(3), opaque(4));
        assert_eq!(
            (&Static(&Opaque(1))).static_shown(),
            format!("a value of type `{}`", std::any::type_name::<Opaque>())
        );
        assert_eq!(Static(&(2usize, 0.5f32)).static_shown(), "(2, 0.5)");
    }
}

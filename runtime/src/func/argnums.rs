//! The small specs the function forms take: `argnums` (`1`, `(0, 1)`) and vmap axes
//! (`0`, `None`, `(None, 0)`), written as JAX writes them.

use crate::transform::batch::api::BatchAxes;

/// Which elements of the argument tuple a transform differentiates: one position, or a tuple
/// of them (the result is then a tuple, one entry per position, as in JAX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Argnums {
    /// The positions, in the order given.
    pub nums: Vec<usize>,
    /// Whether they were given as a tuple.
    pub tuple: bool,
}

/// What `.argnums(..)` accepts: a position (`1`) or a tuple of positions (`(0, 1)`).
pub trait ArgnumSpec {
    /// The positions.
    fn argnums(self) -> Argnums;
}

/// A position of a non-negative integer type.
fn position<T: TryInto<usize> + Copy + std::fmt::Display>(n: T) -> usize {
    n.try_into().unwrap_or_else(|_| panic!("argnums: {n} is not a position (0, 1, ..)"))
}

macro_rules! argnum_int {
    ($($t:ty),*) => {$(
        impl ArgnumSpec for $t {
            fn argnums(self) -> Argnums {
                Argnums { nums: vec![position(self)], tuple: false }
            }
        }
    )*};
}
argnum_int!(usize, i32);

macro_rules! argnum_tuple {
    ($($t:ident . $i:tt),+) => {
        impl<$($t: ArgnumSpec),+> ArgnumSpec for ($($t,)+) {
            fn argnums(self) -> Argnums {
                let mut nums = Vec::new();
                $(nums.extend(self.$i.argnums().nums);)+
                Argnums { nums, tuple: true }
            }
        }
    };
}
argnum_tuple!(A.0);
argnum_tuple!(A.0, B.1);
argnum_tuple!(A.0, B.1, C.2);
argnum_tuple!(A.0, B.1, C.2, D.3);

/// What `vmap`'s `in_axes` and `out_axes` accept: an axis (`0`, `-1`), `None` (not mapped),
/// or a tuple of them for a tuple value, nested as the value is (`(None, (0, 1))`); a
/// [`BatchAxes`] for anything else (a struct's fields, a `Vec`'s elements).
pub trait AxisSpec {
    /// The axes as a prefix of the value's tree.
    fn batch_axes(self) -> BatchAxes;
}

impl AxisSpec for BatchAxes {
    fn batch_axes(self) -> BatchAxes {
        self
    }
}

macro_rules! axis_int {
    ($($t:ty),*) => {$(
        impl AxisSpec for $t {
            fn batch_axes(self) -> BatchAxes {
                BatchAxes::Axis(self as isize)
            }
        }
    )*};
}
axis_int!(i32, isize);

impl AxisSpec for Option<i32> {
    fn batch_axes(self) -> BatchAxes {
        self.map_or(BatchAxes::None, |a| BatchAxes::Axis(a as isize))
    }
}

macro_rules! axis_tuple {
    ($($t:ident . $i:tt),+) => {
        impl<$($t: AxisSpec),+> AxisSpec for ($($t,)+) {
            fn batch_axes(self) -> BatchAxes {
                BatchAxes::Tree(vec![$(self.$i.batch_axes()),+])
            }
        }
    };
}
axis_tuple!(A.0);
axis_tuple!(A.0, B.1);
axis_tuple!(A.0, B.1, C.2);
axis_tuple!(A.0, B.1, C.2, D.3);
axis_tuple!(A.0, B.1, C.2, D.3, E.4);
axis_tuple!(A.0, B.1, C.2, D.3, E.4, F.5);

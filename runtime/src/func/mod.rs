//! JAX's transforms as functions of closures: `grad(f)`, `value_and_grad(f)`, `jit(f)`,
//! `vmap(f, in_axes, out_axes)`, `jvp`, `vjp`, `linearize`, `jacfwd`, `jacrev`, `hessian`,
//! `checkpoint`, callable from plain Rust and from inside annotated (traced) functions.
//!
//! A transformed function takes **one argument, a pytree** (`&Array`, a tuple, a `Vec`, a
//! `#[derive(Tree)]` struct): where JAX writes `f(w, b)`, a closure here takes `&(w, b)`,
//! `|(w, b): &(Array, Array)| ..`. `argnums` then picks elements of that tuple, as JAX's picks
//! positional arguments. What a transform returns is callable like a function
//! (`grad(f)(&x)`), with the types a reader expects: `grad` of a closure over `&Params`
//! returns `Params`, `vmap` of a closure returning `Array` returns `Array`. With `argnums` or
//! `has_aux` the result's shape depends on those choices, so those forms are called with
//! `.call(&args)` and give the type the caller asks for (`let (gw, gb): (Array, Array) = ..`),
//! checked when it runs.
//!
//! ```
//! use rjax_runtime::{func::{grad, jit, vmap}, jnp, Array};
//! let f = |x: &Array| (x * x).sum();
//! let g = grad(f)(&jnp::array([1.0f32, 2.0]));
//! assert_eq!(g.to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
//! // Several arguments: a tuple, and argnums picking from it.
//! let loss = |(w, b): &(Array, Array)| (w * 3.0 + b).sum();
//! let (gw, gb): (Array, Array) =
//!     grad(loss).argnums((0, 1)).call(&(Array::from(1.0f32), Array::from(0.0f32)));
//! assert_eq!((gw.item::<f32>().unwrap(), gb.item::<f32>().unwrap()), (3.0, 1.0));
//! // Per-example values: map axis 0 of `x`, share `w`.
//! let per = vmap(|(w, x): &(Array, Array)| (w * x).sum(), (None, 0), 0);
//! let out = per(&(jnp::ones([2]), jnp::ones([5, 2])));
//! assert_eq!(out.shape(), &[5]);
//! let fast = jit(|x: &Array| x.sin() * 2.0);
//! assert_eq!(fast(&Array::from(0.0f32)).item::<f32>().unwrap(), 0.0);
//! ```
//!
//! Closures may capture values. Captured concrete arrays are constants of the trace (JAX does
//! the same with closed-over arrays); captured traced values (inside a traced function, or a
//! closure nested in another transform) become extra inputs of the inner trace that are not
//! differentiated, so nested transforms do not confuse their perturbations:
//! `grad(|x| x * grad(|y| x + y)(&y0))(&x0)` is 1. Rust infers a closure's parameter type
//! from its use only after the closure itself, so annotate it (`|x: &Array| ..`) when the
//! body calls a method on it. In edition 2021, a call such as `grad(|w| ..)(x)` that ends a
//! block whose locals the closure borrows must be bound first (`let g = grad(..)(x); g`): a
//! tail expression's temporaries outlive the block's locals there (edition 2024 drops them
//! first). The attribute macros do this for the tail of an annotated function's body.

mod argnums;
mod forms;

pub use argnums::{ArgnumSpec, Argnums, AxisSpec};
pub use forms::{
    checkpoint, grad, hessian, jacfwd, jacrev, jit, jvp, linearize, pmap, value_and_grad, vjp,
    vmap, Checkpoint, Grad, GradWith, Jacobian, Jit, Linear, LinearFn, VjpFn, Vmap,
};

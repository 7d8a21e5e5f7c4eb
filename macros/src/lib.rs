//! The rjax attribute macros.
//!
//! Each entry point is thin: `parse` reads the item into a model (the signature's traced and
//! static parameters) and analyses the body (which locals are traced), `check` holds the
//! rules that refuse untraceable constructs with spanned errors, and `expand` writes the
//! Rust that traces, caches and runs the function through `rjax`'s runtime.
//!
//! On an error the user's function is emitted beside the `compile_error!`s with its signature
//! unchanged, so the rest of the crate (and the IDE) keeps working, but with its body left
//! out: type-checking the body as plain Rust would add errors about constructs the traced
//! version handles (`x > 0.0` on an array), which would bury the real message.

mod check;
mod expand;
mod parse;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

/// Makes a function traceable: callable as usual (it runs op by op), and callable from other
/// annotated functions, whose traces it is inlined into.
///
/// `f32`/`f64` parameters are traced 0-d arrays (an `f64` weakly typed, of the default float
/// type, as a Python float), and so are `i32`/`u32`/`i64` (weakly typed, as Python ints under
/// `jax.jit`); `Array`, `&Array` and pytrees of them (`Option<&Array>`
/// too) are traced leaf by leaf; `usize` and the other integers, `bool` and `&str` are static,
/// and so is any parameter named in `static_argnames = ("n", ..)` or `static_argnums = (1, ..)`
/// (which every rjax attribute takes; floats are then keyed by their bits, other types through
/// `Hash`). Beside the function the macro
/// defines a companion type of the same name: `f::jaxpr(args..)` returns the function's IR for
/// those arguments, as traced and after simplification (`jax.make_jaxpr`). A traced call to
/// `f` from another annotated function goes through that companion, so it works across
/// modules and crates wherever `f` is in scope, and fails to resolve when `f` is not
/// traceable. The `rjax` crate's README has a compiled example.
#[proc_macro_attribute]
pub fn traceable(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "traceable")
}

/// Compiles a function: the first call with a new signature (argument shapes, dtypes, weak
/// types, tree structure and static values) traces it to IR, simplifies and plans it; later
/// calls hash the signature and run the cached plan. Inside another traced function it is
/// inlined. Besides `f::jaxpr(..)`, the companion type offers `f::cache_info()` (plans, hits,
/// misses, traces, time spent tracing). Everything `#[traceable]` accepts, `#[jit]` does.
/// `RJAX_LOG_COMPILES=1` prints each trace and why the cache missed.
#[proc_macro_attribute]
pub fn jit(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "jit")
}

/// `jax.vmap`: the body is written for one example; the function takes the whole batch.
/// `in_axes` gives one entry per parameter (`None` for parameters shared by all examples, an
/// axis, negative from the end, or a tuple of entries for a tuple parameter), `out_axes` the
/// outputs' batch axis (default 0 for both), and `axis_name` names the mapped axis for
/// collectives (`lax::psum(x, "i")`). `f32`/`f64` parameters are one number per call and stay
/// unmapped. Stacks with the other transforms: `#[jit] #[vmap(in_axes = (None, 0, 0))] #[grad]`
/// gives per-example gradients.
#[proc_macro_attribute]
pub fn vmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "vmap")
}

/// `jax.pmap`: like [`macro@vmap`] (the same `in_axes`, `out_axes` and `axis_name`), with the
/// mapped axis spread over devices: the function is traced once and runs on one device per
/// member of the axis, each on its own thread, with collectives (`lax::psum`, `pmean`,
/// `all_gather`, `psum_scatter`, `ppermute`, `axis_index`) exchanging values between them.
/// The axis may not be larger than the device count (`RJAX_CPU_DEVICES` virtual CPU devices).
#[proc_macro_attribute]
pub fn pmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "pmap")
}

/// `jax.grad`: the body is the function being differentiated, the signature the gradient's.
///
/// `#[grad(argnums = 1)]` differentiates with respect to parameter 1 (default 0); a tuple
/// `argnums = (0, 1)` returns a tuple of gradients; `has_aux` lets the body return
/// `(value, aux)` and the function then returns `(grads, aux)`. The declared return type must
/// be the differentiated parameter's owned type (`Vec<(Array, Array)>` for
/// `&[(Array, Array)]`, `f32` for `f32`); the macro says which when it is not. The body's
/// value must be a 0-d float. Attributes stack bottom-up with each other and with `#[jit]`:
/// `#[grad] #[grad] fn d2(x: f32) -> f32` is the second derivative.
#[proc_macro_attribute]
pub fn grad(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "grad")
}

/// `jax.value_and_grad`: returns `(value, grads)` (with `has_aux`, `((value, aux), grads)`);
/// takes `argnums` and `has_aux` like [`macro@grad`].
#[proc_macro_attribute]
pub fn value_and_grad(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "value_and_grad")
}

/// `jax.jvp`: the trailing parameters are tangents, one per traced primal and of its type;
/// returns `(out, out_tangent)`, both of the body's type.
#[proc_macro_attribute]
pub fn jvp(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "jvp")
}

/// `jax.vjp` applied to a cotangent: the trailing parameter is the output's cotangent (of the
/// body's type); returns the cotangents of the traced primals (a tuple when there are several).
#[proc_macro_attribute]
pub fn vjp(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "vjp")
}

/// `jax.jacfwd` (forward mode): the dense jacobian with respect to parameter `argnums`
/// (default 0), shaped output axes then input axes; a tuple `argnums = (0, 1)` returns a
/// tuple of jacobians, one per parameter, as JAX nests them.
#[proc_macro_attribute]
pub fn jacfwd(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "jacfwd")
}

/// `jax.jacrev` (reverse mode): the same jacobian as [`macro@jacfwd`], row by row.
#[proc_macro_attribute]
pub fn jacrev(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "jacrev")
}

/// `jax.hessian`: `jacfwd(jacrev(f))`, shaped output axes then input axes twice; with
/// `argnums = (0, 1)`, a tuple of tuples (`((h00, h01), (h10, h11))`).
#[proc_macro_attribute]
pub fn hessian(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "hessian")
}

/// `jax.checkpoint` (rematerialization): same values and gradients, but the reverse pass
/// recomputes the function's intermediates instead of keeping them from the forward pass.
#[proc_macro_attribute]
pub fn checkpoint(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "checkpoint")
}

/// `jax.custom_jvp`: `#[custom_jvp(jvp = f_jvp)] fn f(..)` is differentiated by the
/// `#[traceable]` function `f_jvp`, which takes `f`'s parameters followed by one tangent per
/// traced parameter (of the same types) and returns `(out, out_tangent)`; the tangent must be
/// linear in the tangents (reverse mode transposes it).
#[proc_macro_attribute]
pub fn custom_jvp(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "custom_jvp")
}

/// `jax.custom_vjp`: `#[custom_vjp(fwd = f_fwd, bwd = f_bwd)] fn f(..)` runs its body, and
/// reverse mode uses `#[traceable] fn f_fwd` (`f`'s parameters, returns `(out, residuals)`)
/// and `#[traceable] fn f_bwd(residuals, cotangent)` (both owned pytrees, whose Rust floats
/// (`(Array, f32)`) are 0-d arrays while traced; returns one cotangent per traced parameter,
/// a tuple when there are several, where `None` (declared `Option<..>`) is a zero cotangent,
/// as in JAX). Forward mode is refused, as in JAX.
#[proc_macro_attribute]
pub fn custom_vjp(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, "custom_vjp")
}

/// Implements `rjax::Tree` and `rjax::Unflatten` for a struct whose fields are pytrees;
/// fields marked `#[tree(static)]` (which must be `Clone + Hash + Debug + Send + Sync`) are
/// part of the structure, not leaves, so a new value of one is a new `#[jit]` signature.
#[proc_macro_derive(Tree, attributes(tree))]
pub fn derive_tree(item: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(item as syn::DeriveInput);
    expand::tree::derive(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

fn entry(attr: TokenStream, item: TokenStream, name: &str) -> TokenStream {
    let item2: TokenStream2 = item.clone().into();
    match expand::function(attr.into(), item2.clone(), name) {
        Ok(tokens) => tokens.into(),
        Err(errors) => {
            let errors = errors.into_iter().map(syn::Error::into_compile_error);
            let stand_in = signature_only(item2);
            quote!(#(#errors)* #stand_in).into()
        }
    }
}

/// The function with its body replaced, for a crate that does not compile anyway; an item
/// that is not a function is kept as it is.
fn signature_only(item: TokenStream2) -> TokenStream2 {
    match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(f) => {
            let (attrs, vis, sig) = (&f.attrs, &f.vis, &f.sig);
            quote! {
                #(#attrs)*
                #[allow(unused_variables, unused_mut, unreachable_code)]
                #vis #sig {
                    ::core::unreachable!("this function failed to compile")
                }
            }
        }
        Err(_) => item,
    }
}

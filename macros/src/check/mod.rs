//! The refusals: every construct a traced function cannot contain, each as a `syn::Error` on
//! the offending span whose message says what is wrong and what to write instead.
//!
//! These follow JAX's meaning: a traced value has no value while the function is traced, so
//! anything that needs one (Rust control flow on it, converting it to a Rust number, printing
//! it) cannot be traced, while the same constructs on static values are fine.

use proc_macro2::Span;

fn err(span: Span, message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, message)
}

pub fn refuse_while(span: Span, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`while` on the traced value {value} cannot be traced: its condition is unknown until \
             the function runs; use `lax::while_loop(|carry| condition, |carry| body, init)`"
        ),
    )
}

pub fn refuse_match(span: Span, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`match` on the traced value {value} cannot be traced: which arm runs is unknown \
             until the function runs; use `lax::switch(index, &[..branches], operands)`, or \
             `if` on a traced bool (lax::cond)"
        ),
    )
}

pub fn refuse_jump_in_branch(span: Span, jump: &str, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`{jump}` inside an `if` on the traced value {value} cannot be traced: both branches \
             are traced and the choice is made when the function runs; make both branches \
             produce a value (the `if` becomes `lax::cond`), or loop with `lax::while_loop`"
        ),
    )
}

pub fn refuse_static_assign_in_branch(span: Span, name: &str, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "the static value `{name}` is assigned inside an `if` on the traced value {value}, so \
             its value after the `if` is unknown while tracing; keep `{name}` an array (e.g. \
             `let mut {name} = jnp::array(..)`) or compute it outside the branch"
        ),
    )
}

pub fn refuse_index_assign(span: Span, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "arrays are immutable, so {value} cannot be assigned through an index; use \
             `{value} = {value}.at(i).set(v)` (or `.add(v)`, `.mul(v)`, `.min(v)`, `.max(v)`)"
        ),
    )
}

pub fn refuse_cast(span: Span, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`as` turns the traced value {value} into a Rust number, but it has no value while \
             the function is traced; convert the array with `.astype(DType::F32)` (or another \
             DType) and keep computing with arrays"
        ),
    )
}

pub fn refuse_concretize(span: Span, method: &str, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`.{method}()` reads the value of the traced value {value}, which has no value while \
             the function is traced (JAX's ConcretizationTypeError); keep computing with arrays, \
             or print it at run time with `rjax::debug_print!(\"{{}}\", {value})`"
        ),
    )
}

pub fn refuse_print(span: Span, mac: &str, value: &str) -> syn::Error {
    err(
        span,
        format!(
            "`{mac}!` would format the traced value {value}, which has no value while the \
             function is traced; use `rjax::debug_print!(\"{{}}\", {value})`, which prints when \
             the function runs"
        ),
    )
}

pub fn refuse_unsafe(span: Span) -> syn::Error {
    err(
        span,
        "`unsafe` is not allowed in traced functions: their bodies become rjax programs; move \
         the unsafe code into a separate, non-traced function",
    )
}

pub fn refuse_async(span: Span) -> syn::Error {
    err(
        span,
        "`async` is not allowed in traced functions: a traced function runs to completion as \
         one rjax program; make it a plain `fn`",
    )
}

pub fn refuse_static_mut(span: Span) -> syn::Error {
    err(
        span,
        "`static mut` is not allowed in traced functions: the body runs only when traced, so \
         mutable global state would not be updated by later calls; pass the value in as an \
         argument",
    )
}

pub fn refuse_raw_pointer(span: Span) -> syn::Error {
    err(
        span,
        "raw pointers are not allowed in traced functions; pass arrays (`&Array`) or pytrees \
         of them",
    )
}

pub fn refuse_type_generics(span: Span) -> syn::Error {
    err(
        span,
        "traced functions cannot have type parameters: each signature is traced and cached on \
         its own; write the function for concrete types (`Array`, `&[(Array, Array)]`, ...)",
    )
}

pub fn refuse_method(span: Span) -> syn::Error {
    err(
        span,
        "rjax attributes apply to free functions, not methods; write \
         `fn forward(model: &Model, x: &Array)` with `#[derive(Tree)] struct Model`",
    )
}

pub fn refuse_param_pattern(span: Span) -> syn::Error {
    err(span, "parameters of traced functions must be plain names (`x: &Array`)")
}

pub fn refuse_mut_ref(span: Span) -> syn::Error {
    err(
        span,
        "traced functions cannot take `&mut` parameters: arrays are immutable; take `&Array` \
         (or the value) and return the new value",
    )
}

pub fn refuse_impl_trait(span: Span) -> syn::Error {
    err(
        span,
        "traced functions cannot take `impl Trait` parameters; use a concrete type such as \
         `&Array`",
    )
}

pub fn refuse_attr_args(span: Span, attr: &str) -> syn::Error {
    err(span, format!("#[{attr}] takes no arguments"))
}

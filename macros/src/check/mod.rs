//! The refusals: every construct a traced function cannot contain, each as a `syn::Error` on
//! the offending tokens whose message says what is wrong and what to write instead.
//!
//! These follow JAX's meaning: a traced value has no value while the function is traced, so
//! anything that needs one (Rust control flow on it, converting it to a Rust number, printing
//! it) cannot be traced, while the same constructs on static values are fine.
//!
//! Each refusal takes the tokens it points at: the error covers them from the first to the
//! last, so `x as usize` is underlined whole rather than at its first token.

use std::fmt::Display;

use quote::ToTokens;

fn err(at: &dyn ToTokens, message: impl Display) -> syn::Error {
    syn::Error::new_spanned(at.to_token_stream(), message)
}

/// Source-like text of some tokens, for quoting the user's code in a message (token streams
/// print with spaces between most tokens: `x . at (i)` becomes `x.at(i)`).
pub fn code(tokens: &dyn ToTokens) -> String {
    let text = tokens.to_token_stream().to_string();
    let chars: Vec<char> = text.chars().collect();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    for (k, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = out.chars().last();
            let before_prev = out.chars().rev().nth(1);
            let next = chars.get(k + 1).copied();
            let after_next = chars.get(k + 2).copied();
            let tight = matches!(next, Some(',' | ')' | ']' | ';' | '?'))
                || matches!(prev, Some('(' | '['))
                // `x . y`, `0 .. n`
                || next == Some('.')
                || (prev == Some('.') && (before_prev != Some('.') || next != Some('=')))
                // `f (x)`, `v [i]`, `m ! (..)`
                || (matches!(next, Some('(' | '['))
                    && (word(prev) || matches!(prev, Some(')' | ']' | '>' | '!'))))
                || (next == Some('!') && word(prev) && after_next != Some('='))
                // `a :: b`
                || (next == Some(':') && after_next == Some(':'))
                || out.ends_with("::");
            if tight {
                continue;
            }
        }
        out.push(c);
    }
    out
}

pub fn refuse_while(at: &dyn ToTokens, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`while` on the traced value `{value}` cannot be traced: whether the loop goes on is \
             unknown until the function runs; write `lax::while_loop(|carry| condition, |carry| \
             body, init)`, or loop over a static range (`for i in 0..n`, or \
             `lax::fori_loop(0, n, |i, carry| body, init)` and `lax::scan`, which trace the \
             body once and differentiate in reverse mode)"
        ),
    )
}

pub fn refuse_traced_range(at: &dyn ToTokens, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`for` over the traced range `{value}` cannot be traced: how many times the loop \
             runs is unknown until the function runs (`i32`, `u32` and `i64` parameters are \
             traced, as Python ints are under `jax.jit`); write `lax::fori_loop(lo, hi, |i, \
             carry| body, init)`, or make the bound static: declare it `usize`, or name it in \
             `static_argnames = (\"n\",)`"
        ),
    )
}

pub fn refuse_match(at: &dyn ToTokens, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`match` on the traced value `{value}` cannot be traced: which arm runs is unknown \
             until the function runs; write `lax::switch(index, &[&branch0, &branch1], \
             operands)` with a 0-d integer index, or an `if` on a traced bool (it becomes \
             `lax::cond`)"
        ),
    )
}

pub fn refuse_jump_in_branch(at: &dyn ToTokens, jump: &str, value: &str) -> syn::Error {
    let instead = match jump {
        "return" => {
            "make the `if` produce the result in both branches instead (`if c { a } else { b }`, \
             which becomes `lax::cond`)"
        }
        "?" => {
            "call the fallible function outside the `if` (or outside the traced function) and \
             make both branches produce a value"
        }
        _ => {
            "write the loop with `lax::while_loop` (its condition may be traced), or keep \
             iterating and choose values with an `if` that produces a value in both branches"
        }
    };
    err(
        at,
        format!(
            "`{jump}` inside an `if` on the traced value `{value}` cannot be traced: both \
             branches are traced, and which one runs is decided when the function runs; {instead}"
        ),
    )
}

pub fn refuse_static_assign_in_branch(at: &dyn ToTokens, name: &str, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "the static value `{name}` is assigned inside an `if` on the traced value `{value}`, \
             so its value after the `if` is unknown while tracing; make `{name}` an array (`let \
             mut {name} = Array::from(0.0f32);`) so that the `if`, which becomes `lax::cond`, \
             returns it, or assign it outside the branch"
        ),
    )
}

/// `suggestion` is the functional update to write instead, e.g. `y = y.at(s![i]).set(v);`.
pub fn refuse_index_assign(at: &dyn ToTokens, value: &str, suggestion: &str) -> syn::Error {
    err(
        at,
        format!(
            "arrays are immutable, so `{value}` cannot be assigned through an index; write the \
             functional update `{suggestion}` (JAX's `x.at[i].set(v)`; `.at(..)` also has \
             `.add`, `.mul`, `.min` and `.max`)"
        ),
    )
}

/// `ty` is the cast's target type, `expr` the cast value's code, `dtype` the matching DType.
pub fn refuse_cast(
    at: &dyn ToTokens,
    value: &str,
    ty: &str,
    expr: &str,
    dtype: &str,
) -> syn::Error {
    err(
        at,
        format!(
            "`as {ty}` would turn the traced value `{value}` into a Rust number, but it has no \
             value while the function is traced (JAX's ConcretizationTypeError); to change its \
             dtype write `{expr}.astype(DType::{dtype})` and keep computing with arrays"
        ),
    )
}

pub fn refuse_concretize(at: &dyn ToTokens, method: &str, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`.{method}()` needs the data of `{value}`, a traced value that has none while the \
             function is traced (JAX's ConcretizationTypeError); keep computing with arrays and \
             return the array (call `.{method}()` on the result, outside the traced function), \
             or print it when the function runs with `rjax::debug_print!(\"{{}}\", {value})`"
        ),
    )
}

pub fn refuse_print(at: &dyn ToTokens, mac: &str, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`{mac}!` would format `{value}`, a traced value that has no value while the \
             function is traced; write `rjax::debug_print!(\"{{}}\", {value})`, which prints when \
             the function runs (static facts such as `{value}.shape()` may be formatted)"
        ),
    )
}

pub fn refuse_assert(at: &dyn ToTokens, mac: &str, value: &str) -> syn::Error {
    err(
        at,
        format!(
            "`{mac}!` needs the value of `{value}`, a traced value that has no value while the \
             function is traced; assert on static facts (`{value}.shape()`, `{value}.ndim()`), \
             check the value outside the traced function, or print it when the function runs \
             with `rjax::debug_print!(\"{{}}\", {value})`"
        ),
    )
}

pub fn refuse_debug_print_format(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "`debug_print!` formats each array with a plain `{}` (no names, positions or format \
         specs); write `rjax::debug_print!(\"x = {}\", x)`",
    )
}

pub fn refuse_unsafe(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "`unsafe` is not allowed in traced functions: their bodies become rjax programs; move \
         the unsafe code into a separate function that is not traced",
    )
}

/// `in_signature`: `async fn` rather than an `async` block or `.await` in the body.
pub fn refuse_async(at: &dyn ToTokens, in_signature: bool) -> syn::Error {
    let instead = if in_signature {
        "make it a plain `fn`"
    } else {
        "compute the value directly, without `async` or `.await`"
    };
    err(
        at,
        format!(
            "`async` is not allowed in traced functions: a traced function runs to completion \
             as one rjax program; {instead}"
        ),
    )
}

pub fn refuse_static_mut(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "`static mut` is not allowed in traced functions: the body runs only when it is traced, \
         so global state it updates would not change on later calls; pass the value in as an \
         argument and return the new value",
    )
}

pub fn refuse_raw_pointer(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "raw pointers are not allowed in traced functions; pass arrays (`&Array`) or pytrees \
         of them",
    )
}

pub fn refuse_type_generics(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "traced functions cannot have type or const parameters: each signature is traced and \
         cached on its own; write the function for concrete types (`&Array`, `&[(Array, \
         Array)]`, a `#[derive(Tree)]` struct)",
    )
}

pub fn refuse_method(at: &dyn ToTokens, function: &str) -> syn::Error {
    err(
        at,
        format!(
            "rjax attributes apply to free functions, not methods; write `fn {function}(model: \
             &Model, x: &Array)` with `#[derive(Tree)] struct Model`"
        ),
    )
}

/// `pattern` and `ty` are the parameter's code.
pub fn refuse_param_pattern(at: &dyn ToTokens, pattern: &str, ty: &str) -> syn::Error {
    err(
        at,
        format!(
            "parameters of traced functions must be plain names; write `arg: {ty}` and \
             destructure it in the body: `let {pattern} = arg;`"
        ),
    )
}

pub fn refuse_result_return(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "traced functions return arrays or pytrees of them, not `Result`: the function runs as \
         one rjax program, which cannot stop early with an error; return the value, and check \
         what can fail before calling it",
    )
}

pub fn refuse_mut_ref(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "traced functions cannot take `&mut` parameters: arrays are immutable; take `&Array` \
         (or the value) and return the new value",
    )
}

pub fn refuse_impl_trait(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "traced functions cannot take `impl Trait` parameters: each signature is traced and \
         cached on its own; use a concrete type such as `&Array`",
    )
}

/// `kind` is `enum` or `union`.
pub fn refuse_tree_not_struct(at: &dyn ToTokens, kind: &str) -> syn::Error {
    err(
        at,
        format!(
            "`#[derive(Tree)]` supports structs, not {kind}s: a pytree's structure is part of \
             the compile-cache key and cannot depend on a value; use a struct, with `Option<..>` \
             fields for parts that may be missing"
        ),
    )
}

pub fn refuse_tree_option(at: &dyn ToTokens, option: &str) -> syn::Error {
    err(
        at,
        format!(
            "unknown field option `#[tree({option})]`: the only one is `#[tree(static)]`, which \
             keeps the field in the pytree's structure (and the compile-cache key) instead of \
             its leaves"
        ),
    )
}

pub fn refuse_transform_arg(at: &dyn ToTokens, attr: &str) -> syn::Error {
    let own = match attr {
        "grad" | "value_and_grad" => "`argnums = 0`, `argnums = (0, 1)`, `has_aux`, ",
        "jacfwd" | "jacrev" | "hessian" => "`argnums = 0`, `argnums = (0, 1)`, ",
        "custom_jvp" => "`jvp = rule_function`, ",
        "custom_vjp" => "`fwd = fwd_function, bwd = bwd_function`, ",
        "vmap" | "pmap" => "`in_axes = (None, 0, ..)`, `out_axes = 0`, `axis_name = \"i\"`, ",
        _ => "",
    };
    err(
        at,
        format!(
            "`#[{attr}]` does not take `{}`; it takes {own}`static_argnames = (\"name\", ..)` \
             and `static_argnums = (1, ..)`",
            code(at)
        ),
    )
}

pub fn refuse_static_name(at: &dyn ToTokens, name: &str, params: &[String]) -> syn::Error {
    let list: Vec<String> = params.iter().map(|p| format!("`{p}`")).collect();
    err(
        at,
        format!(
            "static_argnames: `{name}` is not a parameter of this function; its parameters are \
             {}",
            list.join(", ")
        ),
    )
}

pub fn refuse_static_num(at: &dyn ToTokens, num: usize, count: usize) -> syn::Error {
    err(
        at,
        format!(
            "static_argnums: {num} is out of range: the function has {count} parameters \
             (positions start at 0)"
        ),
    )
}

pub fn refuse_argnum_range(
    at: &dyn ToTokens,
    attr: &str,
    argnum: usize,
    count: usize,
) -> syn::Error {
    err(
        at,
        format!(
            "`#[{attr}]`: argnums {argnum} is out of range: the function it transforms has \
             {count} parameter{}",
            if count == 1 { "" } else { "s" }
        ),
    )
}

pub fn refuse_argnum_static(
    at: &dyn ToTokens,
    attr: &str,
    argnum: usize,
    param: &str,
) -> syn::Error {
    err(
        at,
        format!(
            "`#[{attr}]`: argnums {argnum} is `{param}`, an integer, boolean, string or static \
             parameter; {attr} requires real-valued inputs (`f32`, `f64`, `Array` or pytrees \
             of them)"
        ),
    )
}

pub fn refuse_grad_return(at: &dyn ToTokens, attr: &str, expected: &str, why: &str) -> syn::Error {
    err(
        at,
        format!(
            "`#[{attr}]` returns {why}, so the declared return type must be `{expected}`, \
             not `{}`",
            code(at)
        ),
    )
}

pub fn refuse_missing_return(at: &dyn ToTokens, attr: &str) -> syn::Error {
    err(at, format!("`#[{attr}]` functions return a value: declare the return type"))
}

pub fn refuse_jvp_params(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "`#[jvp]` takes the primals followed by one tangent per traced primal, of the same \
         types: `fn f(x: &Array, y: &Array, tx: &Array, ty: &Array) -> (Array, Array)`",
    )
}

pub fn refuse_vjp_params(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "`#[vjp]` takes the primals followed by one cotangent parameter of the function's \
         output type: `fn f(x: &Array, ct: &Array) -> Array`",
    )
}

pub fn refuse_axes(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        format!(
            "`{}` is not an axis: vmap axes are `None`, an integer (`0`, `-1`), or a tuple of \
             them, nested for pytree parameters (`in_axes = (None, (0, 1))`)",
            code(at)
        ),
    )
}

pub fn refuse_in_axes_count(at: &dyn ToTokens, entries: usize, params: &[String]) -> syn::Error {
    err(
        at,
        format!(
            "in_axes has {entries} entries, but the function has {} parameters ({}); give one \
             entry per parameter, `None` for those that are not mapped",
            params.len(),
            params.join(", ")
        ),
    )
}

pub fn refuse_mapped_static(at: &dyn ToTokens, param: &str) -> syn::Error {
    err(
        at,
        format!(
            "`{param}` is a static parameter (one Rust value per call), so it cannot be mapped; \
             give it `None` in in_axes"
        ),
    )
}

pub fn refuse_mapped_scalar(at: &dyn ToTokens, param: &str, ty: &str) -> syn::Error {
    err(
        at,
        format!(
            "`{param}: {ty}` holds one number per call, so it cannot be mapped; declare it \
             `{param}: &Array` (each example then sees a 0-d array), or give it `None`"
        ),
    )
}

pub fn refuse_axes_structure(
    at: &dyn ToTokens,
    what: &str,
    entries: usize,
    ty: &str,
) -> syn::Error {
    err(
        at,
        format!(
            "this {what} entry is a tuple of {entries}, but its value has type `{ty}`, which \
             {}; give one axis (or `None`) for all of it, or one entry per element",
            if ty.starts_with('(') {
                "has a different number of elements"
            } else {
                "is not a tuple"
            }
        ),
    )
}

pub fn refuse_unmapped(at: &dyn ToTokens) -> syn::Error {
    err(
        at,
        "vmap needs at least one mapped parameter, but every in_axes entry is `None`; map one \
         (`0`), or call the function without vmap",
    )
}

pub fn refuse_scalar_vmap_return(at: &dyn ToTokens, ty: &str) -> syn::Error {
    err(
        at,
        format!(
            "a vmapped function returns one value per example, which `{ty}` cannot hold; \
             declare the return type `Array`"
        ),
    )
}

pub fn refuse_custom_args(at: &dyn ToTokens, attr: &str) -> syn::Error {
    let example = if attr == "custom_jvp" {
        "`#[custom_jvp(jvp = f_jvp)]`, where `#[traceable] fn f_jvp` takes the primals and one \
         tangent per traced primal and returns `(out, out_tangent)`"
    } else {
        "`#[custom_vjp(fwd = f_fwd, bwd = f_bwd)]`, where `#[traceable] fn f_fwd` takes the \
         parameters and returns `(out, residuals)`, and `#[traceable] fn f_bwd(residuals, \
         cotangent)` returns one cotangent per traced parameter"
    };
    err(at, format!("`#[{attr}]` names the functions that give its derivative: write {example}"))
}

#[cfg(test)]
mod tests {
    use super::code;

    #[test]
    fn code_reads_like_source() {
        let cases: [(syn::Expr, &str); 6] = [
            (syn::parse_quote!(y.at(s![i]).add(1.0)), "y.at(s![i]).add(1.0)"),
            (syn::parse_quote!(x.sum() as usize), "x.sum() as usize"),
            (syn::parse_quote!(rjax::debug_print!("{}", x)), "rjax::debug_print!(\"{}\", x)"),
            (syn::parse_quote!((w, b)), "(w, b)"),
            (syn::parse_quote!(x != y.0), "x != y.0"),
            (syn::parse_quote!(0..n), "0..n"),
        ];
        for (e, text) in cases {
            assert_eq!(code(&e), text);
        }
    }
}

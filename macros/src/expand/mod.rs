//! Code generation: the user's function, its companion type, and the `Tree` derive.
//!
//! For `#[traceable] fn f(x: &Array) -> Array { body }` the expansion is
//!
//! ```text
//! fn f(x: &Array) -> Array { f::__rjax_traced(x) }       // eager: runs op by op
//! struct f {}                                             // companion, in the type namespace
//! impl f {
//!     fn __rjax_traced(x: &Array) -> Array { body' }      // the body, rewritten (body.rs)
//!     fn jaxpr(x: &Array) -> TracedFunction { .. }        // the IR for these arguments
//! }
//! ```
//!
//! The companion shares the function's name and visibility, so `use a::f;` brings both, and a
//! traced call `a::f(x)` in another function reaches `a::f::__rjax_traced` — or fails to
//! resolve when `f` is not traceable. `#[jit]` adds a compile cache (`f::cache_info()`) and
//! makes the function itself run through it.

mod body;
mod stack;
pub mod tree;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType, Type};

use crate::parse::signature::Param;
use crate::parse::signature::{self, holds_floats, scalar_dtype};
use crate::parse::transforms::{self, Layer, Transform};
use crate::parse::{Func, ParamKind, Passing, Taint};
use body::BodyPass;

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Traceable,
    Jit,
}

/// Expands an annotated function, or returns every error found in it. `name` is the
/// attribute being expanded (the outermost of the function's rjax attributes); the others
/// below it are read from the item and expanded together with it, as one transform stack.
pub fn function(
    attr: TokenStream,
    item: TokenStream,
    name: &str,
) -> Result<TokenStream, Vec<syn::Error>> {
    let mut item: ItemFn = syn::parse2(item).map_err(|e| vec![e])?;
    let layers = stack(name, attr, &mut item)?;
    let mode =
        if matches!(layers[0].transform, Transform::Jit) { Mode::Jit } else { Mode::Traceable };
    let statics: Vec<_> = layers.iter().map(|l| &l.statics).collect();
    let func = Func::parse(item, &statics)?;
    let params = func.params.iter().map(|p| {
        let taint = if matches!(p.kind, ParamKind::Static) { Taint::Static } else { Taint::Traced };
        (p.name.to_string(), taint)
    });
    let integers = func
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Scalar(d) if signature::is_integer_dtype(d)));
    let mut pass =
        BodyPass::new(params).with_integer_params(integers.map(|p| p.name.to_string()).collect());
    let mut body = (*func.item.block).clone();
    pass.block(&mut body);
    body::bind_tail(&mut body);
    if !pass.errors.is_empty() {
        return Err(pass.errors);
    }
    let transforms: Vec<Layer> = layers
        .into_iter()
        .filter(|l| !matches!(l.transform, Transform::Jit | Transform::Traceable))
        .collect();
    let body = if transforms.is_empty() {
        quote!(#body)
    } else {
        stack::traced_body(&func, &transforms, body)?
    };
    Ok(generate(&func, body, mode))
}

/// The transform stack, outermost first: the attribute being expanded, then the rjax
/// attributes still on the item (which are removed from it).
fn stack(name: &str, attr: TokenStream, item: &mut ItemFn) -> Result<Vec<Layer>, Vec<syn::Error>> {
    let mut errors = Vec::new();
    let mut layers = Vec::new();
    let outer_span = item.sig.ident.span();
    match transforms::layer(name, attr, outer_span) {
        Ok(l) => layers.push(l),
        Err(e) => errors.push(e),
    }
    let mut kept = Vec::new();
    for a in std::mem::take(&mut item.attrs) {
        let Some(inner) = transforms::transform_name(&a) else {
            kept.push(a);
            continue;
        };
        let args = match &a.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => quote!(#nv),
        };
        match transforms::layer(&inner, args, a.span()) {
            Ok(l) => layers.push(l),
            Err(e) => errors.push(e),
        }
    }
    item.attrs = kept;
    if errors.is_empty() {
        Ok(layers)
    } else {
        Err(errors)
    }
}

fn generate(func: &Func, body: TokenStream, mode: Mode) -> TokenStream {
    let item = &func.item;
    let (attrs, vis, sig) = (&item.attrs, &item.vis, &item.sig);
    let name = &sig.ident;
    let name_text = name.to_string();
    let (generics, where_clause) = (&sig.generics, &sig.generics.where_clause);
    let traced_entry = traced_entry(func, body);
    let call_args: Vec<_> = func.params.iter().map(eager_arg).collect();
    let result = convert_result(&sig.output, quote!(__rjax_result));
    let tree_call = tree_call(func, &name_text);
    let user_body = match mode {
        Mode::Traceable => quote! {
            let __rjax_result = #name::__rjax_traced(#(#call_args),*);
            #result
        },
        Mode::Jit => {
            let site = call_site(func);
            let TreeCall { args, unpack, pass } = &tree_call;
            quote! {
                #site
                let __rjax_result = #name::__rjax_jit().call(
                    &#args,
                    &__rjax_site,
                    |__rjax_leaves, __rjax_def| {
                        #unpack
                        #name::__rjax_traced(#(#pass),*)
                    },
                );
                #result
            }
        }
    };
    let jit_items = (mode == Mode::Jit).then(|| {
        quote! {
            #[doc(hidden)]
            pub fn __rjax_jit() -> &'static ::rjax::__private::JitFunction {
                static JIT: ::rjax::__private::JitFunction =
                    ::rjax::__private::JitFunction::new(#name_text);
                &JIT
            }

            /// The compile cache's counters: plans held, hits, misses, traces, evictions.
            pub fn cache_info() -> ::rjax::CacheInfo {
                Self::__rjax_jit().info()
            }

            /// Bounds the compile cache to `capacity` plans, least recently used out first.
            pub fn set_cache_capacity(capacity: usize) {
                Self::__rjax_jit().set_capacity(capacity)
            }

            /// Drops every cached plan (the counters keep counting).
            pub fn clear_cache() {
                Self::__rjax_jit().clear()
            }
        }
    });
    let TreeCall { args, unpack, pass } = &tree_call;
    let params = &sig.inputs;
    let companion_doc = format!(
        "Companion of the traced function [`{name_text}()`]: `{name_text}::jaxpr(..)` shows its IR{}.",
        if mode == Mode::Jit { ", `cache_info()` its compile cache" } else { "" }
    );
    quote! {
        #(#attrs)*
        #[allow(clippy::too_many_arguments, unused_mut)]
        #vis #sig {
            #user_body
        }

        #[doc = #companion_doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        impl ::rjax::__private::Companion for #name {}

        #[allow(dead_code)]
        impl #name {
            #traced_entry

            /// The function's IR for these arguments, as traced and after simplification
            /// (like `jax.make_jaxpr`).
            #[allow(clippy::too_many_arguments, unused_variables, unused_mut)]
            pub fn jaxpr #generics (#params) -> ::rjax::TracedFunction #where_clause {
                ::rjax::__private::trace_function(#name_text, &#args, |__rjax_leaves, __rjax_def| {
                    #unpack
                    #name::__rjax_traced(#(#pass),*)
                })
            }

            #jit_items
        }
    }
}

/// Binds `__rjax_site`: the traced parameters' names and the static arguments, keyed for the
/// compile cache (floats by their bits, other types through `Hash`) and shown for the compile
/// log while it is on.
fn call_site(func: &Func) -> TokenStream {
    let traced: Vec<String> = func
        .params
        .iter()
        .filter(|p| !matches!(p.kind, ParamKind::Static))
        .map(|p| p.name.to_string())
        .collect();
    let statics = func.statics().map(|p| {
        let (name, text) = (&p.name, p.name.to_string());
        quote! {
            ::rjax::__private::StaticArg {
                name: #text,
                hash: (&::rjax::__private::Static(&#name)).static_hash(),
                shown: __rjax_log.then(|| (&::rjax::__private::Static(&#name)).static_shown()),
            }
        }
    });
    quote! {
        #[allow(unused_imports)]
        use ::rjax::__private::{
            DebugStatic as _, HashedStatic as _, KeyedStatic as _, OpaqueStatic as _,
        };
        #[allow(unused_variables)]
        let __rjax_log = ::rjax::__private::log_compiles();
        let __rjax_statics = [#(#statics),*];
        let __rjax_site = ::rjax::__private::CallSite {
            params: &[#(#traced),*],
            statics: &__rjax_statics,
        };
    }
}

/// The traced entry point: the rewritten body, with `f32`/`f64`/`i32`/`u32`/`i64` parameters
/// as 0-d arrays.
fn traced_entry(func: &Func, body: TokenStream) -> TokenStream {
    let sig = &func.item.sig;
    let (generics, where_clause) = (&sig.generics, &sig.generics.where_clause);
    let mut params = Vec::new();
    let mut lets = Vec::new();
    for p in &func.params {
        let (name, mutability, ty) = (&p.name, &p.mutability, &p.ty);
        match &p.kind {
            ParamKind::Scalar(dtype) => {
                let dtype = format_ident!("{dtype}");
                params.push(quote!(#name: impl ::rjax::__private::ScalarArg));
                lets.push(quote_spanned! {ty.span()=>
                    let #mutability #name: ::rjax::Array = ::rjax::__private::scalar_param(#name, ::rjax::DType::#dtype);
                });
            }
            ParamKind::Static => params.push(quote!(#mutability #name: #ty)),
            ParamKind::Tree { .. } => {
                let ty = traced_type(ty);
                params.push(quote!(#mutability #name: #ty))
            }
        }
    }
    let output = match &sig.output {
        ReturnType::Default => quote!(),
        ReturnType::Type(arrow, ty) => {
            let ty = traced_type(ty);
            quote!(#arrow #ty)
        }
    };
    quote! {
        #[doc(hidden)]
        #[allow(unused_mut, unused_variables, clippy::too_many_arguments, clippy::needless_return, clippy::let_and_return)]
        pub fn __rjax_traced #generics (#(#params),*) #output #where_clause {
            #(#lets)*
            #body
        }
    }
}

/// A type as traced code sees it: Rust floats become arrays (inside tuples and containers
/// too).
pub(crate) fn traced_type(ty: &Type) -> TokenStream {
    let ty = signature::traced_type(ty);
    quote!(#ty)
}

/// Turns the traced result (named `value`) into the declared return type: arrays for Rust
/// floats are read back as numbers.
fn convert_result(output: &ReturnType, value: TokenStream) -> TokenStream {
    match output {
        ReturnType::Default => value,
        ReturnType::Type(_, ty) => convert_value(ty, value),
    }
}

fn convert_value(ty: &Type, value: TokenStream) -> TokenStream {
    if scalar_dtype(ty).is_some() {
        return quote!(::rjax::__private::scalar_result::<#ty>(#value));
    }
    match ty {
        Type::Tuple(t) if !t.elems.is_empty() => {
            let parts: Vec<_> =
                (0..t.elems.len()).map(|k| format_ident!("__rjax_part{k}")).collect();
            let converted = t.elems.iter().zip(&parts).map(|(ty, p)| convert_value(ty, quote!(#p)));
            quote!({ let (#(#parts,)*) = #value; (#(#converted,)*) })
        }
        Type::Paren(p) => convert_value(&p.elem, value),
        _ => match container_elem(ty) {
            Some((name, elem)) if holds_floats(elem) => {
                let v = format_ident!("__rjax_v");
                let each = convert_value(elem, quote!(#v));
                if name == "Option" {
                    quote!(#value.map(|#v| #each))
                } else {
                    quote!(#value.into_iter().map(|#v| #each).collect::<::std::vec::Vec<_>>())
                }
            }
            _ => value,
        },
    }
}

/// `("Option", T)` for `Option<T>`, `("Vec", T)` for `Vec<T>`.
fn container_elem(ty: &Type) -> Option<(String, &Type)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match (name.as_str(), args.args.first()) {
        ("Option" | "Vec", Some(syn::GenericArgument::Type(t))) if args.args.len() == 1 => {
            Some((name, t))
        }
        _ => None,
    }
}

/// A parameter as the eager function passes it to the traced entry point: a pytree holding
/// Rust floats is rebuilt with arrays for them, as the entry point declares it.
fn eager_arg(p: &Param) -> TokenStream {
    let name = &p.name;
    match &p.kind {
        ParamKind::Tree { owned, passing } if holds_floats(owned) => {
            let traced = traced_type(owned);
            let value = quote!(::rjax::__private::retype::<_, #traced>(&#name));
            match passing {
                Passing::Owned => value,
                Passing::Ref => quote!(&#value),
                Passing::OptionRef => quote!(#value.as_ref()),
            }
        }
        _ => quote!(#name),
    }
}

/// How the traced parameters travel through the runtime: `args` is a tuple of them to
/// flatten, `unpack` rebuilds owned values from traced leaves, and `pass` hands every
/// parameter (rebuilt or static) to the traced entry point.
struct TreeCall {
    args: TokenStream,
    unpack: TokenStream,
    pass: Vec<TokenStream>,
}

fn tree_call(func: &Func, _name: &str) -> TreeCall {
    let mut refs = Vec::new();
    let mut names = Vec::new();
    let mut types = Vec::new();
    let mut pass = Vec::new();
    for p in &func.params {
        let name = &p.name;
        let rebuilt = format_ident!("__rjax_arg_{}", name.to_string().trim_start_matches('_'));
        match &p.kind {
            ParamKind::Static => pass.push(quote!(#name)),
            ParamKind::Scalar(_) => {
                refs.push(quote!(&#name));
                names.push(rebuilt.clone());
                types.push(quote!(::rjax::Array));
                pass.push(quote!(#rebuilt));
            }
            ParamKind::Tree { owned, passing } => {
                refs.push(if *passing == Passing::Ref { quote!(#name) } else { quote!(&#name) });
                names.push(rebuilt.clone());
                types.push(traced_type(owned));
                pass.push(match passing {
                    Passing::Owned => quote!(#rebuilt),
                    Passing::Ref => quote!(&#rebuilt),
                    Passing::OptionRef => quote!(#rebuilt.as_ref()),
                });
            }
        }
    }
    TreeCall {
        args: quote!((#(#refs,)*)),
        unpack: quote! {
            let (#(#names,)*): (#(#types,)*) = ::rjax::tree::unflatten(__rjax_def, __rjax_leaves);
        },
        pass,
    }
}

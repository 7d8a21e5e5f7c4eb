//! The traced body of a transformed function: one runtime call per transform, nested
//! outermost first, each taking the parameters as flattened trees and a closure that rebuilds
//! them and runs the next transform (or, innermost, the user's body).
//!
//! `#[grad] fn g(x: &Array) -> Array { body }` traces as
//!
//! ```text
//! ad::grad(Wrt { argnums: &[0], .. }, false, false, vec![Flat::of(&x)], |params| {
//!     let __rjax_owned_x: Array = params.next().into_tree();
//!     let x: &Array = &__rjax_owned_x;
//!     body
//! })                                        // a Flat, rebuilt into the declared `Array`
//! ```
//!
//! Each transform's result structure is known at run time (a gradient has its argument's), so
//! only the outermost result is rebuilt into a Rust type, the declared return type. What the
//! macro can check about types it checks here: a gradient's declared type must be the owned
//! type of the differentiated parameters.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, ReturnType, Type};

use super::body::traced_call_tokens;
use crate::check;
use crate::parse::signature::Param;
use crate::parse::signature::{is_integer_dtype, scalar_dtype, type_name};
use crate::parse::transforms::{AxesKind, AxesSpec, Layer, Transform, VmapArgs};
use crate::parse::{Func, ParamKind, Passing};

/// The function a layer sees: its parameters and, when the macro knows it, its return type.
#[derive(Clone)]
struct View<'a> {
    params: Vec<&'a Param>,
    ret: Option<Type>,
}

/// The traced body for `layers` (outermost first, without `jit`/`traceable`) over `body`.
pub fn traced_body(
    func: &Func,
    layers: &[Layer],
    body: Block,
) -> Result<TokenStream, Vec<syn::Error>> {
    let ret = match &func.item.sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => None,
    };
    if ret.is_none() {
        let sig = &func.item.sig;
        return Err(vec![check::refuse_missing_return(&sig.ident, &layers[0].name)]);
    }
    let view = View { params: func.params.iter().collect(), ret };
    let expr = layer_expr(layers, view, &body).map_err(|e| vec![e])?;
    let out = match &func.item.sig.output {
        ReturnType::Type(_, ty) => super::traced_type(ty),
        ReturnType::Default => unreachable!("checked to have a return type"),
    };
    Ok(quote! {{
        let __rjax_out: ::rjax::__private::ad::Flat = #expr;
        __rjax_out.into_tree::<#out>()
    }})
}

fn layer_expr(layers: &[Layer], view: View<'_>, body: &Block) -> Result<TokenStream, syn::Error> {
    let Some((layer, inner)) = layers.split_first() else {
        // The body's type is the declared one where the transforms keep it (`vmap`, `jvp`,
        // ..), so that a tail `.collect()` or `tree::unflatten(..)` infers from the signature.
        return Ok(match &view.ret {
            Some(ret) => {
                let ret = super::traced_type(ret);
                quote!({ let __rjax_body: #ret = #body; __rjax_body })
            }
            None => quote!(#body),
        });
    };
    let traced: Vec<&Param> = view.params.iter().copied().filter(|p| is_traced(p)).collect();
    let span = layer.span;
    match &layer.transform {
        Transform::Jit | Transform::Traceable => layer_expr(inner, view, body),
        Transform::Grad { argnums, has_aux, value } => {
            let positions = positions(layer, &view, &argnums.nums)?;
            let alias_check = match &view.ret {
                Some(ret) => check_grad_return(
                    layer,
                    ret,
                    &view,
                    &argnums.nums,
                    argnums.tuple,
                    *has_aux,
                    *value,
                )?,
                None => None,
            };
            let wrt = wrt(layer, &traced, &positions);
            let (tuple, aux) = (argnums.tuple, *has_aux);
            let closure =
                closure(&traced, layer_expr(inner, View { ret: None, ..view.clone() }, body)?);
            let flats = flats(&traced);
            let function = if *value { quote!(value_and_grad) } else { quote!(grad) };
            Ok(quote_spanned! {span=> {
                #alias_check
                ::rjax::__private::ad::#function(#wrt, #tuple, #aux, #flats, #closure)
            }})
        }
        Transform::Jvp => {
            let split = jvp_split(&view.params)
                .ok_or_else(|| check::refuse_jvp_params(&layer.name_tokens()))?;
            let (primals, tangents) = view.params.split_at(split);
            let inner_ret = match &view.ret {
                Some(Type::Tuple(t))
                    if t.elems.len() == 2 && same_tokens(&t.elems[0], &t.elems[1]) =>
                {
                    Some(t.elems[0].clone())
                }
                Some(other) => {
                    return Err(check::refuse_grad_return(
                        other,
                        "jvp",
                        "(T, T)",
                        "the output and its tangent, of the same type T",
                    ))
                }
                None => None,
            };
            let primal_traced: Vec<&Param> =
                primals.iter().copied().filter(|p| is_traced(p)).collect();
            let names = names(&primal_traced);
            let inner_view = View { params: primals.to_vec(), ret: inner_ret };
            let closure = closure(&primal_traced, layer_expr(inner, inner_view, body)?);
            let (pf, tf) = (flats(&primal_traced), flats(tangents));
            Ok(quote_spanned! {span=> ::rjax::__private::ad::jvp(#names, #pf, #tf, #closure) })
        }
        Transform::Vjp => {
            let Some((ct, primals)) = view.params.split_last() else {
                return Err(check::refuse_vjp_params(&layer.name_tokens()));
            };
            if !is_traced(ct) {
                return Err(check::refuse_vjp_params(&ct.name));
            }
            let primal_traced: Vec<&Param> =
                primals.iter().copied().filter(|p| is_traced(p)).collect();
            if let Some(ret) = &view.ret {
                let expected = owned_tuple(&primal_traced, primal_traced.len() > 1);
                if !same_tokens(ret, &expected) {
                    let why = "the cotangents of the traced parameters";
                    return Err(check::refuse_grad_return(
                        ret,
                        "vjp",
                        &check::code(&expected),
                        why,
                    ));
                }
            }
            let names = names(&primal_traced);
            let inner_view = View { params: primals.to_vec(), ret: Some(owned_type(ct)) };
            let closure = closure(&primal_traced, layer_expr(inner, inner_view, body)?);
            let pf = flats(&primal_traced);
            let ct_name = &ct.name;
            Ok(quote_spanned! {span=>
                ::rjax::__private::ad::vjp(#names, #pf, ::rjax::__private::ad::Flat::of(&#ct_name), #closure)
            })
        }
        Transform::Jacobian { argnums, kind } => {
            let positions = positions(layer, &view, &argnums.nums)?;
            let tuple = argnums.tuple;
            let wrt = wrt(layer, &traced, &positions);
            let closure =
                closure(&traced, layer_expr(inner, View { ret: None, ..view.clone() }, body)?);
            let flats = flats(&traced);
            let function = format_ident!("{}", kind.name());
            Ok(quote_spanned! {span=>
                ::rjax::__private::ad::#function(#wrt, #tuple, #flats, #closure)
            })
        }
        Transform::CustomJvp { rule } => {
            let f = closure(&traced, layer_expr(inner, view.clone(), body)?);
            let flats = flats(&traced);
            let primals = rebinds(&traced, "__rjax_p", |p| p.name.clone());
            let tangents = rebinds(&traced, "__rjax_t", tangent_name);
            let pass = view.params.iter().map(|p| &p.name);
            let tangent_pass = traced.iter().map(|p| tangent_name(p));
            let arity = view.params.len() + traced.len();
            let call = traced_call_tokens(rule, quote!(#(#pass,)* #(#tangent_pass),*), arity);
            Ok(quote_spanned! {span=>
                ::rjax::__private::ad::custom_jvp_call(#flats, #f, |__rjax_p, __rjax_t| {
                    #primals
                    #tangents
                    #call
                })
            })
        }
        Transform::CustomVjp { fwd, bwd } => {
            let f = closure(&traced, layer_expr(inner, view.clone(), body)?);
            let flats = flats(&traced);
            let primals = rebinds(&traced, "__rjax_p", |p| p.name.clone());
            let pass = view.params.iter().map(|p| &p.name);
            let forward = traced_call_tokens(fwd, quote!(#(#pass),*), view.params.len());
            let ct_type = match &view.ret {
                Some(ty) => super::traced_type(ty),
                None => quote!(_),
            };
            let residuals = quote!(__rjax_res.into_tree(), __rjax_ct.into_tree::<#ct_type>());
            let backward = traced_call_tokens(bwd, residuals, 2);
            Ok(quote_spanned! {span=>
                ::rjax::__private::ad::custom_vjp_call(
                    #flats,
                    #f,
                    |__rjax_p| {
                        #primals
                        #forward
                    },
                    |__rjax_res: ::rjax::__private::ad::Flat, __rjax_ct: ::rjax::__private::ad::Flat| {
                        #backward
                    },
                )
            })
        }
        Transform::Vmap(args) => {
            let in_axes = vmap_in_axes(args, &view)?;
            let out_axes = vmap_out_axes(args, &view)?;
            let names = names(&traced);
            let axis_name = match &args.axis_name {
                Some(name) => quote!(::std::option::Option::Some(#name)),
                None => quote!(::std::option::Option::None),
            };
            let closure = closure(&traced, layer_expr(inner, view.clone(), body)?);
            let flats = flats(&traced);
            let map = if args.parallel { quote!(pmap) } else { quote!(vmap) };
            Ok(quote_spanned! {span=>
                ::rjax::__private::batch::#map(
                    ::rjax::__private::batch::Vmap {
                        names: #names,
                        in_axes: &[#(#in_axes),*],
                        out_axes: &#out_axes,
                        axis_name: #axis_name,
                    },
                    #flats,
                    #closure,
                )
            })
        }
        Transform::Checkpoint => {
            let closure = closure(&traced, layer_expr(inner, view.clone(), body)?);
            let flats = flats(&traced);
            Ok(quote_spanned! {span=> ::rjax::__private::ad::checkpoint(#flats, #closure) })
        }
    }
}

impl Layer {
    fn name_tokens(&self) -> TokenStream {
        let ident = proc_macro2::Ident::new(&self.name, self.span);
        quote!(#ident)
    }
}

fn is_traced(p: &Param) -> bool {
    !matches!(p.kind, ParamKind::Static)
}

/// Where the jvp's tangents start: the split after which there is one parameter per traced
/// parameter before it, all of them traced.
fn jvp_split(params: &[&Param]) -> Option<usize> {
    (1..params.len()).find(|&s| {
        let traced = params[..s].iter().filter(|p| is_traced(p)).count();
        traced == params.len() - s && params[s..].iter().all(|p| is_traced(p))
    })
}

/// The positions of `argnums` among the traced parameters, checking each is a traced one.
fn positions(layer: &Layer, view: &View<'_>, argnums: &[usize]) -> Result<Vec<usize>, syn::Error> {
    let at = layer.name_tokens();
    argnums
        .iter()
        .map(|&a| {
            let p = view.params.get(a).ok_or_else(|| {
                check::refuse_argnum_range(&at, &layer.name, a, view.params.len())
            })?;
            let integer = matches!(p.kind, ParamKind::Scalar(d) if is_integer_dtype(d));
            if !is_traced(p) || integer {
                let text = format!("{}: {}", p.name, check::code(&p.ty));
                return Err(check::refuse_argnum_static(&p.ty, &layer.name, a, &text));
            }
            Ok(view.params[..a].iter().filter(|q| is_traced(q)).count())
        })
        .collect()
}

fn names(traced: &[&Param]) -> TokenStream {
    let names = traced.iter().map(|p| p.name.to_string());
    quote!(&[#(#names),*])
}

fn wrt(layer: &Layer, traced: &[&Param], positions: &[usize]) -> TokenStream {
    let name = &layer.name;
    let names = names(traced);
    quote!(::rjax::__private::ad::Wrt { transform: #name, argnums: &[#(#positions),*], names: #names })
}

fn flats(traced: &[&Param]) -> TokenStream {
    let parts = traced.iter().map(|p| {
        let name = &p.name;
        quote!(::rjax::__private::ad::Flat::of(&#name))
    });
    quote!(::std::vec![#(#parts),*])
}

/// A closure taking the traced parameters as `Flat`s, rebuilding them under their names (as
/// the types the body expects) and evaluating `inner`.
fn closure(traced: &[&Param], inner: TokenStream) -> TokenStream {
    let rebinds = rebinds(traced, "__rjax_params", |p| p.name.clone());
    quote! {
        |__rjax_params: ::std::vec::Vec<::rjax::__private::ad::Flat>| {
            #rebinds
            #inner
        }
    }
}

/// The name a parameter's tangent is bound to in a custom jvp rule's call.
fn tangent_name(p: &Param) -> syn::Ident {
    format_ident!("__rjax_tangent_{}", p.name)
}

/// Rebuilds the traced parameters from the `Vec<Flat>` named `source`, binding each to
/// `name(param)` with the type the body expects.
fn rebinds(traced: &[&Param], source: &str, name: impl Fn(&Param) -> syn::Ident) -> TokenStream {
    let source = format_ident!("{}", source);
    let binds = traced.iter().map(|p| {
        let (name, mutability) = (name(p), &p.mutability);
        let next = quote!(#source.next().expect("one tree per parameter").into_tree());
        match &p.kind {
            ParamKind::Scalar(_) => quote!(let #mutability #name: ::rjax::Array = #next;),
            ParamKind::Tree { owned, passing: Passing::OptionRef } => {
                let owned_name =
                    format_ident!("__rjax_owned_{}", name.to_string().trim_start_matches('_'));
                let owned = super::traced_type(owned);
                quote! {
                    let #owned_name: #owned = #next;
                    let #mutability #name = #owned_name.as_ref();
                }
            }
            ParamKind::Tree { owned, passing: Passing::Ref } => {
                let owned_name =
                    format_ident!("__rjax_owned_{}", name.to_string().trim_start_matches('_'));
                let elem = match &p.ty {
                    Type::Reference(r) => super::traced_type(&r.elem),
                    other => super::traced_type(other),
                };
                let owned = super::traced_type(owned);
                quote! {
                    let #owned_name: #owned = #next;
                    let #mutability #name: &#elem = &#owned_name;
                }
            }
            ParamKind::Tree { owned, passing: Passing::Owned } => {
                let owned = super::traced_type(owned);
                quote!(let #mutability #name: #owned = #next;)
            }
            ParamKind::Static => quote!(),
        }
    });
    quote! {
        let mut #source = #source.into_iter();
        #(#binds)*
    }
}

/// The owned type a parameter's gradient has: `f32` for `f32`, `Array` for `&Array`,
/// `Vec<T>` for `&[T]`.
fn owned_type(p: &Param) -> Type {
    match &p.kind {
        ParamKind::Tree { owned, .. } => (**owned).clone(),
        _ => p.ty.clone(),
    }
}

fn owned_tuple(params: &[&Param], tuple: bool) -> Type {
    if !tuple {
        return owned_type(params[0]);
    }
    let elems = params.iter().map(|p| owned_type(p));
    syn::parse_quote!((#(#elems,)*))
}

/// Checks a gradient's declared type against the differentiated parameters' owned types.
/// Where either names a type the macro cannot see into (an alias such as `type Params =
/// Vec<Array>`), the check is left to the compiler: the returned statement asserts the two
/// are one type.
fn check_grad_return(
    layer: &Layer,
    ret: &Type,
    view: &View<'_>,
    argnums: &[usize],
    tuple: bool,
    has_aux: bool,
    value: bool,
) -> Result<Option<TokenStream>, syn::Error> {
    let params: Vec<&Param> = argnums.iter().map(|&a| view.params[a]).collect();
    let grads = owned_tuple(&params, tuple);
    let grads_text = type_text(&grads);
    let of = params.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ");
    let (declared, expected, why): (Option<&Type>, String, String) = match (value, has_aux) {
        (false, false) => (Some(ret), grads_text, format!("the gradient with respect to {of}")),
        (false, true) => (
            pair(ret).map(|p| p.0),
            format!("({grads_text}, Aux)"),
            format!("the gradient with respect to {of} and the auxiliary output"),
        ),
        (true, false) => (
            pair(ret).map(|p| p.1),
            format!("(Value, {grads_text})"),
            format!("the value and the gradient with respect to {of}"),
        ),
        (true, true) => (
            pair(ret).map(|p| p.1),
            format!("((Value, Aux), {grads_text})"),
            format!("the value with the auxiliary output, and the gradient with respect to {of}"),
        ),
    };
    match declared {
        Some(d) if same_tokens(d, &grads) => Ok(None),
        Some(d) if names_unknown_type(d) || names_unknown_type(&grads) => {
            Ok(Some(quote_spanned! {d.span()=>
                ::rjax::__private::same_type::<#d, #grads>();
            }))
        }
        _ => Err(check::refuse_grad_return(ret, &layer.name, &expected, &why)),
    }
}

/// Types whose structure the macro knows from their name.
const KNOWN_TYPES: &[&str] =
    &["Array", "Vec", "Option", "Box", "BTreeMap", "HashMap", "String", "f32", "f64"];

/// Whether a type names one the macro cannot see into: an alias or a struct.
fn names_unknown_type(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.iter().any(names_unknown_type),
        Type::Paren(p) => names_unknown_type(&p.elem),
        Type::Array(a) => names_unknown_type(&a.elem),
        Type::Slice(s) => names_unknown_type(&s.elem),
        Type::Reference(r) => names_unknown_type(&r.elem),
        Type::Path(p) => p.path.segments.last().is_some_and(|s| {
            let args_unknown = match &s.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().any(
                    |arg| matches!(arg, syn::GenericArgument::Type(t) if names_unknown_type(t)),
                ),
                _ => false,
            };
            !KNOWN_TYPES.contains(&s.ident.to_string().as_str()) || args_unknown
        }),
        _ => true,
    }
}

fn pair(ty: &Type) -> Option<(&Type, &Type)> {
    match ty {
        Type::Tuple(t) if t.elems.len() == 2 => Some((&t.elems[0], &t.elems[1])),
        Type::Paren(p) => pair(&p.elem),
        _ => None,
    }
}

/// Whether two types are written alike, ignoring an `rjax::` / `::std::vec::` qualification.
fn same_tokens(a: &Type, b: &Type) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(ty: &Type) -> String {
    let text = quote!(#ty).to_string().replace(' ', "");
    text.replace("::rjax::", "")
        .replace("rjax::", "")
        .replace("::std::vec::", "")
        .replace("std::vec::", "")
        .replace(",)", ")")
}

/// A type as a message shows it: `Vec<(Array, Array)>`.
fn type_text(ty: &Type) -> String {
    check::code(ty)
        .replace("::std::vec::", "")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
}

/// The `in_axes` entry of each traced parameter, checked against the signature: one entry per
/// parameter (or one for all), static and `f32` parameters unmapped, tuple entries only for
/// tuple-like parameters, and at least one parameter mapped.
fn vmap_in_axes(args: &VmapArgs, view: &View<'_>) -> Result<Vec<TokenStream>, syn::Error> {
    let params = &view.params;
    let explicit: Option<&Vec<AxesSpec>> = match &args.in_axes {
        Some(AxesSpec { kind: AxesKind::Tuple(items), expr }) => {
            if items.len() != params.len() {
                let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
                return Err(check::refuse_in_axes_count(expr, items.len(), &names));
            }
            Some(items)
        }
        _ => None,
    };
    let default = AxesSpec { kind: AxesKind::Axis(0), expr: syn::parse_quote!(0) };
    let shared = args.in_axes.as_ref().unwrap_or(&default);
    let mut tokens = Vec::new();
    let mut any_mapped = false;
    for (i, p) in params.iter().enumerate() {
        let name = p.name.to_string();
        let entry = match explicit {
            Some(items) => &items[i],
            None if is_traced(p) && !matches!(p.kind, ParamKind::Scalar(_)) => shared,
            None => {
                if is_traced(p) {
                    tokens.push(axes_tokens(&AxesSpec { kind: AxesKind::None, ..default.clone() }));
                }
                continue;
            }
        };
        match (&p.kind, &entry.kind) {
            (_, AxesKind::None) => {}
            (ParamKind::Static, _) => return Err(check::refuse_mapped_static(&entry.expr, &name)),
            (ParamKind::Scalar(_), AxesKind::Axis(_)) => {
                return Err(check::refuse_mapped_scalar(&entry.expr, &name, &check::code(&p.ty)));
            }
            _ => check_axes_structure(entry, &p.ty, "in_axes")?,
        }
        if is_traced(p) {
            any_mapped |= !matches!(entry.kind, AxesKind::None);
            tokens.push(axes_tokens(entry));
        }
    }
    if !any_mapped {
        let at = args.in_axes.as_ref().map(|s| s.expr.clone()).unwrap_or(default.expr);
        return Err(check::refuse_unmapped(&at));
    }
    Ok(tokens)
}

fn vmap_out_axes(args: &VmapArgs, view: &View<'_>) -> Result<TokenStream, syn::Error> {
    let default = AxesSpec { kind: AxesKind::Axis(0), expr: syn::parse_quote!(0) };
    let spec = args.out_axes.as_ref().unwrap_or(&default);
    if let Some(ret) = &view.ret {
        if scalar_dtype(ret).is_some() && !matches!(spec.kind, AxesKind::None) {
            return Err(check::refuse_scalar_vmap_return(ret, &check::code(ret)));
        }
        check_axes_structure(spec, ret, "out_axes")?;
    }
    Ok(axes_tokens(spec))
}

/// A tuple entry must match a tuple type element for element; arrays and scalars take one
/// axis. Other pytrees (`Vec`s, structs) are checked when the function runs.
fn check_axes_structure(spec: &AxesSpec, ty: &Type, what: &str) -> Result<(), syn::Error> {
    let AxesKind::Tuple(items) = &spec.kind else { return Ok(()) };
    let ty = match ty {
        Type::Reference(r) => r.elem.as_ref(),
        Type::Paren(p) => p.elem.as_ref(),
        other => other,
    };
    let refuse = || check::refuse_axes_structure(&spec.expr, what, items.len(), &type_text(ty));
    match ty {
        Type::Tuple(t) if t.elems.len() == items.len() => {
            items.iter().zip(&t.elems).try_for_each(|(s, e)| check_axes_structure(s, e, what))
        }
        Type::Tuple(_) => Err(refuse()),
        _ if scalar_dtype(ty).is_some() || type_name(ty).is_some_and(|n| n == "Array") => {
            Err(refuse())
        }
        _ => Ok(()),
    }
}

fn axes_tokens(spec: &AxesSpec) -> TokenStream {
    let path = quote!(::rjax::__private::batch::BatchAxes);
    match &spec.kind {
        AxesKind::None => quote!(#path::None),
        AxesKind::Axis(a) => {
            let magnitude = proc_macro2::Literal::u64_unsuffixed(a.unsigned_abs());
            if *a < 0 {
                quote!(#path::Axis(-#magnitude))
            } else {
                quote!(#path::Axis(#magnitude))
            }
        }
        AxesKind::Tuple(items) => {
            let inner = items.iter().map(axes_tokens);
            quote!(#path::Tree(::std::vec![#(#inner),*]))
        }
    }
}

//! The signature model: which parameters are traced (and as what) and which are static.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::check;

/// How a parameter takes part in tracing.
#[derive(Clone)]
pub enum ParamKind {
    /// `f32` / `f64`: a traced 0-d array of that dtype.
    Scalar(&'static str),
    /// An array or pytree of arrays; `owned` is the type it is rebuilt into from leaves, and
    /// `by_ref` says the function takes a reference to it.
    Tree { owned: Type, by_ref: bool },
    /// Integers, `bool`, `&str`, ...: static, part of the compile-cache key.
    Static,
}

/// One parameter of the annotated function.
pub struct Param {
    pub name: Ident,
    pub ty: Type,
    pub kind: ParamKind,
}

/// The annotated function, parsed.
pub struct Func {
    pub item: ItemFn,
    pub params: Vec<Param>,
}

impl Func {
    /// Reads the signature, collecting every problem with it.
    pub fn parse(item: ItemFn) -> Result<Func, Vec<syn::Error>> {
        let mut errors = Vec::new();
        let sig = &item.sig;
        if let Some(t) = &sig.asyncness {
            errors.push(check::refuse_async(t.span()));
        }
        if let Some(t) = &sig.unsafety {
            errors.push(check::refuse_unsafe(t.span()));
        }
        if let Some(t) = sig.generics.type_params().next() {
            errors.push(check::refuse_type_generics(t.span()));
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => errors.push(check::refuse_method(r.span())),
                FnArg::Typed(pt) => {
                    let name = match &*pt.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            p.ident.clone()
                        }
                        other => {
                            errors.push(check::refuse_param_pattern(other.span()));
                            continue;
                        }
                    };
                    match classify(&pt.ty) {
                        Ok(kind) => params.push(Param { name, ty: (*pt.ty).clone(), kind }),
                        Err(e) => errors.push(e),
                    }
                }
            }
        }
        if let ReturnType::Type(_, ty) = &sig.output {
            if let Some(span) = raw_pointer(ty) {
                errors.push(check::refuse_raw_pointer(span));
            }
        }
        if errors.is_empty() {
            Ok(Func { item, params })
        } else {
            Err(errors)
        }
    }

    /// The static parameters.
    pub fn statics(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| matches!(p.kind, ParamKind::Static))
    }
}

/// The last segment's name of a plain path type (`f32`, `Array`, `rjax::Array`).
pub fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(g) => type_name(&g.elem),
        Type::Paren(p) => type_name(&p.elem),
        _ => None,
    }
}

const STATIC_TYPES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "bool", "char", "str", "String", "DType",
];

/// Whether a type is static (never traced).
pub fn is_static_type(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => is_static_type(&r.elem),
        _ => type_name(ty).is_some_and(|n| STATIC_TYPES.contains(&n.as_str())),
    }
}

/// The dtype of a Rust float parameter type.
pub fn scalar_dtype(ty: &Type) -> Option<&'static str> {
    match type_name(ty)?.as_str() {
        "f32" => Some("F32"),
        "f64" => Some("F64"),
        _ => None,
    }
}

fn classify(ty: &Type) -> Result<ParamKind, syn::Error> {
    if let Some(span) = raw_pointer(ty) {
        return Err(check::refuse_raw_pointer(span));
    }
    if is_static_type(ty) {
        return Ok(ParamKind::Static);
    }
    if let Some(dtype) = scalar_dtype(ty) {
        return Ok(ParamKind::Scalar(dtype));
    }
    match ty {
        Type::Reference(r) if r.mutability.is_some() => Err(check::refuse_mut_ref(r.span())),
        Type::Reference(r) => {
            let owned = match &*r.elem {
                Type::Slice(s) => {
                    let elem = &s.elem;
                    syn::parse_quote!(::std::vec::Vec<#elem>)
                }
                other => other.clone(),
            };
            Ok(ParamKind::Tree { owned, by_ref: true })
        }
        Type::ImplTrait(t) => Err(check::refuse_impl_trait(t.span())),
        other => Ok(ParamKind::Tree { owned: other.clone(), by_ref: false }),
    }
}

/// The span of a raw pointer type anywhere in `ty`.
pub fn raw_pointer(ty: &Type) -> Option<Span> {
    match ty {
        Type::Ptr(p) => Some(p.span()),
        Type::Reference(r) => raw_pointer(&r.elem),
        Type::Slice(s) => raw_pointer(&s.elem),
        Type::Array(a) => raw_pointer(&a.elem),
        Type::Paren(p) => raw_pointer(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(raw_pointer),
        _ => None,
    }
}

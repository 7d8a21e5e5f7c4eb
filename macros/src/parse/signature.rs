//! The signature model: which parameters are traced (and as what) and which are static.

use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments, ReturnType, Type,
};

use crate::check;

/// How a parameter takes part in tracing.
#[derive(Clone)]
pub enum ParamKind {
    /// `f32` / `f64`: a traced 0-d array of that dtype.
    Scalar(&'static str),
    /// An array or pytree of arrays; `owned` is the type it is rebuilt into from leaves, and
    /// `by_ref` says the function takes a reference to it.
    Tree { owned: Box<Type>, by_ref: bool },
    /// Integers, `bool`, `&str`, ...: static, part of the compile-cache key.
    Static,
}

/// One parameter of the annotated function.
pub struct Param {
    pub name: Ident,
    /// `mut` when the parameter is declared `mut x: ..`.
    pub mutability: Option<syn::Token![mut]>,
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
            errors.push(check::refuse_async(t, true));
        }
        if let Some(t) = &sig.unsafety {
            errors.push(check::refuse_unsafe(t));
        }
        let generic = sig.generics.params.iter().find(|p| !matches!(p, GenericParam::Lifetime(_)));
        if let Some(p) = generic {
            errors.push(check::refuse_type_generics(p));
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    errors.push(check::refuse_method(r, &sig.ident.to_string()));
                }
                FnArg::Typed(pt) => {
                    let (name, mutability) = match &*pt.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            (p.ident.clone(), p.mutability)
                        }
                        other => {
                            let (pattern, ty) = (check::code(other), check::code(&pt.ty));
                            errors.push(check::refuse_param_pattern(other, &pattern, &ty));
                            continue;
                        }
                    };
                    match classify(&pt.ty) {
                        Ok(kind) => {
                            params.push(Param { name, mutability, ty: (*pt.ty).clone(), kind })
                        }
                        Err(e) => errors.push(e),
                    }
                }
            }
        }
        if let ReturnType::Type(_, ty) = &sig.output {
            if let Some(ptr) = raw_pointer(ty) {
                errors.push(check::refuse_raw_pointer(ptr));
            } else if type_name(ty).is_some_and(|n| n == "Result") {
                errors.push(check::refuse_result_return(ty));
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
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "bool",
    "char", "str", "String", "DType",
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

/// Containers whose type arguments traced code sees with Rust floats turned into arrays.
const FLOAT_CONTAINERS: &[&str] = &["Vec", "Option", "Box", "BTreeMap", "HashMap"];

/// A type as traced code sees it: Rust floats are 0-d arrays, inside tuples, references,
/// slices, arrays and the standard containers too (`(Array, f32)` is `(Array, Array)`).
pub fn traced_type(ty: &Type) -> Type {
    if scalar_dtype(ty).is_some() {
        return syn::parse_quote_spanned!(ty.span()=> ::rjax::Array);
    }
    let mut out = ty.clone();
    match &mut out {
        Type::Tuple(t) => t.elems.iter_mut().for_each(|e| *e = traced_type(e)),
        Type::Paren(p) => return traced_type(&p.elem),
        Type::Group(g) => return traced_type(&g.elem),
        Type::Reference(r) => *r.elem = traced_type(&r.elem),
        Type::Slice(s) => *s.elem = traced_type(&s.elem),
        Type::Array(a) => *a.elem = traced_type(&a.elem),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last_mut() else { return out };
            if !FLOAT_CONTAINERS.contains(&last.ident.to_string().as_str()) {
                return out;
            }
            if let PathArguments::AngleBracketed(args) = &mut last.arguments {
                for arg in args.args.iter_mut() {
                    if let GenericArgument::Type(t) = arg {
                        *t = traced_type(t);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Whether a type holds Rust floats that traced code sees as arrays (see [`traced_type`]).
pub fn holds_floats(ty: &Type) -> bool {
    let traced = traced_type(ty);
    quote::quote!(#traced).to_string() != quote::quote!(#ty).to_string()
}

fn classify(ty: &Type) -> Result<ParamKind, syn::Error> {
    if let Some(ptr) = raw_pointer(ty) {
        return Err(check::refuse_raw_pointer(ptr));
    }
    if let Type::Reference(r) = ty {
        if r.mutability.is_some() {
            return Err(check::refuse_mut_ref(r));
        }
    }
    if is_static_type(ty) {
        return Ok(ParamKind::Static);
    }
    if let Some(dtype) = scalar_dtype(ty) {
        return Ok(ParamKind::Scalar(dtype));
    }
    match ty {
        Type::Reference(r) => {
            let owned: Type = match &*r.elem {
                Type::Slice(s) => {
                    let elem = &s.elem;
                    syn::parse_quote!(::std::vec::Vec<#elem>)
                }
                other => other.clone(),
            };
            Ok(ParamKind::Tree { owned: Box::new(owned), by_ref: true })
        }
        Type::ImplTrait(t) => Err(check::refuse_impl_trait(t)),
        other => Ok(ParamKind::Tree { owned: Box::new(other.clone()), by_ref: false }),
    }
}

/// A raw pointer type anywhere in `ty`.
pub fn raw_pointer(ty: &Type) -> Option<&syn::TypePtr> {
    match ty {
        Type::Ptr(p) => Some(p),
        Type::Reference(r) => raw_pointer(&r.elem),
        Type::Slice(s) => raw_pointer(&s.elem),
        Type::Array(a) => raw_pointer(&a.elem),
        Type::Paren(p) => raw_pointer(&p.elem),
        Type::Group(g) => raw_pointer(&g.elem),
        Type::Tuple(t) => t.elems.iter().find_map(raw_pointer),
        _ => None,
    }
}

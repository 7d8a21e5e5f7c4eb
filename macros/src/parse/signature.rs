//! The signature model: which parameters are traced (and as what) and which are static.

use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments, ReturnType, Type,
};

use crate::check;
use crate::parse::transforms::Statics;

/// How a parameter takes part in tracing.
#[derive(Clone)]
pub enum ParamKind {
    /// `f32`: a traced 0-d `float32` array; `f64`: a weakly typed one of the default float
    /// type (`float64` with x64 on), as a Python float; `i32` / `u32` / `i64`: a traced,
    /// weakly typed 0-d integer array (a step counter, as a Python int under `jax.jit`).
    Scalar(&'static str),
    /// An array or pytree of arrays; `owned` is the type it is rebuilt into from leaves, and
    /// `passing` how the function takes it.
    Tree { owned: Box<Type>, passing: Passing },
    /// `usize` and the other integers, `bool`, `&str`, and any parameter named in
    /// `static_argnames` / `static_argnums`: static, part of the compile-cache key.
    Static,
}

/// How a function takes a pytree parameter rebuilt as its owned type `T`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Passing {
    /// `x: T`.
    Owned,
    /// `x: &T` (`&[U]` for `Vec<U>`).
    Ref,
    /// `x: Option<&T>`: `Some`/`None` is structure, the value a reference.
    OptionRef,
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
    /// Reads the signature, collecting every problem with it; `statics` are the parameters the
    /// transform attributes made static.
    pub fn parse(item: ItemFn, statics: &[&Statics]) -> Result<Func, Vec<syn::Error>> {
        let mut errors = Vec::new();
        let sig = &item.sig;
        let forced = static_names(sig, statics, &mut errors);
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
                    match classify(&pt.ty, forced.contains(&name.to_string())) {
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

/// Parameter types that are static (never traced): sizes, flags, text, dtypes. The
/// integers that are data (`i32`, `u32`, `i64`) are traced, as Python ints are in JAX.
const STATIC_TYPES: &[&str] = &[
    "i8", "i16", "i128", "isize", "u8", "u16", "u64", "u128", "usize", "bool", "char", "str",
    "String", "DType",
];

/// Whether a parameter of this type is static (never traced).
pub fn is_static_type(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => is_static_type(&r.elem),
        _ => type_name(ty).is_some_and(|n| STATIC_TYPES.contains(&n.as_str())),
    }
}

/// Whether a local or closure input of this type holds a Rust value (every integer, `bool`,
/// text): an array never has such a type, so a local declared with one is static.
pub fn is_host_type(ty: &Type) -> bool {
    is_static_type(ty) || scalar_dtype(ty).is_some_and(is_integer_dtype)
}

/// The dtype of a Rust scalar parameter type that is traced (`f32`, `f64`, `i32`, `u32`,
/// `i64`).
pub fn scalar_dtype(ty: &Type) -> Option<&'static str> {
    match type_name(ty)?.as_str() {
        "f32" => Some("F32"),
        "f64" => Some("F64"),
        "i32" => Some("I32"),
        "u32" => Some("U32"),
        "i64" => Some("I64"),
        _ => None,
    }
}

/// Whether a dtype name from [`scalar_dtype`] is an integer one.
pub fn is_integer_dtype(dtype: &str) -> bool {
    dtype.starts_with('I') || dtype.starts_with('U')
}

/// The names of the parameters `static_argnames` / `static_argnums` make static, checking
/// each names a parameter.
fn static_names(
    sig: &syn::Signature,
    statics: &[&Statics],
    errors: &mut Vec<syn::Error>,
) -> Vec<String> {
    let names: Vec<String> = sig
        .inputs
        .iter()
        .map(|input| match input {
            FnArg::Typed(pt) => match &*pt.pat {
                Pat::Ident(p) => p.ident.to_string(),
                _ => String::new(),
            },
            FnArg::Receiver(_) => "self".to_string(),
        })
        .collect();
    let mut out = Vec::new();
    for s in statics {
        for lit in &s.names {
            let name = lit.value();
            if names.contains(&name) {
                out.push(name);
            } else {
                errors.push(check::refuse_static_name(lit, &name, &names));
            }
        }
        for lit in &s.nums {
            let num: usize = lit.base10_parse().unwrap_or(usize::MAX);
            match names.get(num) {
                Some(name) => out.push(name.clone()),
                None => errors.push(check::refuse_static_num(lit, num, names.len())),
            }
        }
    }
    out
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

fn classify(ty: &Type, forced_static: bool) -> Result<ParamKind, syn::Error> {
    if let Some(ptr) = raw_pointer(ty) {
        return Err(check::refuse_raw_pointer(ptr));
    }
    if let Type::Reference(r) = ty {
        if r.mutability.is_some() {
            return Err(check::refuse_mut_ref(r));
        }
    }
    if forced_static || is_static_type(ty) {
        return Ok(ParamKind::Static);
    }
    if let Some(dtype) = scalar_dtype(ty) {
        return Ok(ParamKind::Scalar(dtype));
    }
    if let Some(Type::Reference(r)) = option_elem(ty) {
        let owned = owned_of(&r.elem);
        let owned = syn::parse_quote!(::std::option::Option<#owned>);
        return Ok(ParamKind::Tree { owned: Box::new(owned), passing: Passing::OptionRef });
    }
    match ty {
        Type::Reference(r) => {
            Ok(ParamKind::Tree { owned: Box::new(owned_of(&r.elem)), passing: Passing::Ref })
        }
        Type::ImplTrait(t) => Err(check::refuse_impl_trait(t)),
        other => Ok(ParamKind::Tree { owned: Box::new(other.clone()), passing: Passing::Owned }),
    }
}

/// The owned type a borrowed pytree is rebuilt into: `Vec<U>` for `[U]`, `T` for `T`.
fn owned_of(borrowed: &Type) -> Type {
    match borrowed {
        Type::Slice(s) => {
            let elem = &s.elem;
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        other => other.clone(),
    }
}

/// `T` for `Option<T>`.
fn option_elem(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match (last.ident == "Option", args.args.first()) {
        (true, Some(GenericArgument::Type(t))) if args.args.len() == 1 => Some(t),
        _ => None,
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

//! The transform stack: the rjax attributes on a function, outermost first, with their
//! arguments (`#[jit] #[grad(argnums = 1)] fn f` is `jit(grad(f, argnums=1))`).

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, Meta, Token};

use crate::check;

/// One transform of the stack.
#[derive(Clone)]
pub enum Transform {
    /// `#[jit]`: compiled and cached when outermost, inlined elsewhere.
    Jit,
    /// `#[traceable]`: no transform.
    Traceable,
    /// `#[grad]` (`value: false`) or `#[value_and_grad]` (`value: true`).
    Grad { argnums: Argnums, has_aux: bool, value: bool },
    /// `#[jvp]`: trailing tangent parameters.
    Jvp,
    /// `#[vjp]`: a trailing cotangent parameter.
    Vjp,
    /// `#[jacfwd]` / `#[jacrev]` / `#[hessian]`: a tuple `argnums` gives a tuple of
    /// jacobians (of tuples, for `hessian`).
    Jacobian { argnums: Argnums, kind: JacobianKind },
    /// `#[checkpoint]`: rematerialized in the backward pass.
    Checkpoint,
    /// `#[custom_jvp(jvp = rule)]`: differentiated by the traceable function `rule`.
    CustomJvp { rule: syn::Path },
    /// `#[custom_vjp(fwd = f_fwd, bwd = f_bwd)]`: reverse mode by the user's two passes.
    CustomVjp { fwd: syn::Path, bwd: syn::Path },
    /// `#[vmap(in_axes = .., out_axes = .., axis_name = "i")]`, or `#[pmap(..)]` (the same
    /// arguments, mapped over devices).
    Vmap(Box<VmapArgs>),
}

/// The arguments of `#[vmap]` and `#[pmap]`; absent axes default to 0 for every parameter
/// and output.
#[derive(Clone)]
pub struct VmapArgs {
    pub in_axes: Option<AxesSpec>,
    pub out_axes: Option<AxesSpec>,
    pub axis_name: Option<syn::LitStr>,
    /// `#[pmap]`: the mapped axis is spread over devices.
    pub parallel: bool,
}

/// An `in_axes` / `out_axes` expression: `None`, an axis (`0`, `-1`), or a tuple of them,
/// nested for pytrees. Keeps the expression for error spans.
#[derive(Clone)]
pub struct AxesSpec {
    pub kind: AxesKind,
    pub expr: Expr,
}

#[derive(Clone)]
pub enum AxesKind {
    None,
    Axis(i64),
    Tuple(Vec<AxesSpec>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JacobianKind {
    Forward,
    Reverse,
    Hessian,
}

impl JacobianKind {
    pub fn name(self) -> &'static str {
        match self {
            JacobianKind::Forward => "jacfwd",
            JacobianKind::Reverse => "jacrev",
            JacobianKind::Hessian => "hessian",
        }
    }
}

/// `argnums`: positions among all parameters; `tuple` when written as a tuple (the result is
/// then a tuple of gradients, as in JAX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Argnums {
    pub nums: Vec<usize>,
    pub tuple: bool,
}

/// A transform and the attribute it came from (for error spans).
#[derive(Clone)]
pub struct Layer {
    pub transform: Transform,
    pub name: String,
    pub span: Span,
    /// The parameters this attribute makes static (`static_argnames` / `static_argnums`).
    pub statics: Statics,
}

/// `static_argnames = ("mode", ..)` and `static_argnums = (1, ..)`: parameters made static
/// whatever their type, as JAX's arguments of the same names.
#[derive(Clone, Default)]
pub struct Statics {
    pub names: Vec<syn::LitStr>,
    pub nums: Vec<syn::LitInt>,
}

/// The attribute names this crate expands as transforms.
const TRANSFORMS: &[&str] = &[
    "jit",
    "traceable",
    "grad",
    "value_and_grad",
    "jvp",
    "vjp",
    "jacfwd",
    "jacrev",
    "hessian",
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "vmap",
    "pmap",
];

/// Whether an attribute is one of rjax's transforms (`#[grad]`, `#[rjax::grad(..)]`).
pub fn transform_name(attr: &Attribute) -> Option<String> {
    let path = attr.path();
    let last = path.segments.last()?.ident.to_string();
    let prefix_ok =
        path.segments.len() == 1 || (path.segments.len() == 2 && path.segments[0].ident == "rjax");
    (prefix_ok && TRANSFORMS.contains(&last.as_str())).then_some(last)
}

/// Parses one attribute's arguments into a layer.
pub fn layer(name: &str, args: TokenStream, span: Span) -> Result<Layer, syn::Error> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args.clone())?;
    let mut argnums: Option<Argnums> = None;
    let mut has_aux = false;
    let mut functions: Vec<(String, syn::Path)> = Vec::new();
    let parallel = name == "pmap";
    let mut vmap = VmapArgs { in_axes: None, out_axes: None, axis_name: None, parallel };
    let maps = name == "vmap" || parallel;
    let mut statics = Statics::default();
    for meta in &metas {
        let key = meta.path().get_ident().map(|i| i.to_string()).unwrap_or_default();
        match (key.as_str(), meta) {
            ("static_argnames", Meta::NameValue(nv)) => {
                statics.names.extend(parse_list(&nv.value, parse_str_lit, "static_argnames")?);
            }
            ("static_argnums", Meta::NameValue(nv)) => {
                statics.nums.extend(parse_list(&nv.value, parse_int_lit, "static_argnums")?);
            }
            ("argnums", Meta::NameValue(nv)) if takes_argnums(name) => {
                argnums = Some(parse_argnums(&nv.value)?);
            }
            ("has_aux", Meta::Path(_)) if takes_aux(name) => has_aux = true,
            ("has_aux", Meta::NameValue(nv)) if takes_aux(name) => has_aux = parse_bool(&nv.value)?,
            ("jvp", Meta::NameValue(nv)) if name == "custom_jvp" => {
                functions.push((key.clone(), parse_path(&nv.value)?));
            }
            ("fwd" | "bwd", Meta::NameValue(nv)) if name == "custom_vjp" => {
                functions.push((key.clone(), parse_path(&nv.value)?));
            }
            ("in_axes", Meta::NameValue(nv)) if maps => {
                vmap.in_axes = Some(parse_axes(&nv.value)?);
            }
            ("out_axes", Meta::NameValue(nv)) if maps => {
                vmap.out_axes = Some(parse_axes(&nv.value)?);
            }
            ("axis_name", Meta::NameValue(nv)) if maps => {
                vmap.axis_name = Some(parse_str(&nv.value)?);
            }
            _ => return Err(check::refuse_transform_arg(meta, name)),
        }
    }
    let argnums = argnums.unwrap_or(Argnums { nums: vec![0], tuple: false });
    let transform = match name {
        "jit" => Transform::Jit,
        "traceable" => Transform::Traceable,
        "grad" => Transform::Grad { argnums, has_aux, value: false },
        "value_and_grad" => Transform::Grad { argnums, has_aux, value: true },
        "jvp" => Transform::Jvp,
        "vjp" => Transform::Vjp,
        "checkpoint" => Transform::Checkpoint,
        "vmap" | "pmap" => Transform::Vmap(Box::new(vmap)),
        "custom_jvp" | "custom_vjp" => custom(name, functions, &args, span)?,
        jac => {
            let kind = match jac {
                "jacfwd" => JacobianKind::Forward,
                "jacrev" => JacobianKind::Reverse,
                _ => JacobianKind::Hessian,
            };
            Transform::Jacobian { argnums, kind }
        }
    };
    Ok(Layer { transform, name: name.to_string(), span, statics })
}

/// One item or a tuple of them (`"a"` or `("a", "b")`).
fn parse_list<T>(
    value: &Expr,
    item: fn(&Expr, &str) -> Result<T, syn::Error>,
    key: &str,
) -> Result<Vec<T>, syn::Error> {
    match value {
        Expr::Tuple(t) => t.elems.iter().map(|e| item(e, key)).collect(),
        Expr::Paren(p) => Ok(vec![item(&p.expr, key)?]),
        e => Ok(vec![item(e, key)?]),
    }
}

fn parse_str_lit(value: &Expr, key: &str) -> Result<syn::LitStr, syn::Error> {
    match value {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Ok(s.clone()),
        other => Err(syn::Error::new(
            other.span(),
            format!("{key}: expected a parameter name (`{key} = \"n\"`) or a tuple of them"),
        )),
    }
}

fn parse_int_lit(value: &Expr, key: &str) -> Result<syn::LitInt, syn::Error> {
    match value {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(i), .. }) if i.base10_parse::<usize>().is_ok() => {
            Ok(i.clone())
        }
        other => Err(syn::Error::new(
            other.span(),
            format!("{key}: expected a parameter position (`{key} = 1`) or a tuple of them"),
        )),
    }
}

fn takes_argnums(name: &str) -> bool {
    matches!(name, "grad" | "value_and_grad" | "jacfwd" | "jacrev" | "hessian")
}

fn takes_aux(name: &str) -> bool {
    matches!(name, "grad" | "value_and_grad")
}

fn parse_argnums(value: &Expr) -> Result<Argnums, syn::Error> {
    let int = |e: &Expr| match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<usize>(),
            other => Err(syn::Error::new(other.span(), "argnums: expected a parameter position")),
        },
        other => Err(syn::Error::new(
            other.span(),
            "argnums: expected a parameter position (`argnums = 1`) or a tuple of them \
             (`argnums = (0, 1)`)",
        )),
    };
    match value {
        Expr::Tuple(t) => {
            let nums = t.elems.iter().map(int).collect::<Result<Vec<_>, _>>()?;
            Ok(Argnums { nums, tuple: true })
        }
        Expr::Paren(p) => Ok(Argnums { nums: vec![int(&p.expr)?], tuple: false }),
        e => Ok(Argnums { nums: vec![int(e)?], tuple: false }),
    }
}

/// `None`, an integer (possibly negative), or a tuple of those.
fn parse_axes(value: &Expr) -> Result<AxesSpec, syn::Error> {
    let kind = match value {
        Expr::Path(p) if p.path.is_ident("None") => AxesKind::None,
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => AxesKind::Axis(i.base10_parse::<i64>()?),
            _ => return Err(check::refuse_axes(value)),
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => AxesKind::Axis(-i.base10_parse::<i64>()?),
                _ => return Err(check::refuse_axes(value)),
            },
            _ => return Err(check::refuse_axes(value)),
        },
        Expr::Paren(p) => return Ok(AxesSpec { expr: value.clone(), ..parse_axes(&p.expr)? }),
        Expr::Tuple(t) => {
            AxesKind::Tuple(t.elems.iter().map(parse_axes).collect::<Result<Vec<_>, _>>()?)
        }
        _ => return Err(check::refuse_axes(value)),
    };
    Ok(AxesSpec { kind, expr: value.clone() })
}

fn parse_str(value: &Expr) -> Result<syn::LitStr, syn::Error> {
    match value {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Ok(s.clone()),
            _ => Err(syn::Error::new(value.span(), "axis_name: expected a string (`\"i\"`)")),
        },
        _ => Err(syn::Error::new(value.span(), "axis_name: expected a string (`\"i\"`)")),
    }
}

fn parse_bool(value: &Expr) -> Result<bool, syn::Error> {
    match value {
        Expr::Lit(l) => match &l.lit {
            Lit::Bool(b) => Ok(b.value),
            other => Err(syn::Error::new(other.span(), "expected `true` or `false`")),
        },
        other => Err(syn::Error::new(other.span(), "expected `true` or `false`")),
    }
}

fn parse_path(value: &Expr) -> Result<syn::Path, syn::Error> {
    match value {
        Expr::Path(p) => Ok(p.path.clone()),
        other => {
            Err(syn::Error::new(other.span(), "expected the path of a `#[traceable]` function"))
        }
    }
}

/// The custom-derivative transforms, checking their functions were all named.
fn custom(
    name: &str,
    functions: Vec<(String, syn::Path)>,
    args: &TokenStream,
    span: Span,
) -> Result<Transform, syn::Error> {
    let get = |key: &str| functions.iter().find(|(k, _)| k == key).map(|(_, p)| p.clone());
    let missing = || {
        if args.is_empty() {
            check::refuse_custom_args(&span_tokens(span), name)
        } else {
            check::refuse_custom_args(args, name)
        }
    };
    if name == "custom_jvp" {
        let rule = get("jvp").ok_or_else(missing)?;
        Ok(Transform::CustomJvp { rule })
    } else {
        let (fwd, bwd) = (get("fwd").ok_or_else(missing)?, get("bwd").ok_or_else(missing)?);
        Ok(Transform::CustomVjp { fwd, bwd })
    }
}

fn span_tokens(span: Span) -> TokenStream {
    let ident = proc_macro2::Ident::new("attribute", span);
    quote::quote!(#ident)
}

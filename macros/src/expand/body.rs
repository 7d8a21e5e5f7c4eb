//! The body pass: walks a traced function's body with its scopes, asks [`check`] about every
//! construct that cannot be traced, and rewrites the ones whose meaning changes on traced
//! values: `if` on a traced bool becomes `lax::cond`, comparisons and `&&`/`||` of traced
//! values become array operations, and calls to other traced functions go to their traced
//! entry point. Everything else stays the user's code, so it runs (and type-checks) as Rust,
//! except that traced values are borrowed or cloned where code written for `Copy` floats would
//! move them (operands of operators, arguments passed by name, locals used in traced
//! branches): arrays share their buffers, so a clone is cheap.

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    BinOp, Block, Expr, ExprIf, ExprLit, Ident, Item, Lit, Local, Macro, Pat, Stmt, Token, Type,
    UnOp,
};

use crate::check;
use crate::parse::signature::{is_host_type, raw_pointer, type_name};
use crate::parse::{Scopes, Taint};

/// Methods that read static facts (shapes, lengths) of a traced value.
const STATIC_METHODS: &[&str] =
    &["shape", "ndim", "size", "dtype", "len", "is_empty", "is_weak", "is_traced"];
/// Methods that need a traced value's data.
const CONCRETIZING_METHODS: &[&str] = &["item", "to_vec", "to_ndarray", "as_slice", "buffer"];
/// Macros that format their arguments.
const FORMATTING_MACROS: &[&str] = &[
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "format_args",
    "write",
    "writeln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "unreachable",
    "todo",
    "unimplemented",
];
/// Formatting macros that check a condition.
const ASSERT_MACROS: &[&str] =
    &["assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne"];
/// Path roots whose functions are rjax operations (traced when their operands are).
const RJAX_ROOTS: &[&str] =
    &["jnp", "lax", "nn", "scipy", "random", "tree", "optim", "rjax", "Array"];
/// Path roots of functions that are not traced functions.
const PLAIN_ROOTS: &[&str] = &["std", "core", "alloc"];
const PLAIN_FUNCTIONS: &[&str] = &["drop"];
/// The function forms of the transforms (`grad(|w| ..)(&x)`): rjax functions that take
/// closures, called by their bare names.
const FUNCTION_FORMS: &[&str] = &[
    "grad",
    "value_and_grad",
    "jit",
    "vmap",
    "pmap",
    "jvp",
    "vjp",
    "linearize",
    "jacfwd",
    "jacrev",
    "hessian",
    "checkpoint",
];

/// A traced `if` being walked: what its predicate was, and the loop and closure depth at
/// its start (a `break` in a loop inside the branch is fine; one that leaves it is not).
struct Branch {
    value: String,
    loops: usize,
    closures: usize,
    /// Scope depth at the branch's start: locals declared at or above it are outer.
    depth: usize,
}

/// The walker's state.
pub struct BodyPass {
    scopes: Scopes,
    pub errors: Vec<syn::Error>,
    quiet: usize,
    branches: Vec<Branch>,
    loops: usize,
    closures: usize,
    fresh: usize,
    /// The `i32`/`u32`/`i64` parameters: traced integers, so a Rust loop they bound is refused.
    /// (Other traced values may be static fields of a pytree, which the macro cannot tell.)
    integer_params: Vec<String>,
}

impl BodyPass {
    /// A pass whose outermost scope declares the parameters.
    pub fn new(params: impl IntoIterator<Item = (String, Taint)>) -> BodyPass {
        let mut scopes = Scopes::default();
        scopes.push();
        for (name, taint) in params {
            scopes.declare(&name, taint);
        }
        BodyPass {
            scopes,
            errors: Vec::new(),
            quiet: 0,
            branches: Vec::new(),
            loops: 0,
            closures: 0,
            fresh: 0,
            integer_params: Vec::new(),
        }
    }

    /// Names the traced integer parameters (see [`BodyPass::integer_params`]).
    pub fn with_integer_params(mut self, names: Vec<String>) -> BodyPass {
        self.integer_params = names;
        self
    }

    /// A traced integer parameter named in `range`, if any (still traced: not shadowed by a
    /// static local).
    fn traced_integer_in(&self, range: &Expr) -> Option<String> {
        let mut names = Vec::new();
        idents_in(quote!(#range), &mut names);
        names.into_iter().find(|n| {
            self.integer_params.contains(n) && self.scopes.get(n).is_some_and(Taint::is_traced)
        })
    }

    fn error(&mut self, e: syn::Error) {
        if self.quiet == 0 {
            self.errors.push(e);
        }
    }

    /// Walks (and rewrites) a block; returns the taint of its value.
    pub fn block(&mut self, block: &mut Block) -> Taint {
        self.scopes.push();
        let mut taint = Taint::Static;
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter_mut().enumerate() {
            let t = self.stmt(stmt);
            if i + 1 == n && matches!(stmt, Stmt::Expr(_, None)) {
                taint = t;
            }
        }
        self.scopes.pop();
        taint
    }

    fn stmt(&mut self, stmt: &mut Stmt) -> Taint {
        match stmt {
            Stmt::Local(local) => {
                self.local(local);
                Taint::Static
            }
            Stmt::Expr(e, _) => self.expr(e),
            Stmt::Macro(m) => self.mac(&mut m.mac),
            Stmt::Item(item) => {
                self.item(item);
                Taint::Static
            }
        }
    }

    fn item(&mut self, item: &Item) {
        if let Item::Static(s) = item {
            if let syn::StaticMutability::Mut(m) = &s.mutability {
                let (keyword, name) = (&s.static_token, &s.ident);
                self.error(check::refuse_static_mut(&quote!(#keyword #m #name)));
            }
        }
    }

    fn local(&mut self, local: &mut Local) {
        let taint = match &mut local.init {
            Some(init) => {
                let t = self.expr(&mut init.expr);
                if let Some((_, diverge)) = &mut init.diverge {
                    self.expr(diverge);
                }
                t
            }
            None => Taint::Static,
        };
        self.declare_pat(&local.pat, taint);
    }

    /// Declares every name a pattern binds; a type annotation decides over the value's taint.
    fn declare_pat(&mut self, pat: &Pat, taint: Taint) {
        match pat {
            Pat::Ident(p) => {
                self.scopes.declare(&p.ident.to_string(), taint);
                if let Some((_, sub)) = &p.subpat {
                    self.declare_pat(sub, taint);
                }
            }
            Pat::Type(p) => {
                if let Some(ptr) = raw_pointer(&p.ty) {
                    self.error(check::refuse_raw_pointer(ptr));
                }
                let t = if is_host_type(&p.ty) { Taint::Static } else { taint };
                self.declare_pat(&p.pat, t);
            }
            Pat::Tuple(p) => p.elems.iter().for_each(|e| self.declare_pat(e, taint)),
            Pat::TupleStruct(p) => p.elems.iter().for_each(|e| self.declare_pat(e, taint)),
            Pat::Struct(p) => p.fields.iter().for_each(|f| self.declare_pat(&f.pat, taint)),
            Pat::Slice(p) => p.elems.iter().for_each(|e| self.declare_pat(e, taint)),
            Pat::Reference(p) => self.declare_pat(&p.pat, taint),
            Pat::Or(p) => p.cases.iter().for_each(|c| self.declare_pat(c, taint)),
            Pat::Paren(p) => self.declare_pat(&p.pat, taint),
            _ => {}
        }
    }

    /// The first traced local named in `tokens` (inline format captures included), for
    /// messages.
    fn traced_name(&self, tokens: TokenStream) -> Option<String> {
        for tt in tokens {
            match tt {
                TokenTree::Ident(id) => {
                    let name = id.to_string();
                    if self.scopes.get(&name) == Some(Taint::Traced) {
                        return Some(name);
                    }
                }
                TokenTree::Group(g) => {
                    if let Some(n) = self.traced_name(g.stream()) {
                        return Some(n);
                    }
                }
                TokenTree::Literal(lit) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&lit.to_string()) {
                        if let Some(n) = self.traced_in_format(&s.value()) {
                            return Some(n);
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
        None
    }

    /// A traced local captured by a format string (`"{x}"`, `"{x:?}"`).
    fn traced_in_format(&self, format: &str) -> Option<String> {
        let mut rest = format;
        while let Some(open) = rest.find('{') {
            rest = &rest[open + 1..];
            if rest.starts_with('{') {
                rest = &rest[1..];
                continue;
            }
            let end = rest.find(['}', ':']).unwrap_or(rest.len());
            let name = rest[..end].trim();
            if self.scopes.get(name) == Some(Taint::Traced) {
                return Some(name.to_string());
            }
        }
        None
    }

    /// The traced local an expression's value comes from (or its code), for messages.
    fn describe(&self, e: &Expr) -> String {
        self.traced_name(e.to_token_stream()).unwrap_or_else(|| check::code(e))
    }

    /// The taint of an expression, walked without reporting or rewriting anything.
    fn taint_of(&mut self, e: &Expr) -> Taint {
        let mut scratch = e.clone();
        self.quiet += 1;
        let t = self.expr(&mut scratch);
        self.quiet -= 1;
        t
    }

    /// Walks (and rewrites) an expression; returns whether its value is traced.
    fn expr(&mut self, e: &mut Expr) -> Taint {
        match e {
            Expr::Lit(_) => Taint::Static,
            Expr::Range(r) => {
                let mut t = Taint::Static;
                if let Some(a) = &mut r.start {
                    t = t.join(self.expr(a));
                }
                if let Some(b) = &mut r.end {
                    t = t.join(self.expr(b));
                }
                t
            }
            Expr::Path(p) => match p.path.get_ident() {
                Some(id) => self.scopes.get(&id.to_string()).unwrap_or(Taint::Static),
                None => Taint::Static,
            },
            Expr::Binary(_) => self.binary(e),
            Expr::Unary(u) => {
                let t = self.expr(&mut u.expr);
                if t.is_traced() && !matches!(u.op, UnOp::Deref(_)) {
                    self.borrow_operand(&mut u.expr);
                }
                t
            }
            Expr::Paren(p) => self.expr(&mut p.expr),
            Expr::Group(g) => self.expr(&mut g.expr),
            Expr::Reference(r) => self.expr(&mut r.expr),
            Expr::Field(f) => self.expr(&mut f.base),
            Expr::Index(i) => {
                let t = self.expr(&mut i.expr);
                self.expr(&mut i.index);
                t
            }
            Expr::Tuple(t) => self.all(t.elems.iter_mut()),
            Expr::Array(a) => self.all(a.elems.iter_mut()),
            Expr::Repeat(r) => {
                self.expr(&mut r.len);
                self.expr(&mut r.expr)
            }
            Expr::Struct(s) => {
                let mut t = Taint::Static;
                for f in s.fields.iter_mut() {
                    t = t.join(self.expr(&mut f.expr));
                }
                if let Some(rest) = &mut s.rest {
                    t = t.join(self.expr(rest));
                }
                t
            }
            Expr::Cast(c) => {
                let expr_code = check::code(&c.expr);
                let t = self.expr(&mut c.expr);
                if let Some(ptr) = raw_pointer(&c.ty) {
                    self.error(check::refuse_raw_pointer(ptr));
                } else if t.is_traced() {
                    let value = self.describe(&c.expr);
                    let expr_code = match &*c.expr {
                        Expr::Path(_)
                        | Expr::MethodCall(_)
                        | Expr::Call(_)
                        | Expr::Field(_)
                        | Expr::Paren(_) => expr_code,
                        _ => format!("({expr_code})"),
                    };
                    let (ty, dtype) = (check::code(&c.ty), cast_dtype(&c.ty));
                    self.error(check::refuse_cast(&*c, &value, &ty, &expr_code, dtype));
                }
                t
            }
            Expr::MethodCall(m) => {
                let receiver = self.expr(&mut m.receiver);
                let args = self.all(m.args.iter_mut());
                let method = m.method.to_string();
                if receiver.is_traced() && CONCRETIZING_METHODS.contains(&method.as_str()) {
                    let value = self.describe(&m.receiver);
                    let (dot, name, turbofish) = (&m.dot_token, &m.method, &m.turbofish);
                    let at = quote!(#dot #name #turbofish);
                    self.error(check::refuse_concretize(&at, &method, &value));
                }
                if STATIC_METHODS.contains(&method.as_str()) {
                    Taint::Static
                } else {
                    receiver.join(args)
                }
            }
            Expr::Call(_) => self.call(e),
            Expr::Macro(m) => self.mac(&mut m.mac),
            Expr::Block(b) => self.block(&mut b.block),
            Expr::Unsafe(u) => {
                self.error(check::refuse_unsafe(&u.unsafe_token));
                Taint::Static
            }
            Expr::Async(a) => {
                self.error(check::refuse_async(&a.async_token, false));
                Taint::Static
            }
            Expr::Await(a) => {
                let (dot, keyword) = (&a.dot_token, &a.await_token);
                self.error(check::refuse_async(&quote!(#dot #keyword), false));
                Taint::Static
            }
            Expr::RawAddr(r) => {
                self.error(check::refuse_raw_pointer(&*r));
                Taint::Static
            }
            Expr::Assign(a) => {
                let update =
                    matches!(*a.left, Expr::Index(_)).then(|| Update::Set(check::code(&a.right)));
                let t = self.expr(&mut a.right);
                self.assign_target(&mut a.left, t, update);
                Taint::Static
            }
            Expr::If(_) => self.if_expr(e),
            Expr::Match(m) => {
                let mut t = self.expr(&mut m.expr);
                if t.is_traced() && m.arms.iter().any(|arm| has_text_literal(&arm.pat)) {
                    // Arrays cannot match string or char patterns: the value is static (a
                    // `#[tree(static)]` field, say), whatever it was computed from.
                    t = Taint::Static;
                }
                if t.is_traced() && m.arms.iter().any(|arm| tests_value(&arm.pat)) {
                    let value = self.describe(&m.expr);
                    let (keyword, scrutinee) = (&m.match_token, &m.expr);
                    self.error(check::refuse_match(&quote!(#keyword #scrutinee), &value));
                }
                let mut out = Taint::Static;
                for arm in m.arms.iter_mut() {
                    self.scopes.push();
                    self.declare_pat(&arm.pat, t);
                    if let Some((_, guard)) = &mut arm.guard {
                        self.expr(guard);
                    }
                    out = out.join(self.expr(&mut arm.body));
                    self.scopes.pop();
                }
                out
            }
            Expr::While(w) => {
                let cond_taint = if let Expr::Let(l) = &mut *w.cond {
                    self.expr(&mut l.expr)
                } else {
                    self.expr(&mut w.cond)
                };
                if cond_taint.is_traced() && !matches!(*w.cond, Expr::Let(_)) {
                    let value = self.describe(&w.cond);
                    let (keyword, cond) = (&w.while_token, &w.cond);
                    self.error(check::refuse_while(&quote!(#keyword #cond), &value));
                }
                let pat = if let Expr::Let(l) = &*w.cond { Some((*l.pat).clone()) } else { None };
                self.loop_body(&mut w.body, |pass| {
                    if let Some(p) = &pat {
                        pass.declare_pat(p, cond_taint);
                    }
                });
                Taint::Static
            }
            Expr::Loop(l) => {
                self.loop_body(&mut l.body, |_| {});
                Taint::Static
            }
            Expr::ForLoop(f) => {
                let t = self.expr(&mut f.expr);
                let bound = matches!(*f.expr, Expr::Range(_))
                    .then(|| self.traced_integer_in(&f.expr))
                    .flatten();
                if let Some(value) = bound {
                    let (keyword, range) = (&f.for_token, &f.expr);
                    self.error(check::refuse_traced_range(&quote!(#keyword #range), &value));
                }
                let enumerated = is_enumerate(&f.expr);
                let pat = (*f.pat).clone();
                self.loop_body(&mut f.body, |pass| pass.declare_loop_pat(&pat, t, enumerated));
                Taint::Static
            }
            Expr::Closure(c) => {
                self.closures += 1;
                self.scopes.push();
                for input in &c.inputs {
                    let t = match input {
                        Pat::Type(pt) if is_host_type(&pt.ty) => Taint::Static,
                        _ => Taint::Traced,
                    };
                    self.declare_pat(input, t);
                }
                let t = self.expr(&mut c.body);
                self.scopes.pop();
                self.closures -= 1;
                t
            }
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.expr(v);
                }
                if let Some(value) = self.jump_leaves_branch(true) {
                    self.error(check::refuse_jump_in_branch(&r.return_token, "return", &value));
                }
                Taint::Static
            }
            Expr::Break(b) => {
                if let Some(v) = &mut b.expr {
                    self.expr(v);
                }
                if let Some(value) = self.jump_leaves_branch(false) {
                    self.error(check::refuse_jump_in_branch(&b.break_token, "break", &value));
                }
                Taint::Static
            }
            Expr::Continue(c) => {
                if let Some(value) = self.jump_leaves_branch(false) {
                    self.error(check::refuse_jump_in_branch(&c.continue_token, "continue", &value));
                }
                Taint::Static
            }
            Expr::Try(t) => {
                let taint = self.expr(&mut t.expr);
                if let Some(value) = self.jump_leaves_branch(true) {
                    self.error(check::refuse_jump_in_branch(&t.question_token, "?", &value));
                }
                taint
            }
            Expr::Let(l) => self.expr(&mut l.expr),
            _ => Taint::Static,
        }
    }

    fn all<'e>(&mut self, exprs: impl Iterator<Item = &'e mut Expr>) -> Taint {
        exprs.fold(Taint::Static, |t, e| t.join(self.expr(e)))
    }

    /// The traced `if` a `return`/`break` would jump out of, if any.
    fn jump_leaves_branch(&self, is_return: bool) -> Option<String> {
        let branch = self.branches.last()?;
        let inside_closure = self.closures > branch.closures;
        let inside_loop = self.loops > branch.loops;
        let leaves = if is_return { !inside_closure } else { !inside_closure && !inside_loop };
        leaves.then(|| branch.value.clone())
    }

    /// `for (i, x) in xs.iter().enumerate()`: the index is static even when `xs` is traced.
    fn declare_loop_pat(&mut self, pat: &Pat, taint: Taint, enumerated: bool) {
        match pat {
            Pat::Tuple(t) if enumerated && t.elems.len() == 2 => {
                self.declare_pat(&t.elems[0], Taint::Static);
                self.declare_pat(&t.elems[1], taint);
            }
            _ => self.declare_pat(pat, taint),
        }
    }

    /// Walks a loop body twice: once quietly so that locals assigned traced values late in
    /// the body are known to be traced from its start, then for real.
    fn loop_body(&mut self, body: &mut Block, declare: impl Fn(&mut BodyPass)) {
        self.loops += 1;
        let mut scratch = body.clone();
        self.quiet += 1;
        self.scopes.push();
        declare(self);
        self.block(&mut scratch);
        self.scopes.pop();
        self.quiet -= 1;
        self.scopes.push();
        declare(self);
        self.block(body);
        self.scopes.pop();
        self.loops -= 1;
    }

    /// An assignment's target; `update` says what an assignment through an index did.
    fn assign_target(&mut self, left: &mut Expr, taint: Taint, update: Option<Update>) {
        match left {
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident() {
                    let name = id.to_string();
                    self.check_branch_assign(&name, id);
                    self.scopes.assign(&name, taint);
                }
            }
            Expr::Index(i) => {
                let (base_code, index_code) = (check::code(&i.expr), index_code(&i.index));
                let base = self.expr(&mut i.expr);
                self.expr(&mut i.index);
                if base.is_traced() {
                    let value = self.describe(&i.expr);
                    let update = update.unwrap_or(Update::Other).method();
                    let suggestion =
                        format!("{base_code} = {base_code}.at(s![{index_code}]){update};");
                    self.error(check::refuse_index_assign(&*i, &value, &suggestion));
                }
            }
            other => {
                self.expr(other);
            }
        }
    }

    /// A static local declared outside a traced `if` cannot be assigned inside it.
    fn check_branch_assign(&mut self, name: &str, at: &Ident) {
        let Some(branch) = self.branches.last() else { return };
        // The branch's own blocks open scopes deeper than `branch.depth`; locals declared at
        // that depth or above live outside the `if`.
        let outer = self.scopes.declared_at(name).is_some_and(|d| d <= self.branch_depth());
        if outer && self.scopes.get(name) == Some(Taint::Static) {
            let value = branch.value.clone();
            self.error(check::refuse_static_assign_in_branch(at, name, &value));
        }
    }

    fn branch_depth(&self) -> usize {
        self.branches.last().map_or(0, |b| b.depth)
    }
}

impl BodyPass {
    /// Operators: comparisons and `&&`/`||` on traced values become array operations (Rust's
    /// `<` and `&&` need `bool`s); compound assignments update the target's taint.
    fn binary(&mut self, e: &mut Expr) -> Taint {
        let Expr::Binary(b) = e else { unreachable!("called on binary expressions") };
        if is_compound_assign(&b.op) {
            let update = matches!(*b.left, Expr::Index(_))
                .then(|| Update::compound(&b.op, check::code(&b.right)));
            let t = self.expr(&mut b.right);
            self.assign_target(&mut b.left, t, update);
            return Taint::Static;
        }
        let left = self.expr(&mut b.left);
        let right = self.expr(&mut b.right);
        let taint = left.join(right);
        if !taint.is_traced() {
            return taint;
        }
        if is_comparison(&b.op) && (is_text_literal(&b.left) || is_text_literal(&b.right)) {
            // Arrays do not compare with strings or chars: this compares static values (a
            // `#[tree(static)]` field, say), whatever they were computed from.
            return Taint::Static;
        }
        self.borrow_operand(&mut b.left);
        self.borrow_operand(&mut b.right);
        let helper = match b.op {
            BinOp::Lt(_) => "lt",
            BinOp::Le(_) => "le",
            BinOp::Gt(_) => "gt",
            BinOp::Ge(_) => "ge",
            BinOp::Eq(_) => "eq",
            BinOp::Ne(_) => "ne",
            BinOp::And(_) => "and",
            BinOp::Or(_) => "or",
            _ => return taint,
        };
        let helper = Ident::new(helper, b.op.span());
        let (l, r) = (operand(&b.left), operand(&b.right));
        *e = syn::parse_quote_spanned!(b.op.span()=> ::rjax::__private::#helper(#l, #r));
        Taint::Traced
    }

    /// A traced local (or a field of one) used as an operator's operand is borrowed, so that
    /// code written for `Copy` floats (`(1.0 - y) / (1.0 + y)`, `p.0 * p.1`) does not move
    /// the array. A local may hold an `Array` or a `&Array`, so it goes through `Operand`; a
    /// field is a place of its own type (an array, or a static number such as a
    /// `#[tree(static)]` field), so `&` is enough and keeps `&model.depth * 2` working.
    fn borrow_operand(&self, e: &mut Expr) {
        match e {
            Expr::Path(_) if self.is_traced_place(e) => {
                let borrowed = operand(e);
                *e = syn::parse_quote!(#borrowed);
            }
            Expr::Field(_) if self.is_traced_place(e) => {
                *e = syn::parse_quote_spanned!(e.span()=> &(#e));
            }
            _ => {}
        }
    }

    /// Whether `e` is a traced local or a field of one.
    fn is_traced_place(&self, e: &Expr) -> bool {
        match e {
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|id| self.scopes.get(&id.to_string()) == Some(Taint::Traced)),
            Expr::Field(f) => self.is_traced_place(&f.base),
            _ => false,
        }
    }

    /// Calls: rjax operations are traced when any operand is; a call to another traced
    /// function with traced arguments goes to its traced entry point (see [`traced_call`]),
    /// which exists only when `f` is `#[traceable]` or `#[jit]`.
    fn call(&mut self, e: &mut Expr) -> Taint {
        let Expr::Call(c) = e else { unreachable!("called on call expressions") };
        let args = self.all(c.args.iter_mut());
        let Expr::Path(p) = &mut *c.func else {
            return self.expr(&mut c.func).join(args);
        };
        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [only] = segments.as_slice() {
            if let Some(t) = self.scopes.get(only) {
                // A closure (or callable local).
                self.clone_traced_args(&mut c.args);
                return t.join(args);
            }
        }
        let root = segments[0].as_str();
        let is_form = segments.len() == 1 && FUNCTION_FORMS.contains(&root);
        if RJAX_ROOTS.contains(&root) || is_form {
            return Taint::Traced;
        }
        let is_constructor = segments.iter().any(|s| s.starts_with(|c: char| c.is_uppercase()));
        let is_plain =
            PLAIN_ROOTS.contains(&root) || (segments.len() == 1 && PLAIN_FUNCTIONS.contains(&root));
        if is_constructor || is_plain || !args.is_traced() {
            return args;
        }
        self.clone_traced_args(&mut c.args);
        let call = traced_call(p, &c.args);
        *e = call;
        Taint::Traced
    }

    /// Traced locals passed by name to traced functions and closures are cloned (cheap: an
    /// array shares its buffer, and a reference is copied), so that code written for `Copy`
    /// floats (`let v = t(x) * s; v + x`) does not move the array.
    fn clone_traced_args(&self, args: &mut Punctuated<Expr, Token![,]>) {
        for arg in args.iter_mut() {
            let is_traced_local = matches!(arg, Expr::Path(p) if p.path.get_ident().is_some_and(
                |id| self.scopes.get(&id.to_string()) == Some(Taint::Traced)
            ));
            if is_traced_local {
                *arg = syn::parse_quote!(::core::clone::Clone::clone(&#arg));
            }
        }
    }

    /// The traced locals named in `tokens`, each once.
    fn traced_names_in(&self, tokens: TokenStream, out: &mut Vec<String>) {
        for tt in tokens {
            match tt {
                TokenTree::Ident(id) => {
                    let name = id.to_string();
                    if self.scopes.get(&name) == Some(Taint::Traced) && !out.contains(&name) {
                        out.push(name);
                    }
                }
                TokenTree::Group(g) => self.traced_names_in(g.stream(), out),
                TokenTree::Literal(_) | TokenTree::Punct(_) => {}
            }
        }
    }

    /// Macros: formatting macros may not format traced values; the elements of `vec![..]`
    /// and the arrays of `debug_print!` are walked; other macros are traced when their tokens
    /// name a traced local.
    fn mac(&mut self, mac: &mut Macro) -> Taint {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if FORMATTING_MACROS.contains(&name.as_str()) {
            if let Some((at, value)) = self.traced_format_arg(mac) {
                let e = if ASSERT_MACROS.contains(&name.as_str()) {
                    check::refuse_assert(&at, &name, &value)
                } else {
                    check::refuse_print(&at, &name, &value)
                };
                self.error(e);
            }
            return Taint::Static;
        }
        match name.as_str() {
            "vec" => self.vec_macro(mac),
            "debug_print" => {
                self.debug_print(mac);
                Taint::Static
            }
            _ if self.traced_name(mac.tokens.clone()).is_some() => Taint::Traced,
            _ => Taint::Static,
        }
    }

    /// The first argument of a formatting macro whose value is traced (an inline capture in
    /// the format string counts), with the traced local it names.
    fn traced_format_arg(&mut self, mac: &Macro) -> Option<(TokenStream, String)> {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        let Ok(args) = mac.parse_body_with(parser) else {
            let value = self.traced_name(mac.tokens.clone())?;
            return Some((mac.path.to_token_stream(), value));
        };
        for arg in &args {
            // Named arguments: `println!("{v}", v = x)`.
            let value = match arg {
                Expr::Assign(a) => &*a.right,
                other => other,
            };
            if let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = value {
                if let Some(name) = self.traced_in_format(&s.value()) {
                    return Some((s.to_token_stream(), name));
                }
            } else if self.taint_of(value).is_traced() {
                return Some((value.to_token_stream(), self.describe(value)));
            }
        }
        None
    }

    /// `vec![a, b]` and `vec![a; n]`: traced when an element is.
    fn vec_macro(&mut self, mac: &mut Macro) -> Taint {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(mut elems) = mac.parse_body_with(parser) {
            let t = self.all(elems.iter_mut());
            mac.tokens = elems.to_token_stream();
            return t;
        }
        let tokens = &mac.tokens;
        if let Ok(mut repeat) = syn::parse2::<syn::ExprRepeat>(quote!([#tokens])) {
            self.expr(&mut repeat.len);
            let t = self.expr(&mut repeat.expr);
            let (elem, len) = (&repeat.expr, &repeat.len);
            mac.tokens = quote!(#elem; #len);
            return t;
        }
        Taint::Static
    }

    /// `rjax::debug_print!("..", a, b)`: the arrays are walked like any expression (so
    /// operators borrow traced locals), and the format must hold plain `{}`s, which is all the
    /// runtime fills in.
    fn debug_print(&mut self, mac: &mut Macro) {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        let Ok(mut args) = mac.parse_body_with(parser) else { return };
        let mut args_iter = args.iter_mut();
        if let Some(Expr::Lit(ExprLit { lit: Lit::Str(format), .. })) = args_iter.next() {
            if !plain_placeholders(&format.value()) {
                self.error(check::refuse_debug_print_format(&*format));
            }
        }
        for arg in args_iter {
            self.expr(arg);
        }
        mac.tokens = args.to_token_stream();
    }

    /// `if`: on a static condition it stays Rust's `if`; on a traced one both branches are
    /// traced and the `if` becomes `lax::cond`, with the outer locals it assigns threaded
    /// through as outputs.
    fn if_expr(&mut self, e: &mut Expr) -> Taint {
        let Expr::If(i) = e else { unreachable!("called on if expressions") };
        if let Expr::Let(l) = &mut *i.cond {
            let t = self.expr(&mut l.expr);
            let pat = (*l.pat).clone();
            self.scopes.push();
            self.declare_pat(&pat, t);
            let mut out = self.block(&mut i.then_branch);
            self.scopes.pop();
            if let Some((_, other)) = &mut i.else_branch {
                out = out.join(self.expr(other));
            }
            return out;
        }
        let cond = self.expr(&mut i.cond);
        if !cond.is_traced() {
            let mut out = self.block(&mut i.then_branch);
            if let Some((_, other)) = &mut i.else_branch {
                out = out.join(self.expr(other));
            }
            return out;
        }
        let value = self.describe(&i.cond);
        let assigned = self.outer_assigned(i);
        self.branches.push(Branch {
            value,
            loops: self.loops,
            closures: self.closures,
            depth: self.scopes.depth(),
        });
        self.block(&mut i.then_branch);
        if let Some((_, other)) = &mut i.else_branch {
            self.expr(other);
        }
        // The outer locals the branches assign are traced already: assigning a static one is
        // refused above, and keeping it static spares the code after the `if` a second error.
        self.branches.pop();
        *e = self.lower_if(i, &assigned);
        Taint::Traced
    }

    /// Outer locals assigned in either branch (those declared by `let` inside are not).
    fn outer_assigned(&self, i: &ExprIf) -> Vec<String> {
        let mut found = Assigned::default();
        syn::visit::Visit::visit_block(&mut found, &i.then_branch);
        if let Some((_, other)) = &i.else_branch {
            syn::visit::Visit::visit_expr(&mut found, other);
        }
        let mut names: Vec<String> = Vec::new();
        for name in found.assigned {
            let outer = !found.declared.contains(&name) && self.scopes.get(&name).is_some();
            if outer && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// The branches become closures that start from clones of the outer locals they assign
    /// (returned as outputs and assigned back after the `cond`) and of the other traced locals
    /// they use, so that neither branch moves a value the other branch, or the code after the
    /// `if`, still uses.
    fn lower_if(&mut self, i: &ExprIf, assigned: &[String]) -> Expr {
        let span = i.if_token.span();
        let cond = &i.cond;
        let vars: Vec<Ident> = assigned.iter().map(|n| Ident::new(n, span)).collect();
        let outs: Vec<Ident> = (0..vars.len()).map(|k| format_ident!("__rjax_out{k}")).collect();
        let mut used = Vec::new();
        self.traced_names_in(i.then_branch.to_token_stream(), &mut used);
        if let Some((_, other)) = &i.else_branch {
            self.traced_names_in(other.to_token_stream(), &mut used);
        }
        let used: Vec<Ident> =
            used.iter().filter(|n| !assigned.contains(n)).map(|n| Ident::new(n, span)).collect();
        self.fresh += 1;
        let value = format_ident!("__rjax_value");
        let branch = |body: TokenStream| {
            quote_spanned! {span=> |()| {
                #(
                    #[allow(unused_mut, unused_assignments)]
                    let mut #vars = ::core::clone::Clone::clone(&#vars);
                )*
                #(
                    #[allow(unused_variables)]
                    let #used = ::core::clone::Clone::clone(&#used);
                )*
                let #value = #body;
                ( #(#vars,)* #value, )
            }}
        };
        let then_body = weak_literal_tail(&i.then_branch);
        let else_body = match &i.else_branch {
            Some((_, other)) => match &**other {
                Expr::Block(b) => weak_literal_tail(&b.block),
                other => quote!(#other),
            },
            None => quote!(()),
        };
        let on_true = branch(then_body);
        let on_false = branch(else_body);
        syn::parse_quote_spanned! {span=> {
            let ( #(#outs,)* #value, ) = ::rjax::__private::cond(#cond, #on_true, #on_false, ());
            #( #vars = #outs; )*
            #value
        }}
    }
}

/// `f(args)` as a call of `f`'s traced entry point, `f::__rjax_traced(args)`, which the
/// companion type of a `#[traceable]` or `#[jit]` function holds (see [`traced_call_tokens`]).
pub fn traced_call(callee: &syn::ExprPath, args: &Punctuated<Expr, Token![,]>) -> Expr {
    let tokens = traced_call_tokens(&callee.path, args.to_token_stream(), args.len());
    syn::parse2(tokens).expect("a traced call parses as an expression")
}

/// A call of `callee`'s traced entry point that compiles when `callee` is traceable and
/// otherwise fails with a message on `callee`'s span that names it and says to add
/// `#[traceable]`. A plain function has no companion type, so `callee` is imported under a
/// fixed name over a glob of fallbacks (`rjax::__private::callee`): the fallback type is then
/// what the name means in the type namespace, and a constant that reads its
/// `Companion::TRACEABLE` fails to evaluate with the message.
pub fn traced_call_tokens(callee: &syn::Path, args: TokenStream, arity: usize) -> TokenStream {
    let mut path = callee.clone();
    let last = path.segments.last_mut().expect("a path has a segment");
    let span = last.ident.span();
    let name = last.ident.to_string();
    let turbofish = match std::mem::replace(&mut last.arguments, syn::PathArguments::None) {
        syn::PathArguments::AngleBracketed(mut generics) => {
            generics.colon2_token = Some(Default::default());
            generics.to_token_stream()
        }
        _ => TokenStream::new(),
    };
    let shown = path.to_token_stream().to_string().replace(' ', "");
    let message = format!(
        "`{shown}` is called with traced values, but it is not a traceable function: add \
         `#[traceable]` above `fn {name}` so that rjax traces its body"
    );
    let fallbacks = format_ident!("arity{}", arity);
    quote_spanned! {span=> {
        #[allow(unused_imports)]
        use ::rjax::__private::callee::#fallbacks::*;
        #[allow(unused_imports)]
        use #path as __rjax_callee;
        const _: () = if !<__rjax_callee as ::rjax::__private::Companion>::TRACEABLE {
            ::core::panic!(#message)
        };
        // The arguments may be `()` (a residual without arrays), which clippy would flag in
        // what it takes for the user's code.
        #[allow(clippy::unit_arg)]
        let __rjax_out = __rjax_callee::__rjax_traced #turbofish (#args);
        __rjax_out
    }}
}

/// Binds a body's tail expression to a local when it calls a transform's function form
/// (`grad(|w| ..)(x)`): in edition 2021 the temporaries of a tail expression outlive the
/// block's locals, and the transform value is such a temporary that borrows them (the
/// closure's captures), which the borrow checker refuses. A `let` ends them at its `;`.
pub fn bind_tail(block: &mut Block) {
    let Some(Stmt::Expr(tail, None)) = block.stmts.last() else { return };
    let mut names = Vec::new();
    idents_in(tail.to_token_stream(), &mut names);
    if !names.iter().any(|n| FUNCTION_FORMS.contains(&n.as_str())) {
        return;
    }
    let tail = tail.clone();
    let span = tail.span();
    block.stmts.pop();
    block.stmts.push(syn::parse_quote_spanned!(span=> let __rjax_tail = #tail;));
    block.stmts.push(Stmt::Expr(syn::parse_quote_spanned!(span=> __rjax_tail), None));
}

fn idents_in(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            TokenTree::Ident(id) => out.push(id.to_string()),
            TokenTree::Group(g) => idents_in(g.stream(), out),
            TokenTree::Literal(_) | TokenTree::Punct(_) => {}
        }
    }
}

/// `Operand::operand(&(e))`: an operand by reference (arrays) or by value (numbers).
fn operand(e: &Expr) -> TokenStream {
    quote_spanned!(e.span()=> ::rjax::__private::Operand::operand(&(#e)))
}

/// A block whose tail is a Rust number literal gets it as a weakly typed array, so that a
/// branch can return `0.0` while the other returns an array (as in JAX).
fn weak_literal_tail(block: &Block) -> TokenStream {
    let mut block = block.clone();
    if let Some(Stmt::Expr(tail, None)) = block.stmts.last_mut() {
        weaken(tail);
    }
    quote!(#block)
}

fn weaken(e: &mut Expr) {
    match e {
        Expr::Lit(l) if matches!(l.lit, Lit::Float(_) | Lit::Int(_)) => {
            *e = syn::parse_quote_spanned!(l.span()=> ::rjax::__private::weak(#l));
        }
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) && matches!(*u.expr, Expr::Lit(_)) => {
            let inner = u.clone();
            *e = syn::parse_quote_spanned!(inner.span()=> ::rjax::__private::weak(#inner));
        }
        Expr::Tuple(t) => t.elems.iter_mut().for_each(weaken),
        Expr::Paren(p) => weaken(&mut p.expr),
        _ => {}
    }
}

fn is_comparison(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_)
    )
}

fn is_text(lit: &Lit) -> bool {
    matches!(lit, Lit::Str(_) | Lit::ByteStr(_) | Lit::CStr(_) | Lit::Char(_))
}

/// A string, byte string or char literal: a value no array can equal.
fn is_text_literal(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => is_text(&l.lit),
        Expr::Reference(r) => is_text_literal(&r.expr),
        Expr::Paren(p) => is_text_literal(&p.expr),
        _ => false,
    }
}

/// Whether a pattern holds a string, byte string or char literal.
fn has_text_literal(pat: &Pat) -> bool {
    match pat {
        Pat::Lit(l) => is_text(&l.lit),
        Pat::Or(p) => p.cases.iter().any(has_text_literal),
        Pat::Tuple(p) => p.elems.iter().any(has_text_literal),
        Pat::TupleStruct(p) => p.elems.iter().any(has_text_literal),
        Pat::Slice(p) => p.elems.iter().any(has_text_literal),
        Pat::Reference(p) => has_text_literal(&p.pat),
        Pat::Paren(p) => has_text_literal(&p.pat),
        Pat::Ident(p) => p.subpat.as_ref().is_some_and(|(_, sub)| has_text_literal(sub)),
        Pat::Range(r) => r.start.iter().chain(r.end.iter()).any(|e| is_text_literal(e)),
        _ => false,
    }
}

/// Whether a pattern tests a number or a bool (`0`, `1..=3`, `true`), which a traced value
/// has no value for. Patterns that only name variants and bind (`Some(w)`, `None`,
/// `Mode::Fast`) match a pytree's structure, which is known while tracing.
fn tests_value(pat: &Pat) -> bool {
    match pat {
        Pat::Lit(l) => !is_text(&l.lit),
        Pat::Range(r) => !r.start.iter().chain(r.end.iter()).any(|e| is_text_literal(e)),
        Pat::Or(p) => p.cases.iter().any(tests_value),
        Pat::Tuple(p) => p.elems.iter().any(tests_value),
        Pat::TupleStruct(p) => p.elems.iter().any(tests_value),
        Pat::Struct(p) => p.fields.iter().any(|f| tests_value(&f.pat)),
        Pat::Slice(p) => p.elems.iter().any(tests_value),
        Pat::Reference(p) => tests_value(&p.pat),
        Pat::Paren(p) => tests_value(&p.pat),
        Pat::Ident(p) => p.subpat.as_ref().is_some_and(|(_, sub)| tests_value(sub)),
        _ => false,
    }
}

/// Whether a `debug_print!` format holds only plain `{}` placeholders.
fn plain_placeholders(format: &str) -> bool {
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{' | '}')) | ('}', Some('}')) => {
                chars.next();
            }
            ('{', _) => return false,
            _ => {}
        }
    }
    true
}

/// The DType a cast to `ty` asks for.
fn cast_dtype(ty: &Type) -> &'static str {
    match type_name(ty).as_deref() {
        Some("bool") => "Bool",
        Some("i8") => "I8",
        Some("i16") => "I16",
        Some("i32" | "isize" | "usize") => "I32",
        Some("i64") => "I64",
        Some("u8") => "U8",
        Some("u16") => "U16",
        Some("u32") => "U32",
        Some("u64") => "U64",
        Some("f64") => "F64",
        _ => "F32",
    }
}

/// An index as written inside `s![..]`: `y[(i, j)]` becomes `i, j`.
fn index_code(index: &Expr) -> String {
    match index {
        Expr::Tuple(t) => t.elems.iter().map(|e| check::code(e)).collect::<Vec<_>>().join(", "),
        other => check::code(other),
    }
}

/// What an assignment through an index did, as the `.at(..)` update that does it instead.
enum Update {
    Set(String),
    Add(String),
    Sub(String),
    Mul(String),
    Div(String),
    Other,
}

impl Update {
    fn compound(op: &BinOp, value: String) -> Update {
        match op {
            BinOp::AddAssign(_) => Update::Add(value),
            BinOp::SubAssign(_) => Update::Sub(value),
            BinOp::MulAssign(_) => Update::Mul(value),
            BinOp::DivAssign(_) => Update::Div(value),
            _ => Update::Other,
        }
    }

    /// The method call that updates the selected elements, e.g. `.add(1.0)`.
    fn method(self) -> String {
        let simple = |v: &str| v.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        match self {
            Update::Set(v) => format!(".set({v})"),
            Update::Add(v) => format!(".add({v})"),
            Update::Sub(v) if simple(&v) => format!(".add(-{v})"),
            Update::Sub(v) => format!(".add(-({v}))"),
            Update::Mul(v) => format!(".mul({v})"),
            Update::Div(v) if simple(&v) => format!(".mul(1.0 / {v})"),
            Update::Div(v) => format!(".mul(1.0 / ({v}))"),
            Update::Other => ".set(new_values)".to_string(),
        }
    }
}

fn is_compound_assign(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// Whether a loop iterates `.enumerate()`.
fn is_enumerate(e: &Expr) -> bool {
    matches!(e, Expr::MethodCall(m) if m.method == "enumerate")
}

/// Names assigned (`x = ..`, `x += ..`) and names declared by `let` in a branch.
#[derive(Default)]
struct Assigned {
    assigned: Vec<String>,
    declared: Vec<String>,
}

impl<'ast> syn::visit::Visit<'ast> for Assigned {
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let Expr::Path(p) = &*a.left {
            if let Some(id) = p.path.get_ident() {
                self.assigned.push(id.to_string());
            }
        }
        syn::visit::visit_expr_assign(self, a);
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if is_compound_assign(&b.op) {
            if let Expr::Path(p) = &*b.left {
                if let Some(id) = p.path.get_ident() {
                    self.assigned.push(id.to_string());
                }
            }
        }
        syn::visit::visit_expr_binary(self, b);
    }

    fn visit_local(&mut self, l: &'ast Local) {
        let mut names = Vec::new();
        pat_names(&l.pat, &mut names);
        self.declared.extend(names);
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {
        // Assignments inside closures are the closure's own business.
    }
}

fn pat_names(pat: &Pat, out: &mut Vec<String>) {
    match pat {
        Pat::Ident(p) => out.push(p.ident.to_string()),
        Pat::Type(p) => pat_names(&p.pat, out),
        Pat::Tuple(p) => p.elems.iter().for_each(|e| pat_names(e, out)),
        Pat::TupleStruct(p) => p.elems.iter().for_each(|e| pat_names(e, out)),
        Pat::Struct(p) => p.fields.iter().for_each(|f| pat_names(&f.pat, out)),
        Pat::Reference(p) => pat_names(&p.pat, out),
        _ => {}
    }
}

//! The transform values: each holds the user's closure and derefs to a plain `dyn Fn`, so that
//! `grad(f)(&x)` reads as in JAX; forms whose result type depends on run-time choices
//! (`argnums`, `has_aux`) are called with `.call(&args)` instead.

use std::ops::Deref;
use std::rc::Rc;
use std::sync::Arc;

use super::argnums::{ArgnumSpec, Argnums, AxisSpec};
use crate::array::Array;
use crate::exec::{CallSite, JitFunction};
use crate::ir::trace;
use crate::transform::ad::api::{self as ad, Flat, Wrt};
use crate::transform::ad::custom;
use crate::transform::ad::maps::linear_map;
use crate::transform::batch::api::{self as batch, BatchAxes};
use crate::tree::{self, Tree, Unflatten};

/// The user's closure, shared by a transform and the values its builder methods make.
type Body<'f, A, R> = Rc<dyn Fn(&A) -> R + 'f>;
/// A transform ready to call.
type Call<'f, A, O> = Box<dyn Fn(&A) -> O + 'f>;

/// Positions, as messages name the elements of the argument tuple.
const NAMES: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];

/// The argument as the transforms' parameters: itself, or its tuple's elements when
/// `argnums` picks among them (then `true`).
#[track_caller]
fn split_args<A: Tree>(op: &str, argnums: Option<&Argnums>, args: &A) -> (Vec<Flat>, bool) {
    let flat = Flat::of(args);
    let Some(argnums) = argnums else { return (vec![flat], false) };
    let def = flat.def.clone();
    let parts = flat.into_elements().unwrap_or_else(|| {
        panic!(
            "{op}: argnums picks elements of the argument tuple, but the argument has structure \
             {def}; make the closure take a tuple (`|(w, b): &(Array, Array)| ..`)"
        )
    });
    if let Some(n) = argnums.nums.iter().find(|&&n| n >= parts.len()) {
        panic!(
            "{op}: argnums {n} is out of range: the argument tuple has {} elements",
            parts.len()
        );
    }
    (parts, true)
}

/// The argument rebuilt from the transforms' (traced) parameters.
fn join_args<A: Unflatten>(params: Vec<Flat>, split: bool) -> A {
    if split {
        Flat::tuple(params).into_tree()
    } else {
        params.into_iter().next().expect("one argument").into_tree()
    }
}

/// The positions to differentiate and whether the result is a tuple (default: the whole
/// argument).
fn positions(argnums: Option<&Argnums>) -> (Vec<usize>, bool) {
    argnums.map_or((vec![0], false), |a| (a.nums.clone(), a.tuple))
}

/// `jax.grad(f)`: the gradient of a function with a scalar (0-d float) output, of the type of
/// its argument: `grad(|p: &Params| loss(p))(&params)` is a `Params`.
///
/// `.argnums(1)` or `.argnums((0, 1))` differentiate elements of a tuple argument, and
/// `.has_aux()` lets `f` return `(value, aux)`; both are called with `.call(&args)`.
pub fn grad<'f, A, R, F>(f: F) -> Grad<'f, A, R, A>
where
    A: Unflatten + 'f,
    R: Tree + 'f,
    F: Fn(&A) -> R + 'f,
{
    let f: Body<'f, A, R> = Rc::new(f);
    let g = f.clone();
    Grad {
        f,
        value: false,
        call: Box::new(move |a| grad_flat(&*g, false, None, false, a).into_tree()),
    }
}

/// `jax.value_and_grad(f)`: `(value, gradient)`; builder methods as [`grad`].
pub fn value_and_grad<'f, A, R, F>(f: F) -> Grad<'f, A, R, (Array, A)>
where
    A: Unflatten + 'f,
    R: Tree + 'f,
    F: Fn(&A) -> R + 'f,
{
    let f: Body<'f, A, R> = Rc::new(f);
    let g = f.clone();
    let call: Call<'f, A, (Array, A)> =
        Box::new(move |a| grad_flat(&*g, true, None, false, a).into_tree());
    Grad { f, value: true, call }
}

/// What [`grad`] and [`value_and_grad`] return: call it (`grad(f)(&x)`), or choose
/// `argnums`/`has_aux`.
pub struct Grad<'f, A, R, O> {
    f: Body<'f, A, R>,
    value: bool,
    call: Call<'f, A, O>,
}

impl<'f, A, R, O> Deref for Grad<'f, A, R, O> {
    type Target = dyn Fn(&A) -> O + 'f;
    fn deref(&self) -> &Self::Target {
        &*self.call
    }
}

impl<'f, A: Unflatten, R: Tree, O> Grad<'f, A, R, O> {
    /// Differentiates elements of the argument tuple: `.argnums(1)` gives that element's
    /// gradient, `.argnums((0, 1))` a tuple of them (JAX's `argnums`).
    pub fn argnums(self, argnums: impl ArgnumSpec) -> GradWith<'f, A, R> {
        GradWith { f: self.f, value: self.value, argnums: Some(argnums.argnums()), has_aux: false }
    }

    /// `f` returns `(value, aux)`; the result is `(gradient, aux)` (for `value_and_grad`,
    /// `((value, aux), gradient)`), as JAX's `has_aux=True`.
    pub fn has_aux(self) -> GradWith<'f, A, R> {
        GradWith { f: self.f, value: self.value, argnums: None, has_aux: true }
    }
}

/// A [`grad`] or [`value_and_grad`] with `argnums` or `has_aux` chosen.
pub struct GradWith<'f, A, R> {
    f: Body<'f, A, R>,
    value: bool,
    argnums: Option<Argnums>,
    has_aux: bool,
}

impl<A: Unflatten, R: Tree> GradWith<'_, A, R> {
    /// See [`Grad::argnums`].
    pub fn argnums(self, argnums: impl ArgnumSpec) -> Self {
        GradWith { argnums: Some(argnums.argnums()), ..self }
    }

    /// See [`Grad::has_aux`].
    pub fn has_aux(self) -> Self {
        GradWith { has_aux: true, ..self }
    }

    /// The result, as the type the caller asks for (a tuple of gradients for tuple argnums,
    /// `(gradient, aux)` with `has_aux`); panics when it has another structure.
    #[track_caller]
    pub fn call<G: Unflatten>(&self, args: &A) -> G {
        grad_flat(&*self.f, self.value, self.argnums.as_ref(), self.has_aux, args).into_tree()
    }
}

#[track_caller]
fn grad_flat<A: Unflatten, R: Tree>(
    f: &dyn Fn(&A) -> R,
    value: bool,
    argnums: Option<&Argnums>,
    has_aux: bool,
    args: &A,
) -> Flat {
    let op = if value { "value_and_grad" } else { "grad" };
    let (params, split) = split_args(op, argnums, args);
    let (nums, tuple) = positions(argnums);
    let wrt = Wrt { transform: op, argnums: &nums, names: &NAMES };
    let body = |ps: Vec<Flat>| f(&join_args::<A>(ps, split));
    if value {
        ad::value_and_grad(wrt, tuple, has_aux, params, body)
    } else {
        ad::grad(wrt, tuple, has_aux, params, body)
    }
}

/// Which dense jacobian.
#[derive(Clone, Copy)]
enum JacKind {
    Forward,
    Reverse,
    Hessian,
}

/// `jax.jacfwd(f)` (forward mode): for an array output, the jacobian has the argument's
/// structure, each leaf shaped `out.shape ++ leaf.shape`. In general it is JAX's nesting: the
/// output's structure, each leaf replaced by the argument's. `.argnums((0, 1))` gives a tuple
/// of jacobians, called with `.call(&args)`.
pub fn jacfwd<'f, A: Unflatten + 'f, R: Tree + 'f>(f: impl Fn(&A) -> R + 'f) -> Jacobian<'f, A, R> {
    Jacobian::new(Rc::new(f), JacKind::Forward)
}

/// `jax.jacrev(f)` (reverse mode): the same jacobian as [`jacfwd`], row by row.
pub fn jacrev<'f, A: Unflatten + 'f, R: Tree + 'f>(f: impl Fn(&A) -> R + 'f) -> Jacobian<'f, A, R> {
    Jacobian::new(Rc::new(f), JacKind::Reverse)
}

/// `jax.hessian(f)`: `jacfwd(jacrev(f))`; for a function of one array, an array shaped
/// `out.shape ++ x.shape ++ x.shape`. With `.argnums((0, 1))`, a tuple of tuples.
pub fn hessian<'f, A: Unflatten + 'f, R: Tree + 'f>(
    f: impl Fn(&A) -> R + 'f,
) -> Jacobian<'f, A, R> {
    Jacobian::new(Rc::new(f), JacKind::Hessian)
}

/// What [`jacfwd`], [`jacrev`] and [`hessian`] return. Called directly it returns the
/// argument's type (right for `jacfwd`/`jacrev` of an array-valued function, and for the
/// hessian of a function of one array); `.call(&args)` returns any type asked for.
pub struct Jacobian<'f, A, R> {
    f: Body<'f, A, R>,
    kind: JacKind,
    argnums: Option<Argnums>,
    call: Call<'f, A, A>,
}

impl<'f, A: Unflatten + 'f, R: Tree + 'f> Jacobian<'f, A, R> {
    fn new(f: Body<'f, A, R>, kind: JacKind) -> Self {
        let g = f.clone();
        let call: Call<'f, A, A> = Box::new(move |a| jac_flat(&*g, kind, None, a).into_tree());
        Jacobian { f, kind, argnums: None, call }
    }

    /// Differentiates elements of the argument tuple (see [`Grad::argnums`]): a tuple of
    /// jacobians for a tuple of positions, of tuples for `hessian`.
    pub fn argnums(self, argnums: impl ArgnumSpec) -> Self {
        Jacobian { argnums: Some(argnums.argnums()), ..self }
    }

    /// The jacobian as the type the caller asks for; panics when it has another structure.
    #[track_caller]
    pub fn call<J: Unflatten>(&self, args: &A) -> J {
        jac_flat(&*self.f, self.kind, self.argnums.as_ref(), args).into_tree()
    }
}

impl<'f, A, R> Deref for Jacobian<'f, A, R> {
    type Target = dyn Fn(&A) -> A + 'f;
    fn deref(&self) -> &Self::Target {
        assert!(
            self.argnums.is_none(),
            "with argnums, a jacobian's type depends on them: call it with .call(&args)"
        );
        &*self.call
    }
}

#[track_caller]
fn jac_flat<A: Unflatten, R: Tree>(
    f: &dyn Fn(&A) -> R,
    kind: JacKind,
    argnums: Option<&Argnums>,
    args: &A,
) -> Flat {
    let op = match kind {
        JacKind::Forward => "jacfwd",
        JacKind::Reverse => "jacrev",
        JacKind::Hessian => "hessian",
    };
    let (params, split) = split_args(op, argnums, args);
    let (nums, tuple) = positions(argnums);
    let wrt = Wrt { transform: op, argnums: &nums, names: &NAMES };
    let body = |ps: Vec<Flat>| f(&join_args::<A>(ps, split));
    match kind {
        JacKind::Forward => ad::jacfwd(wrt, tuple, params, body),
        JacKind::Reverse => ad::jacrev(wrt, tuple, params, body),
        JacKind::Hessian => ad::hessian(wrt, tuple, params, body),
    }
}

/// `jax.jit(f)`: the first call with a new argument signature (structure, shapes, dtypes,
/// weak types) traces `f`, simplifies and plans the program; later calls with that signature
/// run the cached plan. Each `jit(f)` value has its own cache ([`Jit::cache_info`]), so keep
/// the value to reuse it. Arrays the closure captures are constants of the trace: the cache
/// does not see them, so a closure must not read values that change between calls (through
/// a `Cell`, say); pass those as arguments. Inside a traced function, and when an argument is
/// traced, `f` is inlined into that trace, as `#[jit]` functions are.
pub fn jit<'f, A: Unflatten + 'f, R: Unflatten + 'f>(f: impl Fn(&A) -> R + 'f) -> Jit<'f, A, R> {
    let cache = Arc::new(JitFunction::new("jit(closure)"));
    let c = cache.clone();
    let call: Call<'f, A, R> = Box::new(move |a| {
        if trace::is_tracing() {
            return f(a);
        }
        c.call(a, &CallSite::UNNAMED, |leaves, def| f(&tree::unflatten(def, leaves)))
    });
    Jit { cache, call }
}

/// What [`jit`] returns: call it like the function.
pub struct Jit<'f, A, R> {
    cache: Arc<JitFunction>,
    call: Call<'f, A, R>,
}

impl<A, R> Jit<'_, A, R> {
    /// The compile cache's counters (plans held, hits, misses, traces).
    pub fn cache_info(&self) -> crate::exec::CacheInfo {
        self.cache.info()
    }
}

impl<'f, A, R> Deref for Jit<'f, A, R> {
    type Target = dyn Fn(&A) -> R + 'f;
    fn deref(&self) -> &Self::Target {
        &*self.call
    }
}

/// `jax.vmap(f, in_axes, out_axes)`: `f` written for one example, mapped over an axis of its
/// argument. `in_axes` is a prefix of the argument's tree (`0`; `None`; `(None, 0)` for a
/// pair whose second element is mapped), `out_axes` of the output's. `.axis_name("i")` names
/// the axis for collectives (`lax::psum(x, "i")`).
pub fn vmap<'f, A: Unflatten + 'f, R: Unflatten + 'f>(
    f: impl Fn(&A) -> R + 'f,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
) -> Vmap<'f, A, R> {
    Vmap::new(Rc::new(f), in_axes.batch_axes(), out_axes.batch_axes(), None, false)
}

/// `jax.pmap(f, in_axes, out_axes)`: like [`vmap`], with the mapped axis spread over devices
/// (one per member; `RJAX_CPU_DEVICES` sets the virtual CPU device count).
pub fn pmap<'f, A: Unflatten + 'f, R: Unflatten + 'f>(
    f: impl Fn(&A) -> R + 'f,
    in_axes: impl AxisSpec,
    out_axes: impl AxisSpec,
) -> Vmap<'f, A, R> {
    Vmap::new(Rc::new(f), in_axes.batch_axes(), out_axes.batch_axes(), None, true)
}

/// What [`vmap`] and [`pmap`] return: call it like the function, on the whole batch.
pub struct Vmap<'f, A, R> {
    f: Body<'f, A, R>,
    in_axes: BatchAxes,
    out_axes: BatchAxes,
    devices: bool,
    call: Call<'f, A, R>,
}

impl<'f, A: Unflatten + 'f, R: Unflatten + 'f> Vmap<'f, A, R> {
    fn new(
        f: Body<'f, A, R>,
        in_axes: BatchAxes,
        out_axes: BatchAxes,
        axis_name: Option<&'static str>,
        devices: bool,
    ) -> Self {
        let (g, i, o) = (f.clone(), in_axes.clone(), out_axes.clone());
        let call: Call<'f, A, R> = Box::new(move |a| {
            let in_axes = [i.clone()];
            let spec = batch::Vmap { names: &["args"], in_axes: &in_axes, out_axes: &o, axis_name };
            let body = |ps: Vec<Flat>| g(&join_args::<A>(ps, false));
            let out = if devices {
                batch::pmap(spec, vec![Flat::of(a)], body)
            } else {
                batch::vmap(spec, vec![Flat::of(a)], body)
            };
            out.into_tree()
        });
        Vmap { f, in_axes, out_axes, devices, call }
    }

    /// Names the mapped axis for collectives (`lax::psum(x, name)`), JAX's `axis_name`.
    pub fn axis_name(self, name: &'static str) -> Self {
        Vmap::new(self.f, self.in_axes, self.out_axes, Some(name), self.devices)
    }
}

impl<'f, A, R> Deref for Vmap<'f, A, R> {
    type Target = dyn Fn(&A) -> R + 'f;
    fn deref(&self) -> &Self::Target {
        &*self.call
    }
}

/// `jax.jvp(f, primals, tangents)`: `(f(primals), the derivative of f at primals along
/// tangents)`; `tangents` has the primals' type (a tuple of tangents for a tuple argument).
#[track_caller]
pub fn jvp<A: Unflatten, R: Unflatten>(f: impl Fn(&A) -> R, primals: &A, tangents: &A) -> (R, R) {
    let body = |ps: Vec<Flat>| f(&join_args::<A>(ps, false));
    ad::jvp(&["primals"], vec![Flat::of(primals)], vec![Flat::of(tangents)], body).into_tree()
}

/// `jax.vjp(f, primals)`: `(f(primals), vjp_fn)`, where `vjp_fn(&ct)` is the cotangent of the
/// argument (of its type) for an output cotangent `ct` (of the output's type). `f` is traced
/// and linearized once; `vjp_fn` can be called any number of times.
#[track_caller]
pub fn vjp<A: Unflatten + 'static, R: Unflatten + 'static>(
    f: impl Fn(&A) -> R,
    primals: &A,
) -> (R, VjpFn<A, R>) {
    let (out, map) = linear_map(Flat::of(primals), |ps| f(&join_args::<A>(ps, false)));
    let call: Call<'static, R, A> = Box::new(move |ct| map.pull(Flat::of(ct)).into_tree());
    (out.into_tree(), Linear { call })
}

/// `jax.linearize(f, primals)`: `(f(primals), f_jvp)`, where `f_jvp(&t)` is the derivative
/// of `f` at `primals` along `t`, evaluated by the linear program kept from one
/// linearization (no retracing per call).
#[track_caller]
pub fn linearize<A: Unflatten + 'static, R: Unflatten + 'static>(
    f: impl Fn(&A) -> R,
    primals: &A,
) -> (R, LinearFn<A, R>) {
    let (out, map) = linear_map(Flat::of(primals), |ps| f(&join_args::<A>(ps, false)));
    let call: Call<'static, A, R> = Box::new(move |t| map.push(Flat::of(t)).into_tree());
    (out.into_tree(), Linear { call })
}

/// A linear function from `I` to `O` kept from one linearization: [`vjp`]'s pullback and
/// [`linearize`]'s derivative. Call it like a function.
pub struct Linear<I, O> {
    call: Call<'static, I, O>,
}

impl<I, O> Deref for Linear<I, O> {
    type Target = dyn Fn(&I) -> O;
    fn deref(&self) -> &Self::Target {
        &*self.call
    }
}

/// The pullback [`vjp`] returns: call it on an output cotangent (of `R`'s type) for the
/// argument's cotangent (of `A`'s type).
pub type VjpFn<A, R> = Linear<R, A>;

/// The linear function [`linearize`] returns: call it on a tangent of the argument.
pub type LinearFn<A, R> = Linear<A, R>;

/// `jax.checkpoint(f)` (rematerialization): the same values and derivatives, but reverse
/// mode recomputes `f`'s intermediates from its inputs instead of keeping them.
pub fn checkpoint<'f, A: Unflatten + 'f, R: Unflatten + 'f>(
    f: impl Fn(&A) -> R + 'f,
) -> Checkpoint<'f, A, R> {
    let call: Call<'f, A, R> = Box::new(move |a| {
        custom::checkpoint(vec![Flat::of(a)], |ps| f(&join_args::<A>(ps, false))).into_tree()
    });
    Checkpoint { call }
}

/// What [`checkpoint`] returns: call it like the function.
pub struct Checkpoint<'f, A, R> {
    call: Call<'f, A, R>,
}

impl<'f, A, R> Deref for Checkpoint<'f, A, R> {
    type Target = dyn Fn(&A) -> R + 'f;
    fn deref(&self) -> &Self::Target {
        &*self.call
    }
}

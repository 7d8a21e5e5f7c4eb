//! The `#[jit]` compile cache and the run-time errors of traced code: one trace per signature
//! (shapes, dtypes, weak types, tree structure, static values), many threads sharing one
//! cache, shape errors that point at the user's line, concretization (`.item()` on a traced
//! value) and traced values escaping their trace.

mod common;

use std::cell::RefCell;
use std::sync::{Barrier, Mutex, Once};

use common::panic_text;
use rjax::ir::trace::is_tracing;
use rjax::prelude::*;

fn vals(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

fn info_of(info: rjax::CacheInfo) -> (u64, u64, u64, usize) {
    (info.traces, info.misses, info.hits, info.plans)
}

thread_local! {
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f`, which must panic, and returns its message and where it panicked
/// (`file:line:column`, as the default panic hook prints it).
fn panic_text_and_location(f: impl FnOnce()) -> (String, String) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                let at = format!("{}:{}:{}", l.file(), l.line(), l.column());
                PANIC_AT.with(|p| *p.borrow_mut() = Some(at));
            }
            previous(info);
        }));
    });
    PANIC_AT.with(|p| p.borrow_mut().take());
    let text = panic_text(f);
    let at = PANIC_AT.with(|p| p.borrow_mut().take()).expect("the hook saw the panic");
    (text, at)
}

/// The 1-based line of this file holding `marker` (which must occur exactly once besides
/// the call that looks it up).
fn line_of(marker: &str) -> u32 {
    let source = include_str!("jit_cache.rs");
    let hits: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker) && !l.contains("line_of("))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "marker {marker:?} must mark one line");
    hits[0] as u32
}

// --- One trace per signature -----------------------------------------------------------------

#[jit]
fn affine(x: &Array) -> Array {
    x * 3.0 - 1.0
}

#[test]
fn same_signature_reuses_the_plan() {
    for k in 0..5 {
        let x = jnp::full([2, 3], k as f32);
        assert_eq!(vals(&affine(&x)), vec![3.0 * k as f32 - 1.0; 6]);
    }
    assert_eq!(info_of(affine::cache_info()), (1, 1, 4, 1));
    assert!(affine::cache_info().trace_time > std::time::Duration::ZERO);
}

#[jit]
fn row_sums(x: &Array) -> Array {
    x.sum_axes(-1, false) + 1.0
}

#[test]
fn a_new_shape_is_one_new_trace() {
    let shapes: [&[usize]; 6] = [&[3], &[4], &[2, 2], &[3], &[2, 2], &[0, 5]];
    let mut traces = Vec::new();
    for shape in shapes {
        let x = jnp::ones(shape);
        let got = row_sums(&x);
        let want = x.sum_axes(-1, false) + 1.0;
        assert_eq!(got.shape(), want.shape());
        assert_eq!(vals(&got), vals(&want));
        traces.push(row_sums::cache_info().traces);
    }
    assert_eq!(traces, vec![1, 2, 3, 3, 3, 4]);
    assert_eq!(info_of(row_sums::cache_info()), (4, 4, 2, 4));
}

#[jit]
fn bounded(x: &Array) -> Array {
    x * 2.0
}

#[test]
fn a_full_cache_drops_the_least_recently_used_plan() {
    assert_eq!(bounded::cache_info().capacity, rjax::exec::jit::DEFAULT_CACHE_CAPACITY);
    bounded::set_cache_capacity(2);
    let call = |n: usize| vals(&bounded(&jnp::ones([n])));
    call(1);
    call(2);
    call(1); // 1 is now more recent than 2
    call(3); // evicts 2
    let info = bounded::cache_info();
    assert_eq!((info.plans, info.traces, info.evictions, info.capacity), (2, 3, 1, 2));
    call(1); // still cached
    assert_eq!(bounded::cache_info().traces, 3);
    assert_eq!(call(2), vec![2.0; 2]); // traced again, evicting 3
    let info = bounded::cache_info();
    assert_eq!((info.plans, info.traces, info.evictions), (2, 4, 2));
    bounded::set_cache_capacity(1);
    assert_eq!((bounded::cache_info().plans, bounded::cache_info().evictions), (1, 3));
    bounded::clear_cache();
    assert_eq!(bounded::cache_info().plans, 0);
}

#[jit]
fn doubled(x: &Array) -> Array {
    x * 2
}

#[test]
fn a_new_dtype_or_weak_type_is_a_new_trace() {
    let _x64 = rjax::config::x64_scope(true);
    let f = jnp::array([1.0f32, 2.0]);
    let cases = [
        f.clone(),
        f.astype(DType::F64),
        jnp::array([1, 2]),
        f.with_weak_type(true),
        f.astype(DType::F64),
        f.with_weak_type(true),
        jnp::array([3, 4]),
    ];
    let mut traces = Vec::new();
    for x in &cases {
        let got = doubled(x);
        let want = x * 2;
        assert_eq!(got.dtype(), want.dtype(), "{x:?}");
        assert_eq!(got.is_weak(), want.is_weak(), "the weak flag survives jit: {x:?}");
        assert_eq!(got.astype(DType::F64).to_vec::<f64>(), want.astype(DType::F64).to_vec::<f64>());
        traces.push(doubled::cache_info().traces);
    }
    assert_eq!(traces, vec![1, 2, 3, 4, 4, 4, 4]);
    assert!(doubled(&f.with_weak_type(true)).is_weak());
    assert!(!doubled(&f).is_weak());
}

#[jit]
fn scaled(x: &Array, k: i32, mode: &str, flip: bool) -> Array {
    let y = if mode == "neg" { -x * k } else { x * k };
    if flip {
        y.flip(0)
    } else {
        y
    }
}

#[test]
fn a_new_static_value_is_a_new_trace() {
    let x = jnp::array([1.0f32, 2.0]);
    assert_eq!(vals(&scaled(&x, 2, "pos", false)), vec![2.0, 4.0]);
    assert_eq!(vals(&scaled(&x, 3, "pos", false)), vec![3.0, 6.0]);
    assert_eq!(vals(&scaled(&x, 2, "neg", false)), vec![-2.0, -4.0]);
    assert_eq!(vals(&scaled(&x, 2, "neg", true)), vec![-4.0, -2.0]);
    // `k: i32` is traced (a weakly typed int, as a Python int under `jax.jit`): 2 and 3 share a
    // plan; the string and the bool are static.
    assert_eq!(scaled::cache_info().traces, 3);
    let owned = String::from("neg");
    assert_eq!(vals(&scaled(&x, 2, &owned, true)), vec![-4.0, -2.0]);
    assert_eq!(vals(&scaled(&x, 2, "pos", false)), vec![2.0, 4.0]);
    assert_eq!(info_of(scaled::cache_info()), (3, 3, 3, 3));
}

#[jit]
fn total(xs: &[Array], extra: Option<Array>) -> Array {
    let mut t = jnp::zeros([2]);
    for x in xs {
        t = t + x;
    }
    // The Option's shape is part of the structure, so `if let` on it is static.
    if let Some(e) = extra {
        t * e
    } else {
        t
    }
}

#[test]
fn a_new_tree_structure_is_a_new_trace() {
    let one = jnp::ones([2]);
    let two = jnp::full([2], 2.0f32);
    assert_eq!(vals(&total(std::slice::from_ref(&one), None)), vec![1.0; 2]);
    assert_eq!(vals(&total(&[one.clone(), two.clone()], None)), vec![3.0; 2]);
    assert_eq!(vals(&total(&[one.clone(), two.clone()], Some(two.clone()))), vec![6.0; 2]);
    assert_eq!(vals(&total(&[two.clone(), two.clone()], None)), vec![4.0; 2]);
    assert_eq!(vals(&total(&[], Some(one.clone()))), vec![0.0; 2]);
    assert_eq!(info_of(total::cache_info()), (4, 4, 1, 4));
}

#[jit]
fn no_arguments() -> Array {
    jnp::arange(3.0) * 2.0
}

#[jit]
fn identity(x: &Array) -> Array {
    x.clone()
}

#[jit]
fn same_twice(x: &Array, y: &Array) -> Array {
    x - y
}

#[test]
fn edge_signatures() {
    assert_eq!(vals(&no_arguments()), vec![0.0, 2.0, 4.0]);
    assert_eq!(vals(&no_arguments()), vec![0.0, 2.0, 4.0]);
    assert_eq!(info_of(no_arguments::cache_info()), (1, 1, 1, 1));
    let x = jnp::array([1.0f32, -1.0]);
    assert_eq!(vals(&identity(&x)), vals(&x));
    assert_eq!(vals(&same_twice(&x, &x)), vec![0.0, 0.0]);
    let empty = jnp::zeros([0, 3]);
    assert_eq!(identity(&empty).shape(), &[0, 3]);
    assert_eq!(same_twice(&empty, &empty).shape(), &[0, 3]);
}

#[jit]
fn inner_jit(x: &Array) -> Array {
    x.exp() + 1.0
}

#[jit]
fn outer_jit(x: &Array) -> Array {
    inner_jit(x) * inner_jit(&(x * 2.0))
}

#[test]
fn jit_inside_jit_is_inlined() {
    let x = jnp::array([0.5f32, -0.25]);
    let want = (x.exp() + 1.0) * ((&x * 2.0).exp() + 1.0);
    assert_eq!(vals(&outer_jit(&x)), vals(&want));
    assert_eq!(outer_jit::cache_info().traces, 1);
    assert_eq!(info_of(inner_jit::cache_info()), (0, 0, 0, 0), "traced calls inline the body");
    let text = outer_jit::jaxpr(&x).traced.to_string();
    assert_eq!(text.matches(" exp ").count(), 2, "{text}");
}

/// A constant made by a plain function: the call has no traced arguments, so the macro leaves
/// it (and a jitted call taking it) alone.
fn table() -> Array {
    jnp::array([1.0f32, 2.0])
}

#[jit]
fn calls_itself_with_constants(x: &Array, depth: usize) -> Array {
    if depth == 0 {
        return x * 1.0;
    }
    let inner = calls_itself_with_constants(&table(), depth - 1);
    x + inner
}

#[test]
fn a_body_calling_its_own_jit_function_with_constants_does_not_deadlock() {
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let x = jnp::array([0.5f32, 0.5]);
        let _ = done.send(vals(&calls_itself_with_constants(&x, 3)));
    });
    let got = wait
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the nested compile finished (no self-deadlock on the compile lock)");
    assert_eq!(got, vec![3.5, 6.5]);
    // Each depth is its own specialization, traced once.
    assert_eq!(calls_itself_with_constants::cache_info().traces, 4);
    let x = jnp::array([0.0f32, 1.0]);
    assert_eq!(vals(&calls_itself_with_constants(&x, 2)), vec![2.0, 5.0]);
    assert_eq!(calls_itself_with_constants::cache_info().traces, 4);
}

// --- Threads ---------------------------------------------------------------------------------

#[jit]
fn threaded(x: &Array, k: i32) -> Array {
    (x * x).sum_axes(0, false) * k + x.tanh().max()
}

fn threaded_eager(x: &Array, k: i32) -> Array {
    (x * x).sum_axes(0, false) * k + x.tanh().max()
}

#[test]
fn many_threads_share_one_cache() {
    const THREADS: usize = 8;
    const CALLS: usize = 10_000;
    let shared = jnp::linspace(-1.0, 1.0, 6).reshape([3, 2]);
    let want = threaded_eager(&shared, 2).to_vec::<f32>().unwrap();
    let barrier = Barrier::new(THREADS);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (shared, want, barrier, results) = (&shared, &want, &barrier, &results);
            s.spawn(move || {
                let own = shared * (t as f32 + 1.0);
                let own_want = threaded_eager(&own, 2).to_vec::<f32>().unwrap();
                barrier.wait();
                let mut last = Vec::new();
                for i in 0..CALLS {
                    if i % 2 == 0 {
                        last = vals(&threaded(shared, 2));
                        assert_eq!(&last, want, "thread {t}, call {i}");
                    } else {
                        assert_eq!(vals(&threaded(&own, 2)), own_want, "thread {t}, call {i}");
                    }
                }
                results.lock().unwrap().push(last);
            });
        }
    });
    let results = results.into_inner().unwrap();
    assert_eq!(results.len(), THREADS);
    assert!(results.iter().all(|r| r == &want));
    let info = threaded::cache_info();
    assert_eq!(info.traces, 1, "all threads, one signature, one trace: {info:?}");
    assert_eq!(info.hits + info.misses, (THREADS * CALLS) as u64);
    assert_eq!(info.plans, 1);
}

// --- Errors in traced code -------------------------------------------------------------------

#[jit]
fn mismatched(x: &Array, y: &Array) -> Array {
    let s = x * 2.0;
    s + y // <- shape mismatch
}

#[test]
fn a_shape_error_names_the_op_the_shapes_and_the_line() {
    let x = jnp::ones([3]);
    let y = jnp::ones([4]);
    let msg = panic_text(|| {
        mismatched(&x, &y);
    });
    assert!(msg.starts_with("add: "), "{msg}");
    assert!(msg.contains("float32(3,)") && msg.contains("float32(4,)"), "{msg}");
    let line = line_of("// <- shape mismatch");
    assert!(msg.contains(&format!("tests/jit_cache.rs:{line}:")), "{msg}");
    assert!(!is_tracing(), "a failed trace leaves nothing behind");
    // The failed signature left no plan; good arguments still compile and run.
    assert_eq!(vals(&mismatched(&x, &x)), vec![3.0; 3]);
    assert_eq!(mismatched::cache_info().traces, 1);
    // And the failure repeats (nothing half-built was cached).
    let again = panic_text(|| {
        mismatched(&x, &y);
    });
    assert_eq!(again, msg);
}

#[test]
#[should_panic(expected = "shapes do not broadcast together")]
fn a_shape_error_panics() {
    mismatched(&jnp::ones([2, 3]), &jnp::ones([3, 2]));
}

#[traceable]
fn helper_with_bug(x: &Array) -> Array {
    x.sum_axes(1, false) * x // <- helper mismatch
}

#[jit]
fn calls_buggy_helper(x: &Array) -> Array {
    helper_with_bug(x) + 1.0
}

#[test]
fn a_shape_error_in_a_callee_points_at_the_callee() {
    let msg = panic_text(|| {
        calls_buggy_helper(&jnp::ones([2, 3]));
    });
    let line = line_of("// <- helper mismatch");
    assert!(msg.starts_with("mul: ") && msg.contains("(2,)") && msg.contains("(2, 3)"), "{msg}");
    assert!(msg.contains(&format!("tests/jit_cache.rs:{line}:")), "{msg}");
    assert!(!is_tracing());
}

#[jit]
fn branch_with_bug(x: &Array, y: &Array) -> Array {
    if x.sum() > 0.0 {
        x.exp()
    } else {
        x.dot(y) // <- branch mismatch
    }
}

#[test]
fn a_shape_error_inside_a_traced_branch() {
    let x = jnp::ones([2]);
    let y = jnp::ones([2, 3]);
    // The branches disagree on their result's shape: cond says so, at the `if`.
    let msg = panic_text(|| {
        branch_with_bug(&x, &y);
    });
    assert!(msg.contains("cond") && msg.contains("(2,)") && msg.contains("(3,)"), "{msg}");
    let line = line_of("// <- branch mismatch");
    assert!(msg.contains(&format!("tests/jit_cache.rs:{}:", line - 3)), "{msg}");
    assert!(!is_tracing());
}

#[jit]
fn bad_reshape(x: &Array) -> Array {
    x.reshape([5]) // <- reshape error
}

#[test]
fn a_shape_error_found_by_jnp_panics_at_the_users_line() {
    let (msg, at) = panic_text_and_location(|| {
        bad_reshape(&jnp::ones([2, 2]));
    });
    assert!(msg.contains("reshape") && msg.contains("(2, 2)") && msg.contains("(5,)"), "{msg}");
    let line = line_of("// <- reshape error");
    assert!(at.starts_with(&format!("tests/jit_cache.rs:{line}:")), "{at}");
    assert!(!is_tracing());
}

/// Plain Rust helpers called from traced code (an associated function, so the macro does not
/// treat the call as a call to a traced function).
struct Probe;

thread_local! {
    static READ: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static STASH: RefCell<Option<Array>> = const { RefCell::new(None) };
}

static STASH_ACROSS_THREADS: Mutex<Option<Array>> = Mutex::new(None);

impl Probe {
    fn read(x: &Array) {
        let item = x.item::<f32>();
        let vec = x.to_vec::<f32>();
        READ.with(|r| {
            let mut r = r.borrow_mut();
            r.push(format!("{item:?}"));
            r.push(format!("{vec:?}"));
            r.push(format!("{x} {x:?} traced={}", x.is_traced()));
            assert_eq!(item, Err(Error::Traced { op: "item" }));
            assert_eq!(vec, Err(Error::Traced { op: "to_vec" }));
        });
    }

    fn stash(x: &Array) {
        STASH.with(|s| *s.borrow_mut() = Some(x.clone()));
        *STASH_ACROSS_THREADS.lock().unwrap() = Some(x.clone());
    }

    fn take() -> Array {
        STASH.with(|s| s.borrow_mut().take()).expect("something was stashed")
    }
}

#[jit]
fn reads_a_traced_value(x: &Array) -> Array {
    let y = x.sum();
    Probe::read(&y);
    y * 2.0
}

#[test]
fn item_on_a_traced_value_is_an_error_not_a_value() {
    let x = jnp::array([1.0f32, 2.0]);
    assert_eq!(reads_a_traced_value(&x).item::<f32>().unwrap(), 6.0);
    let seen = READ.with(|r| r.borrow().clone());
    assert_eq!(seen.len(), 3, "the helper ran once, while tracing");
    assert!(seen[0].starts_with("Err(Traced"), "{seen:?}");
    assert!(seen[2].contains("Traced<float32()>") && seen[2].ends_with("traced=true"), "{seen:?}");
    // The error explains itself.
    let text = Error::Traced { op: "item" }.to_string();
    assert!(text.contains("item") && text.contains("traced"), "{text}");
    // The plan runs without the helper: no new reads.
    assert_eq!(reads_a_traced_value(&x).item::<f32>().unwrap(), 6.0);
    assert_eq!(READ.with(|r| r.borrow().len()), 3);
}

#[jit]
fn leaks(x: &Array) -> Array {
    let y = x * 2.0;
    Probe::stash(&y);
    y + 1.0
}

#[jit]
fn uses_leaked(x: &Array) -> Array {
    x + Probe::take()
}

#[jit]
fn returns_leaked(x: &Array) -> Array {
    let _ = x;
    Probe::take()
}

#[jit]
fn after_failure(x: &Array) -> Array {
    x + 1.0
}

const ESCAPED: &str = "UnexpectedTracerError";

#[test]
fn an_escaped_tracer_used_eagerly_panics() {
    let x = jnp::array([1.0f32, 2.0]);
    assert_eq!(vals(&leaks(&x)), vec![3.0, 5.0]);
    // `jaxpr` always traces (a jitted call may hit the cache and not run the body).
    let _ = leaks::jaxpr(&x);
    let leaked = Probe::take();
    assert!(leaked.is_traced());
    assert_eq!(leaked.item::<f32>(), Err(Error::Traced { op: "item" }));
    let msg = panic_text(|| {
        let _ = &leaked + 1.0;
    });
    assert!(msg.contains(ESCAPED), "{msg}");
    let msg = panic_text(|| {
        let _ = leaked.exp();
    });
    assert!(msg.contains(ESCAPED), "{msg}");
}

#[test]
fn an_escaped_tracer_used_in_another_trace_panics() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = leaks::jaxpr(&x);
    let msg = panic_text(|| {
        uses_leaked(&x);
    });
    assert!(msg.contains(ESCAPED), "{msg}");
    assert!(!is_tracing(), "the failed trace was dropped");
    assert_eq!(uses_leaked::cache_info().plans, 0);
}

#[test]
fn an_escaped_tracer_returned_from_another_trace_panics() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = leaks::jaxpr(&x);
    let msg = panic_text(|| {
        returns_leaked(&x);
    });
    assert!(msg.contains(ESCAPED), "{msg}");
    assert!(!is_tracing(), "the failed trace was dropped");
    // Tracing still works on this thread afterwards.
    assert_eq!(vals(&after_failure(&x)), vec![2.0, 3.0]);
    assert_eq!(after_failure::cache_info().traces, 1);
}

#[test]
fn an_escaped_tracer_passed_to_a_jit_function_panics() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = leaks::jaxpr(&x);
    let leaked = Probe::take();
    let msg = panic_text(|| {
        after_failure(&leaked);
    });
    assert!(msg.contains(ESCAPED), "{msg}");
    assert!(!is_tracing());
}

#[test]
fn an_escaped_tracer_sent_to_another_thread_panics() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = leaks::jaxpr(&x);
    let leaked = STASH_ACROSS_THREADS.lock().unwrap().take().expect("stashed");
    let msg = std::thread::spawn(move || panic_text(|| drop(leaked.sin()))).join().unwrap();
    assert!(msg.contains(ESCAPED), "{msg}");
}

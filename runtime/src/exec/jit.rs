//! The compile cache behind `#[jit]`: the first call with a new signature traces the function,
//! simplifies the program and plans it; later calls hash the signature, find the plan, run it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use super::device_plan::DevicePlan;
use super::jit_log::{self, CallSite, Seen};
use super::plan::Plan;
use crate::array::Array;
use crate::ir::{trace, Program};
use crate::primitives::Aval;
use crate::transform::simplify;
use crate::tree::{self, Tree, TreeDef, Unflatten};

/// What a compile-cache key is made of: the argument tree's structure, each leaf's shape,
/// dtype and weak flag, and a hash of the static (non-array) arguments.
#[derive(Debug)]
struct Signature {
    def: TreeDef,
    leaves: Vec<Aval>,
    statics: u64,
}

impl Signature {
    fn matches(&self, def: &TreeDef, leaves: &[Array], statics: u64) -> bool {
        self.statics == statics
            && self.leaves.len() == leaves.len()
            && self.leaves.iter().zip(leaves).all(|(a, l)| {
                a.dtype == l.dtype() && a.weak == l.is_weak() && same_shape(&a.shape, l.shape())
            })
            && self.def == *def
    }
}

/// Shape equality without a `memcmp` call (shapes are a few words long).
fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn signature_hash(def: &TreeDef, leaves: &[Array], statics: u64) -> u64 {
    let mut h = FxHasher::default();
    statics.hash(&mut h);
    for leaf in leaves {
        leaf.dtype().hash(&mut h);
        leaf.is_weak().hash(&mut h);
        leaf.shape().hash(&mut h);
    }
    def.hash(&mut h);
    h.finish()
}

/// A traced function: its program as traced, the program after simplification, and the
/// structure of its outputs.
#[derive(Clone, Debug)]
pub struct TracedFunction {
    /// The program as tracing recorded it.
    pub traced: Program,
    /// After transforms and simplification: what runs.
    pub simplified: Program,
    /// The structure the output leaves are rebuilt into.
    pub out_def: TreeDef,
}

impl std::fmt::Display for TracedFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "traced:\n{}", self.traced)?;
        write!(f, "simplified:\n{}", self.simplified)
    }
}

/// Traces `body` on traced leaves shaped like `args`' leaves (the structure passed along so
/// `body` can rebuild its arguments), and simplifies the program.
pub fn trace_function<A: Tree + ?Sized, O: Tree>(
    name: &str,
    args: &A,
    body: impl FnOnce(Vec<Array>, &TreeDef) -> O,
) -> TracedFunction {
    let (leaves, def) = tree::flatten(args);
    let avals: Vec<Aval> = leaves.iter().map(Array::aval).collect();
    let traced = trace::trace_with(&avals, |inputs| {
        let out = body(inputs, &def);
        tree::flatten(&out)
    });
    assert!(
        traced.captured.is_empty(),
        "{name}: the traced function used traced values of an enclosing trace it was not given"
    );
    let simplified = simplify(&traced.program);
    TracedFunction { traced: traced.program, simplified, out_def: traced.extra }
}

/// Hit and miss counts of one function's compile cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheInfo {
    /// Plans in the cache.
    pub plans: usize,
    /// Calls that found their plan.
    pub hits: u64,
    /// Calls that had to trace.
    pub misses: u64,
    /// Times the function body was traced.
    pub traces: u64,
    /// Total time spent tracing, simplifying and planning.
    pub trace_time: Duration,
    /// Plans dropped because the cache was full (least recently used first).
    pub evictions: u64,
    /// The most plans the cache holds.
    pub capacity: usize,
}

/// How many plans a `#[jit]` function keeps unless told otherwise (`f::set_cache_capacity`).
pub const DEFAULT_CACHE_CAPACITY: usize = 256;

/// What a cache hit needs, shared so the hot path clones one `Arc` and nothing else.
struct Compiled {
    plan: Plan,
    /// The plan for arguments on a device, partitioned on first use there.
    device_plan: OnceLock<DevicePlan>,
    out_def: TreeDef,
}

impl Compiled {
    fn device_plan(&self) -> &DevicePlan {
        self.device_plan.get_or_init(|| DevicePlan::new(self.plan.program().clone()))
    }
}

struct Entry {
    signature: Signature,
    /// The signature as the compile log compares the next miss against it.
    seen: Seen,
    compiled: Arc<Compiled>,
    /// The number of the call that last used the entry (see [`JitFunction::calls`]).
    last_used: AtomicU64,
}

/// Cached plans by signature hash (entries whose signatures collide share a bucket).
type Plans = HashMap<u64, Vec<Entry>, BuildHasherDefault<FxHasher>>;

/// The compile cache of one `#[jit]` function (the macro gives each its own `static`).
///
/// Safe to call from many threads at once: lookups share a read lock; a miss traces under a
/// per-function lock so one signature is traced once. The cache holds at most its capacity
/// of plans, dropping the least recently used when a new one would exceed it.
pub struct JitFunction {
    name: &'static str,
    plans: RwLock<Plans>,
    tracing: Mutex<()>,
    /// Calls made so far: numbers the calls, so that entries record when they were last used.
    calls: AtomicU64,
    misses: AtomicU64,
    traces: AtomicU64,
    trace_nanos: AtomicU64,
    evictions: AtomicU64,
    capacity: AtomicUsize,
    /// How many traces each argument's change caused (for the retrace warning).
    changes: Mutex<Vec<(&'static str, u64)>>,
}

impl JitFunction {
    /// An empty cache for the function `name`.
    pub const fn new(name: &'static str) -> JitFunction {
        JitFunction {
            name,
            plans: RwLock::new(HashMap::with_hasher(BuildHasherDefault::new())),
            tracing: Mutex::new(()),
            calls: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            traces: AtomicU64::new(0),
            trace_nanos: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            capacity: AtomicUsize::new(DEFAULT_CACHE_CAPACITY),
            changes: Mutex::new(Vec::new()),
        }
    }

    /// Calls the function on `args`: runs the cached plan for their signature, tracing `body`
    /// first if there is none. `site` names the arguments and carries the static ones. Inside
    /// another trace (traced arguments), `body` is simply inlined into that trace.
    pub fn call<A: Tree + ?Sized, O: Unflatten>(
        &self,
        args: &A,
        site: &CallSite<'_>,
        body: impl FnOnce(Vec<Array>, &TreeDef) -> O,
    ) -> O {
        let CallScratch { mut leaves, mut def, mut outputs } = CALL_SCRATCH.take();
        args.flatten_into(&mut def, &mut leaves);
        if leaves.iter().any(Array::is_traced) {
            return body(leaves, &def);
        }
        // A plan belongs to the dtype mode it was traced in (see `crate::config`).
        let statics =
            site.statics_hash() ^ (crate::config::x64_enabled() as u64).wrapping_mul(X64_SALT);
        let hash = signature_hash(&def, &leaves, statics);
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let compiled = match self.lookup(hash, &def, &leaves, statics, call) {
            Some(found) => found,
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                let key = Key { hash, def: def.clone(), leaves: leaves.clone(), statics, call };
                self.compile(key, site, body)
            }
        };
        if leaves.iter().any(|l| !l.device().is_host()) {
            // On a device: fused elementwise kernels, the rest one primitive at a time.
            outputs.extend(compiled.device_plan().run(&leaves));
            leaves.clear();
        } else {
            crate::exec::cpu::alloc::named(
                || format!("#[jit] function {}", self.name),
                || compiled.plan.run_into(leaves.drain(..), &mut outputs),
            );
        }
        let result = tree::unflatten(&compiled.out_def, outputs.drain(..));
        def.clear();
        CALL_SCRATCH.set(CallScratch { leaves, def, outputs });
        result
    }

    fn lookup(
        &self,
        hash: u64,
        def: &TreeDef,
        leaves: &[Array],
        statics: u64,
        call: u64,
    ) -> Option<Arc<Compiled>> {
        let plans = self.plans.read().unwrap_or_else(|e| e.into_inner());
        let entry = plans.get(&hash)?.iter().find(|e| e.signature.matches(def, leaves, statics))?;
        entry.last_used.store(call, Ordering::Relaxed);
        Some(entry.compiled.clone())
    }

    fn compile<O: Unflatten>(
        &self,
        key: Key,
        site: &CallSite<'_>,
        body: impl FnOnce(Vec<Array>, &TreeDef) -> O,
    ) -> Arc<Compiled> {
        let Key { hash, def, leaves, statics, call } = key;
        // A body may call its own function again with concrete arguments (a new signature):
        // that call is traced on this thread while the lock is held, so it must not wait.
        let me = self as *const JitFunction as usize;
        let reentered = COMPILING.with(|c| c.borrow().contains(&me));
        let _one_at_a_time =
            (!reentered).then(|| self.tracing.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(found) = self.lookup(hash, &def, &leaves, statics, call) {
            return found;
        }
        let _compiling = Compiling::enter(me);
        let seen = self.explain_trace(site, &def, &leaves);
        let start = Instant::now();
        let avals: Vec<Aval> = leaves.iter().map(Array::aval).collect();
        let traced = trace_function(self.name, &leaves, |inputs, _| body(inputs, &def));
        let compiled = Arc::new(Compiled {
            plan: Plan::new(traced.simplified),
            device_plan: OnceLock::new(),
            out_def: traced.out_def,
        });
        self.traces.fetch_add(1, Ordering::Relaxed);
        self.trace_nanos.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let signature = Signature { def, leaves: avals, statics };
        let last_used = AtomicU64::new(call);
        let entry = Entry { signature, seen, compiled: compiled.clone(), last_used };
        let mut plans = self.plans.write().unwrap_or_else(|e| e.into_inner());
        let capacity = self.capacity.load(Ordering::Relaxed).max(1);
        self.evict_down_to(&mut plans, capacity - 1);
        plans.entry(hash).or_default().push(entry);
        compiled
    }

    /// Before a trace: says why the cache missed when the log is on, counts the argument that
    /// changed, and warns once when the function keeps retracing. Returns the signature as the
    /// log will compare the next miss against it.
    fn explain_trace(&self, site: &CallSite<'_>, def: &TreeDef, leaves: &[Array]) -> Seen {
        let traces = self.traces.load(Ordering::Relaxed);
        let log = jit_log::log_compiles();
        let miss = {
            let plans = self.plans.read().unwrap_or_else(|e| e.into_inner());
            let latest = plans
                .values()
                .flatten()
                .max_by_key(|e| e.last_used.load(Ordering::Relaxed))
                .map(|e| &e.seen);
            jit_log::explain(latest, site, def, leaves, traces)
        };
        let mut changes = self.changes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(name) = miss.argument {
            match changes.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => changes.push((name, 1)),
            }
        }
        if log {
            eprintln!(
                "rjax: tracing #[jit] function `{}` (trace {}): {}",
                self.name,
                traces + 1,
                miss.reason
            );
        }
        if traces + 1 == jit_log::RETRACE_WARNING {
            eprintln!("{}", jit_log::retrace_warning(self.name, traces + 1, &changes));
        }
        Seen {
            def: def.clone(),
            leaves: leaves.iter().map(Array::aval).collect(),
            statics: site.statics.to_vec(),
        }
    }

    /// Drops least recently used plans until at most `keep` remain.
    fn evict_down_to(&self, plans: &mut Plans, keep: usize) {
        let mut held: usize = plans.values().map(Vec::len).sum();
        while held > keep {
            let oldest = plans
                .iter()
                .flat_map(|(h, es)| es.iter().enumerate().map(move |(i, e)| (*h, i, e)))
                .min_by_key(|(_, _, e)| e.last_used.load(Ordering::Relaxed))
                .map(|(h, i, _)| (h, i));
            let Some((hash, i)) = oldest else { break };
            let bucket = plans.get_mut(&hash).expect("found above");
            bucket.remove(i);
            if bucket.is_empty() {
                plans.remove(&hash);
            }
            held -= 1;
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Bounds the cache to `capacity` plans (at least one), dropping the least recently used
    /// ones beyond it now and whenever a new signature is traced.
    pub fn set_capacity(&self, capacity: usize) {
        let capacity = capacity.max(1);
        self.capacity.store(capacity, Ordering::Relaxed);
        let mut plans = self.plans.write().unwrap_or_else(|e| e.into_inner());
        self.evict_down_to(&mut plans, capacity);
    }

    /// The cache's counters.
    pub fn info(&self) -> CacheInfo {
        let plans = self.plans.read().unwrap_or_else(|e| e.into_inner());
        let misses = self.misses.load(Ordering::Relaxed);
        CacheInfo {
            plans: plans.values().map(Vec::len).sum(),
            // (A call counts as a miss a moment after it counts as a call.)
            hits: self.calls.load(Ordering::Relaxed).saturating_sub(misses),
            misses,
            traces: self.traces.load(Ordering::Relaxed),
            trace_time: Duration::from_nanos(self.trace_nanos.load(Ordering::Relaxed)),
            evictions: self.evictions.load(Ordering::Relaxed),
            capacity: self.capacity.load(Ordering::Relaxed),
        }
    }

    /// Empties the cache (counters keep counting).
    pub fn clear(&self) {
        self.plans.write().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Mixed into the static key of calls made with x64 on.
const X64_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// A signature being compiled: its hash, structure, leaves and static key, and the call's
/// number.
struct Key {
    hash: u64,
    def: TreeDef,
    leaves: Vec<Array>,
    statics: u64,
    call: u64,
}

/// The vectors a call flattens its arguments into and receives its outputs in, kept from one
/// call to the next on a thread so that a cached call does not allocate them. A call made
/// while another holds them (a call in a function being traced) makes its own.
#[derive(Default)]
struct CallScratch {
    leaves: Vec<Array>,
    def: TreeDef,
    outputs: Vec<Array>,
}

thread_local! {
    static CALL_SCRATCH: Cell<CallScratch> = Cell::default();
    /// The jit functions this thread is tracing now (by address), innermost last.
    static COMPILING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks a jit function as being traced on this thread until dropped (also on a panic).
struct Compiling(usize);

impl Compiling {
    fn enter(function: usize) -> Compiling {
        COMPILING.with(|c| c.borrow_mut().push(function));
        Compiling(function)
    }
}

impl Drop for Compiling {
    fn drop(&mut self) {
        COMPILING.with(|c| {
            let mut c = c.borrow_mut();
            if let Some(i) = c.iter().rposition(|&f| f == self.0) {
                c.remove(i);
            }
        });
    }
}

/// The Fx hash (rustc's): fast for the short keys signatures are made of.
#[derive(Default)]
pub struct FxHasher {
    hash: u64,
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

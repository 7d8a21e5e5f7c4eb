//! Output buffers of the large kernels.
//!
//! A large zeroed allocation is fresh memory from the kernel, and writing it faults in one
//! 4 KiB page at a time: for the hundreds of megabytes of a batch of per-example gradients
//! those faults cost more than the arithmetic. On Linux the buffer is first marked for
//! transparent huge pages, which are faulted in 2 MiB at a time.
//!
//! Every large buffer is allocated fallibly: when the system has no memory for it, the caller
//! gets an unwinding panic (an [`Error::OutOfMemory`] naming the bytes, and the operation
//! where one is known, see [`named`]) instead of the process aborting, and the fallible entry
//! points ([`try_run`]) turn it into an `Err`.

use std::alloc::Layout;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use rayon::iter::{IndexedParallelIterator, ParallelExtend};

use super::float_mode::Flushing;

use crate::device::Device;
use crate::dtype::Element;
use crate::error::Error;

/// Buffers at least this large are marked for huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

/// `n` copies of `value`, in memory the kernel backs with huge pages when it can. A zero
/// `value` (all bits 0) takes fresh zeroed pages, which the kernel maps lazily.
#[track_caller]
pub fn zeroed<T: Element>(n: usize, value: T) -> Vec<T> {
    if !is_zero_bits(&value) {
        let mut v = with_capacity(n);
        v.resize(n, value);
        return v;
    }
    let Ok(layout) = Layout::array::<T>(n) else { out_of_memory(usize::MAX) };
    if layout.size() == 0 {
        return Vec::new();
    }
    // SAFETY: the layout has a nonzero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        out_of_memory(layout.size());
    }
    advise_huge_pages(ptr, layout.size());
    // SAFETY: `ptr` comes from the global allocator with the layout of `n` elements of `T`;
    // all its bytes are zero, which for every `Element` type (integers, floats, bool) is a
    // valid value, the zero; so length and capacity are both `n`.
    unsafe { Vec::from_raw_parts(ptr, n, n) }
}

/// Whether `value`'s bytes are all zero (so zeroed memory holds copies of it).
fn is_zero_bits<T: Element>(value: &T) -> bool {
    // SAFETY: `Element` types are plain numbers or `bool`, with no padding bytes, so all
    // `size_of::<T>()` bytes of `value` are initialized and readable for its lifetime.
    let bytes = unsafe {
        std::slice::from_raw_parts((value as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    bytes.iter().all(|&b| b == 0)
}

/// An empty `Vec` with room for `n` elements, marked for huge pages before anything touches
/// it (a fresh allocation of this size is mapped, untouched memory; inputs made by the
/// elementwise kernels land here, and a 2048² product read from huge pages ran about 2.5%
/// faster). Out of memory is an unwinding panic, not an abort.
#[track_caller]
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        out_of_memory(n.saturating_mul(std::mem::size_of::<T>()));
    }
    let spare = v.spare_capacity_mut();
    advise_huge_pages(spare.as_ptr(), std::mem::size_of_val(spare));
    v
}

/// `n` copies of `value` in a fallibly allocated `Vec` (for accumulators and other buffers of
/// types that are not array elements).
#[track_caller]
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(n);
    v.resize(n, value);
    v
}

/// `src` copied into a fallibly allocated `Vec` (for reading an array's values out).
#[track_caller]
pub fn copy_of<T: Clone>(src: &[T]) -> Vec<T> {
    let mut v = Vec::new();
    if v.try_reserve_exact(src.len()).is_err() {
        out_of_memory(std::mem::size_of_val(src));
    }
    v.extend_from_slice(src);
    v
}

/// Resizes `v` to `len` elements, filling new ones with `value`; growing it is fallible (for
/// a kernel's scratch buffer, kept between uses).
#[track_caller]
pub fn resize<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    if len > v.len() && v.try_reserve_exact(len - v.len()).is_err() {
        out_of_memory(len.saturating_mul(std::mem::size_of::<T>()));
    }
    v.resize(len, value);
}

/// Checks that `bytes` can be allocated now (allocating and freeing them), for a library
/// that allocates its own workspace of at most that size and aborts if it cannot (gemm's
/// packing buffers): the shortfall becomes this module's unwinding panic instead. Another
/// thread allocating between this check and the library's own allocation can still make
/// that one fail; the check makes it as unlikely as the memory is tight for that long.
#[track_caller]
pub fn ensure_available(bytes: usize) {
    let mut probe: Vec<u8> = Vec::new();
    if probe.try_reserve_exact(bytes).is_err() {
        out_of_memory(bytes);
    }
}

/// The items of `items` in a fallibly allocated `Vec`: `collect` for buffers the size of an
/// array's data (the length is known, so the `Vec` never grows).
#[track_caller]
pub fn collect<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let mut v = with_capacity(items.len());
    v.extend(items);
    v
}

/// [`collect`] for an iterator known to yield `len` items (more would grow the `Vec`
/// infallibly).
#[track_caller]
pub fn collect_counted<T>(items: impl Iterator<Item = T>, len: usize) -> Vec<T> {
    let mut v = with_capacity(len);
    v.extend(items);
    v
}

/// [`collect`] for a parallel iterator (`par_extend` of an indexed iterator reserves its
/// length, which the `Vec` already has room for, so the only allocation is fallible).
#[track_caller]
pub fn par_collect<T: Send>(items: impl IndexedParallelIterator<Item = T>) -> Vec<T> {
    let mut v = with_capacity(items.len());
    v.par_extend(items.flushing());
    v
}

thread_local! {
    /// How many [`named`] scopes are open on this thread: inside one, an allocation failure
    /// unwinds quietly to the scope, which reports it with the operation's name.
    static SCOPES: Cell<usize> = const { Cell::new(0) };
}

/// What a failed allocation unwinds with inside a [`named`] scope.
struct OutOfMemory {
    bytes: usize,
}

/// The out-of-memory errors reported lately, so that [`try_run`] can return one as a value
/// (the panic may have crossed threads, from a kernel's worker to the caller). A list, since
/// several threads may fail at once; a panic is matched to its error by its message.
static RECENT: Mutex<Vec<Error>> = Mutex::new(Vec::new());

/// How many reported errors [`RECENT`] keeps.
const RECENT_KEPT: usize = 64;

/// Removes and returns the recently reported error whose text is `message`.
fn take_reported(message: &str) -> Option<Error> {
    let mut recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
    let i = recent.iter().rposition(|e| e.to_string() == message)?;
    Some(recent.remove(i))
}

/// Reports that `bytes` could not be allocated: quietly to the enclosing [`named`] scope, or,
/// outside any, as a panic with the error's text.
#[track_caller]
pub fn out_of_memory(bytes: usize) -> ! {
    if SCOPES.with(Cell::get) > 0 {
        resume_unwind(Box::new(OutOfMemory { bytes }));
    }
    report(host_out_of_memory(UNNAMED.to_string(), bytes))
}

/// The operation an allocation failure outside any [`named`] scope is reported under (a
/// kernel's worker thread runs outside its caller's scope).
const UNNAMED: &str = "allocating an array";

/// The bytes of the failed allocation a panic `payload` reports, if it is an out-of-memory
/// panic raised outside a [`named`] scope (on a worker thread), so the scope it crossed into
/// can report it again under its operation's name.
fn unnamed_failure(payload: &(dyn std::any::Any + Send)) -> Option<usize> {
    let message = payload.downcast_ref::<String>()?;
    if !message.starts_with(UNNAMED) {
        return None;
    }
    match take_reported(message)? {
        Error::OutOfMemory { bytes, .. } => Some(bytes),
        _ => None,
    }
}

/// The error for `bytes` of host memory that `op` could not get.
fn host_out_of_memory(op: String, bytes: usize) -> Error {
    Error::OutOfMemory { device: Device::default(), op, bytes }
}

#[track_caller]
fn report(error: Error) -> ! {
    let message = error.to_string();
    {
        let mut recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() == RECENT_KEPT {
            recent.remove(0);
        }
        recent.push(error);
    }
    panic!("{message}")
}

/// Runs `f`, an operation's evaluation; an allocation that fails inside it panics with
/// [`Error::OutOfMemory`] naming the operation (`op()`, built only then) at the caller's line.
#[track_caller]
pub fn named<R>(op: impl FnOnce() -> String, f: impl FnOnce() -> R) -> R {
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            SCOPES.with(|s| s.set(s.get() - 1));
        }
    }
    SCOPES.with(|s| s.set(s.get() + 1));
    let scope = Scope;
    let result = catch_unwind(AssertUnwindSafe(f));
    drop(scope);
    match result {
        Ok(value) => value,
        Err(payload) => match payload.downcast::<OutOfMemory>() {
            Ok(oom) => report(host_out_of_memory(op(), oom.bytes)),
            Err(other) => match unnamed_failure(other.as_ref()) {
                Some(bytes) => report(host_out_of_memory(op(), bytes)),
                None => resume_unwind(other),
            },
        },
    }
}

/// Runs `f`, returning the [`Error::OutOfMemory`] of an allocation that failed inside it as
/// an `Err`; every other panic passes through. The process, the buffer pool and the `#[jit]`
/// cache stay usable afterwards. This is the fallible way to call any rjax function,
/// `#[jit]` ones included.
///
/// ```
/// use rjax_runtime::{jnp, try_run, Error};
/// // 40 GB of f32, far more than most machines can give one buffer... or 4 EB here:
/// let huge = try_run(|| jnp::zeros([1 << 30, 1 << 30]));
/// assert!(matches!(huge, Err(Error::OutOfMemory { .. })));
/// assert_eq!(try_run(|| jnp::ones([2]).sum().item::<f32>()), Ok(Ok(2.0)));
/// ```
pub fn try_run<R>(f: impl FnOnce() -> R) -> Result<R, Error> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied());
            match message.and_then(take_reported) {
                Some(error) => Err(error),
                None => resume_unwind(payload),
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(ptr: *const T, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = ptr as usize;
    let (begin, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    if end > begin {
        // SAFETY: the range lies inside the allocation (rounded inward to 2 MiB
        // boundaries). MADV_HUGEPAGE only changes how the kernel backs those pages: their
        // contents and validity stay the same, and a failure (no THP support) is harmless,
        // so the result is ignored.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_ptr: *const T, _bytes: usize) {}

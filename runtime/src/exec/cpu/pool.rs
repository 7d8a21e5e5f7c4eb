//! A pool of large freed buffers, so that a steady stream of same-sized results reuses memory
//! whose pages are already mapped instead of page-faulting fresh ones (for a 100 MB result the
//! faults cost more than the arithmetic); and per thread, a few freed buffers of tile size,
//! which fused groups allocate and free for every tile of every op (the system allocator
//! returns such chunks to the kernel and faults them in again).

use std::cell::RefCell;
use std::sync::Mutex;

use crate::array::Buffer;
use crate::dtype::Element;

/// Buffers smaller than this go straight back to the system allocator, which handles them well.
pub const MIN_POOLED_BYTES: usize = 1 << 18;
/// Buffers from this size up to [`MIN_POOLED_BYTES`] are kept in a per-thread cache.
pub const MIN_CACHED_BYTES: usize = 1 << 12;
/// How many buffers each thread's cache holds (at most 8 MiB).
const CACHED_PER_THREAD: usize = 32;

thread_local! {
    static SMALL: RefCell<Vec<Buffer>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a freed tile-sized buffer in this thread's cache (or frees it when the cache is
/// full or the thread is exiting).
pub(crate) fn recycle_small(buffer: Buffer) {
    let mut slot = Some(buffer);
    let _ = SMALL.try_with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() < CACHED_PER_THREAD {
            cache.extend(slot.take());
        }
    });
    // Freed directly: dropping it would come back here.
    if let Some(mut rejected) = slot {
        rejected.release();
    }
}

/// The most memory the pool keeps; the oldest buffers are released beyond it.
const MAX_RETAINED_BYTES: usize = 1 << 30;
/// A pooled buffer serves requests down to this fraction of its capacity.
const MAX_WASTE_DIVISOR: usize = 4;

struct Pool {
    free: Vec<Buffer>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool { free: Vec::new(), bytes: 0 });

/// Keeps a large buffer that is no longer referenced for a later [`take`].
pub(crate) fn recycle(buffer: Buffer) {
    let mut evicted = Vec::new();
    {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.bytes += buffer.capacity_bytes();
        pool.free.push(buffer);
        while pool.bytes > MAX_RETAINED_BYTES {
            let oldest = pool.free.remove(0);
            pool.bytes -= oldest.capacity_bytes();
            evicted.push(oldest);
        }
    }
    // Freed outside the lock (unmapping large buffers takes a while), bypassing the pool.
    for mut buffer in evicted {
        buffer.release();
    }
}

/// An empty `Vec` with room for at least `n` elements, reusing a pooled buffer when one fits.
/// Out of memory is an unwinding panic (see [`super::alloc`]).
#[track_caller]
pub fn take<T: Element>(n: usize) -> Vec<T> {
    match reuse::<T>(n) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => super::alloc::with_capacity(n),
    }
}

/// `n` elements for a kernel that writes every one of them before anything reads them: a
/// pooled buffer when one fits (its elements are whatever its last owner left, so nothing
/// is written twice), otherwise `n` copies of `fill` in fresh memory.
#[track_caller]
pub fn take_for_overwrite<T: Element>(n: usize, fill: T) -> Vec<T> {
    match reuse::<T>(n) {
        Some(mut v) => {
            v.truncate(n);
            v.resize(n, fill);
            v
        }
        None => super::alloc::zeroed(n, fill),
    }
}

/// A pooled buffer of `T` with room for `n` elements that wastes at most a quarter of itself.
fn reuse<T: Element>(n: usize) -> Option<Vec<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes < MIN_CACHED_BYTES {
        return None;
    }
    if bytes < MIN_POOLED_BYTES {
        return reuse_small::<T>(bytes);
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let fits = |b: &Buffer| {
        let cap = b.capacity_bytes();
        b.dtype() == T::DTYPE && cap >= bytes && cap - bytes <= bytes / MAX_WASTE_DIVISOR
    };
    let i = pool.free.iter().rposition(fits)?;
    let mut buffer = pool.free.swap_remove(i);
    pool.bytes -= buffer.capacity_bytes();
    drop(pool);
    T::take_vec(&mut buffer)
}

/// A buffer of this thread's cache that fits `bytes` of `T`, wasting at most half of itself.
fn reuse_small<T: Element>(bytes: usize) -> Option<Vec<T>> {
    SMALL
        .try_with(|cache| {
            let mut cache = cache.borrow_mut();
            let fits = |b: &Buffer| {
                let cap = b.capacity_bytes();
                b.dtype() == T::DTYPE && cap >= bytes && cap - bytes <= bytes
            };
            let i = cache.iter().rposition(fits)?;
            let mut buffer = cache.swap_remove(i);
            T::take_vec(&mut buffer)
        })
        .ok()
        .flatten()
}

/// Returns the host memory rjax keeps for reuse to the system: the pool of freed large
/// buffers and the calling thread's cache of tile-sized ones (as `torch.cuda.empty_cache()`
/// does for its allocator). Arrays still alive are untouched; later results allocate afresh.
///
/// Useful after a large computation, to lower the process's resident memory.
///
/// ```
/// let big = rjax_runtime::jnp::ones([1 << 20]);
/// drop(big); // its buffer goes to the pool
/// rjax_runtime::release_pooled_memory();
/// ```
pub fn release_pooled_memory() {
    let free = {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.bytes = 0;
        std::mem::take(&mut pool.free)
    };
    let cached =
        SMALL.try_with(|cache| std::mem::take(&mut *cache.borrow_mut())).unwrap_or_default();
    // Freed directly: dropping them would put them back.
    for mut buffer in free.into_iter().chain(cached) {
        buffer.release();
    }
}

/// How many bytes the pool holds now.
pub fn retained_bytes() -> usize {
    POOL.lock().unwrap_or_else(|e| e.into_inner()).bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_large_buffer_is_reused_for_the_next_request_of_its_size() {
        // A size no other test uses, so parallel tests cannot take it first.
        let n = (MIN_POOLED_BYTES / 8) * 3 + 17;
        let v: Vec<f64> = vec![1.0; n];
        let ptr = v.as_ptr();
        drop(Buffer::F64(v));
        let again: Vec<f64> = take(n);
        assert_eq!(again.as_ptr(), ptr);
        assert!(again.is_empty() && again.capacity() >= n);
        // Another dtype of the same byte size does not get it.
        drop(Buffer::F64(again));
        let other: Vec<i64> = take(n);
        assert_ne!(other.as_ptr() as usize, ptr as usize);
    }

    #[test]
    fn a_buffer_for_overwriting_keeps_the_old_contents_instead_of_writing_them_twice() {
        // A dtype no other test pools, so parallel tests neither take this buffer first nor
        // leave one that the fresh request would get.
        let n = (MIN_POOLED_BYTES / 2) * 5 + 3;
        let v: Vec<i16> = vec![25; n];
        let ptr = v.as_ptr();
        drop(Buffer::I16(v));
        let again = take_for_overwrite(n - 1, 0i16);
        assert_eq!((again.as_ptr(), again.len()), (ptr, n - 1));
        assert!(again.iter().all(|&x| x == 25));
        let fresh = take_for_overwrite(n + 7, 0i16);
        assert!(fresh.len() == n + 7 && fresh.iter().all(|&x| x == 0));
    }
}

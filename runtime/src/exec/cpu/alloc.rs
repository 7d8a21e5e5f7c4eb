//! Output buffers of the large kernels.
//!
//! A large zeroed allocation is fresh memory from the kernel, and writing it faults in one
//! 4 KiB page at a time: for the hundreds of megabytes of a batch of per-example gradients
//! those faults cost more than the arithmetic. On Linux the buffer is first marked for
//! transparent huge pages, which are faulted in 2 MiB at a time.

/// Buffers at least this large are marked for huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

/// `n` copies of `zero` (the type's zero), in memory the kernel backs with huge pages when
/// it can.
pub fn zeroed<T: Clone>(n: usize, zero: T) -> Vec<T> {
    let v = vec![zero; n];
    advise_huge_pages(&v);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &[T]) {
    const HUGE: usize = 2 << 20;
    let bytes = std::mem::size_of_val(v);
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = v.as_ptr() as usize;
    let (begin, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    if end > begin {
        // SAFETY: the range lies inside `v`'s allocation (rounded inward to 2 MiB
        // boundaries). MADV_HUGEPAGE only changes how the kernel backs those pages: their
        // contents and validity stay the same, and a failure (no THP support) is harmless,
        // so the result is ignored.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_v: &[T]) {}

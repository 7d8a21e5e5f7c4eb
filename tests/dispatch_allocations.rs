//! What a cached `#[jit]` call allocates. The path from the call to the kernels (flattening
//! the arguments, the signature, the plan's environment) reuses its vectors from call to call,
//! so a small function allocates its result and nothing else.
//!
//! This binary counts the allocations of the thread that makes them with its own global
//! allocator, which is why it is a test file of its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rjax::prelude::*;

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; counting touches only a
// thread-local `Cell` that needs no allocation or destructor.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count() {
    // (`try_with`: the allocator also runs while the thread's locals are torn down.)
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocations made by `f` on this thread, on its third call (the first traces, the second
/// may still fill thread-local vectors).
fn allocations_of<R>(mut f: impl FnMut() -> R) -> usize {
    drop(f());
    drop(f());
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    let after = ALLOCATIONS.with(Cell::get);
    drop(result);
    after - before
}

#[jit]
fn scalar(x: f32) -> f32 {
    x * x + 1.0
}

#[jit]
fn on_arrays(x: &Array, y: &Array) -> (Array, Array) {
    let s = x * y + 1.0;
    (s.sin(), s * 2.0)
}

#[test]
fn a_cached_call_of_a_small_function_allocates_only_its_arrays() {
    // An array is its buffer and the shared block that holds it (0-d arrays share their
    // shape): here the `f32` argument's array and the result's.
    assert_eq!(allocations_of(|| scalar(3.0)), 4);
    assert_eq!(scalar(3.0), 10.0);
    // Two results of three elements, each with its buffer, shared block and shape.
    let (x, y) = (jnp::array([1.0f32, 2.0, 3.0]), jnp::array([0.5f32, 0.0, -1.0]));
    assert_eq!(allocations_of(|| on_arrays(&x, &y)), 6);
    let (sin, doubled) = on_arrays(&x, &y);
    assert_eq!(doubled.to_vec::<f32>().unwrap(), vec![3.0, 2.0, -4.0]);
    let want: Vec<f32> = [1.5f32, 1.0, -2.0].iter().map(|v| v.sin()).collect();
    assert_eq!(sin.to_vec::<f32>().unwrap(), want);
}

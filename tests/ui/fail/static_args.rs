use rjax::prelude::*;

// A name that is not a parameter.
#[jit(static_argnames = ("steps",))]
fn named(x: &Array, n: usize) -> Array {
    x * n
}

// A position past the last parameter.
#[jit(static_argnums = (1, 2))]
fn numbered(x: &Array, n: usize) -> Array {
    x * n
}

// `u32` is traced (as a Python int under `jax.jit`), so it cannot bound a Rust loop.
#[jit]
fn repeat(x: &Array, times: u32) -> Array {
    let mut y = x.clone();
    for _ in 0..times {
        y = y * 2.0;
    }
    y
}

fn main() {}

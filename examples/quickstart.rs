//! A first tour of rjax: NumPy-style arrays that run eagerly, op by op, like `jnp` outside
//! `jit`; `#[jit]`, which traces a function into rjax's IR once per signature and runs the
//! cached plan; and `slow_f(x) = x*x + x*2.0` on a 5000x5000 array both ways.
//!
//! Run with `cargo run --release --example quickstart`.

use std::time::Instant;

use rjax::prelude::*;

/// Three elementwise ops, each one a pass over memory that materializes its result.
fn slow_f(x: &Array) -> Array {
    x * x + x * 2.0
}

/// The same function, traced on its first call and then run from the compile cache.
#[jit]
fn fast_f(x: &Array) -> Array {
    x * x + x * 2.0
}

/// A traced `if`: both branches are traced, and the choice is made when the plan runs.
#[jit]
fn soft_clip(x: &Array, limit: f32) -> Array {
    if x.abs().max() > limit {
        x * (limit / x.abs().max())
    } else {
        x.clone()
    }
}

fn time_per_call(f: impl Fn() -> Array) -> (f64, Array) {
    let _ = f(); // warm the allocator (and, for jit, trace)
    let runs = 5;
    let start = Instant::now();
    let mut y = f();
    for _ in 1..runs {
        y = f();
    }
    (start.elapsed().as_secs_f64() * 1e3 / runs as f64, y)
}

fn main() {
    // Arrays from Rust data; dtypes follow JAX (f32 and i32 by default).
    let x = Array::from_shape_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    println!("x =\n{x}");
    println!("x.tanh() =\n{}", x.tanh());
    println!("x * 2.0 + 1.0 =\n{}", &x * 2.0 + 1.0);

    // Broadcasting and JAX's type promotion: a Rust scalar is weakly typed.
    let col = jnp::array([10.0f32, 20.0]).reshape([2, 1]);
    println!("x + column =\n{}", &x + &col);
    println!("arange(4) + 1.5 = {}", jnp::arange(4) + 1.5);
    println!("arange(4) / 2 = {}", jnp::arange(4) / 2);

    // Reductions, shapes, indexing, matrix products.
    println!("x.sum_axes(0, false) = {}", x.sum_axes(0, false));
    println!("softmax(x, -1) =\n{}", jnp::softmax(&x, -1));
    println!("x[:, 1:] =\n{}", x.slice(s![.., 1..]));
    println!("x.at[0, 0].set(-1) =\n{}", x.at(s![0, 0]).set(-1.0));
    println!("x @ x.T =\n{}", x.matmul(&x.t()));

    // JAX's PRNG, bit for bit.
    let key = random::key(0);
    println!("random.normal(key(0), (3,)) = {}", random::normal(&key, [3]));

    // Traced functions: the IR jit runs, like jax.make_jaxpr.
    let v = jnp::array([0.5f32, -4.0, 2.0]);
    println!("soft_clip(v, 2.0) = {}", soft_clip(&v, 2.0));
    println!("soft_clip's IR:\n{}", soft_clip::jaxpr(&v, 2.0).simplified);

    let big = jnp::ones([5000, 5000]);
    let (slow, y) = time_per_call(|| slow_f(&big));
    println!(
        "slow_f on 5000x5000 f32 (op by op): {slow:.1} ms per call; y[0, 0] = {}",
        y.to_vec::<f32>().unwrap()[0]
    );
    let (fast, y) = time_per_call(|| fast_f(&big));
    println!(
        "fast_f on 5000x5000 f32 (jit, cached plan): {fast:.1} ms per call; y[0, 0] = {}",
        y.to_vec::<f32>().unwrap()[0]
    );
    println!("fast_f's cache: {:?}", fast_f::cache_info());
}

//! A first tour of rjax: NumPy-style arrays that run eagerly, op by op, like `jnp` outside
//! `jit`, and the cost of that: `slow_f(x) = x*x + x*2.0` on a 5000x5000 array.
//!
//! Run with `cargo run --release --example quickstart`.

use std::time::Instant;

use rjax::prelude::*;

/// Three elementwise ops, each one a pass over memory that materializes its result.
fn slow_f(x: &Array) -> Array {
    x * x + x * 2.0
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

    // The workload jit will fuse into one pass: here it runs op by op.
    let big = jnp::ones([5000, 5000]);
    let _ = slow_f(&big); // warm the allocator
    let runs = 5;
    let start = Instant::now();
    let mut y = slow_f(&big);
    for _ in 1..runs {
        y = slow_f(&big);
    }
    let per_call = start.elapsed() / runs;
    println!(
        "slow_f on 5000x5000 f32 (op by op): {:.1} ms per call; y[0, 0] = {}",
        per_call.as_secs_f64() * 1e3,
        y.to_vec::<f32>().unwrap()[0]
    );
}

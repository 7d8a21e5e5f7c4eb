//! W1, W2 and W3 on `gpu:0` (feature `gpu`), beside the CPU backend in the same run: the
//! elementwise `x*x + x*2.0` on 5000x5000 f32 op by op and fused under `#[jit]`, a 2048^3 f32
//! product, and the MLP's jitted `grad` step of W3. Each GPU time waits for the device
//! (`block_until_ready`); the operands are on the device before timing starts. The summary
//! prints achieved GB/s and GFLOP/s and the GPU time over the CPU backend's.
//!
//! `cargo bench --features gpu --bench gpu -- nomatch` prints the summary alone. On Mesa's
//! lavapipe, which runs shaders on the CPU, it only shows that everything runs.

mod common;

use std::hint::black_box;

use common::mlp::{inputs as w3_inputs, loss};
use common::w1::{fast_f, slow_f};
use criterion::{criterion_group, Criterion};
use rjax::device::{device_put, gpu_devices, Device};
use rjax::prelude::*;

#[jit]
#[grad]
fn grad_step(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

const N: usize = 2048;

/// The workloads' operands, placed on `device`.
struct Operands {
    x: Array,
    a: Array,
    b: Array,
    params: Vec<(Array, Array)>,
    inputs: Array,
    targets: Array,
}

impl Operands {
    fn on(device: Device) -> Operands {
        let put = |x: &Array| device_put(x, device);
        let (params, inputs, targets) = w3_inputs();
        Operands {
            x: put(&jnp::ones([5000, 5000])),
            a: put(&(jnp::ones([N, N]) * 0.5)),
            b: put(&(jnp::ones([N, N]) * 0.25)),
            params: params.iter().map(|(w, b)| (put(w), put(b))).collect(),
            inputs: put(&inputs),
            targets: put(&targets),
        }
    }

    fn w1_op_by_op(&self) {
        black_box(slow_f(&self.x).block_until_ready());
    }

    fn w1_jit(&self) {
        black_box(fast_f(&self.x).block_until_ready());
    }

    fn w2(&self) {
        black_box(self.a.matmul(&self.b).block_until_ready());
    }

    fn w3(&self) {
        let grads = grad_step(&self.params, &self.inputs, &self.targets);
        black_box(grads.last().expect("three layers").0.block_until_ready());
    }
}

fn gpu() -> Option<Device> {
    match gpu_devices() {
        Ok(gpus) => Some(gpus[0]),
        Err(e) => {
            println!("no GPU: {e}");
            None
        }
    }
}

fn bench(c: &mut Criterion) {
    let Some(gpu) = gpu() else { return };
    let on = Operands::on(gpu);
    let mut group = c.benchmark_group("gpu");
    group.sample_size(10);
    group.bench_function("w1 x*x + x*2.0 op by op, 5000x5000 f32", |b| b.iter(|| on.w1_op_by_op()));
    group.bench_function("w1 x*x + x*2.0 jit, 5000x5000 f32", |b| b.iter(|| on.w1_jit()));
    group.bench_function("w2 matmul 2048x2048 f32", |b| b.iter(|| on.w2()));
    group.bench_function("w3 jit(grad(mlp loss)), batch 128", |b| b.iter(|| on.w3()));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 5;

fn summary() {
    let Some(gpu) = gpu() else { return };
    let (on_gpu, on_cpu) = (Operands::on(gpu), Operands::on(Device::Cpu(0)));
    let samples = common::Rounds::default()
        .time("w1 op by op gpu", 3, || on_gpu.w1_op_by_op())
        .time("w1 op by op cpu", 3, || on_cpu.w1_op_by_op())
        .time("w1 jit gpu", 3, || on_gpu.w1_jit())
        .time("w1 jit cpu", 3, || on_cpu.w1_jit())
        .time("w2 gpu", 3, || on_gpu.w2())
        .time("w2 cpu", 3, || on_cpu.w2())
        .time("w3 gpu", 5, || on_gpu.w3())
        .time("w3 cpu", 5, || on_cpu.w3())
        .run(ROUNDS);
    let adapter = rjax::device::device_kind(gpu).unwrap_or_default();
    println!(
        "\nGPU summary ({gpu}: {adapter}; CPU backend on {} threads)",
        rayon::current_num_threads()
    );
    let w1_bytes = 2.0 * (5000 * 5000 * 4) as f64;
    let line = |what: &str, name: &str, note: String| {
        let gpu_secs = samples.median(&format!("{name} gpu"));
        let vs_cpu = samples.ratio(&format!("{name} gpu"), &format!("{name} cpu"));
        common::report(what, gpu_secs, &format!("{note}; GPU time / CPU backend time = {vs_cpu}"));
    };
    let gbs = |name: &str, bytes: f64| bytes / samples.median(&format!("{name} gpu")) / 1e9;
    let w1_op = gbs("w1 op by op", 3.0 * w1_bytes);
    line("w1 op by op (three passes)", "w1 op by op", format!("{w1_op:.1} GB/s"));
    line("w1 jit (one fused pass)", "w1 jit", format!("{:.1} GB/s", gbs("w1 jit", w1_bytes)));
    let flops = 2.0 * (N * N * N) as f64;
    let w2 = flops / samples.median("w2 gpu") / 1e9;
    line("w2 matmul 2048^3", "w2", format!("{w2:.1} GFLOP/s"));
    line("w3 jit(grad(mlp)) step", "w3", "784-512-512-10, batch 128".to_string());
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}

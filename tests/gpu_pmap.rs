//! `pmap` over GPUs (feature `gpu`): with `RJAX_GPU_DEVICES=4` lavapipe is four devices,
//! each its own logical device with its own memory, and a pmap whose operands are on a GPU
//! runs one shard per GPU, with collectives between them, against the same pmap on virtual
//! CPU devices.
#![cfg(feature = "gpu")]

mod common;

use std::sync::Once;

use common::gpu::Rng;
use rjax::device::{self, device_put, Device};
use rjax::prelude::*;

/// The four GPUs these tests map over (and four virtual CPUs to compare with); `None`,
/// having said why, without a GPU (unless `RJAX_REQUIRE_GPU=1`).
fn four_gpus() -> Option<Vec<Device>> {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        // Before anything opens a device: the counts are fixed at first use.
        std::env::set_var("RJAX_GPU_DEVICES", "4");
        device::set_cpu_device_count(4).unwrap();
    });
    let (gpu, _lock) = common::gpu::gpu()?;
    let gpus = device::gpu_devices().unwrap();
    assert!(gpus.len() >= 4 && gpu == gpus[0], "RJAX_GPU_DEVICES=4 gives {gpus:?}");
    Some(gpus[..4].to_vec())
}

#[pmap(axis_name = "i")]
fn collectives(x: &Array) -> (Array, Array, Array, Array, Array) {
    let right: Vec<(usize, usize)> = (0..4).map(|j| (j, (j + 1) % 4)).collect();
    (
        x / lax::psum(x, "i"),
        lax::pmax(x, "i") - lax::pmin(x, "i"),
        lax::all_gather(x, "i").sum(),
        lax::ppermute(x, "i", &right),
        lax::axis_index("i"),
    )
}

#[test]
fn collectives_run_across_gpus_as_across_cpus() {
    let _x64 = rjax::config::x64_scope(true);
    let Some(gpus) = four_gpus() else { return };
    let x = Rng(3).array(DType::F32, &[4, 5]);
    let on_cpu = collectives(&x);
    let on_gpu = collectives(&device_put(&x, gpus[0]));
    let (cpu, gpu) = (rjax::tree::flatten(&on_cpu).0, rjax::tree::flatten(&on_gpu).0);
    for (k, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        assert_eq!(g.devices(), gpus, "output {k} has one piece per GPU");
        let (c, g) = (c.to_vec::<f32>().ok(), g.to_vec::<f32>().ok());
        match (c, g) {
            (Some(c), Some(g)) => {
                for (a, b) in c.iter().zip(&g) {
                    assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "output {k}: {a} vs {b}");
                }
            }
            _ => assert_eq!(
                on_cpu.4.to_vec::<i32>().unwrap(),
                on_gpu.4.to_vec::<i32>().unwrap(),
                "axis_index"
            ),
        }
    }
}

#[traceable]
fn loss(w: &Array, x: &Array, y: &Array) -> Array {
    (x.matmul(w).tanh() - y).square().mean()
}

/// One data-parallel step: each device's gradient, averaged over the devices, applied.
#[pmap(axis_name = "batch", in_axes = (None, 0, 0))]
fn step(w: &Array, x: &Array, y: &Array) -> Array {
    let g = grad_loss(w, x, y);
    w - lax::pmean(&g, "batch") * 0.5
}

#[grad]
fn grad_loss(w: &Array, x: &Array, y: &Array) -> Array {
    loss(w, x, y)
}

#[test]
fn data_parallel_training_steps_on_gpus_match_the_cpus() {
    let _x64 = rjax::config::x64_scope(true);
    let Some(gpus) = four_gpus() else { return };
    let mut rng = Rng(11);
    let (w, x, y) = (
        rng.array(DType::F32, &[3, 2]),
        rng.array(DType::F32, &[4, 8, 3]),
        rng.array(DType::F32, &[4, 8, 2]),
    );
    let (mut w_cpu, mut w_gpu) = (w.clone(), device_put(&w, gpus[0]));
    let (xg, yg) = (device_put(&x, gpus[0]), device_put(&y, gpus[0]));
    for _ in 0..3 {
        // The replicated result's first piece is the new parameters, on gpu:0.
        w_cpu = step(&w_cpu, &x, &y).slice(s![0]);
        let next = step(&w_gpu, &xg, &yg);
        assert_eq!(next.devices(), gpus);
        w_gpu = device_put(&next.slice(s![0]), gpus[0]);
    }
    let (c, g) = (w_cpu.to_vec::<f32>().unwrap(), w_gpu.to_vec::<f32>().unwrap());
    for (a, b) in c.iter().zip(&g) {
        assert!((a - b).abs() <= 1e-5, "cpu {a}, gpu {b}");
    }
}

#[pmap(axis_name = "i")]
fn double(x: &Array) -> Array {
    x * 2.0
}

#[test]
fn a_pmap_fed_another_keeps_its_pieces_on_their_gpus() {
    let _x64 = rjax::config::x64_scope(true);
    let Some(gpus) = four_gpus() else { return };
    let x = device_put(&jnp::arange(8.0).reshape([4, 2]), gpus[0]);
    let once = double(&x);
    let twice = double(&once);
    assert_eq!(twice.devices(), gpus);
    assert_eq!(twice.to_vec::<f32>().unwrap(), vec![0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0]);
    let before = device::memory_stats(gpus[3]).unwrap();
    assert!(before.bytes_in_use > 0, "gpu:3 holds its piece: {before:?}");
}

#[test]
fn more_shards_than_gpus_is_refused_with_the_fix() {
    let _x64 = rjax::config::x64_scope(true);
    let Some(gpus) = four_gpus() else { return };
    let x = device_put(&jnp::ones([5, 2]), gpus[0]);
    let msg = common::gpu::panic_of(|| double(&x));
    assert!(msg.contains("has size 5") && msg.contains("RJAX_GPU_DEVICES"), "{msg}");
}

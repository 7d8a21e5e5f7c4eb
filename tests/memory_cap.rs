//! Out of memory inside any kernel is an unwinding panic that names it, never an abort.
//!
//! Each case runs in a child process (this same binary, told which case by an environment
//! variable). The child makes its inputs, then calls the operation again and again with the
//! address space capped (`RLIMIT_AS`) a little further above what the process already holds
//! each time: from a megabyte to several times the result's size. Every call must either
//! succeed or fail with a panic saying "out of memory"; an allocation anywhere that is not
//! fallible (a result, a scratch buffer, a packing buffer, a parallel `collect`) aborts the
//! child instead, and the parent reports the case and the cap it died under.
//!
//! Linux with glibc only: the cap is `setrlimit`, the current size is read from
//! `/proc/self/status`, and glibc's allocator is told to map every large block apart.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;

use rjax::prelude::*;

/// The environment variable naming the case a child runs.
const CHILD: &str = "RJAX_MEMORY_CAP_CHILD";

/// An operation under test: made inputs, and the call that may run out of memory.
struct Case {
    name: &'static str,
    /// About how many bytes the result takes (the caps are multiples of it).
    result_bytes: usize,
    run: fn() -> Box<dyn Fn() -> Vec<Array>>,
}

/// `n` f32 values in `[-1, 1)`, deterministic.
fn values(shape: &[usize]) -> Array {
    let key = random::key(7);
    random::uniform(&key, shape) * 2.0 - 1.0
}

const M: usize = 1 << 20;

#[jit]
fn fused_row_sums(x: &Array, y: &Array) -> Array {
    (x.exp() * y).sum_axes(1, false)
}

#[jit]
fn fused_chain(x: &Array) -> Array {
    (x * 2.0 + 1.0).tanh() * x
}

#[jit]
#[vmap(in_axes = (None, 0))]
#[grad]
fn per_example_grads(w: &Array, x: &Array) -> Array {
    x.matmul(w).tanh().sum()
}

#[jit]
fn scanned_products(c: &Array, xs: &Array) -> (Array, Array) {
    lax::scan(|c: Array, x: Array| (&c + &x, c * x), c.clone(), xs.clone())
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "sum over rows (f32)",
            result_bytes: 16 * 1024,
            run: || {
                let x = values(&[2048, 4096]);
                Box::new(move || vec![x.sum_axes(0, false)])
            },
        },
        Case {
            name: "sum of bfloat16",
            result_bytes: 16 * M,
            run: || {
                let x = values(&[4096, 2048]).astype(DType::BF16);
                Box::new(move || vec![x.sum_axes(1, false), x.sum()])
            },
        },
        Case {
            name: "argmax along rows",
            result_bytes: 16 * 1024,
            run: || {
                let x = values(&[16, 1 << 20]);
                Box::new(move || vec![x.argmax_axis(1, false), x.argmax()])
            },
        },
        Case {
            name: "cumsum",
            result_bytes: 32 * M,
            run: || {
                let x = values(&[8 * M]);
                Box::new(move || vec![x.cumsum(None)])
            },
        },
        Case {
            name: "vector-matrix product (split depth)",
            result_bytes: 64 * 1024,
            run: || {
                let (x, w) = (values(&[1, 4096]), values(&[4096, 16384]));
                Box::new(move || vec![x.matmul(&w)])
            },
        },
        Case {
            name: "matrix product",
            result_bytes: 16 * M,
            run: || {
                let (x, w) = (values(&[1024, 1024]), values(&[1024, 4096]));
                Box::new(move || vec![x.matmul(&w), x.matmul(&w.t().t())])
            },
        },
        Case {
            name: "transposed matrix product",
            result_bytes: 16 * M,
            run: || {
                let (x, w) = (values(&[256, 1024]), values(&[16384, 1024]));
                Box::new(move || vec![x.matmul(&w.t())])
            },
        },
        Case {
            name: "fused group closing in a reduction (jit)",
            result_bytes: 16 * 1024,
            run: || {
                let (x, y) = (values(&[4096, 2048]), values(&[4096, 2048]));
                Box::new(move || vec![fused_row_sums(&x, &y)])
            },
        },
        Case {
            name: "fused elementwise chain (jit)",
            result_bytes: 32 * M,
            run: || {
                let x = values(&[8 * M]);
                Box::new(move || vec![fused_chain(&x)])
            },
        },
        Case {
            name: "random normal",
            result_bytes: 32 * M,
            run: || {
                let key = random::key(3);
                Box::new(move || vec![random::normal(&key, [8 * M])])
            },
        },
        Case {
            name: "sort and argsort",
            result_bytes: 16 * M,
            run: || {
                let x = values(&[4 * M]);
                Box::new(move || vec![x.sort(), x.argsort()])
            },
        },
        Case {
            name: "fft and rfft",
            result_bytes: 16 * M,
            run: || {
                let x = values(&[1024, 2048]);
                let z = jnp::complex(&x, &x);
                Box::new(move || {
                    vec![jnp::fft::fft(&z, None, -1, None), jnp::fft::rfft(&x, None, -1, None)]
                })
            },
        },
        Case {
            name: "transpose and take",
            result_bytes: 32 * M,
            run: || {
                let x = values(&[2048, 4096]);
                let idx = Array::from_shape_vec([4096], (0..4096i32).rev().collect::<Vec<_>>());
                Box::new(move || vec![jnp::transpose(&x, None), x.take(&idx, Some(1))])
            },
        },
        Case {
            name: "pad, concatenate, scatter-add and select",
            result_bytes: 32 * M,
            run: || {
                let x = values(&[2048, 4096]);
                let rows = Array::from_shape_vec([3], vec![5i32, 9, 5]);
                Box::new(move || {
                    let padded = jnp::pad(&x, 8usize, 0.0);
                    let joined = jnp::concatenate(&[&x, &x], 1);
                    let added = x.at(s![rows.clone()]).add(1.0);
                    let chosen = jnp::where_(jnp::greater(&x, 0.0), &x, 0.0);
                    vec![padded, joined, added, chosen, x.astype(DType::F64)]
                })
            },
        },
        Case {
            name: "top_k and searchsorted",
            result_bytes: 16 * M,
            run: || {
                let x = values(&[64, 65536]);
                let sorted = values(&[4 * M]).sort();
                let queries = values(&[4 * M]);
                Box::new(move || {
                    let (top, at) = lax::top_k(&x, 16);
                    vec![top, at, jnp::searchsorted(&sorted, &queries)]
                })
            },
        },
        Case {
            name: "linear algebra",
            // Before calling faer, rjax checks for its internal products' packing buffers
            // (several L3 caches' worth), so the caps go that high.
            result_bytes: 128 * M,
            run: || {
                let x = values(&[8, 384, 384]);
                let a = x.matmul(&jnp::swapaxes(&x, -1, -2)) + jnp::eye(384) * 384.0;
                // One matrix alone is factored on every thread.
                let one = a.slice(s![0]);
                Box::new(move || {
                    let (_, alone, _) = jnp::linalg::svd(&one, false);
                    let (w, v) = jnp::linalg::eigh(&a);
                    let (u, s, vt) = jnp::linalg::svd(&a, false);
                    let (q, r) = jnp::linalg::qr(&a);
                    let solved = jnp::linalg::solve(&a, &x);
                    vec![jnp::linalg::cholesky(&a), w, v, u, s, vt, q, r, solved, alone]
                })
            },
        },
        Case {
            name: "scan stacking its outputs (eager and jit)",
            result_bytes: 32 * M,
            run: || {
                let (c, xs) = (values(&[2048]), values(&[4096, 2048]));
                Box::new(move || {
                    let (last, ys) =
                        lax::scan(|c: Array, x: Array| (&c + &x, c * x), c.clone(), xs.clone());
                    let (jit_last, jit_ys) = scanned_products(&c, &xs);
                    vec![last, ys, jit_last, jit_ys]
                })
            },
        },
        Case {
            name: "per-example gradients (jit, vmap, grad)",
            result_bytes: 32 * M,
            run: || {
                let (w, x) = (values(&[256, 128]), values(&[256, 4, 256]));
                Box::new(move || vec![per_example_grads(&w, &x)])
            },
        },
        Case {
            name: "creation: arange, eye, linspace, full, tile, repeat, stack, one_hot",
            result_bytes: 64 * M,
            run: || {
                let x = values(&[1024, 1024]);
                let labels = jnp::remainder(jnp::arange(1 << 16), 1000);
                Box::new(move || {
                    vec![
                        jnp::arange(4 * M),
                        jnp::eye(2048),
                        jnp::linspace(0.0, 1.0, 4 * M),
                        jnp::full([4 * M], 2.5f32),
                        jnp::tile(&x, [2, 2]),
                        jnp::repeat(&x, 3, Some(0)),
                        jnp::stack(&[x.clone(), x.clone()], 0),
                        nn::one_hot(&labels, 64),
                    ]
                })
            },
        },
        Case {
            name: "samplers: randint, bernoulli, permutation, categorical, choice",
            result_bytes: 64 * M,
            run: || {
                let key = random::key(3);
                let logits = values(&[4096, 256]);
                Box::new(move || {
                    vec![
                        random::randint(&key, [4 * M], 0, 100),
                        random::bernoulli(&key, 0.3, [4 * M]),
                        random::permutation(&key, 2 * M),
                        random::categorical(&key, &logits, -1),
                        random::choice(&key, 1 << 20, [1 << 19], false),
                        random::choice(&key, 1 << 20, [2 * M], true),
                    ]
                })
            },
        },
        Case {
            name: "cumprod, batched einsum and a while loop",
            result_bytes: 16 * M,
            run: || {
                let (a, b) = (values(&[64, 256, 256]), values(&[64, 256, 256]));
                Box::new(move || {
                    let (_, looped) = lax::while_loop(
                        |(i, _): &(Array, Array)| i.lt(4),
                        |(i, x): (Array, Array)| (i + 1, &x * 2.0 + 1.0),
                        (Array::from(0), a.clone()),
                    );
                    vec![jnp::cumprod(&a, Some(2)), jnp::einsum("bij,bjk->bik", &[&a, &b]), looped]
                })
            },
        },
        Case {
            name: "ndarray conversions",
            result_bytes: 32 * M,
            run: || {
                let x = values(&[2048, 4096]);
                // Column-major: converting it walks the elements into a new buffer.
                let transposed = x.to_ndarray::<f32>().expect("f32").reversed_axes();
                // Owned arrays to consume, one per call: a row-major one that starts past its
                // buffer's start (copied), and a column-major one (walked).
                let small = values(&[512, 512]).to_ndarray::<f32>().expect("f32");
                let owned: Vec<_> = (0..32)
                    .map(|i| {
                        let a = small.clone();
                        if i % 2 == 0 {
                            a.slice_move(ndarray::s![1.., ..]).into_dyn()
                        } else {
                            a.reversed_axes()
                        }
                    })
                    .collect();
                let owned = std::cell::RefCell::new(owned);
                Box::new(move || {
                    let back = x.to_ndarray::<f32>().unwrap_or_else(|e| panic!("{e}"));
                    let mut owned = owned.borrow_mut();
                    let (a, b) =
                        (owned.pop().expect("one a call"), owned.pop().expect("one a call"));
                    vec![
                        Array::from(&transposed),
                        Array::from(back),
                        Array::from(a),
                        Array::from(b),
                    ]
                })
            },
        },
        Case {
            name: "checkpoint save and load",
            result_bytes: 32 * M,
            run: || {
                let params = (values(&[2048, 2048]), values(&[2048, 2048]));
                let dir = std::env::temp_dir().join(format!("rjax-memcap-{}", std::process::id()));
                std::fs::create_dir_all(&dir).expect("a temporary directory");
                let path = dir.join("params.safetensors");
                rjax::checkpoint::save(&path, &params).expect("saved without a cap");
                Box::new(move || {
                    let again = dir.join("again.safetensors");
                    if let Err(e) = rjax::checkpoint::save(again, &params) {
                        panic!("{e}");
                    }
                    let (a, b) =
                        rjax::checkpoint::load(&path, &params).unwrap_or_else(|e| panic!("{e}"));
                    vec![a, b]
                })
            },
        },
        Case {
            name: "convolution",
            result_bytes: 8 * M,
            run: || {
                let (x, k) = (values(&[8, 16, 128, 128]), values(&[16, 16, 3, 3]));
                Box::new(move || vec![lax::conv(&x, &k, [1, 1], "SAME")])
            },
        },
    ]
}

/// The process's current virtual size in bytes.
fn virtual_size() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmSize:")).expect("a VmSize line");
    let kib: usize = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("kB");
    kib * 1024
}

/// Sets the soft limit of the address space (the hard limit stays, so it can be raised again).
fn cap_address_space(bytes: Option<usize>) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `getrlimit` writes the struct it is given, which lives on this stack frame.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) }, 0);
    limit.rlim_cur = bytes.map_or(limit.rlim_max, |b| b as libc::rlim_t);
    // SAFETY: `setrlimit` reads the struct it is given; lowering the soft limit or raising it
    // up to the unchanged hard limit is always permitted.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// The message of a panic payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The child: runs one case under caps from 1 MiB to 6 times its result, printing each
/// outcome; exits nonzero on any panic that is not out of memory.
fn child(name: &str) {
    let case = cases().into_iter().find(|c| c.name == name).expect("a known case");
    let call = (case.run)();
    // The thread pool's threads (and their stacks) exist before the first cap.
    let _ = jnp::ones([1 << 16]).sum().item::<f32>();
    std::panic::set_hook(Box::new(|_| {}));
    let mut outcomes = (0, 0);
    for eighths in [0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48] {
        let margin = (1 << 20) + case.result_bytes * eighths / 8;
        // Each call starts with nothing pooled, so it allocates what it needs.
        rjax::release_pooled_memory();
        // SAFETY: returns free memory at the heap's top to the system; no other effect.
        unsafe { libc::malloc_trim(0) };
        cap_address_space(Some(virtual_size() + margin));
        let result = catch_unwind(AssertUnwindSafe(|| {
            call().iter().for_each(|y| {
                y.block_until_ready();
            })
        }));
        cap_address_space(None);
        match result {
            Ok(_) => outcomes.0 += 1,
            Err(payload) => {
                let msg = message(&*payload);
                if !msg.contains("out of memory") {
                    println!("margin {margin}: a panic that is not out of memory: {msg}");
                    std::process::exit(2);
                }
                outcomes.1 += 1;
            }
        }
    }
    // With no cap, it runs.
    call();
    println!("{}: {} calls ran, {} ran out of memory", case.name, outcomes.0, outcomes.1);
}

#[test]
fn every_kernel_fails_allocations_with_an_unwinding_panic() {
    if let Ok(name) = std::env::var(CHILD) {
        return child(&name);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut failures = Vec::new();
    for case in cases() {
        // Every large block is its own mapping, unmapped when freed, and all threads share
        // one arena: otherwise freed memory and the reservations of per-thread arenas stay in
        // the address space, and later allocations take them without meeting the cap.
        let out = Command::new(&exe)
            .env("GLIBC_TUNABLES", "glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=65536")
            .args(["--exact", "every_kernel_fails_allocations_with_an_unwinding_panic"])
            .args(["--nocapture", "--test-threads=1"])
            .env(CHILD, case.name)
            .output()
            .expect("the child starts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() && stdout.contains("calls ran") {
            eprintln!("{}", stdout.lines().find(|l| l.contains("calls ran")).unwrap_or(""));
        } else {
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            failures.push(format!("{}: {} {stdout} {tail:?}", case.name, out.status));
        }
    }
    assert!(
        failures.is_empty(),
        "cases that did not survive a memory cap:\n{}",
        failures.join("\n")
    );
}

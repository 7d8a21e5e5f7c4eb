//! A programming error panics at the user's line: every public entry point carries
//! `#[track_caller]` down to the check that fires, so the panic's location is the caller's,
//! not a line inside rjax.

use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::Mutex;

use rjax::prelude::*;

/// Where the last panic on this test's thread was raised, as the panic hook saw it.
static LAST: Mutex<Option<(String, String)>> = Mutex::new(None);

/// A bad call and the operation its panic must name.
type Case<'a> = (&'static str, Box<dyn Fn() + 'a>);

/// The file and message of the panic `f` raises (it must raise one).
fn panic_site(f: impl FnOnce()) -> (String, String) {
    *LAST.lock().unwrap() = None;
    let caught = panic::catch_unwind(AssertUnwindSafe(f));
    assert!(caught.is_err(), "expected a panic");
    LAST.lock().unwrap().take().expect("the hook saw the panic")
}

#[test]
fn panics_point_at_the_callers_line() {
    panic::set_hook(Box::new(|info| {
        let file = info.location().map(|l| l.file().to_string()).unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        *LAST.lock().unwrap() = Some((file, message));
    }));
    let here = Location::caller().file();
    let x = jnp::ones([2, 3]);
    let k = jnp::ones([3, 3]);
    let cases: Vec<Case> = vec![
        ("sum", Box::new(|| drop(x.sum_axes(5, false)))),
        ("sum", Box::new(|| drop(x.sum_axes([0, 0], false)))),
        ("mean", Box::new(|| drop(x.mean_axes(-3, false)))),
        ("argmax", Box::new(|| drop(jnp::argmax_axis(&x, 4, false)))),
        ("cumsum", Box::new(|| drop(jnp::cumsum(&x, Some(2))))),
        ("reshape", Box::new(|| drop(x.reshape([4, -1])))),
        ("transpose", Box::new(|| drop(x.transpose(Some(&[0, 0]))))),
        ("swapaxes", Box::new(|| drop(jnp::swapaxes(&x, 0, 2)))),
        ("moveaxis", Box::new(|| drop(jnp::moveaxis(&x, 3, 0)))),
        ("expand_dims", Box::new(|| drop(jnp::expand_dims(&x, 4)))),
        ("squeeze", Box::new(|| drop(jnp::squeeze(&x, 0)))),
        ("concatenate", Box::new(|| drop(jnp::concatenate(&[&x, &k], 1)))),
        ("stack", Box::new(|| drop(jnp::stack(&[&x, &k], 0)))),
        ("split", Box::new(|| drop(jnp::split(&x, 2, 1)))),
        ("broadcast_to", Box::new(|| drop(jnp::broadcast_to(&x, [4, 3, 2])))),
        ("matmul", Box::new(|| drop(x.matmul(&x)))),
        ("dot", Box::new(|| drop(x.dot(&jnp::ones([2]))))),
        ("add", Box::new(|| drop(&x + &k))),
        ("take", Box::new(|| drop(jnp::take(&x, 0, Some(3))))),
        ("conv_general_dilated", Box::new(|| drop(lax::conv(&x, &k, [1], "VALID")))),
        ("normal", Box::new(|| drop(random::normal_dtype(&random::key(0), [2], DType::I32)))),
        ("zeros", Box::new(|| drop(jnp::zeros([1 << 32, 1 << 32])))),
        ("Array::from_shape_vec", Box::new(|| drop(Array::from_shape_vec([3], vec![1.0f32])))),
        ("add", Box::new(|| drop(jnp::add(&x, usize::MAX)))),
        ("less", Box::new(|| drop(jnp::less(&x, u64::MAX)))),
        ("randint", Box::new(|| drop(random::randint(&random::key(0), [1 << 62, 2], 0, 9)))),
        ("permutation", Box::new(|| drop(random::permutation(&random::key(0), 1 << 40)))),
        ("choice", Box::new(|| drop(random::choice(&random::key(0), 1 << 40, [2], true)))),
        ("bernoulli", Box::new(|| drop(random::bernoulli(&random::key(0), 0.5, [1 << 62, 2])))),
        ("pad", Box::new(|| drop(jnp::pad(&x, (usize::MAX, 0usize), 0.0)))),
        (
            "dot",
            Box::new(|| {
                drop(jnp::dot(
                    &Array::from_shape_vec([(1 << 62) + 1, 0], Vec::<bool>::new()),
                    &jnp::zeros([0, 2]),
                ))
            }),
        ),
    ];
    let mut wrong = Vec::new();
    for (op, case) in &cases {
        let (file, message) = panic_site(case);
        if file != here || !message.contains(op) {
            wrong.push(format!("{op}: raised at {file}: {message}"));
        }
    }
    let _ = panic::take_hook();
    assert!(wrong.is_empty(), "panics that do not point at the caller:\n{}", wrong.join("\n"));
}

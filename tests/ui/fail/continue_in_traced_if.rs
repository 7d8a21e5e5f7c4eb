use rjax::prelude::*;

#[jit]
fn sum_positive(xs: &[Array]) -> Array {
    let mut total = jnp::zeros([]);
    for x in xs {
        if x.sum() < 0.0 {
            continue;
        }
        total = total + x.sum();
    }
    total
}

fn main() {}

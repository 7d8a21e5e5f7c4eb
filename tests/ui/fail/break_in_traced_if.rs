use rjax::prelude::*;

#[jit]
fn first_negative(xs: &[Array]) -> Array {
    let mut found = jnp::zeros([]);
    for x in xs {
        if x.sum() < 0.0 {
            found = x.clone();
            break;
        }
    }
    found
}

fn main() {}

use rjax::prelude::*;

type Params = Vec<Array>;

// The gradient with respect to `w: &Array` is an `Array`; the alias names a `Vec<Array>`.
#[grad]
fn grad_dot(w: &Array, x: &Array) -> Params {
    w.dot(x).sum()
}

fn main() {}

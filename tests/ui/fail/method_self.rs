use rjax::prelude::*;

struct Model {
    w: Array,
}

impl Model {
    #[jit]
    fn forward(&self, x: &Array) -> Array {
        x.dot(&self.w)
    }
}

fn main() {}

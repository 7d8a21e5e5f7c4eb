use rjax::prelude::*;

#[derive(Tree)]
enum Layer {
    Dense(Array, Array),
    Identity,
}

fn main() {}

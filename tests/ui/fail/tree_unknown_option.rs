use rjax::prelude::*;

#[derive(Tree)]
struct Dense {
    w: Array,
    b: Array,
    #[tree(skip)]
    name: String,
}

fn main() {}

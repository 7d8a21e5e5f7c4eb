use rjax::prelude::*;

#[jit]
fn counted(x: &Array) -> Array {
    static mut CALLS: u32 = 0;
    x * 2.0
}

fn main() {}

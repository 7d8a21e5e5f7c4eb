use rjax::prelude::*;

#[jit]
fn f(x: &Array) -> Array {
    let y = unsafe { std::mem::transmute::<u32, f32>(0x3f80_0000) };
    x * y
}

fn main() {}

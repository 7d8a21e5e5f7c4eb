mod common;
use common::*;
use rjax::prelude::*;

#[test]
fn int_array_plus_python_float() {
    let a = jnp::array(&[1i32, 2]);
    assert_golden("int_array_plus_python_float", 0, &(&a + 1.5));
    assert_golden("int_array_plus_python_float", 1, &(&a * 2));
    let h = jnp::array(&[1.0f32]).astype(DType::F16);
    assert_golden("int_array_plus_python_float", 2, &(&h + 1.0));
    assert_golden("int_array_plus_python_float", 3, &(jnp::array(&[1u8]) + 300));
}

use rjax::prelude::*;

#[test]
fn smoke() {
    let x = Array::from_shape_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
    let y = &x * 2.0 + 1.0;
    println!("{y}\n{y:?}");
    let i = jnp::arange(4);
    println!("{}", &i + 1.5);
    println!("{:?}", (&i + 1.5));
    println!(
        "{}",
        jnp::floor_divide(&jnp::array(&[-7i32, 7, -7, 7]), &jnp::array(&[2i32, -2, -2, 2]))
    );
    println!(
        "{}",
        jnp::remainder(&jnp::array(&[-7i32, 7, -7, 7]), &jnp::array(&[2i32, -2, -2, 2]))
    );
    println!("{}", jnp::array(&[250u8]) + jnp::array(&[10u8]));
    println!("{}", jnp::array(&[1u8]) + 300);
    println!("{}", jnp::linspace(0.0, 1.0, 3));
    println!("{}", jnp::eye(3));
    println!("{}", jnp::array(&[0.1f32, 0.25, 1e-5]));
    println!("{}", jnp::array(&[true, false]));
    println!("{}", jnp::arange(2000.0));
}

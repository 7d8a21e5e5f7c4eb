//! Property tests: broadcasting binary ops agree with an explicit index loop, for random
//! shapes and every way two shapes can broadcast.

mod common;

use common::unravel;
use proptest::prelude::*;
use rjax::prelude::*;

/// A shape of rank 0..=4 with small extents, and a second shape that broadcasts with it: each
/// axis kept, set to 1, or dropped from the front.
fn broadcastable_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(1usize..5, 0..=4).prop_flat_map(|out| {
        let rank = out.len();
        (
            Just(out.clone()),
            prop::collection::vec(0u8..3, rank),
            prop::collection::vec(0u8..3, rank),
            0..=rank,
        )
            .prop_map(|(out, ma, mb, drop)| {
                let pick = |mask: &[u8]| -> Vec<usize> {
                    out.iter().zip(mask).map(|(&d, &m)| if m == 0 { 1 } else { d }).collect()
                };
                let a = pick(&ma);
                let b = pick(&mb)[drop..].to_vec();
                (a, b)
            })
    })
}

fn values(shape: &[usize], seed: f32) -> Vec<f32> {
    let n: usize = shape.iter().product();
    (0..n).map(|i| ((i as f32 + seed) * 0.37).sin() * 4.0).collect()
}

/// The element of a row-major array of `shape` that output index `idx` reads under
/// broadcasting (right-aligned, size-1 axes repeated).
fn read(data: &[f32], shape: &[usize], idx: &[usize]) -> f32 {
    let lead = idx.len() - shape.len();
    let mut flat = 0;
    for (ax, &d) in shape.iter().enumerate() {
        let i = if d == 1 { 0 } else { idx[lead + ax] };
        flat = flat * d + i;
    }
    data[flat]
}

proptest! {
    #[test]
    fn binary_ops_broadcast_like_an_index_loop((sa, sb) in broadcastable_pair(), op in 0usize..4) {
        let (va, vb) = (values(&sa, 0.5), values(&sb, 1.5));
        let a = Array::from_shape_vec(&sa, va.clone());
        let b = Array::from_shape_vec(&sb, vb.clone());
        let f: fn(f32, f32) -> f32 = [|x, y| x + y, |x, y| x - y, |x, y| x * y, f32::max][op];
        let got = match op {
            0 => &a + &b,
            1 => &a - &b,
            2 => &a * &b,
            _ => jnp::maximum(&a, &b),
        };
        let rank = sa.len().max(sb.len());
        let out_shape: Vec<usize> = (0..rank)
            .map(|i| {
                let da = if i + sa.len() >= rank { sa[i + sa.len() - rank] } else { 1 };
                let db = if i + sb.len() >= rank { sb[i + sb.len() - rank] } else { 1 };
                da.max(db)
            })
            .collect();
        prop_assert_eq!(got.shape(), &out_shape[..]);
        let got = got.to_vec::<f32>().unwrap();
        for (flat, g) in got.iter().enumerate() {
            let idx = unravel(flat, &out_shape);
            prop_assert_eq!(*g, f(read(&va, &sa, &idx), read(&vb, &sb, &idx)));
        }
    }

    #[test]
    fn where_broadcasts_three_operands((sa, sb) in broadcastable_pair()) {
        let (va, vb) = (values(&sa, 0.0), values(&sb, 2.0));
        let a = Array::from_shape_vec(&sa, va.clone());
        let b = Array::from_shape_vec(&sb, vb.clone());
        let got = jnp::where_(a.gt(0.0), &b, &a);
        let got_shape = got.shape().to_vec();
        let got = got.to_vec::<f32>().unwrap();
        for (flat, g) in got.iter().enumerate() {
            let idx = unravel(flat, &got_shape);
            let x = read(&va, &sa, &idx);
            prop_assert_eq!(*g, if x > 0.0 { read(&vb, &sb, &idx) } else { x });
        }
    }
}

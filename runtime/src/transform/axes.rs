//! Named axes: the axes that enclosing `vmap`s (and `pmap`s) bind while their function is
//! traced, so collectives (`lax::psum(x, "i")`, `lax::axis_index("i")`) can check the name
//! they are given and learn the axis size. A per-thread stack, innermost last, like JAX's
//! axis environment.

use std::cell::RefCell;

thread_local! {
    static AXES: RefCell<Vec<(String, usize)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `body` with the axis `name` of `size` bound (shadowing an outer axis of that name).
pub fn with_axis<R>(name: &str, size: usize, body: impl FnOnce() -> R) -> R {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            AXES.with(|a| a.borrow_mut().pop());
        }
    }
    AXES.with(|a| a.borrow_mut().push((name.to_string(), size)));
    let _pop = Pop;
    body()
}

/// The size of the innermost bound axis called `name`.
pub fn axis_size(name: &str) -> Option<usize> {
    AXES.with(|a| a.borrow().iter().rev().find(|(n, _)| n == name).map(|(_, s)| *s))
}

/// The size of axis `name`, or a panic naming the operation and the axes that are bound.
#[track_caller]
pub fn require(op: &str, name: &str) -> usize {
    axis_size(name).unwrap_or_else(|| {
        let bound: Vec<String> = AXES.with(|a| a.borrow().iter().map(|(n, _)| format!("`{n}`")).collect());
        let bound = if bound.is_empty() {
            "no axis is bound here".to_string()
        } else {
            format!("the bound axes are {}", bound.join(", "))
        };
        panic!(
            "{op}: unbound axis name `{name}`: no enclosing vmap or pmap has axis_name = \"{name}\" \
             ({bound}); collectives work inside #[vmap(axis_name = \"{name}\")] or \
             #[pmap(axis_name = \"{name}\")]"
        )
    })
}

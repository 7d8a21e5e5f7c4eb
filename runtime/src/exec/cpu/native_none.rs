//! Fused groups compiled to machine code exist on x86-64 Linux only (see `native/mod.rs` there);
//! elsewhere every group runs on the slice path.

use crate::exec::fusion::FusedGroup;

/// Where a group's compiled loop would be kept: never made on this platform.
#[derive(Debug, Default)]
pub struct NativeCache;

impl NativeCache {
    /// Always `None`: no loops are compiled on this platform.
    pub(crate) fn get(&self, _: &FusedGroup, _: usize) -> Option<&NativeLoop> {
        None
    }

    /// Always false: no loops are compiled on this platform.
    pub fn compiled(&self) -> bool {
        false
    }
}

/// A compiled loop, of which this platform has none.
pub(crate) enum NativeLoop {}

impl NativeLoop {
    /// Elements per trip (no value exists to ask).
    pub(crate) fn block(&self) -> usize {
        match *self {}
    }

    /// The period of the group's broadcast inputs (no value exists to ask).
    pub(crate) fn row(&self) -> Option<usize> {
        match *self {}
    }
}

impl NativeLoop {
    /// Never called: no value exists.
    ///
    /// # Safety
    /// None needed.
    pub(crate) unsafe fn run(
        &self,
        _: bool,
        _: &[*const u8],
        _: &[*mut u8],
        _: *const u8,
        _: usize,
        _: usize,
    ) {
        match *self {}
    }
}

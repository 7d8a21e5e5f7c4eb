//! Devices that hold array buffers.

use std::fmt;

/// Where an array's buffer lives. Only the host CPU exists so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// The host CPU.
    #[default]
    Cpu,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu:0"),
        }
    }
}

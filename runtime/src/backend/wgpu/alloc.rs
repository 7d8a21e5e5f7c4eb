//! The device's caching allocator: buffers are created in size classes and, when the array
//! or launch holding one lets go of it, kept for the next request of the same class, so a
//! loop of same-sized operations creates buffers only in its first iteration.
//!
//! Classes are a quarter of an octave apart (at most 25% over the request) from 256 bytes
//! up. At most [`CACHE_LIMIT`] bytes of freed buffers are kept; a creation that runs out of
//! memory frees them all and tries once more before reporting [`Error::OutOfMemory`].
//!
//! While work is recorded but not yet submitted (see [`Pool::hold`]), freed buffers are held
//! back until the submission: a buffer the recorded work reads must not be handed out again
//! and written (queue writes take effect before the submission's commands run).

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::device::{Device, MemoryStats};
use crate::error::Error;

/// The smallest class, in bytes.
const MIN_CLASS: u64 = 256;
/// Freed buffers kept for reuse, in bytes, beyond which they are released.
pub(super) const CACHE_LIMIT: u64 = 1 << 30;

/// What a buffer is for, which fixes its usage flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    /// Array storage and kernel parameters: bound to shaders, copied to and from.
    Storage,
    /// Host-mapped, the destination of copies to read back.
    Readback,
}

impl Kind {
    fn usages(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            Kind::Storage => U::STORAGE | U::COPY_SRC | U::COPY_DST,
            Kind::Readback => U::MAP_READ | U::COPY_DST,
        }
    }
}

/// The allocator of one device.
pub(super) struct Pool {
    device: wgpu::Device,
    id: Device,
    max_buffer: u64,
    free: Mutex<HashMap<(Kind, u64), Vec<wgpu::Buffer>>>,
    /// Buffers freed since recording began, while it lasts.
    held: Mutex<Option<Vec<(Kind, wgpu::Buffer)>>>,
    created: AtomicU64,
    in_use: AtomicU64,
    cached: AtomicU64,
}

/// A buffer from the pool, returned to it when dropped. Dropping it while a submitted launch
/// still uses it is safe: wgpu orders the buffer's next use after that launch.
pub(super) struct Pooled {
    buffer: Option<wgpu::Buffer>,
    kind: Kind,
    pool: Arc<Pool>,
}

impl Deref for Pooled {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("a pooled buffer is held until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.pool.give_back(self.kind, buffer);
        }
    }
}

/// The class a request of `bytes` is served from: the next quarter octave, or just `bytes`
/// rounded to 4 where the class would pass the largest buffer `max`.
pub(super) fn class(bytes: u64, max: u64) -> u64 {
    let b = bytes.max(MIN_CLASS);
    let octave = b.next_power_of_two();
    let class = if octave == b { b } else { b.div_ceil(octave / 8) * (octave / 8) };
    if class > max {
        bytes.div_ceil(4) * 4
    } else {
        class
    }
}

impl Pool {
    pub(super) fn new(device: wgpu::Device, id: Device, max_buffer: u64) -> Arc<Pool> {
        Arc::new(Pool {
            device,
            id,
            max_buffer,
            free: Mutex::new(HashMap::new()),
            held: Mutex::new(None),
            created: AtomicU64::new(0),
            in_use: AtomicU64::new(0),
            cached: AtomicU64::new(0),
        })
    }

    /// A buffer of at least `bytes` for `kind`; `op` names the operation in errors.
    pub(super) fn take(
        self: &Arc<Pool>,
        kind: Kind,
        bytes: u64,
        op: &str,
    ) -> Result<Pooled, Error> {
        if bytes > self.max_buffer {
            return Err(Error::Device {
                device: self.id,
                problem: format!(
                    "{op}: {bytes} bytes do not fit one buffer, whose size this adapter limits \
                     to {} bytes",
                    self.max_buffer
                ),
            });
        }
        let size = class(bytes, self.max_buffer);
        let reused = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            free.get_mut(&(kind, size)).and_then(Vec::pop)
        };
        let buffer = match reused {
            Some(buffer) => {
                self.cached.fetch_sub(size, Ordering::Relaxed);
                buffer
            }
            None => match self.create(kind, size) {
                Some(buffer) => buffer,
                None => {
                    // Out of memory: release what the cache holds and try once more.
                    self.release_cached();
                    self.create(kind, size).ok_or_else(|| Error::OutOfMemory {
                        device: self.id,
                        op: op.to_string(),
                        bytes: usize::try_from(size).unwrap_or(usize::MAX),
                    })?
                }
            },
        };
        self.in_use.fetch_add(size, Ordering::Relaxed);
        Ok(Pooled { buffer: Some(buffer), kind, pool: self.clone() })
    }

    /// A new buffer, or `None` when the device is out of memory.
    fn create(&self, kind: Kind, size: u64) -> Option<wgpu::Buffer> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rjax"),
            size,
            usage: kind.usages(),
            mapped_at_creation: false,
        });
        if pollster::block_on(scope.pop()).is_some() {
            return None;
        }
        self.created.fetch_add(1, Ordering::Relaxed);
        Some(buffer)
    }

    fn give_back(&self, kind: Kind, buffer: wgpu::Buffer) {
        self.in_use.fetch_sub(buffer.size(), Ordering::Relaxed);
        if let Some(held) = self.held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            held.push((kind, buffer));
            return;
        }
        self.cache(kind, buffer);
    }

    /// Starts (`true`) or ends holding freed buffers back; either way, those held so far
    /// become free, for the work that used them has been submitted.
    pub(super) fn hold(&self, on: bool) {
        let held = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *held, on.then(Vec::new))
        };
        for (kind, buffer) in held.into_iter().flatten() {
            self.cache(kind, buffer);
        }
    }

    /// Keeps a freed buffer for reuse, unless the cache is full.
    fn cache(&self, kind: Kind, buffer: wgpu::Buffer) {
        let size = buffer.size();
        if self.cached.load(Ordering::Relaxed) + size > CACHE_LIMIT {
            return;
        }
        self.cached.fetch_add(size, Ordering::Relaxed);
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.entry((kind, size)).or_default().push(buffer);
    }

    fn release_cached(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        for (_, buffers) in free.drain() {
            for buffer in buffers {
                self.cached.fetch_sub(buffer.size(), Ordering::Relaxed);
            }
        }
    }

    pub(super) fn stats(&self) -> MemoryStats {
        MemoryStats {
            buffers_created: self.created.load(Ordering::Relaxed),
            bytes_in_use: self.in_use.load(Ordering::Relaxed),
            bytes_cached: self.cached.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::class;

    #[test]
    fn classes_are_quarter_octaves_within_the_largest_buffer() {
        let max = 1 << 31;
        assert_eq!(class(1, max), 256);
        assert_eq!(class(256, max), 256);
        assert_eq!(class(257, max), 320);
        assert_eq!(class(4096, max), 4096);
        assert_eq!(class(300_000_000, max), 335_544_320);
        for bytes in [1000u64, 12_345, 1 << 20, 3 << 28] {
            let c = class(bytes, max);
            assert!(c >= bytes && c <= bytes + bytes / 4 + 256, "{bytes} -> {c}");
            assert_eq!(c % 4, 0);
        }
        // A class past the largest buffer gives way to the request itself.
        assert_eq!(class((1 << 30) + 50, (1 << 30) + 100), (1 << 30) + 52);
    }
}

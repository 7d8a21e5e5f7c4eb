//! Kernel sources compiled to CUBIN by NVRTC, loaded at run time (cudarc's dynamic loading),
//! and cached: in memory for the process, and on disk across processes, keyed by the source,
//! the architecture and NVRTC's version.
//!
//! A CUBIN for a real architecture (`sm_80`, `sm_90`) runs NVIDIA's assembler as well as the
//! compiler, so a source that compiles here is a kernel that device loads. Kernels are
//! compiled with `--fmad=false`: a multiply and an add fuse only where the source says `fma`,
//! as on the CPU (see [`super::math`]).

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::nvrtc::{result, sys};

use crate::error::Error;

/// A CUDA compute capability: the GPU generation a CUBIN is assembled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CudaArch {
    pub major: u32,
    pub minor: u32,
}

impl CudaArch {
    /// Ampere (A100).
    pub const SM_80: CudaArch = CudaArch { major: 8, minor: 0 };
    /// Hopper (H100, H200).
    pub const SM_90: CudaArch = CudaArch { major: 9, minor: 0 };

    fn option(self) -> String {
        format!("--gpu-architecture=sm_{}{}", self.major, self.minor)
    }
}

fn unavailable(problem: impl Into<String>) -> Error {
    Error::Platform { platform: "cuda", problem: problem.into() }
}

/// NVRTC's version, once it is found, or what is missing.
fn version() -> Result<(i32, i32), Error> {
    static VERSION: OnceLock<Result<(i32, i32), String>> = OnceLock::new();
    let found = VERSION.get_or_init(|| {
        // SAFETY: only tries to open the library; cudarc's loader would panic where it is
        // missing, so nothing else is called before this says it is there.
        if !unsafe { sys::is_culib_present() } {
            return Err("NVRTC (libnvrtc.so.12) was not found: install CUDA 12, or the \
                 `nvidia-cuda-nvrtc-cu12` Python wheel and put its `nvidia/cuda_nvrtc/lib` \
                 folder on LD_LIBRARY_PATH"
                .to_string());
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the library is loaded; the call writes two ints we own.
        let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        if status != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!("nvrtcVersion failed: {status:?}"));
        }
        Ok((major, minor))
    });
    found.clone().map_err(unavailable)
}

/// The CUBIN of `source` for `arch`: from the process's cache, the disk cache, or NVRTC. An
/// error says what is missing (NVRTC) or carries the compiler's log.
pub(crate) fn compile(source: &str, arch: CudaArch) -> Result<Arc<Vec<u8>>, Error> {
    type Compiled = Mutex<HashMap<(String, CudaArch), Arc<Vec<u8>>>>;
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    let nvrtc = version()?;
    let compiled = COMPILED.get_or_init(Default::default);
    let key = (source.to_string(), arch);
    if let Some(cubin) = compiled.lock().expect("the kernel cache's lock").get(&key) {
        return Ok(cubin.clone());
    }
    let disk = disk_entry(source, arch, nvrtc);
    let cubin = match disk.as_ref().and_then(|entry| entry.read(source)) {
        Some(cubin) => cubin,
        None => {
            let cubin = run_nvrtc(source, arch)?;
            if let Some(entry) = &disk {
                entry.write(source, &cubin);
            }
            cubin
        }
    };
    let cubin = Arc::new(cubin);
    compiled.lock().expect("the kernel cache's lock").insert(key, cubin.clone());
    Ok(cubin)
}

/// One compilation by NVRTC.
fn run_nvrtc(source: &str, arch: CudaArch) -> Result<Vec<u8>, Error> {
    let text = CString::new(source).map_err(|_| unavailable("a kernel source holds a NUL"))?;
    let program = result::create_program(&text, None)
        .map_err(|e| unavailable(format!("nvrtcCreateProgram: {e:?}")))?;
    let options = [arch.option(), "--fmad=false".to_string(), "--std=c++17".to_string()];
    // SAFETY: `program` was just created and is destroyed below, once; the options outlive
    // the call.
    let compiled = unsafe { result::compile_program(program, &options) };
    let cubin = match compiled {
        Err(e) => Err(unavailable(format!(
            "NVRTC could not compile a kernel for sm_{}{} ({e:?}):\n{}\n--- source ---\n{source}",
            arch.major,
            arch.minor,
            program_log(program)
        ))),
        Ok(()) => cubin_of(program),
    };
    // SAFETY: `program` is live and not used after this.
    let _ = unsafe { result::destroy_program(program) };
    cubin
}

fn program_log(program: sys::nvrtcProgram) -> String {
    // SAFETY: `program` is live; the log is a NUL-terminated buffer NVRTC filled.
    match unsafe { result::get_program_log(program) } {
        Ok(log) => unsafe { CStr::from_ptr(log.as_ptr()) }.to_string_lossy().into_owned(),
        Err(e) => format!("(no log: {e:?})"),
    }
}

fn cubin_of(program: sys::nvrtcProgram) -> Result<Vec<u8>, Error> {
    let mut size = 0usize;
    // SAFETY: `program` compiled; NVRTC writes the size into a usize we own.
    let status = unsafe { sys::nvrtcGetCUBINSize(program, &mut size) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return Err(unavailable(format!("nvrtcGetCUBINSize: {status:?} (size {size})")));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: the buffer holds the `size` bytes NVRTC said it would write.
    let status = unsafe { sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(unavailable(format!("nvrtcGetCUBIN: {status:?}")));
    }
    Ok(cubin)
}

/// Where compiled kernels are kept across processes: `RJAX_CACHE_DIR`, else the user's
/// cache folder (`$XDG_CACHE_HOME` or `~/.cache`), under `rjax/cuda`.
fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let root = var("RJAX_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("rjax")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("rjax")))?;
    Some(root.join("cuda"))
}

/// One kernel's files in the disk cache: its CUBIN and the source it was compiled from, which
/// a read compares, so a collision of the 64-bit name is a miss rather than a wrong kernel.
pub(super) struct DiskEntry {
    cubin: PathBuf,
    source: PathBuf,
}

fn disk_entry(source: &str, arch: CudaArch, nvrtc: (i32, i32)) -> Option<DiskEntry> {
    Some(DiskEntry::in_dir(&cache_dir()?, source, arch, nvrtc))
}

impl DiskEntry {
    /// The entry of `source` for `arch` and this NVRTC version in `dir`.
    pub(super) fn in_dir(
        dir: &std::path::Path,
        source: &str,
        arch: CudaArch,
        nvrtc: (i32, i32),
    ) -> DiskEntry {
        let name = format!(
            "{:016x}-sm{}{}-nvrtc{}.{}",
            fnv1a(source.as_bytes()),
            arch.major,
            arch.minor,
            nvrtc.0,
            nvrtc.1
        );
        DiskEntry {
            cubin: dir.join(format!("{name}.cubin")),
            source: dir.join(format!("{name}.cu")),
        }
    }

    pub(super) fn read(&self, source: &str) -> Option<Vec<u8>> {
        let stored = std::fs::read_to_string(&self.source).ok()?;
        (stored == source).then(|| std::fs::read(&self.cubin).ok()).flatten()
    }

    /// Best effort: a cache that cannot be written only costs a compilation next time. Each
    /// file is written under a temporary name and renamed, so readers never see half of one.
    pub(super) fn write(&self, source: &str, cubin: &[u8]) {
        let Some(dir) = self.cubin.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let put = |path: &PathBuf, bytes: &[u8]| {
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path))
        };
        // The CUBIN first: an entry counts once its source is there.
        if put(&self.cubin, cubin).is_ok() {
            let _ = put(&self.source, source.as_bytes());
        }
    }
}

/// FNV-1a: a stable 64-bit hash (std's hasher may change between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

//! The CUDA backend: real GPUs behind the same [`Backend`](super::Backend) trait as the
//! simulator. Built with the `cuda` cargo feature (on by default): cudarc's driver and
//! NVRTC bindings, loaded at run time, so nothing CUDA is needed to build, and a machine
//! without a driver gets a one-line message pointing to `--backend sim`. Kernels live in
//! `kernels/*.cu`, are embedded in the binary and compiled by NVRTC for each device
//! architecture at first use; [`kernels`] documents their ABI and launch configuration.

pub mod kernels;

#[cfg(feature = "cuda")]
mod backend;

#[cfg(feature = "cuda")]
pub use backend::{CudaBackend, DEFAULT_WATCHDOG_S, compile_for, gpus_present};

/// What `--backend cuda` says on a machine without a CUDA driver.
pub const NO_DRIVER: &str = "no CUDA driver (libcuda.so) was found on this machine, so it \
                             cannot drive real GPUs; run on the simulator with --backend sim";

/// The message every CUDA entry point gives in a build without the `cuda` feature.
pub const UNAVAILABLE: &str = "this switchyard was built without the `cuda` feature, so it \
                               cannot drive real GPUs; run on the simulator with --backend sim";

#[cfg(not(feature = "cuda"))]
mod stub {
    use crate::backend::{BackendError, KernelRegistry};

    /// Stand-in for the CUDA backend in builds without the `cuda` feature.
    #[derive(Debug)]
    pub struct CudaBackend {
        _private: (),
    }

    impl CudaBackend {
        /// Opens the first `gpus` GPUs; in this build, always the error
        /// [`UNAVAILABLE`](super::UNAVAILABLE).
        pub fn open(gpus: u32, registry: KernelRegistry) -> Result<CudaBackend, BackendError> {
            let _ = (gpus, registry);
            Err(BackendError::Unavailable(super::UNAVAILABLE.to_string()))
        }
    }

    /// GPUs this machine has that this build can use: none without the `cuda` feature.
    pub fn gpus_present() -> u32 {
        0
    }
}

#[cfg(not(feature = "cuda"))]
pub use stub::{CudaBackend, gpus_present};

/// Checks, before any work, that `gpus` GPUs can be driven here: the one-line error says
/// what is missing and points to `--backend sim`.
pub fn check_available(gpus: u32) -> Result<(), crate::backend::BackendError> {
    use crate::backend::BackendError;
    if !cfg!(feature = "cuda") {
        return Err(BackendError::Unavailable(UNAVAILABLE.to_string()));
    }
    #[cfg(feature = "cuda")]
    {
        // SAFETY: probing for the driver library has no preconditions.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(BackendError::Unavailable(NO_DRIVER.to_string()));
        }
    }
    let found = gpus_present();
    if gpus == 0 || gpus > found {
        return Err(BackendError::Unavailable(format!(
            "{gpus} GPUs asked for, this machine has {found} usable by CUDA; choose --gpus \
             1..={found} or run on the simulator with --backend sim"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::backend::KernelRegistry;

    #[test]
    fn without_a_gpu_opening_says_what_to_do_instead() {
        if super::gpus_present() > 0 {
            eprintln!("skipped: this machine has a GPU");
            return;
        }
        let err = super::CudaBackend::open(1, KernelRegistry::new()).unwrap_err();
        let early = super::check_available(1).unwrap_err();
        for text in [err.to_string(), early.to_string()] {
            assert!(text.contains("--backend sim"), "{text}");
            assert!(!text.contains('\n'), "one line: {text}");
        }
    }
}

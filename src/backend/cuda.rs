//! The CUDA backend. Real GPUs arrive with the `cuda` cargo feature (cudarc, kernels in
//! `kernels/*.cu` compiled by NVRTC at run time); this build has the stub, which compiles
//! everywhere and says in one line what to do instead.

use super::BackendError;

/// The message every CUDA entry point gives in a build without the `cuda` feature.
pub const UNAVAILABLE: &str = "this switchyard was built without the `cuda` feature, so it \
                               cannot drive real GPUs; run on the simulator with --backend sim";

/// Stand-in for the CUDA backend in builds without the `cuda` feature.
#[derive(Debug)]
pub struct CudaBackend {
    _private: (),
}

impl CudaBackend {
    /// Opens the first `gpus` GPUs; in this build, always the error [`UNAVAILABLE`].
    pub fn open(gpus: u32) -> Result<CudaBackend, BackendError> {
        let _ = gpus;
        Err(BackendError::Unavailable(UNAVAILABLE.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_stub_says_what_to_do_instead() {
        let err = super::CudaBackend::open(1).unwrap_err();
        assert!(err.to_string().contains("--backend sim"), "{err}");
    }
}

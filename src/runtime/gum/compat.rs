//! The three things GUM needs of the backend trait (peer reads inside kernels, host work
//! that costs time, the device's memory bandwidth), behind one small interface so that
//! the runtime and its kernels name them in one place.

use crate::backend::{Backend, BackendError, DeviceId, KernelEffects, Token};

/// Reports `bytes` read from buffer argument `arg` of another device while the kernel ran
/// (the simulator moves them over the path, overlapped with the kernel).
pub fn peer_read(effects: &mut KernelEffects, arg: usize, bytes: u64) {
    let _ = (effects, arg, bytes);
}

/// Submits host work costing `cost_ps` by the runtime's model; true if the backend
/// charges it (a completion with `token` follows).
pub fn host_work<B: Backend + ?Sized>(
    backend: &mut B,
    cost_ps: u64,
    token: Token,
) -> Result<bool, BackendError> {
    let _ = (backend, cost_ps, token);
    Ok(false)
}

/// The device's memory bandwidth `B_ii` in bytes per second; `fallback` when the backend
/// does not know it.
pub fn memory_bandwidth<B: Backend + ?Sized>(backend: &B, device: DeviceId, fallback: u64) -> u64 {
    let _ = (backend, device);
    fallback
}

//! Two things GUM needs of the backend trait (host work that costs time, the device's
//! memory bandwidth), named in one place; peer reads inside kernels are
//! [`crate::backend::KernelEffects::peer_read`].

use crate::backend::{Backend, BackendError, DeviceId, Token};

/// Submits host work costing `cost_ps` by the runtime's model (virtual time on the
/// simulator, at once on CUDA); a completion with `token` follows.
pub fn host_work<B: Backend + ?Sized>(
    backend: &mut B,
    cost_ps: u64,
    token: Token,
) -> Result<bool, BackendError> {
    backend.host_work(cost_ps, token)?;
    Ok(true)
}

/// The device's memory bandwidth `B_ii` in bytes per second; `fallback` when the backend
/// does not know it (reports 0).
pub fn memory_bandwidth<B: Backend + ?Sized>(backend: &B, device: DeviceId, fallback: u64) -> u64 {
    match backend.memory_bandwidth_bytes_per_s(device) {
        0 => fallback,
        b => b,
    }
}

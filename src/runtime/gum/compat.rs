//! The three things GUM needs of the backend trait (peer reads inside kernels, host work
//! that costs time, the device's memory bandwidth), named in one place.

use crate::backend::{Backend, BackendError, DeviceId, KernelEffects, PeerRead, Token};

/// Reports `bytes` read from buffer argument `arg` of another device while the kernel ran
/// (the simulator moves them over the path, overlapped with the kernel).
pub fn peer_read(effects: &mut KernelEffects, arg: usize, bytes: u64) {
    if bytes > 0 {
        effects.peer_reads.push(PeerRead { arg, bytes });
    }
}

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

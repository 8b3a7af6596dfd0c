//! One GPU's share of a run put on its device: the [`FIXED_SLOTS`] fixed slots (layout in
//! [`super::kernels`]) filled from its subgraph, a send and a receive package per peer,
//! and the primitive's scratch buffers. The bulk-synchronous runtime uploads once; GUM also
//! after each ownership move, from the state the run reached.

use super::kernels::FIXED_SLOTS;
use super::{BspPrimitive, Subgraph};
use crate::backend::{Backend, BufferId, DeviceId, ElemType, HostData, StreamId, Token};
use crate::runtime::RuntimeError;

/// The top byte of an upload's completion token (GUM's hub-cache uploads use it too).
pub(crate) const PHASE_UPLOAD: u8 = 1;

/// Where a GPU's values and frontier start.
pub(crate) enum Start<'a> {
    /// The algorithm's initial values and frontier.
    Initial,
    /// The state a run reached: values (the primitive's bits) and frontier membership, both
    /// by global id.
    Resume { values: &'a [u32], frontier: &'a [bool] },
}

/// What [`upload_slots`] allocated on the GPU.
pub(crate) struct UploadedSlots {
    /// The fixed slots, in [`FIXED_SLOTS`]' order.
    pub(crate) fixed: Vec<BufferId>,
    /// Send package per peer (`2 *` its pairs, empty toward itself).
    pub(crate) send: Vec<BufferId>,
    /// Receive package per peer.
    pub(crate) recv: Vec<BufferId>,
    /// The primitive's scratch buffers.
    pub(crate) scratch: Vec<BufferId>,
    /// The input frontier's length.
    pub(crate) frontier_len: u64,
}

/// Writes `data` into `buffer` on `stream` (nothing for empty data) and adds the write's
/// completion token to `tokens`, for the caller to wait on.
pub(crate) fn write_upload<B: Backend + ?Sized>(
    backend: &mut B,
    stream: StreamId,
    buffer: BufferId,
    data: HostData,
    tokens: &mut Vec<Token>,
) -> Result<(), RuntimeError> {
    if data.is_empty() {
        return Ok(());
    }
    let t = Token((u64::from(PHASE_UPLOAD) << 56) | tokens.len() as u64);
    backend.write_from_host(stream, buffer, 0, data, Some(t))?;
    tokens.push(t);
    Ok(())
}

/// Allocates GPU `gpu`'s slots and queues their contents on `compute` (tokens in `tokens`):
/// `sub`'s arc arrays and degrees move to the device (the host keeps the id maps), values
/// and the owned frontier come from `start` (proxies of an additive combiner start at its
/// identity, so that an owner's initial value counts once), the reverse slots from
/// `reverse` (empty when the primitive reads none). `send_pairs[p]` and `recv_pairs[p]`
/// size the packages toward and from peer `p`. With `count_frontier`, the counters' word 1
/// starts at the frontier's length (GUM's statistics read it); otherwise every counter
/// starts at zero.
#[allow(clippy::too_many_arguments)]
pub(crate) fn upload_slots<B: Backend + ?Sized>(
    backend: &mut B,
    gpu: u32,
    compute: StreamId,
    sub: &mut Subgraph,
    (send_pairs, recv_pairs): (&[usize], &[usize]),
    primitive: &dyn BspPrimitive,
    n: u32,
    reverse: (Vec<u64>, Vec<u32>),
    start: &Start<'_>,
    count_frontier: bool,
    tokens: &mut Vec<Token>,
) -> Result<UploadedSlots, RuntimeError> {
    let device = DeviceId(gpu);
    let peers = send_pairs.len();
    let local = sub.local as usize;
    let arcs = sub.targets.len();
    let globals = &sub.global_of_local;
    let add = primitive.combiner().is_additive();
    let values: Vec<u32> = globals
        .iter()
        .zip(&sub.owner_of_local)
        .map(|(&v, &home)| match start {
            Start::Resume { values, .. } => values[v as usize],
            Start::Initial if add && home != gpu => 0f32.to_bits(),
            Start::Initial => primitive.initial_value(v, n),
        })
        .collect();
    let values = match primitive.value_elem() {
        ElemType::F32 => HostData::F32(values.iter().map(|&b| f32::from_bits(b)).collect()),
        // f64 values start from the f32 the primitive gives, widened exactly.
        ElemType::F64 => {
            HostData::F64(values.iter().map(|&b| f64::from(f32::from_bits(b))).collect())
        }
        _ => HostData::U32(values),
    };
    let aux: Option<Vec<f32>> =
        globals.iter().map(|&v| primitive.initial_aux(v, n)).collect::<Option<Vec<f32>>>();
    let frontier: Vec<u32> = (0..sub.local)
        .filter(|&v| sub.owner_of_local[v as usize] == gpu)
        .filter(|&v| match start {
            Start::Resume { frontier, .. } => frontier[globals[v as usize] as usize],
            Start::Initial => primitive.initially_active(globals[v as usize]),
        })
        .collect();
    let frontier_len = frontier.len() as u64;
    let counters = if count_frontier {
        let mut c = vec![0u64; peers + 3];
        c[1] = frontier_len;
        c
    } else {
        Vec::new()
    };
    let (reverse_offsets, reverse_targets) = reverse;
    let contents: [(ElemType, usize, &str, HostData); FIXED_SLOTS] = [
        (ElemType::U64, local + 1, "offsets", HostData::U64(std::mem::take(&mut sub.offsets))),
        (ElemType::U32, arcs, "targets", HostData::U32(std::mem::take(&mut sub.targets))),
        (
            ElemType::U32,
            sub.weights.as_ref().map_or(0, Vec::len),
            "weights",
            HostData::U32(sub.weights.take().unwrap_or_default()),
        ),
        (primitive.value_elem(), local, "values", values),
        (
            ElemType::F32,
            aux.as_ref().map_or(0, Vec::len),
            "aux",
            HostData::F32(aux.unwrap_or_default()),
        ),
        (ElemType::U32, local, "degree", HostData::U32(std::mem::take(&mut sub.global_degree))),
        (ElemType::U32, local, "marker", HostData::U32(Vec::new())),
        (ElemType::U32, local, "frontier_in", HostData::U32(frontier)),
        (ElemType::U32, local, "frontier_out", HostData::U32(Vec::new())),
        (ElemType::U64, peers + 3, "counters", HostData::U64(counters)),
        (ElemType::U32, local, "owner", HostData::U32(sub.owner_of_local.clone())),
        (ElemType::U32, local, "owner_local_id", HostData::U32(sub.owner_local_id.clone())),
        (ElemType::U64, reverse_offsets.len(), "reverse offsets", HostData::U64(reverse_offsets)),
        (ElemType::U32, reverse_targets.len(), "reverse targets", HostData::U32(reverse_targets)),
    ];
    let mut fixed = Vec::with_capacity(FIXED_SLOTS);
    for (elem, len, label, data) in contents {
        let buffer = backend.alloc(device, elem, len, label)?;
        write_upload(backend, compute, buffer, data, tokens)?;
        fixed.push(buffer);
    }
    let mut send = Vec::with_capacity(peers);
    let mut recv = Vec::with_capacity(peers);
    for (&out_pairs, &in_pairs) in send_pairs.iter().zip(recv_pairs) {
        send.push(backend.alloc(device, ElemType::U32, 2 * out_pairs, "send package")?);
        recv.push(backend.alloc(device, ElemType::U32, 2 * in_pairs, "receive package")?);
    }
    let mut scratch = Vec::new();
    for (elem, len, label) in primitive.scratch(sub.local, arcs) {
        scratch.push(backend.alloc(device, elem, len, label)?);
    }
    Ok(UploadedSlots { fixed, send, recv, scratch, frontier_len })
}

//! Kernel contracts and their registry.
//!
//! Every kernel has one contract (its buffer and scalar arguments, what it computes) and two
//! implementations: a Rust function that the simulator executes, reporting the counts the
//! GPU cost model turns into time, and a CUDA function in `kernels/*.cu` named by
//! [`KernelDef::cuda_name`]. Users register their own kernels the same way.

use super::{BackendError, BufferId, HostData};
use std::collections::BTreeMap;

/// A scalar kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// Unsigned 32-bit.
    U32(u32),
    /// Unsigned 64-bit.
    U64(u64),
    /// 32-bit float.
    F32(f32),
    /// 64-bit float.
    F64(f64),
}

/// A one-sided operation a kernel issues into another device's memory (Atos's PGAS pushes
/// and remote atomics). The backend delivers it over its interconnect; on a real GPU it is
/// a store or atomic through a peer pointer.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoteOp {
    /// `buffer[index] = min(buffer[index], value)`.
    AtomicMinU32 {
        /// Target buffer (on another device).
        buffer: BufferId,
        /// Element index.
        index: usize,
        /// Operand.
        value: u32,
    },
    /// `buffer[index] += value`.
    AtomicAddF32 {
        /// Target buffer (on another device).
        buffer: BufferId,
        /// Element index.
        index: usize,
        /// Operand.
        value: f32,
    },
    /// Appends `values` to the queue `queue`, reserving slots with an atomic add on
    /// `counter[0]` (a `u64` buffer). Fails the run if the queue would overflow.
    PushU32 {
        /// Queue storage (on another device).
        queue: BufferId,
        /// One-element `u64` end counter of the queue.
        counter: BufferId,
        /// Items pushed.
        values: Vec<u32>,
    },
}

/// What a simulated kernel did besides writing its buffers: the counts the GPU cost model
/// needs and the one-sided operations it issued.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelEffects {
    /// Work items processed (vertices, frontier entries).
    pub items: u64,
    /// Edges visited.
    pub edges: u64,
    /// Atomic operations on device memory.
    pub atomics: u64,
    /// Bytes read from device memory.
    pub bytes_read: u64,
    /// Bytes written to device memory.
    pub bytes_written: u64,
    /// Grid-wide rounds a persistent kernel ran internally (0 or 1: an ordinary kernel).
    pub rounds: u64,
    /// One-sided operations into other devices' memory.
    pub remote: Vec<RemoteOp>,
}

/// The arguments a simulated kernel sees: its buffers (in contract order, taken out of device
/// memory for the duration of the kernel) and its scalars.
pub struct KernelContext<'a> {
    /// Kernel name, for error messages.
    pub kernel: &'static str,
    /// Buffer arguments in contract order. Remote buffers (other devices) appear empty:
    /// write to them through [`KernelEffects::remote`].
    pub buffers: &'a mut [HostData],
    /// Buffer ids in contract order (to address remote operations).
    pub buffer_ids: &'a [BufferId],
    /// Scalar arguments in contract order.
    pub scalars: &'a [Scalar],
    /// Counts and remote operations, filled by the kernel.
    pub effects: KernelEffects,
}

impl KernelContext<'_> {
    /// The buffers as an array of `N` (the contract's arity), for destructuring into
    /// disjoint mutable references.
    pub fn buffers<const N: usize>(&mut self) -> Result<&mut [HostData; N], BackendError> {
        let found = self.buffers.len();
        let kernel = self.kernel;
        <&mut [HostData; N]>::try_from(&mut *self.buffers).map_err(|_| BackendError::Kernel {
            kernel: kernel.to_string(),
            message: format!("expects {N} buffer arguments, got {found}"),
        })
    }

    /// Scalar `i` as `u32`.
    pub fn scalar_u32(&self, i: usize) -> Result<u32, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::U32(v)) => Ok(*v),
            other => Err(self.scalar_error(i, "u32", other)),
        }
    }

    /// Scalar `i` as `u64`.
    pub fn scalar_u64(&self, i: usize) -> Result<u64, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::U64(v)) => Ok(*v),
            other => Err(self.scalar_error(i, "u64", other)),
        }
    }

    /// Scalar `i` as `f64` (accepts f32 and f64).
    pub fn scalar_f64(&self, i: usize) -> Result<f64, BackendError> {
        match self.scalars.get(i) {
            Some(Scalar::F64(v)) => Ok(*v),
            Some(Scalar::F32(v)) => Ok(f64::from(*v)),
            other => Err(self.scalar_error(i, "f64", other)),
        }
    }

    fn scalar_error(&self, i: usize, want: &str, found: Option<&Scalar>) -> BackendError {
        BackendError::Kernel {
            kernel: self.kernel.to_string(),
            message: format!("scalar argument {i} must be {want}, found {found:?}"),
        }
    }
}

macro_rules! typed_access {
    ($get:ident, $get_mut:ident, $variant:ident, $t:ty) => {
        /// The elements, if this buffer holds this type.
        pub fn $get(&self) -> Result<&[$t], BackendError> {
            match self {
                HostData::$variant(v) => Ok(v),
                other => Err(BackendError::Usage(format!(
                    "buffer holds {:?}, expected {}",
                    other.elem(),
                    stringify!($t)
                ))),
            }
        }

        /// The elements, mutably, if this buffer holds this type.
        pub fn $get_mut(&mut self) -> Result<&mut Vec<$t>, BackendError> {
            match self {
                HostData::$variant(v) => Ok(v),
                other => Err(BackendError::Usage(format!(
                    "buffer holds {:?}, expected {}",
                    other.elem(),
                    stringify!($t)
                ))),
            }
        }
    };
}

impl HostData {
    typed_access!(as_u32, as_u32_mut, U32, u32);
    typed_access!(as_u64, as_u64_mut, U64, u64);
    typed_access!(as_f32, as_f32_mut, F32, f32);
    typed_access!(as_f64, as_f64_mut, F64, f64);
}

/// The Rust implementation of a kernel, executed by the simulator.
pub type SimKernelFn = fn(&mut KernelContext<'_>) -> Result<(), BackendError>;

/// One kernel: its contract's name, the simulator implementation and the CUDA function.
#[derive(Clone, Debug)]
pub struct KernelDef {
    /// Registered name, used in [`super::Launch::kernel`].
    pub name: &'static str,
    /// One line on what it computes and its arguments.
    pub contract: &'static str,
    /// Rust implementation run by the simulator.
    pub sim: SimKernelFn,
    /// Name of the CUDA implementation in `kernels/*.cu`, if written.
    pub cuda_name: Option<&'static str>,
    /// Buffer argument positions that may live on another device (peer pointers).
    pub remote_args: &'static [usize],
}

/// All kernels a run can launch, by name.
#[derive(Clone, Debug, Default)]
pub struct KernelRegistry {
    kernels: BTreeMap<&'static str, KernelDef>,
}

impl KernelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a kernel; a second kernel of the same name replaces the first.
    pub fn register(&mut self, def: KernelDef) {
        self.kernels.insert(def.name, def);
    }

    /// Looks a kernel up.
    pub fn get(&self, name: &str) -> Result<&KernelDef, BackendError> {
        self.kernels.get(name).ok_or_else(|| {
            BackendError::Usage(format!(
                "no kernel named `{name}` is registered; registered: {}",
                self.kernels.keys().copied().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// Registered kernels in name order.
    pub fn iter(&self) -> impl Iterator<Item = &KernelDef> {
        self.kernels.values()
    }
}

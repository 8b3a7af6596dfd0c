//! The CUDA backend's measurements: path bandwidths at open, and the probes `calibrate`
//! times machines with (copies, launches, host transfers). Kept apart from the `Backend`
//! implementation, which they only use.

use super::*;

impl CudaBackend {
    /// Measures the copy bandwidth of every ordered GPU pair (32 MiB, best of three after a
    /// warm-up): once per ordered pair of physical GPUs, and once per shared physical GPU for
    /// its logical GPUs (a device-to-device copy), reused for every logical pair.
    pub(super) fn measure_paths(&mut self) -> Result<Vec<Vec<u64>>, BackendError> {
        let n = self.devices.len() as u32;
        let mut table = vec![vec![0u64; n as usize]; n as usize];
        let mut measured: HashMap<(i32, i32), u64> = HashMap::new();
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    continue;
                }
                let key = (self.devices[a as usize].ordinal, self.devices[b as usize].ordinal);
                let bw = match measured.get(&key) {
                    Some(&bw) => bw,
                    None => {
                        let bytes = self.probe_bytes(a, b, 32 << 20)?;
                        let s = self.measure_copy_seconds(a, b, bytes, 3)?;
                        let bw = (bytes as f64 / s) as u64;
                        measured.insert(key, bw);
                        bw
                    }
                };
                table[a as usize][b as usize] = bw;
            }
        }
        Ok(table)
    }

    /// Measures each GPU's memory bandwidth `B_ii` with a device-to-device copy of 64 MiB
    /// (best of three after a warm-up; a copy reads and writes every byte, so twice the bytes
    /// per second), once per physical GPU and reused for its logical GPUs.
    pub(super) fn measure_local_bandwidth(&mut self) -> Result<Vec<u64>, BackendError> {
        let mut measured: HashMap<i32, u64> = HashMap::new();
        let mut out = Vec::with_capacity(self.devices.len());
        for d in 0..self.devices.len() as u32 {
            let ordinal = self.devices[d as usize].ordinal;
            let bw = match measured.get(&ordinal) {
                Some(&bw) => bw,
                None => {
                    let bytes = self.probe_bytes(d, d, 64 << 20)?;
                    let s = self.measure_copy_seconds(d, d, bytes, 3)?;
                    let bw = (2.0 * bytes as f64 / s) as u64;
                    measured.insert(ordinal, bw);
                    bw
                }
            };
            out.push(bw);
        }
        Ok(out)
    }

    /// The size of a bandwidth probe's buffers: `wanted`, or less where the GPU offers less
    /// (a memory cap, a nearly full GPU), so that opening the backend never fails on its
    /// probes before the graph's own allocation can say what does not fit (1 MiB at least).
    fn probe_bytes(&self, a: u32, b: u32, wanted: usize) -> Result<usize, BackendError> {
        let free = self.free_bytes(a)?.min(self.free_bytes(b)?) as usize;
        Ok(wanted.min(free / 4).max(1 << 20) & !3)
    }

    /// Best time in seconds of `reps` copies of `bytes` from GPU `a` to GPU `b` (the same
    /// GPU: a device-to-device copy), timed with CUDA events on a stream of `a`.
    pub fn measure_copy_seconds(
        &mut self,
        a: u32,
        b: u32,
        bytes: usize,
        reps: u32,
    ) -> Result<f64, BackendError> {
        let src = self.alloc(DeviceId(a), ElemType::U32, bytes / 4, "bandwidth probe")?;
        let dst = self.alloc(DeviceId(b), ElemType::U32, bytes / 4, "bandwidth probe")?;
        let stream = self.probe_stream(a)?;
        let slice = |buffer| BufferSlice::new(buffer, 0, bytes / 4);
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) + 1 {
            let t = self.time_on(stream, |me| {
                me.copy(stream, slice(src), slice(dst), None)?;
                Ok(())
            })?;
            best = best.min(t);
        }
        self.free(src)?;
        self.free(dst)?;
        Ok(best)
    }

    /// The stream the bandwidth probes of `device` use (created once).
    pub(super) fn probe_stream(&mut self, device: u32) -> Result<StreamId, BackendError> {
        if let Some(&s) = self.probe_streams.get(&device) {
            return Ok(s);
        }
        let s = self.create_stream(DeviceId(device), StreamPriority::Normal)?;
        self.probe_streams.insert(device, s);
        Ok(s)
    }

    /// Runs `f` (which enqueues work on `stream`) between two timing events and returns
    /// the GPU time between them in seconds, waiting for it.
    pub fn time_on(
        &mut self,
        stream: StreamId,
        f: impl FnOnce(&mut Self) -> Result<(), BackendError>,
    ) -> Result<f64, BackendError> {
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        self.make_current(device)?;
        let mut e0: sys::CUevent = std::ptr::null_mut();
        let mut e1: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out pointers; the stream's context is current.
        unsafe {
            ck(sys::cuEventCreate(&mut e0, 0), || "creating a timing event".into())?;
            ck(sys::cuEventCreate(&mut e1, 0), || "creating a timing event".into())?;
            ck(sys::cuEventRecord(e0, raw), || "recording a timing event".into())?;
        }
        f(self)?;
        self.make_current(device)?;
        let mut ms = 0f32;
        // SAFETY: both events were created above and are recorded on a live stream.
        unsafe {
            ck(sys::cuEventRecord(e1, raw), || "recording a timing event".into())?;
            ck(sys::cuEventSynchronize(e1), || "waiting for timed work".into())?;
            ck(sys::cuEventElapsedTime_v2(&mut ms, e0, e1), || "reading a timing".into())?;
            sys::cuEventDestroy_v2(e0);
            sys::cuEventDestroy_v2(e1);
        }
        self.check_kernel_error()?;
        // Timed work enqueued no tokens, but host writes may have left pending entries.
        self.reap_untokened()?;
        self.poll_kernel_timings()?;
        Ok(f64::from(ms) / 1e3)
    }

    /// Enqueues `count` launches of the empty kernel `sy_noop` (one block of one thread) on
    /// `stream`: the probe of launch overhead and kernel floor.
    pub fn launch_noops(&mut self, stream: StreamId, count: u32) -> Result<(), BackendError> {
        let (device, raw) = {
            let s = self.stream(stream)?;
            (s.device, s.raw)
        };
        let f = self.function(device, "sy_noop").ok_or_else(|| {
            BackendError::Device("kernels/common.cuh defines no `sy_noop`".into())
        })?;
        self.make_current(device)?;
        let mut args = kernels::pack_args(
            &Launch { kernel: "sy_noop", buffers: vec![], scalars: vec![], work_items: 0 },
            &[],
            0,
            self.error_dev,
        )?;
        let mut params: [*mut c_void; 1] = [(&mut args as *mut SyArgs).cast()];
        for _ in 0..count {
            // SAFETY: a function of this context's module with a matching argument block.
            ck(
                unsafe {
                    sys::cuLaunchKernel(
                        f,
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        raw,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                },
                || format!("launching `sy_noop` on gpu{device}"),
            )?;
        }
        Ok(())
    }

    /// GPU time in seconds of one `bytes` copy between pinned host memory and GPU `device`
    /// (`to_device`: host to device), best of `reps`, timed with events around the copy alone.
    pub fn measure_host_copy_seconds(
        &mut self,
        device: u32,
        bytes: usize,
        to_device: bool,
        reps: u32,
    ) -> Result<f64, BackendError> {
        let buf = self.alloc(DeviceId(device), ElemType::U32, bytes / 4, "host probe")?;
        let ptr = self.buffer(buf)?.ptr;
        let block = self.take_pinned(bytes)?;
        let stream = self.probe_stream(device)?;
        let raw = self.stream(stream)?.raw;
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) + 1 {
            let t = self.time_on(stream, |_| {
                // SAFETY: the pinned block and the buffer both hold `bytes`.
                let r = unsafe {
                    if to_device {
                        sys::cuMemcpyHtoDAsync_v2(ptr, block.ptr.cast(), bytes, raw)
                    } else {
                        sys::cuMemcpyDtoHAsync_v2(block.ptr.cast(), ptr, bytes, raw)
                    }
                };
                ck(r, || format!("copying {bytes} bytes between the host and gpu{device}"))
            })?;
            best = best.min(t);
        }
        self.pinned_free.push(block);
        self.free(buf)?;
        Ok(best)
    }
}

//! One small test per backend capability of the simulator, written against the `Backend`
//! trait object. Several check simulator-only facts (virtual time on links, staging through
//! the host where a topology has no peer path), and the test kernels have no CUDA version,
//! so these run on the simulator; the backend-generic tests that run on CUDA too (logical
//! GPUs included) are `tests/runtime_matrix.rs` and `tests/cuda_conformance.rs`.

use switchyard::backend::sim::{SimBackend, SimConfig};
use switchyard::backend::{
    Backend, BackendError, BufferSlice, CompletionKind, DeviceId, ElemType, HostData,
    KernelContext, KernelDef, KernelRegistry, Launch, QueueRef, RemoteOp, Scalar, StreamPriority,
    Token, queue,
};
use switchyard_sim::topology::Topology;

/// Test kernel: `buffer[i] += scalar` for every element, counting items.
fn add_scalar(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let add = ctx.scalar_u32(0)?;
    let [data] = ctx.buffers::<1>()?;
    let data = data.as_u32_mut()?;
    for x in data.iter_mut() {
        *x += add;
    }
    ctx.effects.items = data.len() as u64;
    Ok(())
}

/// Test kernel: one-sided atomic min of `value` into element 0 of the remote buffer arg 0,
/// and a push of `[value, value + 1]` into the remote queue (arg 1) with counters (arg 2).
fn remote_ops(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let value = ctx.scalar_u32(0)?;
    let ids = ctx.buffer_ids.to_vec();
    ctx.effects.remote.push(RemoteOp::atomic_min_u32(ids[0], 0, value));
    let queue = QueueRef { items: ids[1], counters: ids[2] };
    ctx.effects.remote.push(RemoteOp::push(queue, vec![value, value + 1]));
    Ok(())
}

fn registry() -> KernelRegistry {
    let mut r = KernelRegistry::new();
    r.register(KernelDef {
        name: "test_add_scalar",
        contract: "buffer[i] += scalar",
        sim: add_scalar,
        cuda_name: None,
        remote_args: &[],
    });
    r.register(KernelDef {
        name: "test_remote_ops",
        contract: "remote atomic min and remote push",
        sim: remote_ops,
        cuda_name: None,
        remote_args: &[0, 1, 2],
    });
    r
}

/// The simulator on `topology` with `gpus` GPUs, as a trait object.
fn backends(topology: &str, gpus: u32) -> Vec<Box<dyn Backend>> {
    let topology = Topology::bundled(topology).expect("bundled topology");
    vec![Box::new(
        SimBackend::new(topology, gpus, registry(), SimConfig::default()).expect("sim backend"),
    )]
}

fn read_u32(
    b: &mut dyn Backend,
    stream: switchyard::backend::StreamId,
    buf: switchyard::backend::BufferId,
    len: usize,
) -> Vec<u32> {
    b.read_to_host(stream, BufferSlice::new(buf, 0, len), Token(999)).unwrap();
    loop {
        let c = b.next_completion().unwrap().expect("read completes");
        if c.token == Token(999) {
            match c.kind {
                CompletionKind::HostRead(HostData::U32(v)) => return v,
                other => panic!("read returned {other:?}"),
            }
        }
    }
}

#[test]
fn memory_capacity_is_enforced_like_a_real_gpu() {
    for mut b in backends("dgx1-v100", 1) {
        let capacity = b.device_info(DeviceId(0)).memory_bytes;
        let half = (capacity / 2 / 4) as usize;
        b.alloc(DeviceId(0), ElemType::U32, half, "first half").unwrap();
        assert_eq!(b.memory_in_use_bytes(DeviceId(0)), half as u64 * 4);
        let err = b.alloc(DeviceId(0), ElemType::U32, half + 1024, "too much").unwrap_err();
        let message = err.to_string();
        assert!(message.contains("out of device memory on GPU 0"), "{message}");
        assert!(message.contains("too much"), "{message}");
    }
}

#[test]
fn host_write_then_kernel_then_host_read_round_trips() {
    for mut b in backends("dgx1-v100", 1) {
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let buf = b.alloc(DeviceId(0), ElemType::U32, 4, "data").unwrap();
        b.write_from_host(s, buf, 0, HostData::U32(vec![1, 2, 3, 4]), None).unwrap();
        let launch = Launch {
            kernel: "test_add_scalar",
            buffers: vec![buf],
            scalars: vec![Scalar::U32(10)],
            work_items: 4,
        };
        b.launch(s, launch, Some(Token(1))).unwrap();
        assert_eq!(read_u32(b.as_mut(), s, buf, 4), vec![11, 12, 13, 14]);
        assert!(b.now_ps() > 0, "time advances");
    }
}

#[test]
fn events_order_work_across_streams() {
    for mut b in backends("dgx1-v100", 1) {
        let s1 = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let s2 = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let buf = b.alloc(DeviceId(0), ElemType::U32, 1, "x").unwrap();
        // s2 waits for an event s1 records after writing 5, then adds 1.
        b.write_from_host(s1, buf, 0, HostData::U32(vec![5]), None).unwrap();
        let e = b.record_event(s1).unwrap();
        b.wait_event(s2, e).unwrap();
        let launch = Launch {
            kernel: "test_add_scalar",
            buffers: vec![buf],
            scalars: vec![Scalar::U32(1)],
            work_items: 1,
        };
        b.launch(s2, launch, None).unwrap();
        assert_eq!(read_u32(b.as_mut(), s2, buf, 1), vec![6]);
    }
}

#[test]
fn callbacks_complete_in_stream_order() {
    for mut b in backends("dgx1-v100", 1) {
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let buf = b.alloc(DeviceId(0), ElemType::U32, 1024, "x").unwrap();
        b.write_from_host(s, buf, 0, HostData::U32(vec![7; 1024]), Some(Token(1))).unwrap();
        b.host_callback(s, Token(2)).unwrap();
        let first = b.next_completion().unwrap().unwrap();
        let second = b.next_completion().unwrap().unwrap();
        assert_eq!((first.token, second.token), (Token(1), Token(2)));
        assert!(second.time_ps >= first.time_ps);
        assert!(b.next_completion().unwrap().is_none(), "nothing left");
    }
}

#[test]
fn peer_copies_move_data_and_take_time_on_the_link() {
    for mut b in backends("dgx1-v100", 2) {
        assert!(b.peer_access(DeviceId(0), DeviceId(1)));
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let src = b.alloc(DeviceId(0), ElemType::U32, 1 << 20, "src").unwrap();
        let dst = b.alloc(DeviceId(1), ElemType::U32, 1 << 20, "dst").unwrap();
        b.write_from_host(s, src, 0, HostData::U32((0..1 << 20).collect()), None).unwrap();
        let before = b.now_ps();
        b.copy(
            s,
            BufferSlice::new(src, 0, 1 << 20),
            BufferSlice::new(dst, 0, 1 << 20),
            Some(Token(5)),
        )
        .unwrap();
        let c = b.next_completion().unwrap().unwrap();
        assert_eq!(c.token, Token(5));
        assert_eq!(c.kind, CompletionKind::Copy { bytes: 4 << 20 });
        assert!(c.time_ps > before);
        let s1 = b.create_stream(DeviceId(1), StreamPriority::Normal).unwrap();
        let back = read_u32(b.as_mut(), s1, dst, 1 << 20);
        assert_eq!(back[12345], 12345);
        let stats = b.stats();
        assert!(stats.links.iter().any(|l| l.bytes >= 4 << 20), "{:?}", stats.links);
    }
}

#[test]
fn copies_without_peer_access_are_staged_through_the_host() {
    // The M60 tree has no peer access across QPI (seed 000 section 2.1).
    for mut b in backends("m60x8-pcie", 8) {
        let far = (1..8)
            .map(DeviceId)
            .find(|&d| !b.peer_access(DeviceId(0), d))
            .expect("a GPU across QPI");
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let src = b.alloc(DeviceId(0), ElemType::U32, 256, "src").unwrap();
        let dst = b.alloc(far, ElemType::U32, 256, "dst").unwrap();
        b.write_from_host(s, src, 0, HostData::U32(vec![3; 256]), None).unwrap();
        b.copy(s, BufferSlice::new(src, 0, 256), BufferSlice::new(dst, 0, 256), None).unwrap();
        let s_far = b.create_stream(far, StreamPriority::Normal).unwrap();
        let e = b.record_event(s).unwrap();
        b.wait_event(s_far, e).unwrap();
        assert_eq!(read_u32(b.as_mut(), s_far, dst, 256), vec![3; 256]);
    }
}

#[test]
fn kernels_issue_one_sided_remote_operations() {
    for mut b in backends("dgx1-v100", 2) {
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let s1 = b.create_stream(DeviceId(1), StreamPriority::Normal).unwrap();
        let target = b.alloc(DeviceId(1), ElemType::U32, 1, "min target").unwrap();
        let queue = b.alloc(DeviceId(1), ElemType::U32, 8, "queue").unwrap();
        let counter =
            b.alloc(DeviceId(1), ElemType::U64, queue::COUNTER_WORDS, "queue counters").unwrap();
        b.write_from_host(s1, target, 0, HostData::U32(vec![100]), Some(Token(1))).unwrap();
        b.next_completion().unwrap();
        let launch = Launch {
            kernel: "test_remote_ops",
            buffers: vec![target, queue, counter],
            scalars: vec![Scalar::U32(42)],
            work_items: 1,
        };
        b.launch(s, launch, Some(Token(2))).unwrap();
        let c = b.next_completion().unwrap().unwrap();
        assert!(matches!(c.kind, CompletionKind::Kernel(r) if r.remote_ops == 2));
        // The operations land after the kernel, over the link; drain everything.
        while b.next_completion().unwrap().is_some() {}
        assert_eq!(read_u32(b.as_mut(), s1, target, 1), vec![42]);
        assert_eq!(read_u32(b.as_mut(), s1, queue, 2), vec![42, 43]);
    }
}

#[test]
fn high_priority_streams_are_served_first() {
    for mut b in backends("dgx1-v100", 1) {
        let normal = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let high = b.create_stream(DeviceId(0), StreamPriority::High).unwrap();
        let blocker = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let buf = b.alloc(DeviceId(0), ElemType::U32, 1 << 16, "x").unwrap();
        let k = |v| Launch {
            kernel: "test_add_scalar",
            buffers: vec![buf],
            scalars: vec![Scalar::U32(v)],
            work_items: 1 << 16,
        };
        // Occupy the GPU, then queue one normal and one high-priority kernel behind it.
        b.launch(blocker, k(0), Some(Token(0))).unwrap();
        b.launch(normal, k(1), Some(Token(1))).unwrap();
        b.launch(high, k(2), Some(Token(2))).unwrap();
        let order: Vec<Token> =
            (0..3).map(|_| b.next_completion().unwrap().unwrap().token).collect();
        assert_eq!(order, vec![Token(0), Token(2), Token(1)]);
    }
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    for mut b in backends("dgx1-v100", 1) {
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let buf = b.alloc(DeviceId(0), ElemType::U32, 4, "x").unwrap();
        let err = b.read_to_host(s, BufferSlice::new(buf, 2, 4), Token(1)).unwrap_err();
        assert!(err.to_string().contains("host read of elements 2..6"), "{err}");
        let err = b
            .launch(
                s,
                Launch {
                    kernel: "no_such_kernel",
                    buffers: vec![],
                    scalars: vec![],
                    work_items: 0,
                },
                None,
            )
            .unwrap_err();
        assert!(err.to_string().contains("no kernel named `no_such_kernel`"), "{err}");
        assert!(b.create_stream(DeviceId(3), StreamPriority::Normal).is_err());
    }
}

#[test]
fn on_device_copies_report_their_bytes() {
    for mut b in backends("dgx1-v100", 1) {
        let s = b.create_stream(DeviceId(0), StreamPriority::Normal).unwrap();
        let src = b.alloc(DeviceId(0), ElemType::U32, 64, "src").unwrap();
        let dst = b.alloc(DeviceId(0), ElemType::U32, 64, "dst").unwrap();
        b.write_from_host(s, src, 0, HostData::U32((0..64).collect()), None).unwrap();
        b.copy(s, BufferSlice::new(src, 8, 16), BufferSlice::new(dst, 0, 16), Some(Token(1)))
            .unwrap();
        let c = b.next_completion().unwrap().unwrap();
        assert_eq!(c.kind, CompletionKind::Copy { bytes: 64 });
        assert_eq!(read_u32(b.as_mut(), s, dst, 2), vec![8, 9]);
    }
}

#[test]
fn path_bandwidth_follows_the_topology() {
    // DGX-1: GPUs 0-3 share two NVLinks (50 GB/s), 0-1 one (25 GB/s), 0-5 none (staged
    // through the host over PCIe 3.0 x16, about 16 GB/s).
    for backend in backends("dgx1-v100", 8) {
        let bw = |a: u32, b: u32| backend.path_bandwidth_bytes_per_s(DeviceId(a), DeviceId(b));
        assert_eq!(bw(0, 0), 0, "{}", backend.name());
        assert_eq!(bw(0, 3), 2 * bw(0, 1), "{}: two lanes vs one", backend.name());
        assert!(bw(0, 5) > 0 && bw(0, 5) < bw(0, 1), "{}: staged {}", backend.name(), bw(0, 5));
        assert_eq!(bw(0, 3), bw(3, 0), "{}: symmetric", backend.name());
    }
}

//! The backend capabilities Atos and GUM run on, one test each, on the simulator: persistent
//! kernels that advance in steps and see remote operations arrive at later steps, kernels
//! sharing a GPU's SMs, one-sided atomics with and without their old value, the queue
//! counter protocol, InfiniBand's per-message cost and missing remote min, mapped host memory
//! read without stream order, host work that costs virtual time, peer reads charged to the
//! path, and the topology's bandwidths. (The CUDA side of these is exercised by the runtimes'
//! GPU runs in `scripts/gpu_bench.sh`.)

use switchyard::backend::sim::{SimBackend, SimConfig};
use switchyard::backend::{
    AtomicOp, Backend, BackendError, BufferId, BufferSlice, Completion, CompletionKind, DeviceId,
    ElemType, Fetch, HostData, KernelContext, KernelDef, KernelRegistry, Launch, LaunchConfig,
    Notify, PeerRead, QueueRef, RemoteOp, RemotePath, Scalar, StepNext, StreamId, StreamPriority,
    Token, Word, queue,
};
use switchyard_sim::topology::Topology;

/// Persistent producer: at step `s < count` pushes item `s` into the queue of args 0/1 (on
/// another GPU) and continues; done after `count` steps. Scalar 0: count.
fn producer(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let count = u64::from(ctx.scalar_u32(0)?);
    let ids = ctx.buffer_ids.to_vec();
    if ctx.step < count {
        let q = QueueRef { items: ids[0], counters: ids[1] };
        ctx.effects.remote.push(RemoteOp::push(q, vec![ctx.step as u32]));
        ctx.effects.items = 1;
    }
    ctx.effects.next = if ctx.step + 1 < count { StepNext::Continue } else { StepNext::Done };
    Ok(())
}

/// Persistent consumer: pops what arrived in its queue (args 0/1), records for each item the
/// step that saw it in arg 2 (`seen[item] = step + 1`), counts steps in mapped arg 3[0] and
/// stops when the host sets mapped arg 3[1]; idles when there is nothing.
fn consumer(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let step = ctx.step;
    let [items, counters, seen, control] = ctx.buffers::<4>()?;
    let (items, counters) = (items.as_u32()?, counters.as_u64_mut()?);
    let control = control.as_u64_mut()?;
    control[0] = step + 1;
    let got = queue::pop(counters, u64::MAX);
    let seen = seen.as_u32_mut()?;
    for i in got.clone() {
        seen[items[i as usize] as usize] = step as u32 + 1;
    }
    let next = if control[1] != 0 {
        StepNext::Done
    } else if got.is_empty() {
        StepNext::Idle
    } else {
        StepNext::Continue
    };
    ctx.effects.items = got.end - got.start;
    ctx.effects.next = next;
    Ok(())
}

/// Persistent busy kernel: `scalar 0` steps of `scalar 1` items each.
fn busy(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let steps = u64::from(ctx.scalar_u32(0)?);
    ctx.effects.items = u64::from(ctx.scalar_u32(1)?);
    ctx.effects.next = if ctx.step + 1 < steps { StepNext::Continue } else { StepNext::Done };
    Ok(())
}

/// Records the wave width and seed it was given in arg 0 (`[resident_threads, seed]`, u64)
/// over two steps (`[.., .., seed of step 1]`).
fn shape_probe(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let (threads, seed, step) = (ctx.resident_threads, ctx.seed, ctx.step);
    let [out] = ctx.buffers::<1>()?;
    let out = out.as_u64_mut()?;
    if step == 0 {
        out[0] = threads;
        out[1] = seed;
        ctx.effects.next = StepNext::Continue;
    } else {
        out[2] = seed;
    }
    Ok(())
}

/// Issues the remote operations the test puts in thread-local storage.
fn issue(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    ctx.effects.remote = PLAN.with(|p| p.borrow().clone());
    Ok(())
}

thread_local! {
    static PLAN: std::cell::RefCell<Vec<RemoteOp>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads `scalar 0` bytes of the peer buffer arg 0.
fn peer_reader(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let bytes = ctx.scalar_u64(0)?;
    ctx.effects.peer_reads.push(PeerRead { arg: 0, bytes });
    Ok(())
}

/// Writes into its first argument the length it sees of its second, and a marker.
fn twice(ctx: &mut KernelContext<'_>) -> Result<(), BackendError> {
    let second = ctx.buffers[1].len() as u32;
    let first = ctx.buffers[0].as_u32_mut()?;
    first[0] = second;
    first[1] = 7;
    Ok(())
}

fn registry() -> KernelRegistry {
    let mut r = KernelRegistry::new();
    let defs: [(&'static str, switchyard::backend::kernel::SimKernelFn, &'static [usize]); 7] = [
        ("t_twice", twice, &[]),
        ("t_producer", producer, &[0, 1]),
        ("t_consumer", consumer, &[]),
        ("t_busy", busy, &[]),
        ("t_shape", shape_probe, &[]),
        ("t_issue", issue, &[0, 1, 2, 3, 4, 5]),
        ("t_peer_reader", peer_reader, &[0]),
    ];
    for (name, sim, remote_args) in defs {
        r.register(KernelDef { name, contract: "test", sim, cuda_name: None, remote_args });
    }
    r
}

fn sim(topology: &str, gpus: u32) -> SimBackend {
    let t = Topology::bundled(topology).expect("bundled topology");
    SimBackend::new(t, gpus, registry(), SimConfig::default()).expect("sim backend")
}

fn launch(kernel: &'static str, buffers: Vec<BufferId>, scalars: Vec<Scalar>) -> Launch {
    Launch { kernel, buffers, scalars, work_items: 1 }
}

fn stream(b: &mut SimBackend, d: u32) -> StreamId {
    b.create_stream(DeviceId(d), StreamPriority::Normal).unwrap()
}

/// Runs until `token` completes; returns its completion.
fn until(b: &mut SimBackend, token: Token) -> Completion {
    loop {
        let c = b.next_completion().unwrap().expect("the awaited operation completes");
        if c.token == token {
            return c;
        }
    }
}

fn read(b: &mut SimBackend, d: u32, buf: BufferId, len: usize) -> HostData {
    let s = stream(b, d);
    b.read_to_host(s, BufferSlice::new(buf, 0, len), Token(900)).unwrap();
    match until(b, Token(900)).kind {
        CompletionKind::HostRead(data) => data,
        other => panic!("read returned {other:?}"),
    }
}

fn new_queue(b: &mut SimBackend, d: u32, capacity: usize) -> QueueRef {
    QueueRef {
        items: b.alloc(DeviceId(d), ElemType::U32, capacity, "queue").unwrap(),
        counters: b
            .alloc(DeviceId(d), ElemType::U64, queue::COUNTER_WORDS, "queue counters")
            .unwrap(),
    }
}

#[test]
fn a_persistent_kernel_sees_remote_pushes_at_later_steps_and_stops_on_a_mapped_flag() {
    let mut b = sim("dgx-station-v100x4", 2);
    let q = new_queue(&mut b, 1, 16);
    let seen = b.alloc(DeviceId(1), ElemType::U32, 4, "seen").unwrap();
    let control = b.alloc_mapped(ElemType::U64, 2, "control").unwrap();
    let (s0, s1) = (stream(&mut b, 0), stream(&mut b, 1));
    let persistent = LaunchConfig::persistent(256, None);
    b.launch_with(
        s1,
        launch("t_consumer", vec![q.items, q.counters, seen, control], vec![]),
        persistent,
        Some(Token(1)),
    )
    .unwrap();
    b.launch_with(
        s0,
        launch("t_producer", vec![q.items, q.counters], vec![Scalar::U32(4)]),
        persistent,
        Some(Token(2)),
    )
    .unwrap();
    let produced = until(&mut b, Token(2));
    assert!(matches!(produced.kind, CompletionKind::Kernel(k) if k.remote_ops == 4));
    // Poll the mapped steps counter without stream order while the consumer runs; stop it
    // once every item was seen.
    let mut polls = 0u64;
    loop {
        b.host_work(2_000_000, Token(10 + polls)).unwrap();
        until(&mut b, Token(10 + polls));
        polls += 1;
        let HostData::U64(c) = b.read_mapped(control).unwrap() else { panic!("u64") };
        assert!(c[0] >= 1, "the consumer ran a step before any poll");
        let HostData::U64(counters) = read(&mut b, 1, q.counters, queue::COUNTER_WORDS) else {
            panic!("u64")
        };
        if counters[queue::START] == 4 {
            break;
        }
        assert!(polls < 1000, "the consumer never popped all four items");
    }
    b.write_mapped(control, 1, HostData::U64(vec![1])).unwrap();
    let done = until(&mut b, Token(1));
    assert!(matches!(done.kind, CompletionKind::Kernel(k) if k.items == 4));
    let HostData::U32(seen) = read(&mut b, 1, seen, 4) else { panic!("u32") };
    // Item 0 was issued at the end of the producer's first step: the consumer's first step
    // (which began with the launch) cannot have seen it.
    assert!(seen.iter().all(|&s| s >= 2), "items seen at steps {seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "FIFO arrival: {seen:?}");
}

#[test]
fn an_idle_persistent_kernel_with_nothing_left_is_reported_not_hung() {
    let mut b = sim("dgx-station-v100x4", 1);
    let q = new_queue(&mut b, 0, 4);
    let seen = b.alloc(DeviceId(0), ElemType::U32, 4, "seen").unwrap();
    let control = b.alloc_mapped(ElemType::U64, 2, "control").unwrap();
    let s = stream(&mut b, 0);
    let l = launch("t_consumer", vec![q.items, q.counters, seen, control], vec![]);
    b.launch_with(s, l, LaunchConfig::persistent(256, None), Some(Token(1))).unwrap();
    let err = b.next_completion().unwrap_err().to_string();
    assert!(err.contains("persistent kernel `t_consumer` is idle"), "{err}");
}

#[test]
fn kernels_with_sm_limits_run_side_by_side_and_a_whole_gpu_kernel_waits() {
    // Two persistent kernels on two streams of one V100 (80 SMs); the spans they occupied.
    let spans_of = |limits: [Option<u32>; 2]| {
        let t = Topology::bundled("dgx-station-v100x4").unwrap();
        let config = SimConfig { trace: true, ..SimConfig::default() };
        let mut b = SimBackend::new(t, 1, registry(), config).unwrap();
        let (s0, s1) = (stream(&mut b, 0), stream(&mut b, 0));
        for (i, (s, limit)) in [(s0, limits[0]), (s1, limits[1])].into_iter().enumerate() {
            let config = LaunchConfig::persistent(256, limit);
            let l = launch("t_busy", vec![], vec![Scalar::U32(20), Scalar::U32(1 << 16)]);
            b.launch_with(s, l, config, Some(Token(i as u64))).unwrap();
        }
        until(&mut b, Token(0));
        until(&mut b, Token(1));
        let spans: Vec<(u64, u64)> =
            b.trace().iter().map(|t| (t.start_ps, t.start_ps + t.duration_ps)).collect();
        assert_eq!(spans.len(), 2);
        (spans[0], spans[1], b.now_ps())
    };
    let overlap = |(a, b): ((u64, u64), (u64, u64))| a.0 < b.1 && b.0 < a.1;
    let (a, b, alone) = spans_of([None, None]);
    assert!(!overlap((a, b)), "whole-GPU kernels run one after the other: {a:?} {b:?}");
    let (a, b, shared) = spans_of([Some(40), Some(40)]);
    assert!(overlap((a, b)), "40 + 40 of 80 SMs run side by side: {a:?} {b:?}");
    assert!(shared < alone, "side by side {shared} ps, one after the other {alone} ps");
    let (a, b, _) = spans_of([Some(80), Some(1)]);
    assert!(!overlap((a, b)), "a kernel on all 80 SMs leaves no room: {a:?} {b:?}");
}

#[test]
fn kernels_learn_their_wave_width_and_a_reproducible_seed_per_step() {
    let run = |seed: u64| {
        let t = Topology::bundled("dgx-station-v100x4").unwrap();
        let config = SimConfig { seed, ..SimConfig::default() };
        let mut b = SimBackend::new(t, 1, registry(), config).unwrap();
        let out = b.alloc(DeviceId(0), ElemType::U64, 3, "out").unwrap();
        let s = stream(&mut b, 0);
        let persistent = LaunchConfig::persistent(512, Some(10));
        b.launch_with(s, launch("t_shape", vec![out], vec![]), persistent, Some(Token(1))).unwrap();
        until(&mut b, Token(1));
        let HostData::U64(v) = read(&mut b, 0, out, 3) else { panic!("u64") };
        v
    };
    let a = run(7);
    // 10 SMs x (2048 / 512 = 4 blocks) x 512 threads.
    assert_eq!(a[0], 10 * 4 * 512);
    assert_ne!(a[1], a[2], "each step has its own seed");
    assert_eq!(a, run(7), "the same run seed gives the same seeds");
    assert_ne!(a[1], run(8)[1], "another run seed gives other seeds");
}

#[test]
fn remote_atomics_return_or_act_on_their_old_value_a_round_trip_later() {
    let mut b = sim("dgx-station-v100x4", 2);
    let target = b.alloc(DeviceId(1), ElemType::U32, 2, "depths").unwrap();
    let wide = b.alloc(DeviceId(1), ElemType::U64, 1, "u64").unwrap();
    let float = b.alloc(DeviceId(1), ElemType::F32, 1, "f32").unwrap();
    let old = b.alloc(DeviceId(0), ElemType::U32, 2, "old values").unwrap();
    let q = new_queue(&mut b, 1, 8);
    let s1 = stream(&mut b, 1);
    b.write_from_host(s1, target, 0, HostData::U32(vec![10, 10]), Some(Token(1))).unwrap();
    b.write_from_host(s1, wide, 0, HostData::U64(vec![5]), Some(Token(2))).unwrap();
    until(&mut b, Token(2));
    let min_then_push = |index: usize, value: u32| RemoteOp::Atomic {
        buffer: target,
        index,
        op: AtomicOp::Min,
        value: Word::U32(value),
        fetch: Fetch::IfChanged(Box::new(RemoteOp::push(q, vec![index as u32, value]))),
        notify: None,
    };
    let plan = vec![
        // Improves element 0 (10 -> 3): pushes on improvement; does not improve element 1.
        min_then_push(0, 3),
        min_then_push(1, 12),
        RemoteOp::Atomic {
            buffer: target,
            index: 1,
            op: AtomicOp::Add,
            value: Word::U32(5),
            fetch: Fetch::Into { buffer: old, index: 1 },
            notify: None,
        },
        RemoteOp::Atomic {
            buffer: wide,
            index: 0,
            op: AtomicOp::Cas { expected: Word::U64(5) },
            value: Word::U64(9),
            fetch: Fetch::Discard,
            notify: None,
        },
        RemoteOp::atomic_add_f32(float, 0, 1.5),
    ];
    PLAN.with(|p| *p.borrow_mut() = plan);
    let s0 = stream(&mut b, 0);
    let l = launch("t_issue", vec![target, wide, float, q.items, q.counters, old], vec![]);
    b.launch(s0, l, Some(Token(3))).unwrap();
    let issued = until(&mut b, Token(3)).time_ps;
    while b.next_completion().unwrap().is_some() {}
    let landed = b.now_ps();
    assert!(landed > issued, "the push on improvement travels after the reply");
    assert_eq!(read(&mut b, 1, target, 2), HostData::U32(vec![3, 15]));
    assert_eq!(read(&mut b, 0, old, 2), HostData::U32(vec![0, 10]), "old value of the add");
    assert_eq!(read(&mut b, 1, wide, 1), HostData::U64(vec![9]), "CAS swapped");
    assert_eq!(read(&mut b, 1, float, 1), HostData::F32(vec![1.5]));
    let HostData::U64(c) = read(&mut b, 1, q.counters, queue::COUNTER_WORDS) else { panic!("u64") };
    assert_eq!(c[queue::END], 2, "one push (of two words), only for the improvement");
    assert_eq!(read(&mut b, 1, q.items, 2), HostData::U32(vec![0, 3]));
}

#[test]
fn a_push_that_overflows_a_queue_is_counted_not_lost() {
    let mut b = sim("dgx-station-v100x4", 2);
    let q = new_queue(&mut b, 1, 3);
    PLAN.with(|p| {
        *p.borrow_mut() = vec![RemoteOp::push(q, vec![1, 2]), RemoteOp::push(q, vec![3, 4])]
    });
    let s0 = stream(&mut b, 0);
    b.launch(s0, launch("t_issue", vec![q.items, q.counters], vec![]), None).unwrap();
    while b.next_completion().unwrap().is_some() {}
    let HostData::U64(c) = read(&mut b, 1, q.counters, queue::COUNTER_WORDS) else { panic!("u64") };
    assert_eq!((c[queue::END], queue::overflowed(&c)), (2, 2), "stored + refused = pushed");
}

#[test]
fn infiniband_charges_a_set_up_per_message_and_has_no_remote_min() {
    let mut b = sim("summit-ib-x8", 2);
    assert_eq!(b.remote_path(DeviceId(0), DeviceId(1)), RemotePath::Network);
    let target = b.alloc(DeviceId(1), ElemType::U32, 1, "depth").unwrap();
    PLAN.with(|p| *p.borrow_mut() = vec![RemoteOp::atomic_min_u32(target, 0, 1)]);
    let s0 = stream(&mut b, 0);
    b.launch(s0, launch("t_issue", vec![target], vec![]), None).unwrap();
    let err = loop {
        match b.next_completion() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("a remote min over InfiniBand was accepted"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(err.contains("no remote min/max") && err.contains("InfiniBand"), "{err}");

    // Ten one-item pushes cost ten set-ups; one ten-item push costs one.
    let time_of = |batches: usize| {
        let mut b = sim("summit-ib-x8", 2);
        let q = new_queue(&mut b, 1, 16);
        let per = 10 / batches;
        let plan = (0..batches).map(|i| RemoteOp::push(q, vec![i as u32; per])).collect();
        PLAN.with(|p| *p.borrow_mut() = plan);
        let s0 = stream(&mut b, 0);
        b.launch(s0, launch("t_issue", vec![q.items, q.counters], vec![]), None).unwrap();
        while b.next_completion().unwrap().is_some() {}
        b.now_ps()
    };
    let (eager, batched) = (time_of(10), time_of(1));
    // summit-ib-x8's EDR set-up is 5 us per message.
    assert!(eager >= batched + 9 * 5_000_000, "eager {eager} ps, batched {batched} ps");
}

/// Atos once counted its termination records with atomics on mapped host memory: on a real
/// GPU compute-sanitizer rejects them ("Invalid __global__ system-scoped atomic") and the
/// launch fails. The simulator refuses them too; plain stores there are fine.
#[test]
fn kernels_may_not_apply_atomics_to_mapped_host_memory() {
    let issue_and_wait = |b: &mut SimBackend, plan: Vec<RemoteOp>, args: Vec<BufferId>| {
        PLAN.with(|p| *p.borrow_mut() = plan);
        let s0 = stream(b, 0);
        b.launch(s0, launch("t_issue", args, vec![]), None).unwrap();
        loop {
            match b.next_completion() {
                Ok(Some(_)) => continue,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e.to_string()),
            }
        }
    };
    let notify = |buffer| Some(Notify { buffer, index: 1, amount: 1 });
    let add = |buffer, notify| RemoteOp::Atomic {
        buffer,
        index: 0,
        op: AtomicOp::Add,
        value: Word::U64(1),
        fetch: Fetch::Discard,
        notify,
    };
    for case in 0..3 {
        // A failed launch leaves its backend unusable: a fresh one per case.
        let mut b = sim("dgx-station-v100x4", 2);
        let host = b.alloc_mapped(ElemType::U64, 4, "termination counts").unwrap();
        let device = b.alloc(DeviceId(1), ElemType::U64, 4, "device counts").unwrap();
        let q = new_queue(&mut b, 1, 8);
        let (plan, what) = match case {
            0 => (vec![add(host, None)], "a remote atomic"),
            1 => (vec![add(device, notify(host))], "a notification"),
            _ => {
                let push = RemoteOp::Push { queue: q, items: vec![1, 2], notify: notify(host) };
                (vec![push], "a notification")
            }
        };
        let err = issue_and_wait(&mut b, plan, vec![host, device, q.items, q.counters])
            .expect_err("an atomic on mapped host memory is refused");
        assert!(
            err.contains(what)
                && err.contains("`termination counts`, mapped host memory")
                && err.contains("plain stores"),
            "{err}"
        );
    }
    // The same counts in device memory, published to host memory with a plain store.
    let mut b = sim("dgx-station-v100x4", 2);
    let host = b.alloc_mapped(ElemType::U64, 4, "termination counts").unwrap();
    let device = b.alloc(DeviceId(1), ElemType::U64, 4, "device counts").unwrap();
    let store = RemoteOp::Store { buffer: host, offset: 2, data: HostData::U64(vec![7]) };
    issue_and_wait(&mut b, vec![add(device, notify(device)), store], vec![host, device])
        .expect("device atomics and host stores are fine");
    let HostData::U64(h) = b.read_mapped(host).unwrap() else { panic!("u64") };
    assert_eq!(h, vec![0, 0, 7, 0]);
    assert_eq!(read(&mut b, 1, device, 4), HostData::U64(vec![1, 1, 0, 0]));
}

#[test]
fn host_work_costs_the_stated_virtual_time() {
    let mut b = sim("dgx-station-v100x4", 1);
    b.host_work(123_456, Token(5)).unwrap();
    let c = b.next_completion().unwrap().unwrap();
    assert_eq!((c.token, c.kind, c.time_ps), (Token(5), CompletionKind::HostWork, 123_456));
}

/// The calibrated 4-H100 machine: its GPU model has a host model (`launch_issue_ns` and a
/// cost per operation kind).
fn calibrated_h100x4() -> Topology {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/topologies/calibrated/h100-nvswitch-x4.toml");
    Topology::load(path).expect("calibrated topology")
}

#[test]
fn the_host_sees_a_completion_sync_overhead_after_it_happened() {
    // What a runtime that waits for a kernel before its next launch pays per round trip
    // (seed 002's superstep): the completion keeps the time the GPU finished, the host's
    // clock is the GPU model's sync_overhead later (on a machine with a host model).
    let t = calibrated_h100x4();
    let sync = t.gpus[0].model.sync_overhead_ps();
    assert!(sync > 0, "the calibrated H100 model has a sync overhead");
    let mut b = SimBackend::new(t, 1, registry(), SimConfig::default()).expect("sim backend");
    let s = stream(&mut b, 0);
    b.launch(s, launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]), Some(Token(7)))
        .unwrap();
    let c = until(&mut b, Token(7));
    assert!(c.time_ps > 0);
    assert_eq!(b.now_ps(), c.time_ps + sync, "observed sync_overhead after completion");
    // A host callback is observed the same way; host work is the host's own and is not.
    b.host_callback(s, Token(8)).unwrap();
    let c = until(&mut b, Token(8));
    assert_eq!(b.now_ps(), c.time_ps + sync);
    let before = b.now_ps();
    b.host_work(1_000, Token(9)).unwrap();
    assert_eq!(until(&mut b, Token(9)).time_ps, before + 1_000);
    assert_eq!(b.now_ps(), before + 1_000);
    // Without a host model (every bundled machine) the host observes at once.
    let mut free = sim("dgx-station-v100x4", 1);
    let s = stream(&mut free, 0);
    free.launch(s, launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]), Some(Token(7)))
        .unwrap();
    let c = until(&mut free, Token(7));
    assert_eq!(free.now_ps(), c.time_ps, "no host model: observed at completion");
}

#[test]
fn one_host_thread_issues_every_gpus_launches_one_after_another() {
    // The calibrated H100 machine charges the measured host issue of a launch; the bundled
    // ones leave issuing free.
    let t = calibrated_h100x4();
    let issue = t.gpus[0].model.host.expect("the calibrated H100 has a host model").launch_ps;
    assert!(issue > 0, "the calibrated H100 model has a launch issue time");
    let times = |b: &mut SimBackend| {
        let (s0, s1) = (stream(b, 0), stream(b, 1));
        for (s, token) in [(s0, Token(1)), (s1, Token(2))] {
            let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
            b.launch(s, l, Some(token)).unwrap();
        }
        (until(b, Token(1)).time_ps, until(b, Token(2)).time_ps)
    };
    let mut b = SimBackend::new(t, 2, registry(), SimConfig::default()).expect("sim backend");
    let (first, second) = times(&mut b);
    assert_eq!(second, first + issue, "gpu1's launch waits for the host to issue gpu0's");
    let mut free = sim("dgx-station-v100x4", 2);
    let (first, second) = times(&mut free);
    assert_eq!(first, second, "without an issue time both launches start at once");
}

#[test]
fn a_kernel_starts_its_launchs_lead_into_the_launch_and_the_host_stays_busy_for_all_of_it() {
    // The CUDA backend records a kernel's start timing event before its cuLaunchKernel
    // calls, so the span a kernel cost is fitted on holds the rest of the launch's host
    // time: the calibrated H100's kernel joins its stream `launch_lead` into the launch
    // (not after all of it), while an operation issued next still waits for the whole
    // launch.
    let t = calibrated_h100x4();
    let host = t.gpus[0].model.host.expect("the calibrated H100 has a host model");
    assert!(host.launch_lead_ps < host.launch_ps, "{host:?}");
    let mut whole = t.clone();
    for g in &mut whole.gpus {
        let h = g.model.host.as_mut().expect("host model");
        h.launch_lead_ps = h.launch_ps;
    }
    let times = |t: &Topology| {
        let mut b =
            SimBackend::new(t.clone(), 2, registry(), SimConfig::default()).expect("sim backend");
        let (s0, s1) = (stream(&mut b, 0), stream(&mut b, 1));
        for (s, token) in [(s0, Token(1)), (s1, Token(2))] {
            let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
            b.launch(s, l, Some(token)).unwrap();
        }
        (until(&mut b, Token(1)).time_ps, until(&mut b, Token(2)).time_ps)
    };
    let (lead0, lead1) = times(&t);
    let (whole0, whole1) = times(&whole);
    assert_eq!(whole0, lead0 + host.launch_ps - host.launch_lead_ps, "gpu0's kernel starts early");
    assert_eq!(lead1, lead0 + host.launch_ps, "gpu1's launch still waits for all of gpu0's");
    assert_eq!(whole1, whole0 + host.launch_ps);
}

#[test]
fn a_host_callback_costs_the_host_an_event_record_not_a_launch() {
    // The CUDA backend's host_callback records one event after the stream's work; a launch
    // issued after a callback waits for that record only.
    let t = calibrated_h100x4();
    let host = t.gpus[0].model.host.expect("the calibrated H100 has a host model");
    assert!(host.record_ps < host.launch_ps, "{host:?}");
    let done = |callback: bool| {
        let mut b =
            SimBackend::new(t.clone(), 2, registry(), SimConfig::default()).expect("sim backend");
        let (s0, s1) = (stream(&mut b, 0), stream(&mut b, 1));
        if callback {
            b.host_callback(s0, Token(9)).unwrap();
        }
        let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
        b.launch(s1, l, Some(Token(1))).unwrap();
        until(&mut b, Token(1)).time_ps
    };
    assert_eq!(done(true), done(false) + host.record_ps);
}

#[test]
fn the_host_pays_each_operation_kinds_own_issue_cost() {
    // The calibrated H100's host costs differ by kind (the CUDA host profile: a launch
    // 12.6 us, an event record 0.5 us, an event wait 2.4 us): a launch issued after a record
    // and a wait starts later by exactly their costs, not by two launches' worth.
    let t = calibrated_h100x4();
    let host = t.gpus[0].model.host.expect("the calibrated H100 has a host model");
    assert!(host.record_ps < host.wait_ps && host.wait_ps < host.launch_ps, "{host:?}");
    let done = |before: bool| {
        let mut b =
            SimBackend::new(t.clone(), 2, registry(), SimConfig::default()).expect("sim backend");
        let (s0, s1) = (stream(&mut b, 0), stream(&mut b, 1));
        if before {
            let e = b.record_event(s0).unwrap();
            b.wait_event(s0, e).unwrap();
        }
        let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
        b.launch(s1, l, Some(Token(1))).unwrap();
        until(&mut b, Token(1)).time_ps
    };
    assert_eq!(done(true), done(false) + host.record_ps + host.wait_ps);
}

#[test]
fn each_completion_the_host_takes_costs_it_an_event_query_per_busy_stream() {
    // The CUDA backend's host queries the oldest outstanding operation of every stream
    // that has one on each completion it takes (`poll_query_ns`): a runtime that launches,
    // takes the completion and launches again pays that before its next launch, so N
    // rounds end N - 1 polls later than with free queries; with a second stream busy
    // (a long kernel on gpu1) each poll queries two streams.
    let t = calibrated_h100x4();
    let query = t.gpus[0].model.host.expect("the calibrated H100 has a host model").poll_query_ps;
    assert!(query > 0, "the calibrated H100 model charges an event query");
    let rounds = |t: &Topology, n: u64, other_busy: bool| {
        let mut b =
            SimBackend::new(t.clone(), 2, registry(), SimConfig::default()).expect("sim backend");
        let s = stream(&mut b, 0);
        if other_busy {
            let long = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1 << 30)]);
            let s1 = stream(&mut b, 1);
            b.launch(s1, long, Some(Token(1000))).unwrap();
        }
        let mut last = 0;
        for i in 0..n {
            let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
            b.launch(s, l, Some(Token(i))).unwrap();
            last = until(&mut b, Token(i)).time_ps;
        }
        last
    };
    let mut free = t.clone();
    for g in &mut free.gpus {
        g.model.host.as_mut().expect("host model").poll_query_ps = 0;
    }
    for n in [1, 2, 7] {
        assert_eq!(rounds(&t, n, false), rounds(&free, n, false) + (n - 1) * query, "{n} rounds");
        assert_eq!(
            rounds(&t, n, true),
            rounds(&free, n, true) + (n - 1) * 2 * query,
            "{n} rounds beside a busy stream"
        );
    }
}

#[test]
fn peer_reads_move_over_the_path_and_overlap_the_kernel() {
    // DGX-1: GPUs 0 and 3 share two NVLinks, 0 and 1 one.
    let time_of = |peer: u32| {
        let mut b = sim("dgx1-v100", 4);
        let remote = b.alloc(DeviceId(peer), ElemType::U32, 1, "adjacency").unwrap();
        let s = stream(&mut b, 0);
        let l = launch("t_peer_reader", vec![remote], vec![Scalar::U64(64 << 20)]);
        b.launch(s, l, Some(Token(1))).unwrap();
        let t = until(&mut b, Token(1)).time_ps;
        let bw = b.path_bandwidth_bytes_per_s(DeviceId(0), DeviceId(peer));
        (t, bw)
    };
    let ((one_lane, bw1), (two_lanes, bw2)) = (time_of(1), time_of(3));
    assert_eq!(bw2, 2 * bw1);
    // 64 MiB at 25 GB/s is 2.7 ms; at 50 GB/s 1.3 ms: the reads dominate an empty kernel.
    let floor = |bw: u64| (64u128 << 20) * 1_000_000_000_000 / u128::from(bw);
    assert!(u128::from(one_lane) >= floor(bw1), "{one_lane} ps");
    assert!(one_lane > two_lanes + two_lanes / 2, "one lane {one_lane}, two {two_lanes}");
}

#[test]
fn the_topology_gives_memory_and_path_bandwidths_and_remote_paths() {
    let b = sim("dgx1-v100", 8);
    assert_eq!(b.memory_bandwidth_bytes_per_s(DeviceId(0)), 900_000_000_000);
    assert_eq!(b.remote_path(DeviceId(2), DeviceId(2)), RemotePath::Local);
    assert_eq!(b.remote_path(DeviceId(0), DeviceId(1)), RemotePath::Peer);
    let far = (1..8).map(DeviceId).find(|&d| !b.peer_access(DeviceId(0), d)).expect("far GPU");
    assert_eq!(b.remote_path(DeviceId(0), far), RemotePath::Staged);
}

#[test]
fn mapped_memory_is_not_for_stream_operations() {
    let mut b = sim("dgx-station-v100x4", 1);
    let m = b.alloc_mapped(ElemType::U32, 4, "flags").unwrap();
    let s = stream(&mut b, 0);
    let err = b.read_to_host(s, BufferSlice::new(m, 0, 4), Token(1)).unwrap_err().to_string();
    assert!(err.contains("`flags` is mapped host memory") && err.contains("read_mapped"), "{err}");
    let dev = b.alloc(DeviceId(0), ElemType::U32, 4, "device").unwrap();
    let err = b.read_mapped(dev).unwrap_err().to_string();
    assert!(err.contains("`device` is device memory"), "{err}");
    let l = launch("t_busy", vec![], vec![Scalar::U32(1), Scalar::U32(1)]);
    let zero = LaunchConfig { sm_limit: Some(0), ..LaunchConfig::default() };
    let err = b.launch_with(s, l, zero, None).unwrap_err().to_string();
    assert!(err.contains("0 SMs"), "{err}");
}

#[test]
fn a_copy_from_mapped_memory_is_charged_as_a_host_write_over_the_host_link() {
    // Groute CC's edge segments: a DMA from pinned host memory to a GPU must cost what a
    // host write of the same bytes costs (the PCIe/host link, not device memory) and carry
    // the same bytes over the same links.
    let len = 1 << 20;
    let data: Vec<u32> = (0..len as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let run = |how: &str| {
        let mut b = sim("dgx-station-v100x4", 2);
        let dev = b.alloc(DeviceId(1), ElemType::U32, len, "device").unwrap();
        let s = stream(&mut b, 1);
        match how {
            "mapped" => {
                let m = b.alloc_mapped(ElemType::U32, len, "pinned").unwrap();
                b.write_mapped(m, 0, HostData::U32(data.clone())).unwrap();
                let (src, dst) = (BufferSlice::new(m, 0, len), BufferSlice::new(dev, 0, len));
                b.copy(s, src, dst, Some(Token(1))).unwrap();
            }
            "write" => {
                b.write_from_host(s, dev, 0, HostData::U32(data.clone()), Some(Token(1))).unwrap()
            }
            _ => {
                let local = b.alloc(DeviceId(1), ElemType::U32, len, "local").unwrap();
                let (src, dst) = (BufferSlice::new(local, 0, len), BufferSlice::new(dev, 0, len));
                b.copy(s, src, dst, Some(Token(1))).unwrap();
            }
        }
        let done = until(&mut b, Token(1));
        assert_eq!(done.kind, CompletionKind::Copy { bytes: 4 * len as u64 }, "{how}");
        let links = b.stats().links;
        (done.time_ps, links, read(&mut b, 1, dev, len))
    };
    let (mapped_ps, mapped_links, landed) = run("mapped");
    let (write_ps, write_links, _) = run("write");
    let (local_ps, local_links, _) = run("local");
    assert_eq!(landed, HostData::U32(data.clone()), "the copy delivers the mapped contents");
    assert_eq!(mapped_ps, write_ps, "a mapped copy costs a host write of its bytes");
    assert_eq!(mapped_links, write_links, "and crosses the same links with the same bytes");
    assert!(mapped_links.iter().any(|l| l.bytes >= 4 * len as u64), "{mapped_links:?}");
    assert!(
        local_links.is_empty() && local_ps < mapped_ps,
        "device-local: {local_ps} ps, mapped {mapped_ps} ps, {local_links:?}"
    );

    // The other direction lands in mapped memory, readable without stream order; a copy
    // between two mapped buffers is refused.
    let mut b = sim("dgx-station-v100x4", 1);
    let dev = b.alloc(DeviceId(0), ElemType::U32, 4, "device").unwrap();
    let s = stream(&mut b, 0);
    b.write_from_host(s, dev, 0, HostData::U32(vec![4, 3, 2, 1]), None).unwrap();
    let m = b.alloc_mapped(ElemType::U32, 6, "pinned").unwrap();
    b.copy(s, BufferSlice::new(dev, 1, 3), BufferSlice::new(m, 2, 3), Some(Token(2))).unwrap();
    until(&mut b, Token(2));
    assert_eq!(b.read_mapped(m).unwrap(), HostData::U32(vec![0, 0, 3, 2, 1, 0]));
    let other = b.alloc_mapped(ElemType::U32, 6, "other").unwrap();
    let err = b
        .copy(s, BufferSlice::new(m, 0, 6), BufferSlice::new(other, 0, 6), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("both are mapped host memory"), "{err}");
}

#[test]
fn a_buffer_named_twice_is_lent_once_and_keeps_what_the_kernel_wrote() {
    // An Atos GPU's own peer slots name its own buffers again: the kernel gets the buffer at
    // its first position and an empty one after (not a zero-filled copy of its length).
    let mut b = sim("dgx-station-v100x4", 1);
    let buf = b.alloc(DeviceId(0), ElemType::U32, 4, "twice").unwrap();
    let s = stream(&mut b, 0);
    b.launch(s, launch("t_twice", vec![buf, buf], vec![]), Some(Token(1))).unwrap();
    until(&mut b, Token(1));
    assert_eq!(read(&mut b, 0, buf, 4), HostData::U32(vec![0, 7, 0, 0]));
}

//! Groute's constructs on the simulator backend: links (packets, pipelined receive buffers,
//! back-pressure, shutdown), routers (policies, the multiplexer's first-available
//! assignment with stale copies dropped, broadcast) and their errors.

use switchyard::backend::sim::{SimBackend, SimConfig};
use switchyard::backend::{Backend, BufferSlice, ElemType, HostData, KernelRegistry};
use switchyard::runtime::groute::{
    Context, Endpoint, Event, LinkConfig, Policy, ReceivedData, Route, RouteMode, Segment,
    SegmentData,
};
use switchyard_sim::topology::Topology;

fn sim(topology: &str, gpus: u32) -> SimBackend {
    let t = Topology::bundled(topology).expect("bundled topology");
    SimBackend::new(t, gpus, KernelRegistry::new(), SimConfig::default()).expect("backend")
}

fn config(packet_elems: usize, buffers: u32) -> LinkConfig {
    LinkConfig { elem: ElemType::U32, packet_elems, buffers }
}

fn host_segment(data: Vec<u32>, tag: u64) -> Segment {
    Segment::new(SegmentData::Host(HostData::U32(data)), tag)
}

/// Reads a device receive buffer's packet to the host, keeping other events for later.
fn read(
    ctx: &mut Context<'_, SimBackend>,
    slice: BufferSlice,
    later: &mut std::collections::VecDeque<Event>,
) -> Vec<u32> {
    let stream = ctx
        .backend
        .create_stream(
            switchyard::backend::DeviceId(0),
            switchyard::backend::StreamPriority::Normal,
        )
        .unwrap();
    let t = ctx.token();
    ctx.backend.read_to_host(stream, slice, t).unwrap();
    loop {
        match ctx.next_event().unwrap() {
            Some(Event::Completion(c)) if c.token == t => match c.kind {
                switchyard::backend::CompletionKind::HostRead(HostData::U32(v)) => return v,
                other => panic!("{other:?}"),
            },
            Some(other) => later.push_back(other),
            None => panic!("read never completed"),
        }
    }
}

#[test]
fn a_link_cuts_segments_into_packets_and_its_receive_buffers_exert_back_pressure() {
    let mut backend = sim("dgx1-v100", 1);
    let mut ctx = Context::new(&mut backend);
    let link = ctx.link(Endpoint::Host, Endpoint::gpu(0), config(3, 2)).unwrap();
    let data: Vec<u32> = (100..110).collect();
    ctx.send(link, host_segment(data.clone(), 7)).unwrap();
    ctx.shutdown(link).unwrap();
    // Without releases, only two packets (the two receive buffers) arrive.
    let mut held = Vec::new();
    while let Some(e) = ctx.next_event().unwrap() {
        match e {
            Event::Received(r) => held.push(r),
            other => panic!("nothing but packets before a release: {other:?}"),
        }
    }
    assert_eq!(held.len(), 2, "back-pressure: two receive buffers");
    // Release one at a time and collect everything.
    let mut got = vec![0u32; data.len()];
    let mut sent = false;
    let mut shut = false;
    let mut later: std::collections::VecDeque<Event> =
        held.into_iter().map(Event::Received).collect();
    loop {
        let event = match later.pop_front() {
            Some(e) => Some(e),
            None => ctx.next_event().unwrap(),
        };
        match event {
            Some(Event::Received(r)) => {
                assert!(!shut, "no packet after the shutdown");
                assert!(r.len <= 3 && r.tag == 7 && r.source == Endpoint::Host);
                let ReceivedData::Device(slice) = r.data.clone() else { panic!("device packet") };
                let v = read(&mut ctx, slice, &mut later);
                got[r.offset..r.offset + r.len].copy_from_slice(&v);
                ctx.release(&r).unwrap();
            }
            Some(Event::Sent { tag, .. }) => {
                assert_eq!(tag, 7);
                sent = true;
            }
            Some(Event::Shutdown { link: l }) => {
                assert_eq!(l, link);
                shut = true;
            }
            Some(other) => panic!("{other:?}"),
            None => break,
        }
    }
    assert_eq!(got, data);
    assert!(sent && shut);
    let traffic = &ctx.traffic()[link.0 as usize];
    assert_eq!((traffic.packets, traffic.elements, traffic.bytes), (4, 10, 40));
}

#[test]
fn first_available_routing_feeds_the_receiver_that_releases_and_drops_stale_copies() {
    let mut backend = sim("dgx1-v100", 2);
    let mut ctx = Context::new(&mut backend);
    let gpus = ctx.devices();
    let router = ctx
        .router(vec![Endpoint::Host], gpus.clone(), config(4, 1), Box::new(Policy::AnyAvailable))
        .unwrap();
    ctx.route(router, Endpoint::Host, host_segment((0..40).collect(), 1)).unwrap();
    ctx.shutdown_input(router, Endpoint::Host).unwrap();
    // GPU 0 releases every packet at once; GPU 1 holds its first packet forever.
    let mut per_gpu = [0usize; 2];
    let mut offsets = Vec::new();
    let mut shutdowns = 0;
    while let Some(e) = ctx.next_event().unwrap() {
        match e {
            Event::Received(r) => {
                let g = ctx.link_destination(r.link).device().unwrap().0 as usize;
                per_gpu[g] += 1;
                offsets.push(r.offset);
                if g == 0 {
                    ctx.release(&r).unwrap();
                }
            }
            Event::Shutdown { .. } => shutdowns += 1,
            Event::Sent { .. } | Event::Completion(_) => {}
        }
    }
    offsets.sort();
    assert_eq!(offsets, (0..40).step_by(4).collect::<Vec<_>>(), "every packet exactly once");
    assert_eq!(per_gpu, [9, 1], "the releasing GPU takes all but the held one");
    assert_eq!(shutdowns, 2);
}

#[test]
fn broadcast_routing_copies_every_packet_to_every_other_destination() {
    let mut backend = sim("m60x8-pcie", 4);
    let mut ctx = Context::new(&mut backend);
    let gpus = ctx.devices();
    let src = ctx.backend.alloc(gpus[0].device().unwrap(), ElemType::U32, 8, "src").unwrap();
    let router =
        ctx.router(vec![gpus[0]], gpus.clone(), config(4, 2), Box::new(Policy::Broadcast)).unwrap();
    ctx.route(router, gpus[0], Segment::new(SegmentData::Device(BufferSlice::new(src, 0, 8)), 3))
        .unwrap();
    let mut per_gpu = [0usize; 4];
    let mut sent = 0;
    while let Some(e) = ctx.next_event().unwrap() {
        match e {
            Event::Received(r) => {
                per_gpu[ctx.link_destination(r.link).device().unwrap().0 as usize] += 1;
                ctx.release(&r).unwrap();
            }
            Event::Sent { source, tag } => {
                assert_eq!((source, tag), (gpus[0], 3));
                sent += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(per_gpu, [0, 2, 2, 2]);
    assert_eq!(sent, 1, "one Sent when every copy has landed");
}

#[test]
fn gathering_to_the_host_delivers_the_data() {
    let mut backend = sim("dgx1-v100", 2);
    let mut ctx = Context::new(&mut backend);
    let gpus = ctx.devices();
    let router = ctx
        .router(
            gpus.clone(),
            vec![Endpoint::Host],
            config(5, 2),
            Box::new(Policy::Gather { to: Endpoint::Host }),
        )
        .unwrap();
    let mut expected = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let d = g.device().unwrap();
        let buf = ctx.backend.alloc(d, ElemType::U32, 7, "out").unwrap();
        let s = ctx.backend.create_stream(d, switchyard::backend::StreamPriority::Normal).unwrap();
        let v: Vec<u32> = (0..7).map(|x| x + 10 * i as u32).collect();
        expected.extend(v.clone());
        ctx.backend.write_from_host(s, buf, 0, HostData::U32(v), None).unwrap();
        let ready = Some(ctx.backend.record_event(s).unwrap());
        let data = SegmentData::Device(BufferSlice::new(buf, 0, 7));
        ctx.route(router, *g, Segment { data, tag: i as u64, ready }).unwrap();
        ctx.shutdown_input(router, *g).unwrap();
    }
    let mut got = Vec::new();
    let mut shut = false;
    while let Some(e) = ctx.next_event().unwrap() {
        match e {
            Event::Received(r) => {
                let ReceivedData::Host(HostData::U32(v)) = r.data else { panic!("host data") };
                got.extend(v);
            }
            Event::Shutdown { .. } => shut = true,
            _ => {}
        }
    }
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    assert!(shut, "the host hears the shutdown once both GPUs shut down");
}

#[test]
fn bad_construct_use_is_an_error_that_says_what_is_wrong() {
    let mut backend = sim("dgx1-v100", 2);
    let mut ctx = Context::new(&mut backend);
    let err = ctx.link(Endpoint::Host, Endpoint::gpu(0), config(0, 2)).unwrap_err().to_string();
    assert!(err.contains("packet size (0)") && err.contains("at least 1"), "{err}");
    let err = ctx.link(Endpoint::gpu(1), Endpoint::gpu(1), config(4, 2)).unwrap_err().to_string();
    assert!(err.contains("two different endpoints"), "{err}");
    let gpus = ctx.devices();
    let bad = |_: &switchyard::runtime::groute::SegmentInfo, _: Endpoint, _: &[Endpoint]| Route {
        to: vec![Endpoint::gpu(5)],
        mode: RouteMode::All,
    };
    let router = ctx.router(vec![Endpoint::Host], gpus, config(4, 2), Box::new(bad)).unwrap();
    let err = ctx.route(router, Endpoint::Host, host_segment(vec![1], 0)).unwrap_err().to_string();
    assert!(err.contains("chose gpu5, which is not a destination"), "{err}");
    let err =
        ctx.route(router, Endpoint::gpu(0), host_segment(vec![1], 0)).unwrap_err().to_string();
    assert!(err.contains("gpu0 is not one of its inputs"), "{err}");
}

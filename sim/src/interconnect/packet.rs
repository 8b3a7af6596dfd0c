//! Packet-level fidelity: store-and-forward of packets with a FIFO per channel direction.
//!
//! A leg of `bytes` is cut into units of the route's largest `max_payload_bytes`; the last
//! unit carries the remainder. On every hop a unit waits in the channel's FIFO, is
//! serialized as the channel's own link packets (`ceil(payload / max_payload_bytes)` of
//! them, each with `header_bytes`; one packet when the unit fits) at the channel's
//! bandwidth, rounded up to whole picoseconds, then travels the hop's latency and joins the
//! next channel's FIFO. (Units are the store-and-forward granularity; on a route whose hops
//! share one payload size, a unit is exactly one packet, which is the common case: PCIe
//! trees, NVLink meshes. On mixed routes the timing equals per-hop re-packetization
//! whenever a small-payload hop is next to a large-payload one, since a large packet must be
//! whole before it is forwarded; two consecutive small-payload hops pipeline at the unit
//! size instead of their own, which delays the fill by at most one unit per such hop.) A leg is done when its last packet
//! has arrived at the destination. Head-of-line blocking and pipelining across hops fall out
//! of the FIFOs.
//!
//! The source does not flood the first FIFO: a leg keeps at most one packet waiting there
//! and queues its next packet when the previous one starts serializing. A lone leg thus
//! sends back to back at full rate, and legs sharing a first channel interleave packet by
//! packet (as DMA engines do) instead of one waiting behind the other's whole transfer.
//!
//! Cost: two events per packet per hop (serialization done, arrival at the next hop) on an
//! internal [`Engine`]; no bulk shortcut is taken. A 256 MiB copy in 4 KiB units over two
//! hops is about 262,000 events.

use std::collections::{BTreeMap, VecDeque};

use super::ChannelStats;
use super::bounds::serialization_ps;
use super::transport::{LegId, Transport, link_packets, route_unit_bytes};
use crate::engine::Engine;
use crate::fabric::{ChannelId, Fabric};
use crate::time::TimePs;

#[derive(Clone, Copy, Debug)]
struct Packet {
    leg: LegId,
    /// Index of the channel in the leg's route that the packet is on or heading for.
    hop: u32,
    payload_bytes: u64,
}

enum Event {
    /// The packet being serialized on the channel is fully on the wire.
    SerializationDone { channel: u32 },
    /// A packet reaches the FIFO of `channel`.
    Arrive { channel: u32, packet: Packet },
    /// A packet of `leg` reaches the destination (or a zero-byte leg completes).
    Deliver { leg: LegId },
}

#[derive(Default)]
struct ChannelState {
    fifo: VecDeque<Packet>,
    serving: Option<Packet>,
}

struct LegState {
    channels: Vec<ChannelId>,
    payload_per_packet: u64,
    /// Payload not yet cut into packets.
    bytes_to_inject: u64,
    packets_total: u64,
    packets_delivered: u64,
}

/// Packet-level transport.
pub(super) struct PacketTransport {
    events: Engine<Event>,
    channels: Vec<ChannelState>,
    legs: BTreeMap<LegId, LegState>,
    stats: Vec<ChannelStats>,
}

impl PacketTransport {
    pub fn new(fabric: &Fabric) -> Self {
        let n = fabric.channels.len();
        PacketTransport {
            events: Engine::new(0),
            channels: (0..n).map(|_| ChannelState::default()).collect(),
            legs: BTreeMap::new(),
            stats: vec![ChannelStats::default(); n],
        }
    }

    /// Cuts the next packet of `leg` (none if all were cut).
    fn next_packet(&mut self, leg: LegId) -> Option<Packet> {
        let l = self.legs.get_mut(&leg)?;
        if l.bytes_to_inject == 0 {
            return None;
        }
        let payload_bytes = l.bytes_to_inject.min(l.payload_per_packet);
        l.bytes_to_inject -= payload_bytes;
        Some(Packet { leg, hop: 0, payload_bytes })
    }

    /// A packet reaches `channel` at `now`: served at once if the channel is idle.
    fn arrive(&mut self, fabric: &Fabric, now: TimePs, channel: u32, packet: Packet) {
        if self.channels[channel as usize].serving.is_none() {
            self.serve(fabric, now, channel, packet);
        } else {
            self.channels[channel as usize].fifo.push_back(packet);
        }
    }

    /// Starts serializing `packet` on the idle `channel` at `now`.
    fn serve(&mut self, fabric: &Fabric, now: TimePs, channel: u32, packet: Packet) {
        let ch = &fabric.channels[channel as usize];
        let packets = link_packets(fabric, ChannelId(channel), packet.payload_bytes);
        let wire = packet.payload_bytes + packets * u64::from(ch.header_bytes);
        let ser = serialization_ps(wire, ch.bandwidth_bytes_per_s);
        let s = &mut self.stats[channel as usize];
        s.bytes_carried += wire;
        s.busy_ps += ser;
        s.packets += packets;
        self.channels[channel as usize].serving = Some(packet);
        self.events.schedule_at(now.saturating_add(ser), Event::SerializationDone { channel });
        if packet.hop == 0
            && let Some(next) = self.next_packet(packet.leg)
        {
            // The source queues its next packet once this one is on its way.
            self.channels[channel as usize].fifo.push_back(next);
        }
    }

    fn handle(
        &mut self,
        fabric: &Fabric,
        now: TimePs,
        event: Event,
        done: &mut Vec<(TimePs, LegId)>,
    ) {
        match event {
            Event::SerializationDone { channel } => {
                let packet =
                    self.channels[channel as usize].serving.take().expect("channel was serving");
                let latency = fabric.channels[channel as usize].latency_ps;
                let at = now.saturating_add(latency);
                // A packet of an aborted leg (a failed link) is dropped here.
                if let Some(leg) = self.legs.get(&packet.leg) {
                    let next_hop = packet.hop as usize + 1;
                    if next_hop < leg.channels.len() {
                        let next = Packet { hop: packet.hop + 1, ..packet };
                        let channel = leg.channels[next_hop].0;
                        self.events.schedule_at(at, Event::Arrive { channel, packet: next });
                    } else {
                        self.events.schedule_at(at, Event::Deliver { leg: packet.leg });
                    }
                }
                if let Some(p) = self.channels[channel as usize].fifo.pop_front() {
                    self.serve(fabric, now, channel, p);
                }
            }
            Event::Arrive { channel, packet } => {
                if self.legs.contains_key(&packet.leg) {
                    self.arrive(fabric, now, channel, packet);
                }
            }
            Event::Deliver { leg } => {
                let Some(l) = self.legs.get_mut(&leg) else { return };
                l.packets_delivered += 1;
                if l.packets_delivered == l.packets_total {
                    self.legs.remove(&leg);
                    done.push((now, leg));
                }
            }
        }
    }
}

impl Transport for PacketTransport {
    fn start(
        &mut self,
        fabric: &Fabric,
        now: TimePs,
        leg: LegId,
        channels: &[ChannelId],
        bytes: u64,
    ) {
        let payload = route_unit_bytes(fabric, channels);
        if bytes == 0 || channels.is_empty() {
            // Nothing to serialize: the leg completes after the route latency.
            let latency: TimePs =
                channels.iter().map(|c| fabric.channels[c.0 as usize].latency_ps).sum();
            self.legs.insert(
                leg,
                LegState {
                    channels: channels.to_vec(),
                    payload_per_packet: payload,
                    bytes_to_inject: 0,
                    packets_total: 1,
                    packets_delivered: 0,
                },
            );
            self.events.schedule_at(now.saturating_add(latency), Event::Deliver { leg });
            return;
        }
        self.legs.insert(
            leg,
            LegState {
                channels: channels.to_vec(),
                payload_per_packet: payload,
                bytes_to_inject: bytes,
                packets_total: bytes.div_ceil(payload),
                packets_delivered: 0,
            },
        );
        let first = self.next_packet(leg).expect("a non-empty leg has a first packet");
        self.arrive(fabric, now, channels[0].0, first);
    }

    fn next_event_time(&self) -> Option<TimePs> {
        self.events.peek_time()
    }

    fn advance_to(&mut self, fabric: &Fabric, time: TimePs, done: &mut Vec<(TimePs, LegId)>) {
        while self.events.peek_time().is_some_and(|t| t <= time) {
            let (now, event) = self.events.pop().expect("peeked");
            self.handle(fabric, now, event, done);
        }
    }

    fn stats(&self) -> &[ChannelStats] {
        &self.stats
    }

    fn reconfigure(&mut self, _fabric: &Fabric, _now: TimePs, aborted: &[LegId]) {
        // New bandwidths and latencies apply to every packet serialized from now on (one
        // on the wire keeps its time). Aborted legs vanish: their queued packets are
        // dropped now, the ones on a wire or between hops when they get there.
        for leg in aborted {
            self.legs.remove(leg);
        }
        if !aborted.is_empty() {
            for c in &mut self.channels {
                c.fifo.retain(|p| !aborted.contains(&p.leg));
            }
        }
    }
}

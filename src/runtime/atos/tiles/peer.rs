//! On-chip tiles on several GPUs (real or logical): one launch of the peer tile kernel a GPU
//! ([`super::register_peer`], `atos_bfs_tiles_peer` in `kernels/atos.cu`), each GPU's CTAs
//! the tiles of its part, every CTA of every GPU resident at once. A tile's labels, inbox
//! and tail live in its GPU's memory; the layout (starts, rows, arcs), the starting labels
//! and the GPUs' first tiles are on every GPU; the one token word (and the refused and
//! stalled words) on GPU 0. Every GPU's launch names every GPU's labels, inboxes and tails
//! and GPU 0's control words at its remote positions (the mechanism the Atos workers use to
//! push into each other's receive queues, [`crate::backend::KernelDef::remote_args`]).

use super::{
    AtosApp, AtosGpuReport, AtosOptions, AtosReport, EMPTY, TileGpuReport, TileLayout, TileMode,
    TileReport, peer_slot, upload_to,
};
use crate::backend::{
    Backend, BackendError, BufferId, BufferSlice, CompletionKind, DeviceId, HostData, Launch,
    LaunchConfig, Scalar, StreamId, StreamPriority, Token,
};
use crate::graph::Csr;
use crate::runtime::atos::graph::AtosGraph;
use crate::runtime::{Outcome, RuntimeError, WorkReport, wait_all};

/// Tokens a GPU's operations of one launch take: GPU `g` uses `g * TOKENS_A_GPU` on.
const TOKENS_A_GPU: u64 = 1000;

/// What one launch on every GPU left behind.
struct Attempt {
    /// Labels by tile-ordered id.
    labels: Vec<u32>,
    refused: u32,
    /// Per GPU: [`peer_slot::STATS_WORDS`] words.
    stats: Vec<Vec<u64>>,
    start_ps: u64,
    end_ps: u64,
}

/// What every launch of a run shares.
struct Job<'a> {
    kernel: &'static str,
    layout: &'a TileLayout,
    streams: Vec<StreamId>,
    /// Per GPU: starts, rows, arcs, starting labels, first tiles.
    fixed: Vec<[BufferId; 5]>,
    /// Starting labels by tile-ordered id.
    labels: &'a [u32],
}

/// Runs `app` on tiles over the layout's GPUs (see [`super::plan`]); inboxes grow as on one
/// GPU ([`super::run`]).
pub(super) fn run<B: Backend + ?Sized>(
    backend: &mut B,
    graph: &Csr,
    app: &dyn AtosApp,
    options: &AtosOptions,
    layout: &TileLayout,
) -> Result<Outcome, RuntimeError> {
    let Some(kernel) = app.peer_tile_kernel() else {
        return Err(RuntimeError::Options(format!(
            "Atos {} has no tile kernel for several GPUs",
            app.label()
        )));
    };
    let gpus = layout.gpus();
    let n = graph.num_vertices() as usize;
    // The starting labels do not depend on the partition: one GPU's view of them.
    let ag = AtosGraph::build(graph, &vec![0u32; n], 1);
    let init = app.init(&ag, 0);
    let mut labels = vec![u32::MAX; n];
    for (new, &value) in init.value.iter().enumerate() {
        labels[layout.new_of[ag.old_of[new] as usize] as usize] = value;
    }
    let mut streams = Vec::with_capacity(gpus as usize);
    for g in 0..gpus {
        streams.push(backend.create_stream(DeviceId(g), StreamPriority::Normal)?);
    }
    let mut bufs: Vec<BufferId> = Vec::new();
    let mut fixed = Vec::with_capacity(gpus as usize);
    let mut uploaded = Ok(());
    for g in 0..gpus {
        let data = [
            ("atos tile starts", HostData::U32(layout.start.clone())),
            ("atos tile rows", HostData::U32(layout.rows.clone())),
            ("atos tile arcs", HostData::U32(layout.cols.clone())),
            ("atos tile starting labels", HostData::U32(labels.clone())),
            ("atos tile gpu tiles", HostData::U32(layout.gpu_tiles.clone())),
        ];
        let first = bufs.len();
        uploaded = upload_to(
            backend,
            DeviceId(g),
            streams[g as usize],
            data,
            &mut bufs,
            u64::from(g) * TOKENS_A_GPU,
        );
        if uploaded.is_err() {
            break;
        }
        fixed.push([
            bufs[first],
            bufs[first + 1],
            bufs[first + 2],
            bufs[first + 3],
            bufs[first + 4],
        ]);
    }
    let result = uploaded.and_then(|()| {
        let job = Job { kernel, layout, streams, fixed, labels: &labels };
        attempts(backend, &job, options)
    });
    for b in bufs {
        backend.free(b)?;
    }
    let (attempt, growth, cap) = result?;
    let values: Vec<u32> = (0..n).map(|v| attempt.labels[layout.new_of[v] as usize]).collect();
    let sum = |i: usize| attempt.stats.iter().map(|s| s[i]).sum::<u64>();
    let (expansions, messages, arcs, crossed) = (sum(0), sum(1), sum(3), sum(4));
    let rounds = attempt.stats.iter().map(|s| s[2]).max().unwrap_or(0);
    let (ideal, ideal_is) = app.ideal_visits(graph);
    let mut resolved = *options;
    resolved.tiles = TileMode::On;
    let per_gpu = attempt
        .stats
        .iter()
        .map(|s| AtosGpuReport {
            visits: s[0],
            tasks: s[0],
            edges: s[3],
            sent: s[4],
            steps: s[2],
            launches: 1,
            ..AtosGpuReport::default()
        })
        .collect();
    let tile_gpus = (0..gpus)
        .map(|g| {
            let s = &attempt.stats[g as usize];
            let v = layout.gpu_vertices(g);
            TileGpuReport {
                tiles: layout.gpu_tile_count(g),
                vertices: v.end - v.start,
                expansions: s[0],
                messages: s[1],
                cross_gpu_messages: s[4],
            }
        })
        .collect();
    let report = AtosReport {
        options: resolved,
        visits: expansions,
        ideal_visits: ideal,
        ideal_is,
        extra_work: expansions as f64 / ideal.max(1) as f64,
        termination_waves: 0,
        queue_capacity: vec![cap; gpus as usize],
        queue_growths: growth,
        per_gpu,
        tiles_declined: None,
        tiles: Some(TileReport {
            tiles: layout.tiles(),
            max_vertices: layout.max_vertices,
            max_arcs: layout.max_arcs,
            remote_arcs: layout.remote_arcs,
            messages,
            rounds,
            inbox_capacity: cap,
            cross_gpu_arcs: layout.cross_gpu_arcs,
            cross_gpu_messages: crossed,
            per_gpu: tile_gpus,
        }),
    };
    Ok(Outcome {
        values,
        aux: None,
        compute_time_ps: attempt.end_ps - attempt.start_ps,
        work: WorkReport {
            edges_visited: arcs,
            work_items: expansions,
            messages: crossed,
            // An inbox entry a message.
            bytes_sent: 8 * crossed,
            frontier_sizes: Vec::new(),
        },
        supersteps: 0,
        groute: None,
        gum: None,
        atos: Some(report),
    })
}

/// Launches until the inboxes hold every message ([`super::grow_inboxes`], as on one GPU):
/// the attempt, the growths it took and the inbox capacity it ran with.
fn attempts<B: Backend + ?Sized>(
    backend: &mut B,
    job: &Job<'_>,
    options: &AtosOptions,
) -> Result<(Attempt, u32, u64), RuntimeError> {
    super::grow_inboxes(backend, job.layout, options, |backend, cap, mine| {
        let attempt = launch(backend, job, cap, mine)?;
        Ok((attempt.refused, attempt.start_ps, attempt))
    })
    .map(|(mut attempt, start_ps, growth, cap)| {
        attempt.start_ps = start_ps;
        (attempt, growth, cap)
    })
}

/// One launch a GPU with inboxes of `cap` entries; its buffers go into `mine` (freed by the
/// caller).
fn launch<B: Backend + ?Sized>(
    backend: &mut B,
    job: &Job<'_>,
    cap: u64,
    mine: &mut Vec<BufferId>,
) -> Result<Attempt, RuntimeError> {
    let layout = job.layout;
    let gpus = layout.gpus();
    // Per GPU: stats, labels, inboxes, tails; GPU 0 also the control words (every CTA of
    // every GPU holds one token from the start).
    let mut own: Vec<[BufferId; 4]> = Vec::with_capacity(gpus as usize);
    for g in 0..gpus {
        let tiles = layout.gpu_tile_count(g) as usize;
        let v = layout.gpu_vertices(g);
        let data = [
            ("atos tile stats", HostData::U64(vec![0; peer_slot::STATS_WORDS])),
            (
                "atos tile labels",
                HostData::U32(job.labels[v.start as usize..v.end as usize].to_vec()),
            ),
            ("atos tile inboxes", HostData::U64(vec![EMPTY; tiles * cap as usize])),
            ("atos tile tails", HostData::U32(vec![0; tiles])),
        ];
        let first = mine.len();
        let token = u64::from(g) * TOKENS_A_GPU + 100;
        upload_to(backend, DeviceId(g), job.streams[g as usize], data, mine, token)?;
        own.push([mine[first], mine[first + 1], mine[first + 2], mine[first + 3]]);
    }
    let first = mine.len();
    let ctl = [("atos tile control", HostData::U32(vec![layout.tiles(), 0, 0]))];
    upload_to(backend, DeviceId(0), job.streams[0], ctl, mine, 150)?;
    let ctl = mine[first];
    let start_ps = backend.now_ps();
    let mut done = Vec::with_capacity(gpus as usize);
    for g in 0..gpus {
        let f = &job.fixed[g as usize];
        let mut buffers = vec![f[0], f[1], f[2], f[3], f[4], own[g as usize][0], ctl];
        for o in &own {
            buffers.extend_from_slice(&o[1..]);
        }
        let l = Launch {
            kernel: job.kernel,
            buffers,
            scalars: vec![Scalar::U32(g), Scalar::U32(gpus), Scalar::U32(cap as u32)],
            work_items: u64::from(layout.gpu_vertices(g).len() as u32),
        };
        let config =
            LaunchConfig { blocks: Some(layout.gpu_tile_count(g)), ..layout.launch_config() };
        let t = Token(u64::from(g) * TOKENS_A_GPU + 200);
        backend.launch_with(job.streams[g as usize], l, config, Some(t))?;
        done.push(t);
    }
    wait_all(backend, &done)?;
    let end_ps = backend.now_ps();
    // Reads: every GPU's labels and stats, then the control words.
    let mut reads: Vec<(BufferId, StreamId, Token)> = Vec::new();
    for g in 0..gpus {
        let base = u64::from(g) * TOKENS_A_GPU + 300;
        reads.push((own[g as usize][1], job.streams[g as usize], Token(base)));
        reads.push((own[g as usize][0], job.streams[g as usize], Token(base + 1)));
    }
    reads.push((ctl, job.streams[0], Token(399)));
    for &(b, stream, t) in &reads {
        let (_, len) = backend.buffer_shape(b)?;
        backend.read_to_host(stream, BufferSlice::new(b, 0, len), t)?;
    }
    let tokens: Vec<Token> = reads.iter().map(|r| r.2).collect();
    let mut by_token = std::collections::BTreeMap::new();
    for c in wait_all(backend, &tokens)? {
        let CompletionKind::HostRead(data) = c.kind else {
            return Err(BackendError::Usage("Atos tiles: a read returned no data".into()).into());
        };
        by_token.insert(c.token, data);
    }
    let mut take = |t: Token| {
        by_token
            .remove(&t)
            .ok_or_else(|| BackendError::Usage("Atos tiles: a read did not complete".into()))
    };
    let wrong =
        || RuntimeError::from(BackendError::Usage("Atos tiles: a read of the wrong type".into()));
    let mut labels = Vec::with_capacity(layout.start.last().copied().unwrap_or(0) as usize);
    let mut stats = Vec::with_capacity(gpus as usize);
    for g in 0..gpus {
        let base = u64::from(g) * TOKENS_A_GPU + 300;
        let want = layout.gpu_vertices(g).len();
        match (take(Token(base))?, take(Token(base + 1))?) {
            (HostData::U32(l), HostData::U64(s))
                if l.len() >= want && s.len() >= peer_slot::STATS_WORDS =>
            {
                labels.extend_from_slice(&l[..want]);
                stats.push(s);
            }
            _ => return Err(wrong()),
        }
    }
    let HostData::U32(ctl) = take(Token(399))? else {
        return Err(wrong());
    };
    Ok(Attempt { labels, refused: ctl.get(1).copied().unwrap_or(0), stats, start_ps, end_ps })
}

//! Chrome/Perfetto trace output: kernels per stream, transfers per GPU pair, as complete
//! ("X") events in the Trace Event Format that `chrome://tracing` and ui.perfetto.dev open.

use crate::backend::sim::TraceSpan;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The trace as a Trace Event Format JSON document. Tracks become (process, thread)
/// pairs: the part before `/` (or the whole track) names the process.
pub fn chrome_trace(spans: &[TraceSpan]) -> Value {
    let mut ids: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    let mut processes: BTreeMap<&str, usize> = BTreeMap::new();
    for span in spans {
        let (process, thread) = span.track.split_once('/').unwrap_or((&span.track, "transfers"));
        let next_pid = processes.len();
        let pid = *processes.entry(process).or_insert(next_pid);
        let next_tid = ids.len();
        ids.entry((process, thread)).or_insert((pid, next_tid));
    }
    let mut events = Vec::with_capacity(spans.len() + ids.len() * 2);
    for (process, pid) in &processes {
        events.push(
            json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}}),
        );
    }
    for ((_, thread), (pid, tid)) in &ids {
        events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": thread}}));
    }
    for span in spans {
        let (process, thread) = span.track.split_once('/').unwrap_or((&span.track, "transfers"));
        let (pid, tid) = ids[&(process, thread)];
        let mut args = json!({"amount": span.amount, "start_ps": span.start_ps, "duration_ps": span.duration_ps});
        if let Some(c) = &span.counts {
            // What the cost model charged (a per-kernel cost fit pairs these with real spans).
            args["items"] = c.items.into();
            args["edges"] = c.edges.into();
            args["atomics"] = c.atomics.into();
            args["vertices"] = c.vertices.into();
            args["outputs"] = c.outputs.into();
            args["rounds"] = c.rounds.into();
            args["path_edges"] = c.path_edges.into();
        }
        events.push(json!({
            "name": span.name,
            "cat": if thread == "transfers" { "transfer" } else { "kernel" },
            "ph": "X",
            "pid": pid,
            "tid": tid,
            "ts": span.start_ps as f64 / 1e6,
            "dur": span.duration_ps as f64 / 1e6,
            "args": args,
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

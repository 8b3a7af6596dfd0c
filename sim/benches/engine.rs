//! Engine throughput, hold model: keep about a million events pending; each step pops the
//! earliest event and schedules one at `now + uniform(0, 2 * mean_delay)`.
//!
//! Prints the figure and writes `reports/bench/engine.json` (workspace root).
//! Run: `nice cargo bench -p switchyard-sim --bench engine` (release profile).
//! Optional arguments: `PENDING EVENTS MEAN_DELAY_PS` (defaults 1000000 20000000 1000000).

use std::time::Instant;

use rand::RngExt;
use switchyard_sim::engine::Engine;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let pending = *args.first().unwrap_or(&1_000_000);
    let events = *args.get(1).unwrap_or(&20_000_000);
    let mean_delay_ps: u64 = *args.get(2).unwrap_or(&1_000_000);

    let mut engine: Engine<u64> = Engine::new(42);
    for i in 0..pending {
        let d = engine.rng().random_range(0..2 * mean_delay_ps);
        engine.schedule_at(d, i);
    }

    // Warm-up: one pass over the queue so the heap reaches its steady-state shape.
    hold(&mut engine, pending, mean_delay_ps);

    let start = Instant::now();
    let cpu_start = cpu_ns();
    let checksum = hold(&mut engine, events, mean_delay_ps);
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu_ns().zip(cpu_start).map(|(b, a)| (b - a) as f64 / 1e9);
    let per_s = events as f64 / seconds;
    let per_cpu_s = cpu_seconds.map(|c| events as f64 / c);

    println!(
        "engine hold model: {pending} pending, {events} events in {seconds:.3} s wall = {:.2} M events/s (checksum {checksum})",
        per_s / 1e6
    );
    if let (Some(c), Some(r)) = (cpu_seconds, per_cpu_s) {
        println!("  on-CPU time {c:.3} s = {:.2} M events/s per CPU second", r / 1e6);
    }
    let json = format!(
        "{{\n  \"benchmark\": \"engine_hold_model\",\n  \"pending_events\": {pending},\n  \"events\": {events},\n  \"mean_delay_ps\": {mean_delay_ps},\n  \"seconds\": {seconds:.6},\n  \"events_per_s\": {per_s:.0},\n  \"cpu_seconds\": {},\n  \"events_per_cpu_s\": {},\n  \"final_virtual_time_ps\": {},\n  \"checksum\": {checksum}\n}}\n",
        cpu_seconds.map_or("null".to_string(), |c| format!("{c:.6}")),
        per_cpu_s.map_or("null".to_string(), |r| format!("{r:.0}")),
        engine.now()
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/bench/engine.json");
    if let Some(dir) = std::path::Path::new(path).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(path, json) {
        Ok(()) => println!("wrote {path}"),
        Err(e) => eprintln!("could not write {path}: {e}"),
    }
}

/// Time this thread has run on a CPU, in nanoseconds (Linux `schedstat`), to tell the
/// engine's speed from time lost to other processes on a shared machine.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Pops one, pushes one, `n` times. Returns a checksum of the popped payloads so the work
/// cannot be optimised away.
fn hold(engine: &mut Engine<u64>, n: u64, mean_delay_ps: u64) -> u64 {
    let mut checksum = 0u64;
    for _ in 0..n {
        let (_, ev) = engine.pop().expect("hold model never runs dry");
        checksum = checksum.wrapping_mul(31).wrapping_add(ev);
        let d = engine.rng().random_range(0..2 * mean_delay_ps);
        engine.schedule_in(d, ev);
    }
    checksum
}

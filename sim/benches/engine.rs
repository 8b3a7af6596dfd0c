//! Engine throughput, hold model: keep about a million events pending; each step pops the
//! earliest event and schedules one at `now + uniform(0, 2 * mean_delay)`.
//!
//! Prints the figure and writes `reports/bench/engine.json` (workspace root).
//! Run: `nice cargo bench -p switchyard-sim --bench engine` (release profile).
//! Optional arguments: `PENDING EVENTS` (defaults 1000000 20000000).

use std::time::Instant;

use rand::RngExt;
use switchyard_sim::engine::Engine;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let pending = *args.first().unwrap_or(&1_000_000);
    let events = *args.get(1).unwrap_or(&20_000_000);
    let mean_delay_ps: u64 = 1_000_000;

    let mut engine: Engine<u64> = Engine::new(42);
    for i in 0..pending {
        let d = engine.rng().random_range(0..2 * mean_delay_ps);
        engine.schedule_at(d, i);
    }

    // Warm-up: one pass over the queue so the heap reaches its steady-state shape.
    hold(&mut engine, pending, mean_delay_ps);

    let start = Instant::now();
    let checksum = hold(&mut engine, events, mean_delay_ps);
    let seconds = start.elapsed().as_secs_f64();
    let per_s = events as f64 / seconds;

    println!(
        "engine hold model: {pending} pending, {events} events in {seconds:.3} s = {:.2} M events/s (checksum {checksum})",
        per_s / 1e6
    );
    let json = format!(
        "{{\n  \"benchmark\": \"engine_hold_model\",\n  \"pending_events\": {pending},\n  \"events\": {events},\n  \"mean_delay_ps\": {mean_delay_ps},\n  \"seconds\": {seconds:.6},\n  \"events_per_s\": {per_s:.0},\n  \"final_virtual_time_ps\": {},\n  \"checksum\": {checksum}\n}}\n",
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

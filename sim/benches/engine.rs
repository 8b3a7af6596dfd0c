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

    // Three timed repetitions: on a shared machine the best shows the engine's speed, the
    // median what a user sees under load. All are reported.
    let mut runs = Vec::new();
    let mut checksum = 0u64;
    for _ in 0..3 {
        let start = Instant::now();
        let cpu_start = cpu_ns();
        checksum = checksum.wrapping_add(hold(&mut engine, events, mean_delay_ps));
        let seconds = start.elapsed().as_secs_f64();
        let cpu_seconds = cpu_ns().zip(cpu_start).map(|(b, a)| (b - a) as f64 / 1e9);
        println!(
            "engine hold model: {pending} pending, {events} events in {seconds:.3} s wall = {:.2} M events/s; on-CPU {} s = {} M events/s",
            events as f64 / seconds / 1e6,
            cpu_seconds.map_or("?".to_string(), |c| format!("{c:.3}")),
            cpu_seconds.map_or("?".to_string(), |c| format!("{:.2}", events as f64 / c / 1e6)),
        );
        runs.push((seconds, cpu_seconds));
    }
    let mut walls: Vec<f64> = runs.iter().map(|r| events as f64 / r.0).collect();
    walls.sort_by(f64::total_cmp);
    let (best, median) = (walls[2], walls[1]);
    println!(
        "best {:.2} M events/s, median {:.2} M events/s (wall, checksum {checksum})",
        best / 1e6,
        median / 1e6
    );
    let run_json: Vec<String> = runs
        .iter()
        .map(|(w, c)| {
            format!(
                "{{ \"seconds\": {w:.6}, \"events_per_s\": {:.0}, \"cpu_seconds\": {}, \"events_per_cpu_s\": {} }}",
                events as f64 / w,
                c.map_or("null".to_string(), |c| format!("{c:.6}")),
                c.map_or("null".to_string(), |c| format!("{:.0}", events as f64 / c)),
            )
        })
        .collect();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "null".to_string());
    let json = format!(
        "{{\n  \"benchmark\": \"engine_hold_model\",\n  \"pending_events\": {pending},\n  \"events_per_run\": {events},\n  \"mean_delay_ps\": {mean_delay_ps},\n  \"runs\": [\n    {}\n  ],\n  \"best_events_per_s\": {best:.0},\n  \"median_events_per_s\": {median:.0},\n  \"load_average_1min\": {load},\n  \"cpus\": {},\n  \"final_virtual_time_ps\": {},\n  \"checksum\": {checksum}\n}}\n",
        run_json.join(",\n    "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
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

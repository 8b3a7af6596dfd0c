//! Swarm testing in CI: a few hundred seeds, each a whole configuration drawn from its seed,
//! every run validated; the swarm is deterministic (same seed, same configuration and same
//! report) and its summary does not depend on the number of workers; the `switchyard run`
//! line it prints reproduces the run; the regression file's seeds are replayed.
//!
//! `SWARM_SEEDS=N` changes how many seeds the main test runs (default 200).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use switchyard::driver::RuntimeKind;
use switchyard::driver::swarm::{
    DEFAULT_ARTIFACTS, EVENT_LIMIT, RegressionStatus, SwarmOptions, SwarmSummary,
    VIRTUAL_TIME_LIMIT_PS, draw, masked_report_json, parse_regressions, parse_seeds, run_case,
    run_seed, run_seeds,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn regressions() -> Vec<switchyard::driver::swarm::Regression> {
    let path = root().join("tests/data/swarm-regressions.txt");
    let text = std::fs::read_to_string(&path).expect("regression file");
    parse_regressions(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Seeds whose bug is recorded as still open (their failure is expected, and checked by
/// the replay test), for swarms without a runtime filter.
fn open_seeds() -> BTreeSet<u64> {
    regressions()
        .into_iter()
        .filter(|r| r.status == RegressionStatus::Open && r.runtime.is_none())
        .map(|r| r.seed)
        .collect()
}

#[test]
fn a_few_hundred_seeds_validate_and_the_summary_does_not_depend_on_the_workers() {
    let n: u64 = std::env::var("SWARM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let options = SwarmOptions::default();
    let mut seen = 0u64;
    let results = run_seeds(0..n, &options, 2, &mut |_| seen += 1);
    assert_eq!(seen, n, "progress saw every seed");
    assert_eq!(results.len() as u64, n);
    assert!(results.windows(2).all(|w| w[0].seed + 1 == w[1].seed), "results in seed order");
    let open = open_seeds();
    let unexpected: Vec<String> = results
        .iter()
        .filter(|r| !r.verdict.passed() && !open.contains(&r.seed))
        .map(|r| {
            format!(
                "seed {} {:?}\n  reproduce: {}",
                r.seed,
                r.verdict,
                r.reproduce(None, DEFAULT_ARTIFACTS).join("\n  reproduce: ")
            )
        })
        .collect();
    assert!(unexpected.is_empty(), "swarm failures:\n{}", unexpected.join("\n"));
    // Every runtime and every algorithm it runs were drawn.
    let summary = SwarmSummary::new(&(0..n), None, &results, DEFAULT_ARTIFACTS);
    for runtime in RuntimeKind::ALL {
        for algorithm in switchyard::algo::Algorithm::ALL.into_iter().filter(|&a| runtime.runs(a)) {
            let key = format!("{}/{}", runtime.name(), algorithm.name());
            assert!(summary.by_runtime_algorithm.contains_key(&key), "{key} never drawn");
        }
    }
    assert!(summary.by_machine.keys().any(|m| m.ends_with("(derived)")), "no derived machine");
    assert_eq!(summary.by_graph.len(), 6, "every graph class: {:?}", summary.by_graph);
    // One worker gives the identical results and summary for a prefix of the range.
    let prefix = 24.min(n);
    let single = run_seeds(0..prefix, &options, 1, &mut |_| {});
    let two = &results[..prefix as usize];
    assert_eq!(
        SwarmSummary::new(&(0..prefix), None, &single, DEFAULT_ARTIFACTS),
        SwarmSummary::new(&(0..prefix), None, two, DEFAULT_ARTIFACTS),
        "jobs=1 and jobs=2 summaries differ"
    );
    for (a, b) in single.iter().zip(two) {
        assert_eq!(
            serde_json::to_string(a).expect("json"),
            serde_json::to_string(b).expect("json"),
            "seed {} differs between 1 and 2 workers",
            a.seed
        );
    }
}

#[test]
fn a_seed_draws_the_same_configuration_and_report_every_time() {
    let options = SwarmOptions::default();
    for seed in [3, 17, 1234, 98765] {
        let (a, ..) = draw(seed, &options).expect("draws");
        let (b, ..) = draw(seed, &options).expect("draws");
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            serde_json::to_string(&b).expect("json")
        );
        let (ra, rb) = (run_seed(seed, &options), run_seed(seed, &options));
        assert!(ra.report_digest.is_some() || !ra.verdict.passed(), "seed {seed}");
        assert_eq!(
            serde_json::to_string(&ra).expect("json"),
            serde_json::to_string(&rb).expect("json"),
            "seed {seed}"
        );
    }
    // Different seeds draw different configurations.
    let runs: BTreeSet<String> = (0..20)
        .map(|s| draw(s, &options).expect("draws").0.run_command(DEFAULT_ARTIFACTS))
        .collect();
    assert_eq!(runs.len(), 20);
    // A runtime filter holds.
    let only_groute = SwarmOptions { runtime: Some(RuntimeKind::Groute), ..options };
    for seed in 0..20 {
        let (case, ..) = draw(seed, &only_groute).expect("draws");
        assert_eq!(case.runtime, RuntimeKind::Groute);
        assert!(case.swarm_command().ends_with("--runtime groute"));
    }
}

/// The `switchyard run` line a seed prints gives the identical run report (the command line
/// and where the machine was read from aside).
#[test]
fn the_printed_run_line_reproduces_the_run() {
    let options = SwarmOptions::default();
    let dir = tempfile::tempdir().expect("tempdir");
    let artifacts = dir.path().display().to_string();
    // Seeds covering both runtimes, a derived machine, a real graph and injected faults.
    let mut chosen = Vec::new();
    let mut wanted: BTreeSet<&str> = ["bsp", "groute", "derived", "real", "faults"].into();
    for seed in 0..200u64 {
        let (case, ..) = draw(seed, &options).expect("draws");
        let mut tags = vec![case.runtime.name()];
        if case.machine.derived.is_some() {
            tags.push("derived");
        }
        if case.graph.class() == "real" {
            tags.push("real");
        }
        if !case.faults.is_empty() && !case.faults.iter().any(|f| f.starts_with("link-fail")) {
            tags.push("faults");
        }
        if tags.iter().any(|t| wanted.remove(t)) && !open_seeds().contains(&seed) {
            chosen.push(seed);
        }
        if wanted.is_empty() {
            break;
        }
    }
    assert!(wanted.is_empty(), "no seed below 200 drew {wanted:?}");
    for seed in chosen {
        let (case, topology, graph) = draw(seed, &options).expect("draws");
        let output =
            run_case(&case, topology, &graph, VIRTUAL_TIME_LIMIT_PS, EVENT_LIMIT).expect("runs");
        if let (Some(file), Some(derived)) = (case.topology_file(&artifacts), &case.machine.derived)
        {
            std::fs::write(file, &derived.toml).expect("write machine");
        }
        let report_path = dir.path().join(format!("report-{seed}.json"));
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .current_dir(root())
            .arg("run")
            .args(case.run_args(&artifacts))
            .arg("--report")
            .arg(&report_path)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("switchyard runs");
        assert!(status.success(), "seed {seed}: {}", case.run_command(&artifacts));
        let cli: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report"))
                .expect("json");
        let swarm: serde_json::Value =
            serde_json::from_str(&masked_report_json(&output.report)).expect("json");
        let strip = |mut v: serde_json::Value| {
            for key in ["git_sha", "command_line"] {
                v[key] = serde_json::Value::Null;
            }
            v["topology"]["source"] = serde_json::Value::Null;
            v
        };
        assert_eq!(strip(cli), strip(swarm), "seed {seed}: {}", case.run_command(&artifacts));
    }
}

#[test]
fn the_regression_seeds_replay() {
    let regressions = regressions();
    assert!(!regressions.is_empty());
    for r in regressions {
        let options = SwarmOptions { runtime: r.runtime, ..SwarmOptions::default() };
        let result = run_seed(r.seed, &options);
        let reproduce = result.reproduce(r.runtime, DEFAULT_ARTIFACTS).join("\n  ");
        match r.status {
            RegressionStatus::Fixed => assert!(
                result.verdict.passed(),
                "regression seed {} fails again: {:?}\n  {reproduce}",
                r.seed,
                result.verdict
            ),
            RegressionStatus::Open => assert_eq!(
                result.verdict.name(),
                r.verdict,
                "open regression seed {} no longer fails as recorded (fixed? then mark it \
                 status=fixed): {:?}\n  {reproduce}",
                r.seed,
                result.verdict
            ),
        }
    }
}

#[test]
fn seed_ranges_parse_with_clear_errors() {
    assert_eq!(parse_seeds("0..10").expect("range"), 0..10);
    assert_eq!(parse_seeds("7").expect("one seed"), 7..8);
    for bad in ["5..5", "9..3", "a..b", "", "1..", "-1..4"] {
        let err = parse_seeds(bad).expect_err(bad).to_string();
        assert!(err.contains("expected A..B"), "{bad}: {err}");
    }
    assert!(parse_regressions("12 status=closed").is_err());
    assert!(parse_regressions("x").is_err());
    let parsed = parse_regressions("# c\n\n4 runtime=bsp status=open verdict=error # run ...\n")
        .expect("parses");
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].runtime, Some(RuntimeKind::Bsp));
    assert!(Path::new(DEFAULT_ARTIFACTS).is_relative());
}

/// Found by the swarm (jobs=1 and jobs=2 disagreed on a METIS seed): METIS keeps its random
/// state in C globals, so concurrent partitions must not change a seed's parts.
#[test]
fn metis_partitions_do_not_depend_on_other_threads() {
    use switchyard::graph::generate::{GeneratorSpec, generate};
    use switchyard::graph::partition::partitioner_by_name;
    let spec = GeneratorSpec::parse("grid2d:w=48,h=46,drop=0.24,seed=616").expect("spec");
    let graph = std::sync::Arc::new(generate(&spec).expect("grid"));
    let alone =
        partitioner_by_name("metis", 20).expect("metis").partition(&graph, 4).expect("parts");
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let graph = std::sync::Arc::clone(&graph);
            std::thread::spawn(move || {
                (0..12)
                    .map(|_| {
                        let seed = if t % 2 == 0 { 20 } else { 1000 + t };
                        let p = partitioner_by_name("metis", seed).expect("metis");
                        (seed, p.partition(&graph, 4).expect("parts").owner)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        for (seed, owner) in thread.join().expect("thread") {
            if seed == 20 {
                assert_eq!(owner, alone.owner, "METIS seed 20 gave other parts under concurrency");
            }
        }
    }
}

/// A run that reaches the virtual time or event limit gets a second chance with no time limit
/// and the event limit times the slow factor: finishing there, validated, it passes as `slow`
/// with its virtual time; at the event limit again it fails, saying so; with factor 1 it
/// fails at the first limit.
#[test]
fn a_run_past_the_limit_is_slow_if_it_finishes_on_its_second_chance() {
    use switchyard::driver::swarm::Verdict;
    let seed = 3;
    let plain = run_seed(seed, &SwarmOptions::default());
    assert_eq!(plain.verdict, Verdict::Passed, "seed {seed} passes under the default limits");
    let (needed_ps, events) = (plain.time_ps.expect("finished"), plain.events.expect("events"));
    assert!(needed_ps > 10 && events > 100, "seed {seed}: {needed_ps} ps, {events} events");
    // A time limit a tenth of what the run needs: the second chance has none.
    let tight = SwarmOptions {
        virtual_time_limit_ps: Some(needed_ps / 10),
        slow_limit_factor: Some(2),
        ..SwarmOptions::default()
    };
    let slow = run_seed(seed, &tight);
    let Verdict::Slow(message) = &slow.verdict else { panic!("not slow: {:?}", slow.verdict) };
    assert!(slow.verdict.passed());
    assert!(message.contains("second chance (no time limit, 2x the event limit)"), "{message}");
    let first = format!("first: limit reached: virtual time limit of {} ps", needed_ps / 10);
    assert!(message.contains(&first), "{message}");
    assert_eq!(slow.time_ps, Some(needed_ps), "the second chance reruns the same run");
    assert_eq!(slow.report_digest, plain.report_digest);
    // An event limit a tenth of what it needs: twice that on the second chance is too few.
    let few_events = SwarmOptions { event_limit: Some(events / 10), ..tight.clone() };
    let stuck = run_seed(seed, &few_events);
    let Verdict::Error(message) = &stuck.verdict else {
        panic!("not an error: {:?}", stuck.verdict)
    };
    let again = format!("limit reached: event limit of {} reached", events / 10 * 2);
    assert!(message.starts_with(&again), "{message}");
    assert!(message.contains("reached the event limit again on its second chance"), "{message}");
    // Ten times the events on the second chance are enough.
    let enough = SwarmOptions { slow_limit_factor: Some(11), ..few_events };
    assert!(matches!(run_seed(seed, &enough).verdict, Verdict::Slow(_)));
    // No second chance: the first limit is final.
    let none = SwarmOptions { slow_limit_factor: Some(1), ..tight };
    let stopped = run_seed(seed, &none);
    let Verdict::Error(message) = &stopped.verdict else { panic!("{:?}", stopped.verdict) };
    assert!(message.starts_with("limit reached: virtual time limit"), "{message}");
    assert!(!message.contains("second chance"), "{message}");
    // The summary counts slow runs as passed and lists them.
    let summary = SwarmSummary::new(&(seed..seed + 1), None, &[slow], DEFAULT_ARTIFACTS);
    assert_eq!((summary.passed, summary.slow.clone()), (1, vec![seed]));
    assert!(summary.text().contains("1 slow: past the first limits"), "{}", summary.text());
}

//! Bad topology input: every error names the file, the line and the fix.

use switchyard_sim::SimError;
use switchyard_sim::topology::Topology;

/// A small valid machine; the cases below break one thing each. Line numbers matter.
const BASE: &str = r#"name = "tiny"

[link_type.pcie3]
kind = "pcie"
bandwidth_gb_s = 0.985
latency_ns = 150.0
max_payload_bytes = 256
header_bytes = 36

[[socket]]
name = "cpu0"

[[gpu]]
name = "gpu0"
model = "K40"

[[gpu]]
name = "gpu1"
model = "K40"

[[link]]
a = "cpu0"
b = "gpu0"
type = "pcie3"
lanes = 16

[[link]]
a = "cpu0"
b = "gpu1"
type = "pcie3"
lanes = 16
"#;

fn error_of(text: &str) -> (usize, String) {
    match Topology::from_str("bad.toml", text) {
        Ok(_) => panic!("accepted a bad file:\n{text}"),
        Err(SimError::Topology { file, line, message, fix }) => {
            assert_eq!(file, "bad.toml");
            assert!(!fix.is_empty());
            let shown = format!(
                "{}",
                SimError::Topology {
                    file: file.clone(),
                    line,
                    message: message.clone(),
                    fix: fix.clone()
                }
            );
            assert!(shown.starts_with(&format!("bad.toml:{line}: ")), "{shown}");
            assert!(shown.contains("fix: "), "{shown}");
            (line, format!("{message} | {fix}"))
        }
        Err(other) => panic!("wrong error kind: {other}"),
    }
}

#[test]
fn base_is_valid() {
    let t = Topology::from_str("tiny.toml", BASE).unwrap();
    assert_eq!(t.gpus.len(), 2);
    assert!(t.peer_access(0, 1));
}

#[test]
fn unknown_gpu_model() {
    let (line, text) = error_of(&BASE.replacen(r#"model = "K40""#, r#"model = "K41""#, 1));
    assert_eq!(line, 15);
    assert!(text.contains("unknown GPU model `K41`"), "{text}");
    assert!(text.contains("[gpu_model.K41]") && text.contains("K40c"), "fix lists models: {text}");
}

#[test]
fn link_to_a_device_that_does_not_exist() {
    let (line, text) = error_of(&BASE.replacen(r#"b = "gpu1""#, r#"b = "gpu9""#, 1));
    assert_eq!(line, 29);
    assert!(text.contains("`gpu9`, which is not declared"), "{text}");
    assert!(text.contains("gpu0, gpu1"), "fix lists the declared names: {text}");
}

#[test]
fn zero_and_negative_bandwidth() {
    for bad in ["0.0", "-1.5"] {
        let (line, text) = error_of(&BASE.replacen(
            "bandwidth_gb_s = 0.985",
            &format!("bandwidth_gb_s = {bad}"),
            1,
        ));
        assert_eq!(line, 5);
        assert!(text.contains("`bandwidth_gb_s` must be a positive number"), "{text}");
        assert!(text.contains("above zero"), "{text}");
    }
}

#[test]
fn zero_lanes() {
    let (line, text) = error_of(&BASE.replacen("lanes = 16", "lanes = 0", 1));
    assert_eq!(line, 25);
    assert!(text.contains("`lanes` must be a positive integer"), "{text}");
}

#[test]
fn device_with_no_route() {
    let text = BASE.to_string() + "\n[[gpu]]\nname = \"gpu2\"\nmodel = \"K40\"\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 34, "points at the unconnected GPU");
    assert!(text.contains("gpu `gpu2` has no route to gpu `gpu0`"), "{text}");
    assert!(text.contains("add a [[link]]"), "{text}");
}

#[test]
fn gpu_reachable_only_through_another_gpu_has_no_route() {
    // GPUs do not forward: gpu2 hangs off gpu1 only, so the host cannot reach it.
    let text = BASE.to_string()
        + "\n[[gpu]]\nname = \"gpu2\"\nmodel = \"K40\"\n\n[[link]]\na = \"gpu1\"\nb = \"gpu2\"\ntype = \"pcie3\"\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 34);
    assert!(text.contains("has no route"), "{text}");
}

#[test]
fn duplicate_link() {
    let text = BASE.to_string() + "\n[[link]]\na = \"gpu0\"\nb = \"cpu0\"\ntype = \"pcie3\"\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 34);
    assert!(text.contains("duplicate link between `gpu0` and `cpu0` (first at line 21)"), "{text}");
    assert!(text.contains("`lanes`"), "{text}");
}

#[test]
fn unknown_key_is_not_ignored() {
    let (line, text) = error_of(&BASE.replacen("bandwidth_gb_s", "bandwith_gb_s", 1));
    assert_eq!(line, 5);
    assert!(text.contains("unknown field `bandwith_gb_s`"), "{text}");
    assert!(text.contains("SCHEMA.md"), "{text}");
}

#[test]
fn unknown_key_in_a_gpu_table() {
    let (line, text) =
        error_of(&BASE.replacen(r#"model = "K40""#, "model = \"K40\"\ncopy_engine = 2", 1));
    assert_eq!(line, 16);
    assert!(text.contains("unknown field `copy_engine`"), "{text}");
}

#[test]
fn missing_key() {
    let (line, text) = error_of(&BASE.replacen("latency_ns = 150.0\n", "", 1));
    assert_eq!(line, 3, "points at the table that lacks it");
    assert!(text.contains("latency_ns"), "{text}");
}

#[test]
fn toml_syntax_error() {
    let (line, _) = error_of(&BASE.replacen("lanes = 16", "lanes = = 16", 1));
    assert_eq!(line, 25);
}

#[test]
fn duplicate_device_name() {
    let (line, text) = error_of(&BASE.replacen(r#"name = "gpu1""#, r#"name = "gpu0""#, 1));
    assert_eq!(line, 18);
    assert!(text.contains("duplicate device name `gpu0` (first declared at line 14)"), "{text}");
}

#[test]
fn unknown_link_type_and_kind() {
    let (line, text) = error_of(&BASE.replacen(r#"type = "pcie3""#, r#"type = "pcie4""#, 1));
    assert_eq!(line, 24);
    assert!(text.contains("unknown link type `pcie4`") && text.contains("pcie3"), "{text}");
    let (line, text) = error_of(&BASE.replacen(r#"kind = "pcie""#, r#"kind = "pci""#, 1));
    assert_eq!(line, 4);
    assert!(text.contains("unknown link kind `pci`"), "{text}");
}

#[test]
fn route_override_must_follow_links() {
    let text = BASE.to_string() + "\n[[route]]\nfrom = \"gpu0\"\nto = \"gpu1\"\nvia = []\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 36);
    assert!(text.contains("which no [[link]] joins"), "{text}");
}

#[test]
fn route_override_and_peer_override_apply() {
    let text = BASE.to_string() + "\n[[peer]]\na = \"gpu0\"\nb = \"gpu1\"\naccess = false\n";
    let t = Topology::from_str("ok.toml", &text).unwrap();
    assert!(!t.peer_access(0, 1) && !t.peer_access(1, 0));
}

#[test]
fn no_gpus() {
    let (line, text) = error_of("name = \"empty\"\n");
    assert_eq!(line, 1);
    assert!(text.contains("no GPUs"), "{text}");
}

#[test]
fn bad_gpu_model_constant_in_the_file() {
    let text = BASE.to_string()
        + r#"
[gpu_model.Mine]
sm_count = 0
resident_threads_per_sm = 2048
memory_mib = 1024
memory_bandwidth_gb_s = 100.0
launch_overhead_ns = 1.0
sync_overhead_ns = 1.0
kernel_min_ns = 1.0
dependent_access_ns = 1.0
item_ps = 1.0
edge_ps = 1.0
atomic_ps = 1.0
copy_setup_ns = 1.0
"#;
    let (line, text) = error_of(&text);
    assert_eq!(line, 34);
    assert!(text.contains("`sm_count` must be a positive integer"), "{text}");
}

#[test]
fn missing_file_and_unknown_bundled_name() {
    let err = Topology::load("/nonexistent/x.toml").unwrap_err();
    let shown = err.to_string();
    assert!(shown.starts_with("/nonexistent/x.toml: cannot read"), "{shown}");
    assert!(shown.contains("fix:"), "{shown}");
    let err = Topology::bundled("dgx2").unwrap_err().to_string();
    assert!(err.contains("dgx1-v100") && err.contains("fix:"), "{err}");
}

#[test]
fn route_override_to_itself() {
    let text = BASE.to_string() + "\n[[route]]\nfrom = \"gpu0\"\nto = \"gpu0\"\nvia = [\"cpu0\"]\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 35);
    assert!(text.contains("route from `gpu0` to itself"), "{text}");
}

#[test]
fn route_override_naming_an_unknown_device() {
    let text = BASE.to_string() + "\n[[route]]\nfrom = \"gpu0\"\nto = \"gpu1\"\nvia = [\"sw9\"]\n";
    let (line, text) = error_of(&text);
    assert_eq!(line, 36);
    assert!(text.contains("`sw9`, which is not declared"), "{text}");
}

/// A GPU model with the host model keys `extra` (the bundled K40's constants otherwise).
fn model_with(extra: &str) -> String {
    BASE.replace("model = \"K40\"", "model = \"Mine\"")
        + r#"
[gpu_model.Mine]
sm_count = 15
resident_threads_per_sm = 2048
memory_mib = 1024
memory_bandwidth_gb_s = 100.0
launch_overhead_ns = 1.0
sync_overhead_ns = 1.0
kernel_min_ns = 1.0
dependent_access_ns = 1.0
item_ps = 1.0
edge_ps = 1.0
atomic_ps = 1.0
copy_setup_ns = 1.0
"# + extra
}

#[test]
fn a_host_cost_per_operation_kind_without_launch_issue_is_an_error() {
    let (line, text) = error_of(&model_with("wait_issue_ns = 2.5\n"));
    assert_eq!(line, 46);
    assert!(text.contains("`wait_issue_ns` is given without `launch_issue_ns`"), "{text}");
    assert!(text.contains("add `launch_issue_ns`"), "{text}");
}

#[test]
fn a_poll_cost_without_launch_issue_is_an_error() {
    let (line, text) = error_of(&model_with("poll_query_ns = 0.5\n"));
    assert_eq!(line, 46);
    assert!(text.contains("`poll_query_ns` is given without `launch_issue_ns`"), "{text}");
    assert!(text.contains("add `launch_issue_ns`"), "{text}");
}

#[test]
fn host_costs_per_operation_kind_default_to_the_launch_issue() {
    use switchyard_sim::gpu::HostIssue;
    let text = model_with("launch_issue_ns = 10.0\nrecord_issue_ns = 0.5\ncopy_issue_ns = 4.0\n");
    let t = Topology::from_str("host.toml", &text).unwrap();
    let host = t.gpus[0].model.host.expect("a host model");
    assert_eq!(
        host,
        HostIssue {
            launch_ps: 10_000,
            launch_lead_ps: 10_000,
            copy_ps: 4_000,
            read_ps: 10_000,
            write_ps: 10_000,
            record_ps: 500,
            wait_ps: 10_000,
            poll_query_ps: 0,
        }
    );
    // Polling for a completion is not an issue: it defaults to nothing, and may be given.
    let text = model_with("launch_issue_ns = 10.0\npoll_query_ns = 0.75\n");
    let t = Topology::from_str("poll.toml", &text).unwrap();
    assert_eq!(t.gpus[0].model.host.expect("a host model").poll_query_ps, 750);
    // Without launch_issue_ns there is no host model.
    let t = Topology::from_str("free.toml", &model_with("")).unwrap();
    assert_eq!(t.gpus[0].model.host, None);
    let (line, text) = error_of(&model_with("launch_issue_ns = 10.0\nread_issue_ns = -1.0\n"));
    assert_eq!(line, 47);
    assert!(text.contains("read_issue_ns"), "{text}");
}

/// `model_with("")` and a `[gpu_model.Mine.kernel_cost.k]` table with the keys `keys`.
fn kernel_cost_with(keys: &str) -> String {
    model_with("") + "\n[gpu_model.Mine.kernel_cost.k]\nfixed_ns = 5.0\nsource = \"test\"\n" + keys
}

#[test]
fn a_kernel_costs_path_edge_price_is_read_and_must_not_be_negative() {
    let t = Topology::from_str("path.toml", &kernel_cost_with("path_edge_ps = 8812.6\n")).unwrap();
    assert_eq!(t.gpus[0].model.kernel_costs["k"].path_edge_ps, 8_813);
    let t = Topology::from_str("plain.toml", &kernel_cost_with("")).unwrap();
    assert_eq!(t.gpus[0].model.kernel_costs["k"].path_edge_ps, 0);
    let (_, text) = error_of(&kernel_cost_with("path_edge_ps = -1.0\n"));
    assert!(text.contains("path_edge_ps"), "{text}");
}

#[test]
fn a_kernel_costs_ramp_is_read_and_needs_both_keys() {
    let t = Topology::from_str(
        "ramp.toml",
        &kernel_cost_with("ramp_item_ps = 30.4\nramp_items = 256\n"),
    )
    .unwrap();
    let k = t.gpus[0].model.kernel_costs["k"];
    assert_eq!((k.fixed_ps, k.ramp_item_ps, k.ramp_items), (5_000, 30, 256));
    // Without the keys: no ramp.
    let t = Topology::from_str("plain.toml", &kernel_cost_with("")).unwrap();
    assert_eq!(
        (
            t.gpus[0].model.kernel_costs["k"].ramp_item_ps,
            t.gpus[0].model.kernel_costs["k"].ramp_items
        ),
        (0, 0)
    );
    let (line, text) = error_of(&kernel_cost_with("ramp_item_ps = 30.0\n"));
    assert_eq!(line, 50);
    assert!(text.contains("`ramp_item_ps` without `ramp_items`"), "{text}");
    assert!(text.contains("add `ramp_items`"), "{text}");
    let (line, text) = error_of(&kernel_cost_with("ramp_items = 256\n"));
    assert_eq!(line, 50);
    assert!(text.contains("`ramp_items` without `ramp_item_ps`"), "{text}");
    let (line, text) = error_of(&kernel_cost_with("ramp_item_ps = 30.0\nramp_items = 0\n"));
    assert_eq!(line, 51);
    assert!(text.contains("`ramp_items` must be a positive integer"), "{text}");
}

#[test]
fn a_launch_lead_defaults_to_the_whole_launch_and_may_not_exceed_it() {
    // Absent, a kernel joins its stream once its launch is issued (as before the key).
    let t = Topology::from_str("lead.toml", &model_with("launch_issue_ns = 10.0\n")).unwrap();
    assert_eq!(t.gpus[0].model.host.expect("a host model").launch_lead_ps, 10_000);
    let text = model_with("launch_issue_ns = 10.0\nlaunch_lead_ns = 0.5\n");
    let t = Topology::from_str("lead.toml", &text).unwrap();
    let host = t.gpus[0].model.host.expect("a host model");
    assert_eq!((host.launch_ps, host.launch_lead_ps), (10_000, 500));
    let (line, text) = error_of(&model_with("launch_issue_ns = 10.0\nlaunch_lead_ns = 12.0\n"));
    assert_eq!(line, 47);
    assert!(text.contains("`launch_lead_ns` (12 ns) is longer than `launch_issue_ns` (10 ns)"));
    let (line, text) = error_of(&model_with("launch_lead_ns = 0.5\n"));
    assert_eq!(line, 46);
    assert!(text.contains("`launch_lead_ns` is given without `launch_issue_ns`"), "{text}");
}

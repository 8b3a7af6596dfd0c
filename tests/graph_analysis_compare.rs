//! Degree statistics of generated graphs next to the real graphs in `tests/data/graphs/`.
//!
//! Ignored by default (loads cnr-2000, 3.2M arcs); run in release to regenerate the table in
//! `src/graph/generate/README.md`:
//! `cargo test --release --test graph_analysis_compare -- --ignored --nocapture`

use std::path::PathBuf;
use switchyard::graph::generate::{GeneratorSpec, generate};
use switchyard::graph::summary::{GraphSummary, summarize};
use switchyard::graph::{LoadOptions, load_graph};

/// Loads a real graph; `directed` overrides the file where its format cannot say (SNAP's
/// facebook_combined is undirected, per tests/data/graphs/README.md).
fn real(name: &str, directed: Option<bool>) -> GraphSummary {
    let options = LoadOptions { directed, ..LoadOptions::default() };
    summarize(&load_graph(&graph_path(name), &options).expect("real graph loads").csr)
}

/// A real graph of the test data, in the repository (`tests/data/graphs/`, sources and
/// terms in the README there).
fn graph_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs").join(name)
}

fn generated(spec: &str) -> GraphSummary {
    summarize(&generate(&GeneratorSpec::parse(spec).unwrap()).unwrap())
}

fn row(name: &str, s: &GraphSummary) {
    println!(
        "| {name} | {} | {} | {} | {} | {:.2} | {:.3} | {:.3} | {} | {} | {} |",
        s.vertices,
        s.edges,
        s.degree_min,
        s.degree_max,
        s.degree_mean,
        s.degree_gini,
        s.degree_entropy,
        s.diameter_approx,
        s.weak_components,
        s.largest_component_vertices
    );
}

#[test]
#[ignore = "loads the real graphs; run with --ignored in release"]
fn compare_generated_with_real_graphs() {
    println!(
        "| graph | vertices | edges | deg min | deg max | deg mean | Gini | entropy | diameter ~ | WCCs | largest WCC |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let groups: [(&str, Option<bool>, &[&str]); 3] = [
        (
            "luxembourg_osm.mtx",
            None,
            &[
                "rgg:n=114599,degree=2.09,seed=1",
                "rgg:n=114599,degree=3,seed=1",
                "grid2d:w=339,h=338,drop=0.45,seed=1",
            ],
        ),
        (
            "cnr-2000.txt.gz",
            None,
            &[
                "rmat:scale=18,ef=12,directed=true,seed=1",
                "rmat:scale=18,ef=12,noise=0.1,dedup=true,directed=true,seed=1",
                "rmat:scale=18,ef=12,a=0.45,b=0.2,c=0.2,noise=0.1,dedup=true,directed=true,seed=1",
            ],
        ),
        (
            "facebook_combined.txt",
            Some(false),
            &[
                "rmat:scale=12,ef=22,seed=1",
                "rmat:scale=12,ef=22,noise=0.1,dedup=true,seed=1",
                "rmat:scale=12,ef=25,a=0.45,b=0.2,c=0.2,noise=0.1,dedup=true,seed=1",
                "er:n=4039,m=88234,seed=1",
            ],
        ),
    ];
    for (file, directed, specs) in groups {
        let r = real(file, directed);
        row(&format!("**{file}**"), &r);
        for spec in specs {
            let g = generated(spec);
            row(&format!("`{spec}`"), &g);
            if spec.starts_with("rgg:n=114599,degree=2.09") {
                // Road-like: same mean degree, degree <= 8, diameter within 2x of the real one.
                assert!((g.degree_mean - r.degree_mean).abs() < 0.05);
                assert!(g.degree_max <= 8);
                let ratio = g.diameter_approx as f64 / r.diameter_approx as f64;
                assert!((0.5..2.0).contains(&ratio), "diameter ratio {ratio}");
            }
            if spec.starts_with("rmat") {
                // Scale-free: Gini well above the road graphs' and max degree >> mean.
                assert!(
                    g.degree_gini > 0.45 && g.degree_max as f64 > 10.0 * g.degree_mean,
                    "{g:?}"
                );
            }
        }
    }
}

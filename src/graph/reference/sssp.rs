//! Single-source shortest-path distances on petgraph's `dijkstra`.

use super::{CsrView, check_source};
use crate::graph::{Csr, EdgeWeights, GraphError, VertexId};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

/// Distance of a vertex the source cannot reach (integer weights). Float distances use
/// `f64::INFINITY`.
pub const SSSP_UNREACHED_INT: u64 = u64::MAX;

/// Shortest-path distances with the CSR's integer weights (exact; [`SSSP_UNREACHED_INT`]
/// where unreachable).
pub fn sssp_distances_int(csr: &Csr, source: VertexId) -> Result<Vec<u64>, GraphError> {
    check_source(csr, source, "SSSP")?;
    let weights = match csr.weights() {
        Some(EdgeWeights::Int(w)) => w,
        Some(EdgeWeights::Float(_)) => {
            return Err(GraphError::WrongWeights {
                algorithm: "integer SSSP reference".into(),
                reason: "the graph has float weights; use sssp_distances_float".into(),
            });
        }
        None => return Err(missing("integer SSSP reference")),
    };
    let graph = CsrView(csr);
    let found = petgraph::algo::dijkstra(graph, NodeIndex::new(source as usize), None, |e| {
        u64::from(weights[*e.weight() as usize])
    });
    let mut dist = vec![SSSP_UNREACHED_INT; csr.num_vertices() as usize];
    for (v, d) in found {
        dist[v.index()] = d;
    }
    Ok(dist)
}

/// Shortest-path distances with the CSR's weights as `f64` (integer weights are converted
/// exactly); `f64::INFINITY` where unreachable. Negative or NaN weights are an error.
pub fn sssp_distances_float(csr: &Csr, source: VertexId) -> Result<Vec<f64>, GraphError> {
    check_source(csr, source, "SSSP")?;
    let weights = csr.weights().ok_or_else(|| missing("float SSSP reference"))?;
    if let EdgeWeights::Float(w) = weights
        && let Some(arc) = w.iter().position(|x| x.is_nan() || *x < 0.0)
    {
        return Err(GraphError::WrongWeights {
            algorithm: "float SSSP reference".into(),
            reason: format!(
                "arc {arc} has weight {}; Dijkstra needs non-negative numbers: fix or drop \
                 that edge in the input",
                w[arc]
            ),
        });
    }
    let graph = CsrView(csr);
    let found = petgraph::algo::dijkstra(graph, NodeIndex::new(source as usize), None, |e| {
        weights.get_f64(*e.weight() as usize)
    });
    let mut dist = vec![f64::INFINITY; csr.num_vertices() as usize];
    for (v, d) in found {
        dist[v.index()] = d;
    }
    Ok(dist)
}

/// Shortest-path distances summed in `f32` arithmetic, as a GPU adds them: the minimum over
/// paths of the left-to-right `f32` sum of their weights (`f32::INFINITY` when unreached).
/// Round-to-nearest addition of a non-negative weight is monotone and never decreases a
/// sum, so Dijkstra's order is still right and any label-correcting run that relaxes every
/// arc until nothing improves (bulk-synchronous or asynchronous, in any order) reaches
/// exactly these values: runs on real weights are compared with it bit for bit.
pub fn sssp_distances_f32(csr: &Csr, source: VertexId) -> Result<Vec<f32>, GraphError> {
    check_source(csr, source, "SSSP")?;
    let Some(EdgeWeights::Float(w)) = csr.weights() else {
        return Err(missing("f32 SSSP reference (real weights)"));
    };
    if let Some(arc) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return Err(GraphError::WrongWeights {
            algorithm: "f32 SSSP reference".into(),
            reason: format!(
                "arc {arc} has weight {}; Dijkstra needs finite non-negative numbers: fix or \
                 drop that edge in the input",
                w[arc]
            ),
        });
    }
    let graph = CsrView(csr);
    let found = petgraph::algo::dijkstra(graph, NodeIndex::new(source as usize), None, |e| {
        w[*e.weight() as usize]
    });
    let mut dist = vec![f32::INFINITY; csr.num_vertices() as usize];
    for (v, d) in found {
        dist[v.index()] = d;
    }
    Ok(dist)
}

fn missing(algorithm: &str) -> GraphError {
    GraphError::WrongWeights {
        algorithm: algorithm.into(),
        reason: "the graph has no edge weights; load a weighted file or add weights \
                 (e.g. generator key `weights=1..64`)"
            .into(),
    }
}

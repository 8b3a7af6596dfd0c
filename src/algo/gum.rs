//! The algorithms' operators for GUM (seed 001): each algorithm's bulk-synchronous
//! primitive, and for the min-combined ones the rule a thief relaxes stolen edges with.
//! Additive algorithms (PageRank) run on GUM without frontier stealing: their returned
//! shares would need an additive merge of stolen results, and their per-iteration load is
//! the whole graph, which a random partition already balances (§VI Exp-5: "for the PR, the
//! workload does not change in each iteration, thus the effectiveness of our stealing is
//! limited").

use super::bfs::Bfs;
use super::cc::ConnectedComponents;
use super::pagerank::{PageRankLdbc, PageRankResidual};
use super::sssp::{Sssp, SsspWeights};
use crate::runtime::gum::GumOperators;
use crate::runtime::gum::kernels::StealRule;

/// BFS: a stolen edge offers its source's level plus one.
pub(super) fn bfs(bfs: &Bfs) -> Option<GumOperators> {
    Some(GumOperators { primitive: Box::new(bfs.clone()), steal: Some(StealRule::MinPlusOne) })
}

/// SSSP: distance plus the edge's weight (integer weights; real-weighted SSSP runs without
/// stealing, since its values are `f32` bits).
pub(super) fn sssp(sssp: &Sssp) -> Option<GumOperators> {
    let steal = (sssp.weights == SsspWeights::Int).then_some(StealRule::MinPlusWeight);
    Some(GumOperators { primitive: Box::new(sssp.clone()), steal })
}

/// Weakly connected components: the source's label.
pub(crate) fn cc(cc: &ConnectedComponents) -> Option<GumOperators> {
    Some(GumOperators { primitive: Box::new(cc.clone()), steal: Some(StealRule::MinCopy) })
}

/// LDBC PageRank: no stealing (see the module docs), in the direction `--pr-direction`
/// asks (pull by default, as on the bulk-synchronous runtime: GUM's fragments then carry the
/// transpose of their own arcs; PageRank never moves ownership, so it is built once).
pub(super) fn pagerank(pr: &PageRankLdbc) -> Option<GumOperators> {
    Some(GumOperators { primitive: Box::new(pr.clone()), steal: None })
}

/// Residual PageRank: no stealing (see the module docs).
pub(super) fn pagerank_residual(pr: &PageRankResidual) -> Option<GumOperators> {
    Some(GumOperators { primitive: Box::new(pr.clone()), steal: None })
}

//! The CSR seen as a petgraph graph without a copy: petgraph's walkers and `dijkstra` run
//! on [`CsrView`] through its visit traits. A copy into petgraph's `Graph` took 24 bytes per
//! arc (an R-MAT scale-24 graph: 12.9 GB), more than the CSR itself and every simulated
//! GPU's subgraph together; the view takes none.
//!
//! Every arc's petgraph weight is its arc index in the CSR, so costs are looked up in the
//! CSR's own weight array. An undirected CSR already stores both arcs of every edge, so the
//! directed view walks it correctly.

use crate::graph::{Csr, VertexId};
use petgraph::graph::NodeIndex;
use petgraph::visit::{
    Data, EdgeRef, GraphBase, GraphRef, IntoEdgeReferences, IntoEdges, IntoNeighbors, VisitMap,
    Visitable,
};

/// A CSR as a directed petgraph graph (borrowed, nothing copied).
#[derive(Clone, Copy)]
pub(crate) struct CsrView<'a>(pub &'a Csr);

/// One arc: its endpoints and its index in the CSR (its petgraph weight and id).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArcRef {
    source: NodeIndex<u32>,
    target: NodeIndex<u32>,
    arc: u64,
}

impl EdgeRef for ArcRef {
    type NodeId = NodeIndex<u32>;
    type EdgeId = u64;
    type Weight = u64;
    fn source(&self) -> NodeIndex<u32> {
        self.source
    }
    fn target(&self) -> NodeIndex<u32> {
        self.target
    }
    fn weight(&self) -> &u64 {
        &self.arc
    }
    fn id(&self) -> u64 {
        self.arc
    }
}

/// Visited vertices, one bit each.
pub(crate) struct Visited(Vec<u64>);

impl Visited {
    fn new(n: usize) -> Self {
        Visited(vec![0; n.div_ceil(64)])
    }
}

impl VisitMap<NodeIndex<u32>> for Visited {
    fn visit(&mut self, a: NodeIndex<u32>) -> bool {
        let (word, bit) = (a.index() / 64, 1u64 << (a.index() % 64));
        let first = self.0[word] & bit == 0;
        self.0[word] |= bit;
        first
    }
    fn is_visited(&self, a: &NodeIndex<u32>) -> bool {
        self.0[a.index() / 64] & (1u64 << (a.index() % 64)) != 0
    }
    fn unvisit(&mut self, a: NodeIndex<u32>) -> bool {
        let (word, bit) = (a.index() / 64, 1u64 << (a.index() % 64));
        let was = self.0[word] & bit != 0;
        self.0[word] &= !bit;
        was
    }
}

impl GraphBase for CsrView<'_> {
    type NodeId = NodeIndex<u32>;
    type EdgeId = u64;
}

impl GraphRef for CsrView<'_> {}

impl Data for CsrView<'_> {
    type NodeWeight = ();
    type EdgeWeight = u64;
}

impl Visitable for CsrView<'_> {
    type Map = Visited;
    fn visit_map(&self) -> Visited {
        Visited::new(self.0.num_vertices() as usize)
    }
    fn reset_map(&self, map: &mut Visited) {
        map.0.iter_mut().for_each(|w| *w = 0);
        map.0.resize((self.0.num_vertices() as usize).div_ceil(64), 0);
    }
}

/// The arcs out of one vertex.
pub(crate) struct Arcs<'a> {
    csr: &'a Csr,
    source: VertexId,
    arcs: std::ops::Range<usize>,
}

impl Iterator for Arcs<'_> {
    type Item = ArcRef;
    fn next(&mut self) -> Option<ArcRef> {
        let arc = self.arcs.next()?;
        Some(ArcRef {
            source: NodeIndex::new(self.source as usize),
            target: NodeIndex::new(self.csr.targets()[arc] as usize),
            arc: arc as u64,
        })
    }
}

/// The neighbours of one vertex (one per arc, repeats included).
pub(crate) struct Neighbors<'a>(std::slice::Iter<'a, VertexId>);

impl Iterator for Neighbors<'_> {
    type Item = NodeIndex<u32>;
    fn next(&mut self) -> Option<NodeIndex<u32>> {
        self.0.next().map(|&v| NodeIndex::new(v as usize))
    }
}

impl<'a> IntoNeighbors for CsrView<'a> {
    type Neighbors = Neighbors<'a>;
    fn neighbors(self, a: NodeIndex<u32>) -> Neighbors<'a> {
        Neighbors(self.0.neighbors(a.index() as VertexId).iter())
    }
}

/// Every arc, vertex by vertex.
pub(crate) struct AllArcs<'a> {
    csr: &'a Csr,
    next_vertex: VertexId,
    current: Arcs<'a>,
}

impl Iterator for AllArcs<'_> {
    type Item = ArcRef;
    fn next(&mut self) -> Option<ArcRef> {
        loop {
            if let Some(arc) = self.current.next() {
                return Some(arc);
            }
            if self.next_vertex >= self.csr.num_vertices() {
                return None;
            }
            let v = self.next_vertex;
            self.next_vertex += 1;
            self.current = Arcs { csr: self.csr, source: v, arcs: self.csr.arc_range(v) };
        }
    }
}

impl<'a> IntoEdgeReferences for CsrView<'a> {
    type EdgeRef = ArcRef;
    type EdgeReferences = AllArcs<'a>;
    fn edge_references(self) -> AllArcs<'a> {
        AllArcs {
            csr: self.0,
            next_vertex: 0,
            current: Arcs { csr: self.0, source: 0, arcs: 0..0 },
        }
    }
}

impl<'a> IntoEdges for CsrView<'a> {
    type Edges = Arcs<'a>;
    fn edges(self, a: NodeIndex<u32>) -> Arcs<'a> {
        let source = a.index() as VertexId;
        Arcs { csr: self.0, source, arcs: self.0.arc_range(source) }
    }
}

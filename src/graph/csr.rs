//! Compressed sparse row graph: the one in-memory graph representation of switchyard.
//!
//! Vertex ids are `u32`, edge offsets `u64`. An undirected graph stores both arcs of every
//! edge (a self-loop once), so kernels only ever walk out-neighbours. Weights, when present,
//! are stored per arc, aligned with `targets`.

use super::GraphError;

/// Vertex id. Graphs have at most `u32::MAX` vertices.
pub type VertexId = u32;

/// Per-arc edge weights, aligned with [`Csr::targets`].
#[derive(Clone, Debug, PartialEq)]
pub enum EdgeWeights {
    /// Integer weights (the papers' SSSP setting: uniform 1..=64).
    Int(Vec<u32>),
    /// Floating-point weights, where a file format gives floats.
    Float(Vec<f32>),
}

impl EdgeWeights {
    /// Number of weights stored.
    pub fn len(&self) -> usize {
        match self {
            EdgeWeights::Int(w) => w.len(),
            EdgeWeights::Float(w) => w.len(),
        }
    }

    /// True when no weights are stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The weights as 32-bit words, the way devices hold them: integer weights as they
    /// are, real weights as their IEEE-754 `f32` bits (borrowed for integers, copied for
    /// floats). Kernels know from their contract which of the two they read.
    pub fn words(&self) -> std::borrow::Cow<'_, [u32]> {
        match self {
            EdgeWeights::Int(w) => std::borrow::Cow::Borrowed(w),
            EdgeWeights::Float(w) => {
                std::borrow::Cow::Owned(w.iter().map(|x| x.to_bits()).collect())
            }
        }
    }

    /// Whether the weights are real numbers (`f32`) rather than integers.
    pub fn is_float(&self) -> bool {
        matches!(self, EdgeWeights::Float(_))
    }

    /// Weight of arc `arc` as `f64` (exact for integer weights).
    pub fn get_f64(&self, arc: usize) -> f64 {
        match self {
            EdgeWeights::Int(w) => f64::from(w[arc]),
            EdgeWeights::Float(w) => f64::from(w[arc]),
        }
    }
}

/// How to clean an edge list while building a CSR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Drop arcs `(v, v)`.
    pub drop_self_loops: bool,
    /// Keep only the first arc of every `(u, v)` pair (after symmetrising).
    pub drop_duplicates: bool,
}

/// A graph in compressed sparse row form.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    offsets: Vec<u64>,
    targets: Vec<VertexId>,
    weights: Option<EdgeWeights>,
    directed: bool,
}

impl Csr {
    /// Builds a CSR from raw parts, checking that they are consistent.
    pub fn from_parts(
        offsets: Vec<u64>,
        targets: Vec<VertexId>,
        weights: Option<EdgeWeights>,
        directed: bool,
    ) -> Result<Self, GraphError> {
        let bad = |what: String| Err(GraphError::InvalidCsr(what));
        if offsets.is_empty() {
            return bad("offsets must hold num_vertices + 1 entries, found none".into());
        }
        if offsets.len() - 1 > u32::MAX as usize {
            return bad(format!("{} vertices exceed the u32 id space", offsets.len() - 1));
        }
        if offsets[0] != 0 || *offsets.last().unwrap_or(&0) != targets.len() as u64 {
            return bad(format!(
                "offsets must start at 0 and end at the arc count {}, found {}..{}",
                targets.len(),
                offsets[0],
                offsets.last().copied().unwrap_or(0)
            ));
        }
        if let Some(pos) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return bad(format!("offsets decrease at vertex {pos}"));
        }
        let n = (offsets.len() - 1) as u64;
        if let Some(t) = targets.iter().find(|&&t| u64::from(t) >= n) {
            return bad(format!("target {t} is out of range for {n} vertices"));
        }
        if let Some(w) = &weights
            && w.len() != targets.len()
        {
            return bad(format!("{} weights for {} arcs", w.len(), targets.len()));
        }
        Ok(Csr { offsets, targets, weights, directed })
    }

    /// Builds a CSR with `num_vertices` vertices from an edge list (counting sort, stable:
    /// arcs of one vertex keep their input order). For an undirected graph every edge
    /// `(u, v)` yields the arcs `u->v` and `v->u` (a self-loop yields one arc).
    pub fn from_edges(
        num_vertices: u32,
        edges: &[(VertexId, VertexId)],
        weights: Option<EdgeWeights>,
        directed: bool,
        options: BuildOptions,
    ) -> Result<Self, GraphError> {
        let n = num_vertices as usize;
        if let Some(&(u, v)) = edges.iter().find(|&&(u, v)| u >= num_vertices || v >= num_vertices)
        {
            return Err(GraphError::InvalidCsr(format!(
                "edge ({u}, {v}) is out of range for {num_vertices} vertices"
            )));
        }
        if let Some(w) = &weights
            && w.len() != edges.len()
        {
            return Err(GraphError::InvalidCsr(format!(
                "{} weights for {} edges",
                w.len(),
                edges.len()
            )));
        }
        let keep = |&(u, v): &(u32, u32)| !(options.drop_self_loops && u == v);
        let mut degree = vec![0u64; n + 1];
        for e in edges.iter().filter(|e| keep(e)) {
            degree[e.0 as usize + 1] += 1;
            if !directed && e.0 != e.1 {
                degree[e.1 as usize + 1] += 1;
            }
        }
        for i in 0..n {
            degree[i + 1] += degree[i];
        }
        let offsets = degree;
        let arcs = offsets[n] as usize;
        let mut cursor: Vec<u64> = offsets[..n].to_vec();
        let mut targets = vec![0u32; arcs];
        let mut new_weights = weights.as_ref().map(|w| match w {
            EdgeWeights::Int(_) => EdgeWeights::Int(vec![0; arcs]),
            EdgeWeights::Float(_) => EdgeWeights::Float(vec![0.0; arcs]),
        });
        let mut place = |from: u32, to: u32, index: usize| {
            let slot = cursor[from as usize] as usize;
            cursor[from as usize] += 1;
            targets[slot] = to;
            match (&mut new_weights, &weights) {
                (Some(EdgeWeights::Int(dst)), Some(EdgeWeights::Int(src))) => {
                    dst[slot] = src[index]
                }
                (Some(EdgeWeights::Float(dst)), Some(EdgeWeights::Float(src))) => {
                    dst[slot] = src[index]
                }
                _ => {}
            }
        };
        for (index, e) in edges.iter().enumerate().filter(|(_, e)| keep(e)) {
            place(e.0, e.1, index);
            if !directed && e.0 != e.1 {
                place(e.1, e.0, index);
            }
        }
        let csr = Csr { offsets, targets, weights: new_weights, directed };
        Ok(if options.drop_duplicates { csr.without_duplicate_arcs() } else { csr })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of stored arcs (an undirected edge counts twice, a self-loop once).
    pub fn num_arcs(&self) -> u64 {
        self.targets.len() as u64
    }

    /// Whether the graph is directed.
    pub fn is_directed(&self) -> bool {
        self.directed
    }

    /// Offsets array (`num_vertices + 1` entries).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Targets array, one entry per arc.
    pub fn targets(&self) -> &[VertexId] {
        &self.targets
    }

    /// Per-arc weights, if the graph is weighted.
    pub fn weights(&self) -> Option<&EdgeWeights> {
        self.weights.as_ref()
    }

    /// Replaces the weights (one per arc).
    pub fn set_weights(&mut self, weights: Option<EdgeWeights>) -> Result<(), GraphError> {
        if let Some(w) = &weights
            && w.len() != self.targets.len()
        {
            return Err(GraphError::InvalidCsr(format!(
                "{} weights for {} arcs",
                w.len(),
                self.targets.len()
            )));
        }
        self.weights = weights;
        Ok(())
    }

    /// Arc index range of vertex `v`.
    pub fn arc_range(&self, v: VertexId) -> std::ops::Range<usize> {
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    /// Out-neighbours of `v`.
    pub fn neighbors(&self, v: VertexId) -> &[VertexId] {
        &self.targets[self.arc_range(v)]
    }

    /// Out-degree of `v`.
    pub fn degree(&self, v: VertexId) -> u64 {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }

    /// Decomposes into `(offsets, targets, weights, directed)`.
    pub fn into_parts(self) -> (Vec<u64>, Vec<VertexId>, Option<EdgeWeights>, bool) {
        (self.offsets, self.targets, self.weights, self.directed)
    }

    /// The transpose (in-arcs become out-arcs), for pull-style kernels. An undirected graph
    /// is its own transpose and is returned as a copy.
    pub fn transpose(&self) -> Csr {
        if !self.directed {
            return self.clone();
        }
        let edges: Vec<(u32, u32)> = (0..self.num_vertices())
            .flat_map(|u| self.neighbors(u).iter().map(move |&v| (v, u)))
            .collect();
        Csr::from_edges(
            self.num_vertices(),
            &edges,
            self.weights.clone(),
            true,
            BuildOptions::default(),
        )
        .expect("transpose of a valid CSR is valid")
    }

    /// The undirected graph with an edge wherever this graph has an arc in either
    /// direction (duplicates removed), for weakly connected components. An undirected graph
    /// is returned as a copy.
    pub fn symmetrized(&self) -> Csr {
        if !self.directed {
            return self.clone();
        }
        let edges: Vec<(u32, u32)> = (0..self.num_vertices())
            .flat_map(|u| self.neighbors(u).iter().map(move |&v| (u, v)))
            .collect();
        let options = BuildOptions { drop_self_loops: false, drop_duplicates: true };
        Csr::from_edges(self.num_vertices(), &edges, None, false, options)
            .expect("arcs of a valid CSR are in range")
    }

    /// Copy with the arcs of every vertex sorted by target and repeated targets removed
    /// (the first arc's weight is kept).
    pub fn without_duplicate_arcs(&self) -> Csr {
        let n = self.num_vertices();
        let mut offsets = Vec::with_capacity(n as usize + 1);
        offsets.push(0u64);
        let mut targets = Vec::with_capacity(self.targets.len());
        let mut kept_arcs = Vec::with_capacity(self.targets.len());
        let mut order: Vec<usize> = Vec::new();
        for v in 0..n {
            order.clear();
            order.extend(self.arc_range(v));
            order.sort_by_key(|&a| (self.targets[a], a));
            let mut last = None;
            for &a in &order {
                if last != Some(self.targets[a]) {
                    last = Some(self.targets[a]);
                    targets.push(self.targets[a]);
                    kept_arcs.push(a);
                }
            }
            offsets.push(targets.len() as u64);
        }
        let weights = self.weights.as_ref().map(|w| match w {
            EdgeWeights::Int(w) => EdgeWeights::Int(kept_arcs.iter().map(|&a| w[a]).collect()),
            EdgeWeights::Float(w) => EdgeWeights::Float(kept_arcs.iter().map(|&a| w[a]).collect()),
        });
        Csr { offsets, targets, weights, directed: self.directed }
    }
}

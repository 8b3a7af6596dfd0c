//! Pieces shared by the edge-list style parsers: weight columns, per-chunk edge buffers,
//! and the sparse-id to dense-id map.

use super::text::{looks_integral, parse_error, parse_f32, parse_i64, show};
use crate::graph::{BuildOptions, Csr, EdgeWeights, GraphError, VertexId};
use rayon::prelude::*;

/// One parsed weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Weight {
    /// Written as an integer.
    Int(u32),
    /// Written as a float.
    Float(f32),
}

/// Which weight syntax a format allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WeightSyntax {
    /// Integers only.
    Int,
    /// Floats (an integer token is read as a float).
    Float,
    /// Integers, unless some token is written as a float; then all become floats.
    Auto,
}

/// Parses one weight token; negative, NaN and infinite weights and integers above
/// `u32::MAX` are errors (SSSP needs finite non-negative weights).
pub(crate) fn parse_weight(
    file: &str,
    line: u64,
    token: &[u8],
    syntax: WeightSyntax,
) -> Result<Weight, GraphError> {
    let fix = "SSSP needs finite non-negative weights; fix or drop this edge";
    let as_int =
        syntax == WeightSyntax::Int || (syntax == WeightSyntax::Auto && looks_integral(token));
    if as_int {
        let Some(v) = parse_i64(token) else {
            let what = if syntax == WeightSyntax::Int { "an integer weight" } else { "a weight" };
            return Err(parse_error(
                file,
                line,
                what,
                show(token),
                "write the weight as a decimal number",
            ));
        };
        if v < 0 {
            return Err(parse_error(file, line, "a non-negative weight", show(token), fix));
        }
        return u32::try_from(v).map(Weight::Int).map_err(|_| {
            parse_error(file, line, "an integer weight of at most 4294967295", show(token), fix)
        });
    }
    let Some(v) = parse_f32(token) else {
        return Err(parse_error(
            file,
            line,
            "a numeric weight",
            show(token),
            "write the weight as a decimal number",
        ));
    };
    if v.is_nan() || v.is_infinite() || v < 0.0 {
        return Err(parse_error(file, line, "a finite non-negative weight", show(token), fix));
    }
    Ok(Weight::Float(v))
}

/// A column of weights that starts as integers and turns into floats at the first float.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WeightColumn {
    /// All integers so far.
    Int(Vec<u32>),
    /// At least one float.
    Float(Vec<f32>),
}

impl Default for WeightColumn {
    fn default() -> Self {
        WeightColumn::Int(Vec::new())
    }
}

impl WeightColumn {
    /// Appends one weight.
    #[inline]
    pub(crate) fn push(&mut self, w: Weight) {
        match (&mut *self, w) {
            (WeightColumn::Int(v), Weight::Int(x)) => v.push(x),
            (WeightColumn::Float(v), Weight::Float(x)) => v.push(x),
            (WeightColumn::Float(v), Weight::Int(x)) => v.push(x as f32),
            (WeightColumn::Int(v), Weight::Float(x)) => {
                let mut f: Vec<f32> = v.iter().map(|&i| i as f32).collect();
                f.push(x);
                *self = WeightColumn::Float(f);
            }
        }
    }

    /// Concatenates columns in order; floats win.
    pub(crate) fn concat(columns: Vec<WeightColumn>) -> EdgeWeights {
        let any_float = columns.iter().any(|c| matches!(c, WeightColumn::Float(_)));
        if any_float {
            let mut out = Vec::new();
            for c in columns {
                match c {
                    WeightColumn::Int(v) => out.extend(v.into_iter().map(|i| i as f32)),
                    WeightColumn::Float(v) => out.extend(v),
                }
            }
            EdgeWeights::Float(out)
        } else {
            let mut out = Vec::new();
            for c in columns {
                if let WeightColumn::Int(v) = c {
                    out.extend(v);
                }
            }
            EdgeWeights::Int(out)
        }
    }
}

/// Edges of one chunk of an edge list whose ids are not yet dense.
#[derive(Debug, Default)]
pub(crate) struct RawEdgeChunk {
    /// `(source, target)` in the file's own ids.
    pub(crate) edges: Vec<(u64, u64)>,
    /// Weights, when lines carry a third column.
    pub(crate) weights: WeightColumn,
    /// Line of the first edge, and whether it carried a weight.
    pub(crate) first: Option<(u64, bool)>,
}

/// Checks that every chunk agrees on whether edges carry weights; returns that choice.
pub(crate) fn agree_on_weights(file: &str, chunks: &[RawEdgeChunk]) -> Result<bool, GraphError> {
    let mut seen: Option<(u64, bool)> = None;
    for (line, weighted) in chunks.iter().filter_map(|c| c.first) {
        match seen {
            None => seen = Some((line, weighted)),
            Some((first_line, first_weighted)) if first_weighted != weighted => {
                let (want, got) =
                    if first_weighted { ("3 columns", "2") } else { ("2 columns", "3") };
                return Err(parse_error(
                    file,
                    line,
                    format!("{want} like the edge on line {first_line}"),
                    format!("{got} columns"),
                    "give every edge a weight or none",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(seen.is_some_and(|(_, w)| w))
}

/// Maps a file's vertex ids to dense ids `0..n` in ascending file-id order.
#[derive(Clone, Debug)]
pub(crate) struct IdMap {
    /// Dense id -> file id, ascending.
    sorted_ids: Vec<u64>,
    /// File id -> dense id + 1 (0: absent), when the largest id is small enough.
    table: Option<Vec<u32>>,
}

/// Largest id for which a direct lookup table is used, relative to the number of ids.
fn table_fits(max_id: u64, id_count: usize) -> bool {
    max_id < (id_count as u64).saturating_mul(4).saturating_add(1 << 20)
}

impl IdMap {
    /// Map over the distinct ids in `ids` (which may repeat and be unsorted).
    pub(crate) fn from_ids(ids: impl Iterator<Item = u64> + Clone, count_hint: usize) -> Self {
        let max_id = ids.clone().max().unwrap_or(0);
        if table_fits(max_id, count_hint) {
            let mut table = vec![0u32; max_id as usize + 1];
            for id in ids {
                table[id as usize] = 1;
            }
            let mut sorted_ids = Vec::new();
            for (id, slot) in table.iter_mut().enumerate() {
                if *slot != 0 {
                    sorted_ids.push(id as u64);
                    *slot = sorted_ids.len() as u32;
                }
            }
            IdMap { sorted_ids, table: Some(table) }
        } else {
            let mut sorted_ids: Vec<u64> = ids.collect();
            sorted_ids.par_sort_unstable();
            sorted_ids.dedup();
            IdMap { sorted_ids, table: None }
        }
    }

    /// Map over ids given in a vertex file, which must not repeat; returns the index of the
    /// first repeated id's second occurrence on failure.
    pub(crate) fn from_vertex_list(ids: &[u64]) -> Result<Self, usize> {
        let map = IdMap::from_ids(ids.iter().copied(), ids.len());
        if map.sorted_ids.len() == ids.len() {
            return Ok(map);
        }
        let mut seen = std::collections::BTreeSet::new();
        Err(ids.iter().position(|id| !seen.insert(*id)).unwrap_or(0))
    }

    /// Number of distinct ids.
    pub(crate) fn len(&self) -> usize {
        self.sorted_ids.len()
    }

    /// Whether file ids already are `0..n`.
    pub(crate) fn is_identity(&self) -> bool {
        self.sorted_ids.last().is_none_or(|&last| last + 1 == self.sorted_ids.len() as u64)
    }

    /// Dense id of a file id.
    #[inline]
    pub(crate) fn lookup(&self, id: u64) -> Option<VertexId> {
        match &self.table {
            Some(t) => match t.get(usize::try_from(id).ok()?) {
                Some(&d) if d != 0 => Some(d - 1),
                _ => None,
            },
            None => self.sorted_ids.binary_search(&id).ok().map(|i| i as VertexId),
        }
    }

    /// Dense id -> file id.
    pub(crate) fn into_original_ids(self) -> Vec<u64> {
        self.sorted_ids
    }
}

/// Builds the CSR from dense edges, applying the caller's build options.
pub(crate) fn build_csr(
    num_vertices: u64,
    edges: &[(VertexId, VertexId)],
    weights: Option<EdgeWeights>,
    directed: bool,
    build: BuildOptions,
) -> Result<Csr, GraphError> {
    let n = u32::try_from(num_vertices).map_err(|_| {
        GraphError::InvalidCsr(format!("{num_vertices} vertices exceed the u32 id space"))
    })?;
    Csr::from_edges(n, edges, weights, directed, build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_map_is_sorted_and_dense() {
        let ids = [40u64, 7, 40, 1_000_000_000_000, 7];
        let m = IdMap::from_ids(ids.iter().copied(), ids.len());
        assert_eq!(m.len(), 3);
        assert_eq!(m.lookup(7), Some(0));
        assert_eq!(m.lookup(40), Some(1));
        assert_eq!(m.lookup(1_000_000_000_000), Some(2));
        assert_eq!(m.lookup(8), None);
        assert!(!m.is_identity());
        let small = IdMap::from_ids([2u64, 0, 1].into_iter(), 3);
        assert!(small.is_identity());
        assert_eq!(small.lookup(5), None);
        assert_eq!(IdMap::from_vertex_list(&[3, 4, 3]).unwrap_err(), 2);
    }

    #[test]
    fn weights_turn_float_at_the_first_float() {
        let mut c = WeightColumn::default();
        c.push(Weight::Int(3));
        c.push(Weight::Float(0.5));
        assert_eq!(WeightColumn::concat(vec![c]), EdgeWeights::Float(vec![3.0, 0.5]));
        let e = parse_weight("f", 3, b"-2", WeightSyntax::Auto).unwrap_err().to_string();
        assert!(e.contains("f:3") && e.contains("non-negative") && e.contains("'-2'"), "{e}");
        let e = parse_weight("f", 4, b"NaN", WeightSyntax::Float).unwrap_err().to_string();
        assert!(e.contains("finite non-negative") && e.contains("'NaN'"), "{e}");
    }
}

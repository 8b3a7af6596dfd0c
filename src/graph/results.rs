//! Result writers in the LDBC Graphalytics output format: one `vertex value` line per vertex,
//! in dense-id order, with the vertex written in the input file's own ids.
//!
//! Unreachable vertices: `9223372036854775807` (`i64::MAX`) for integer results such as BFS
//! levels, `infinity` for floating-point results such as SSSP distances.

use super::GraphError;
use std::io::Write;

/// How LDBC writes an unreachable vertex's BFS level.
pub const UNREACHABLE_INT: &str = "9223372036854775807";
/// How LDBC writes an unreachable vertex's SSSP distance.
pub const UNREACHABLE_FLOAT: &str = "infinity";

/// One vertex's result value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResultValue {
    /// An integer result (BFS level, component label, colour).
    Int(i64),
    /// A floating-point result (SSSP distance, PageRank).
    Float(f64),
    /// No integer result: written as `9223372036854775807`.
    UnreachableInt,
    /// No floating-point result: written as `infinity`.
    UnreachableFloat,
}

impl ResultValue {
    /// A BFS level (`None`: unreachable).
    pub fn level(level: Option<u64>) -> Self {
        match level.and_then(|l| i64::try_from(l).ok()) {
            Some(l) => ResultValue::Int(l),
            None => ResultValue::UnreachableInt,
        }
    }

    /// An SSSP distance (`None` or infinite: unreachable).
    pub fn distance(distance: Option<f64>) -> Self {
        match distance {
            Some(d) if d.is_finite() => ResultValue::Float(d),
            _ => ResultValue::UnreachableFloat,
        }
    }
}

impl std::fmt::Display for ResultValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResultValue::Int(v) => write!(f, "{v}"),
            // Shortest representation that reads back to the same f64.
            ResultValue::Float(v) => write!(f, "{v:?}"),
            ResultValue::UnreachableInt => f.write_str(UNREACHABLE_INT),
            ResultValue::UnreachableFloat => f.write_str(UNREACHABLE_FLOAT),
        }
    }
}

/// Writes `vertex value` lines. Vertex `i` (the i-th value) is written as
/// `original_ids[i]` when given, else as `i`. `name` names the output in errors.
pub fn write_vertex_values<W: Write>(
    writer: W,
    name: &str,
    original_ids: Option<&[u64]>,
    values: impl IntoIterator<Item = ResultValue>,
) -> Result<(), GraphError> {
    let mut w = std::io::BufWriter::new(writer);
    let io = |source| GraphError::Io { path: name.to_string(), action: "writing", source };
    for (i, value) in values.into_iter().enumerate() {
        let id = match original_ids {
            Some(ids) => *ids.get(i).ok_or_else(|| {
                GraphError::InvalidCsr(format!(
                    "{name}: more result values than the {} vertex ids given",
                    ids.len()
                ))
            })?,
            None => i as u64,
        };
        writeln!(w, "{id} {value}").map_err(io)?;
    }
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(ids: Option<&[u64]>, values: Vec<ResultValue>) -> String {
        let mut out = Vec::new();
        write_vertex_values(&mut out, "out", ids, values).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bfs_levels_use_i64_max_for_unreachable() {
        let values = [Some(0), None, Some(2)].into_iter().map(ResultValue::level).collect();
        assert_eq!(written(Some(&[10, 20, 30]), values), "10 0\n20 9223372036854775807\n30 2\n");
    }

    #[test]
    fn sssp_distances_use_infinity_for_unreachable() {
        let values = [Some(1.5), None, Some(f64::INFINITY), Some(3.0)]
            .into_iter()
            .map(ResultValue::distance)
            .collect();
        assert_eq!(written(None, values), "0 1.5\n1 infinity\n2 infinity\n3 3.0\n");
    }

    #[test]
    fn too_few_ids_is_an_error() {
        let mut out = Vec::new();
        let e = write_vertex_values(&mut out, "r.txt", Some(&[1]), vec![ResultValue::Int(0); 2])
            .unwrap_err();
        assert!(e.to_string().contains("r.txt"), "{e}");
    }
}

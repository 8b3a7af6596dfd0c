//! Result writers in the LDBC Graphalytics output format: one `vertex value` line per vertex,
//! in dense-id order, with the vertex written in the input file's own ids.
//!
//! The conventions follow the Graphalytics reference outputs (`ldbc/ldbc_graphalytics`,
//! `graphalytics-validation/.../validation-graphs/example/example-directed-{BFS,SSSP,PR}`):
//! integers in decimal; floating-point values in C/Java `%.15e` form (16 significant digits,
//! a signed exponent of at least two digits: `8.300000000000001e-01`); an unreachable BFS
//! level as `9223372036854775807` (`Long.MAX_VALUE`); an unreachable SSSP distance as
//! `Infinity`, the spelling of those files and of Java's `Double.toString`. Graphalytics'
//! validators read `Infinity` in every version (`Double.parseDouble`; the 2017 rule also
//! takes `inf`/`infinity` in any case; the SQL rule compares with the literal `Infinity`),
//! while a lowercase `infinity` fails two of the three, so this writer uses `Infinity` (its
//! reader, [`read_vertex_values`], takes any case). Labels that are vertex ids (components,
//! communities) are written in the file's ids too ([`ResultValue::Vertex`]).

use super::GraphError;
use std::io::Write;

/// How LDBC writes an unreachable vertex's BFS level.
pub const UNREACHABLE_INT: &str = "9223372036854775807";
/// How LDBC writes an unreachable vertex's SSSP distance (see the module docs).
pub const UNREACHABLE_FLOAT: &str = "Infinity";

/// One vertex's result value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResultValue {
    /// An integer result (BFS level, component label, colour).
    Int(i64),
    /// A floating-point result (SSSP distance, PageRank).
    Float(f64),
    /// No integer result: written as `9223372036854775807`.
    UnreachableInt,
    /// No floating-point result: written as `Infinity`.
    UnreachableFloat,
    /// A dense vertex id as the value (a component or community label): written as that
    /// vertex's id in the file.
    Vertex(u32),
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
            ResultValue::Float(v) => f.write_str(&format_float(*v)),
            ResultValue::UnreachableInt => f.write_str(UNREACHABLE_INT),
            ResultValue::UnreachableFloat => f.write_str(UNREACHABLE_FLOAT),
            ResultValue::Vertex(v) => write!(f, "{v}"),
        }
    }
}

/// A float as Graphalytics writes it: C/Java `%.15e` (`1.020000000000000e+00`,
/// `4.753375000000000e-02`); non-finite values as `Infinity`, `-Infinity`, `NaN`. Sixteen
/// significant digits read back to the same `f32` exactly (it needs nine) and to an `f64`
/// within one part in 10^16.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { UNREACHABLE_FLOAT.into() } else { "-Infinity".into() };
    }
    let rust = format!("{v:.15e}");
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// Writes `vertex value` lines. Vertex `i` (the i-th value) is written as
/// `original_ids[i]` when given, else as `i`; so is a [`ResultValue::Vertex`] value. `name`
/// names the output in errors.
pub fn write_vertex_values<W: Write>(
    writer: W,
    name: &str,
    original_ids: Option<&[u64]>,
    values: impl IntoIterator<Item = ResultValue>,
) -> Result<(), GraphError> {
    let mut w = std::io::BufWriter::new(writer);
    let io = |source| GraphError::Io { path: name.to_string(), action: "writing", source };
    let file_id = |i: usize| match original_ids {
        Some(ids) => ids.get(i).copied().ok_or_else(|| {
            GraphError::InvalidCsr(format!(
                "{name}: vertex {i} is beyond the {} vertex ids given",
                ids.len()
            ))
        }),
        None => Ok(i as u64),
    };
    for (i, value) in values.into_iter().enumerate() {
        let id = file_id(i)?;
        match value {
            ResultValue::Vertex(v) => writeln!(w, "{id} {}", file_id(v as usize)?),
            other => writeln!(w, "{id} {other}"),
        }
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Reads a Graphalytics output file (`vertex value` lines; blank lines and `#` comments
/// skipped) into `(vertex, value)` pairs in file order. Values are read as `f64`; `Infinity`
/// and `infinity` (any case, optional `+`) as infinity. `name` names the file in errors.
pub fn read_vertex_values(name: &str, text: &str) -> Result<Vec<(u64, f64)>, GraphError> {
    let mut out = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |found: &str| GraphError::Parse {
            file: name.to_string(),
            line: number as u64 + 1,
            expected: "`vertex-id value`".into(),
            found: found.to_string(),
            fix: "each line holds a vertex id and its value, separated by a space".into(),
        };
        let mut tokens = line.split_whitespace();
        let (Some(id), Some(value), None) = (tokens.next(), tokens.next(), tokens.next()) else {
            return Err(bad(line));
        };
        let id = id.parse::<u64>().map_err(|_| bad(line))?;
        let lower = value.trim_start_matches('+').to_ascii_lowercase();
        let value = if lower == "infinity" || lower == "inf" {
            f64::INFINITY
        } else {
            value.parse::<f64>().map_err(|_| bad(line))?
        };
        out.push((id, value));
    }
    Ok(out)
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
        assert_eq!(
            written(None, values),
            "0 1.500000000000000e+00\n1 Infinity\n2 Infinity\n3 3.000000000000000e+00\n"
        );
    }

    #[test]
    fn floats_are_written_as_graphalytics_writes_them() {
        // The reference outputs' own lines (example-directed-SSSP and -PR).
        assert_eq!(format_float(0.0), "0.000000000000000e+00");
        assert_eq!(format_float(0.8300000000000001), "8.300000000000001e-01");
        assert_eq!(format_float(1.02), "1.020000000000000e+00");
        assert_eq!(format_float(0.04753375), "4.753375000000000e-02");
        assert_eq!(format_float(1.5e300), "1.500000000000000e+300");
        assert_eq!(format_float(-2.5e-7), "-2.500000000000000e-07");
        assert_eq!(format_float(f64::INFINITY), "Infinity");
        // f32 values come back exactly.
        for x in [0.1f32, 1.0 / 3.0, 7.5e-12, 3.4e38, f32::MIN_POSITIVE] {
            let back: f64 = format_float(f64::from(x)).parse().unwrap();
            assert_eq!(back as f32, x);
        }
    }

    #[test]
    fn labels_that_are_vertices_come_out_in_file_ids() {
        let values = vec![ResultValue::Vertex(0), ResultValue::Vertex(0), ResultValue::Vertex(2)];
        assert_eq!(written(Some(&[10, 20, 30]), values), "10 10\n20 10\n30 30\n");
    }

    #[test]
    fn the_reader_takes_what_the_writer_and_graphalytics_write() {
        let text = "1 0.000000000000000e+00\n2 Infinity\n# note\n\n3 infinity\n4 7\n";
        let read = read_vertex_values("r", text).unwrap();
        assert_eq!(read, vec![(1, 0.0), (2, f64::INFINITY), (3, f64::INFINITY), (4, 7.0)]);
        let e = read_vertex_values("r.txt", "1 2 3\n").unwrap_err().to_string();
        assert!(e.contains("r.txt") && e.contains("line 1") || e.contains("r.txt:1"), "{e}");
    }

    #[test]
    fn too_few_ids_is_an_error() {
        let mut out = Vec::new();
        let e = write_vertex_values(&mut out, "r.txt", Some(&[1]), vec![ResultValue::Int(0); 2])
            .unwrap_err();
        assert!(e.to_string().contains("r.txt"), "{e}");
    }
}

//! Comparison of a run's per-vertex results with a reference: a [`ValidationReport`] that
//! counts mismatches and lists the first ones with vertex id, expected and actual value.

use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// How many mismatches a report lists in full.
pub const MISMATCHES_LISTED_MAX: usize = 10;

/// One vertex whose value differs from the reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// Vertex id (in the CSR's id space).
    pub vertex: u64,
    /// The vertex's id in its input file, where it differs from `vertex` (set by
    /// [`ValidationReport::name_vertices`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<u64>,
    /// Reference value, as text.
    pub expected: String,
    /// Value under test, as text.
    pub actual: String,
}

/// Result of comparing per-vertex values with a reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidationReport {
    /// What was compared, e.g. `"bfs levels"`.
    pub what: String,
    /// The comparison rule, e.g. `"exact"` or `"|a - e| <= 1e-9 + 1e-6 * |e|"`.
    pub rule: String,
    /// Number of vertices compared.
    pub checked: u64,
    /// Number of vertices that differ.
    pub mismatches: u64,
    /// The first [`MISMATCHES_LISTED_MAX`] mismatches, in vertex order.
    pub first_mismatches: Vec<Mismatch>,
    /// Problems that are not per-vertex (e.g. a length mismatch).
    pub problems: Vec<String>,
}

impl ValidationReport {
    fn new(what: &str, rule: String) -> Self {
        ValidationReport {
            what: what.to_string(),
            rule,
            checked: 0,
            mismatches: 0,
            first_mismatches: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn record(&mut self, vertex: usize, expected: String, actual: String) {
        self.mismatches += 1;
        if self.first_mismatches.len() < MISMATCHES_LISTED_MAX {
            self.first_mismatches.push(Mismatch {
                vertex: vertex as u64,
                file_id: None,
                expected,
                actual,
            });
        }
    }

    fn check_lengths(&mut self, expected: usize, actual: usize) {
        if expected != actual {
            self.problems.push(format!(
                "the reference has {expected} values but the result has {actual}; \
                 results must hold one value per vertex"
            ));
        }
        self.checked = expected.min(actual) as u64;
    }

    /// Names the listed mismatches by their input file's ids too: `file_id(v)` is the id
    /// dense vertex `v` has in the file (set only where it differs from `v`).
    pub fn name_vertices(&mut self, file_id: impl Fn(u64) -> u64) {
        for m in &mut self.first_mismatches {
            let id = file_id(m.vertex);
            m.file_id = (id != m.vertex).then_some(id);
        }
    }

    /// True when nothing differs.
    pub fn is_ok(&self) -> bool {
        self.mismatches == 0 && self.problems.is_empty()
    }
}

impl fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ok() {
            return write!(f, "{}: {} vertices match ({})", self.what, self.checked, self.rule);
        }
        writeln!(
            f,
            "{}: {} of {} vertices differ ({})",
            self.what, self.mismatches, self.checked, self.rule
        )?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        for m in &self.first_mismatches {
            match m.file_id {
                Some(id) => writeln!(
                    f,
                    "  vertex {id} (index {}): expected {}, found {}",
                    m.vertex, m.expected, m.actual
                )?,
                None => writeln!(
                    f,
                    "  vertex {}: expected {}, found {}",
                    m.vertex, m.expected, m.actual
                )?,
            }
        }
        Ok(())
    }
}

/// Compares values exactly (integers: BFS levels, SSSP with integer weights, colours).
pub fn compare_exact<T: PartialEq + fmt::Display>(
    what: &str,
    expected: &[T],
    actual: &[T],
) -> ValidationReport {
    let mut report = ValidationReport::new(what, "exact".into());
    report.check_lengths(expected.len(), actual.len());
    for (v, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e != a {
            report.record(v, e.to_string(), a.to_string());
        }
    }
    report
}

/// Tolerance for floating-point results: `|actual - expected| <= abs + rel * |expected|`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FloatTolerance {
    /// Absolute part.
    pub abs: f64,
    /// Relative part, a fraction of the expected value.
    pub rel: f64,
}

impl FloatTolerance {
    /// Whether `actual` is within tolerance of `expected`. Equal infinities match; NaN
    /// never matches.
    pub fn accepts(&self, expected: f64, actual: f64) -> bool {
        if expected.is_infinite() || actual.is_infinite() {
            return expected == actual;
        }
        (actual - expected).abs() <= self.abs + self.rel * expected.abs()
    }
}

/// Compares floating-point values within `tolerance` (SSSP with float weights, PageRank).
pub fn compare_float(
    what: &str,
    expected: &[f64],
    actual: &[f64],
    tolerance: FloatTolerance,
) -> ValidationReport {
    let rule = format!("|a - e| <= {:e} + {:e} * |e|", tolerance.abs, tolerance.rel);
    let mut report = ValidationReport::new(what, rule);
    report.check_lengths(expected.len(), actual.len());
    for (v, (&e, &a)) in expected.iter().zip(actual).enumerate() {
        if !tolerance.accepts(e, a) {
            report.record(v, format!("{e:e}"), format!("{a:e}"));
        }
    }
    report
}

/// Compares two component labellings as partitions of the vertex set: they match when
/// one-to-one relabelling turns one into the other (label values themselves don't matter).
/// A mismatch names a vertex whose label pairing contradicts an earlier vertex's.
pub fn compare_components(expected: &[u32], actual: &[u32]) -> ValidationReport {
    let mut report =
        ValidationReport::new("weakly connected components", "same partition of vertices".into());
    report.check_lengths(expected.len(), actual.len());
    // First vertex seen with each label, in both directions.
    let mut by_expected: HashMap<u32, (u32, usize)> = HashMap::new();
    let mut by_actual: HashMap<u32, (u32, usize)> = HashMap::new();
    for (v, (&e, &a)) in expected.iter().zip(actual).enumerate() {
        let &mut (a_first, v_e) = by_expected.entry(e).or_insert((a, v));
        let &mut (e_first, v_a) = by_actual.entry(a).or_insert((e, v));
        if a_first != a {
            report.record(
                v,
                format!("same component as vertex {v_e} (label {a_first} there)"),
                format!("label {a}"),
            );
        } else if e_first != e {
            report.record(
                v,
                format!("a different component from vertex {v_a}"),
                format!("the same label {a} as vertex {v_a}"),
            );
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_lists_first_mismatches() {
        let r = compare_exact("levels", &[0u32, 1, 2, 3], &[0, 1, 5, 3]);
        assert!(!r.is_ok());
        assert_eq!(r.mismatches, 1);
        assert_eq!(r.first_mismatches[0].vertex, 2);
        assert_eq!(r.first_mismatches[0].expected, "2");
        assert_eq!(r.first_mismatches[0].actual, "5");
        assert!(compare_exact("levels", &[1u32, 2], &[1, 2]).is_ok());
        assert!(!compare_exact("levels", &[1u32, 2], &[1]).is_ok());
    }

    #[test]
    fn float_tolerance_and_infinity() {
        let t = FloatTolerance { abs: 1e-9, rel: 1e-6 };
        assert!(compare_float("d", &[1.0, f64::INFINITY], &[1.0 + 1e-7, f64::INFINITY], t).is_ok());
        assert!(!compare_float("d", &[1.0], &[1.01], t).is_ok());
        assert!(!compare_float("d", &[f64::INFINITY], &[1e300], t).is_ok());
        assert!(!compare_float("d", &[1.0], &[f64::NAN], t).is_ok());
    }

    #[test]
    fn components_compare_as_partitions() {
        assert!(compare_components(&[0, 0, 2, 2], &[7, 7, 1, 1]).is_ok());
        // Merged two components.
        assert!(!compare_components(&[0, 0, 2, 2], &[7, 7, 7, 7]).is_ok());
        // Split one component.
        assert!(!compare_components(&[0, 0, 0], &[1, 1, 2]).is_ok());
    }
}

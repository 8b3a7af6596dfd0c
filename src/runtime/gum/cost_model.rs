//! FSteal's cost model (GUM §III-B, Eq. 2-3): `c_ij = bytes_per_edge / B_ij + g(W_i)`, the
//! cost for worker `j` of one active edge of fragment `i`. `B_ij` comes from the backend
//! (path bandwidth, or the device's memory bandwidth for `i == j`); `g` is a degree-4
//! polynomial over the six Table I features of fragment `i`'s frontier, fitted by SGD on
//! the relative-error loss of Eq. 3 (RMSRE) from per-iteration logs.
//!
//! The features come from a frontier's degree statistics ([`FrontierStats`], what the
//! runtime's stats kernel counts on the device): average in- and out-degree, their ranges,
//! the Gini coefficient and the entropy of the out-degree distribution (Table I). Gini is
//! computed from a histogram of out-degrees by powers of two, treating each bucket's
//! vertices as equal: exact when they are, a lower bound otherwise.
//!
//! The fitted coefficients ship as data (`cost_model.json`, embedded); `switchyard gum fit`
//! regenerates the logs and refits them (`crate::driver::gum_fit`).

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Buckets of the out-degree histogram: bucket 0 holds degree 0, bucket `b` degrees
/// `2^(b-1) .. 2^b - 1`, the last bucket everything above.
pub const HISTOGRAM_BUCKETS: usize = 32;

/// Number of Table I features.
pub const FEATURES: usize = 6;

/// The degree of the polynomial (§VI Exp-7: "degree=4").
pub const DEGREE: u32 = 4;

/// Degree statistics of one frontier, as the stats kernel counts them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrontierStats {
    /// Frontier vertices.
    pub vertices: u64,
    /// Sum of their out-degrees (the active edges `l_i`).
    pub out_edges: u64,
    /// Sum of their in-degrees.
    pub in_edges: u64,
    /// Smallest and largest out-degree.
    pub out_min: u64,
    /// Largest out-degree.
    pub out_max: u64,
    /// Smallest in-degree.
    pub in_min: u64,
    /// Largest in-degree.
    pub in_max: u64,
    /// `sum d ln d` over out-degrees (entropy).
    pub out_d_ln_d: f64,
    /// Vertices per out-degree bucket.
    pub bucket_vertices: Vec<u64>,
    /// Out-edges per out-degree bucket.
    pub bucket_edges: Vec<u64>,
}

/// The bucket of out-degree `d`.
pub fn bucket_of(d: u64) -> usize {
    if d == 0 { 0 } else { (64 - d.leading_zeros() as usize).min(HISTOGRAM_BUCKETS - 1) }
}

impl FrontierStats {
    /// An empty sum to add frontiers into (minima at their identity).
    fn accumulator() -> FrontierStats {
        FrontierStats {
            out_min: u64::MAX,
            in_min: u64::MAX,
            bucket_vertices: vec![0; HISTOGRAM_BUCKETS],
            bucket_edges: vec![0; HISTOGRAM_BUCKETS],
            ..Default::default()
        }
    }

    /// The sum as statistics: an empty frontier's minima are 0.
    fn settled(mut self) -> FrontierStats {
        if self.vertices == 0 {
            self.out_min = 0;
            self.in_min = 0;
        }
        self
    }

    /// Counts the statistics of a frontier from its vertices' (out, in) degrees (the
    /// simulator's stats kernel and the tests use this).
    pub fn from_degrees(degrees: impl IntoIterator<Item = (u64, u64)>) -> FrontierStats {
        let mut s = FrontierStats::accumulator();
        for (out, inn) in degrees {
            s.vertices += 1;
            s.out_edges += out;
            s.in_edges += inn;
            s.out_min = s.out_min.min(out);
            s.out_max = s.out_max.max(out);
            s.in_min = s.in_min.min(inn);
            s.in_max = s.in_max.max(inn);
            if out > 0 {
                s.out_d_ln_d += out as f64 * (out as f64).ln();
            }
            let b = bucket_of(out);
            s.bucket_vertices[b] += 1;
            s.bucket_edges[b] += out;
        }
        s.settled()
    }

    /// The statistics of several frontiers taken together (their union).
    pub fn pooled(parts: &[FrontierStats]) -> FrontierStats {
        let mut s = FrontierStats::accumulator();
        for p in parts.iter().filter(|p| p.vertices > 0) {
            s.vertices += p.vertices;
            s.out_edges += p.out_edges;
            s.in_edges += p.in_edges;
            s.out_min = s.out_min.min(p.out_min);
            s.out_max = s.out_max.max(p.out_max);
            s.in_min = s.in_min.min(p.in_min);
            s.in_max = s.in_max.max(p.in_max);
            s.out_d_ln_d += p.out_d_ln_d;
            for (a, b) in s.bucket_vertices.iter_mut().zip(&p.bucket_vertices) {
                *a += b;
            }
            for (a, b) in s.bucket_edges.iter_mut().zip(&p.bucket_edges) {
                *a += b;
            }
        }
        s.settled()
    }

    /// The six Table I features.
    pub fn features(&self) -> Features {
        let n = self.vertices as f64;
        if self.vertices == 0 {
            return Features::default();
        }
        let total = self.out_edges as f64;
        let gini = if total == 0.0 {
            0.0
        } else {
            let mut before = 0u64;
            let mut weighted = 0.0;
            for (&c, &e) in self.bucket_vertices.iter().zip(&self.bucket_edges) {
                weighted += e as f64 * (before as f64 + (c as f64 + 1.0) / 2.0);
                before += c;
            }
            2.0 * weighted / (n * total) - (n + 1.0) / n
        };
        let entropy = if self.vertices < 2 || total == 0.0 {
            0.0
        } else {
            (total.ln() - self.out_d_ln_d / total) / n.ln()
        };
        Features {
            avg_in_degree: self.in_edges as f64 / n,
            avg_out_degree: total / n,
            in_degree_range: (self.in_max - self.in_min) as f64,
            out_degree_range: (self.out_max - self.out_min) as f64,
            gini,
            entropy,
        }
    }
}

/// Table I's features of a frontier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Average in-degree.
    pub avg_in_degree: f64,
    /// Average out-degree.
    pub avg_out_degree: f64,
    /// Largest minus smallest in-degree.
    pub in_degree_range: f64,
    /// Largest minus smallest out-degree.
    pub out_degree_range: f64,
    /// Gini coefficient of the out-degrees.
    pub gini: f64,
    /// Out-degree distribution entropy, normalised by `ln |frontier|`.
    pub entropy: f64,
}

impl Features {
    /// The polynomial's inputs: degrees on a log scale, all roughly in `[0, 1]`.
    pub fn inputs(&self) -> [f64; FEATURES] {
        [
            (1.0 + self.avg_in_degree).ln() / 10.0,
            (1.0 + self.avg_out_degree).ln() / 10.0,
            (1.0 + self.in_degree_range).ln() / 16.0,
            (1.0 + self.out_degree_range).ln() / 16.0,
            self.gini.clamp(0.0, 1.0),
            self.entropy.clamp(0.0, 1.0),
        ]
    }
}

/// Exponents of every monomial of total degree at most [`DEGREE`] in [`FEATURES`]
/// variables, in a fixed order (the constant first).
pub fn monomials() -> Vec<[u8; FEATURES]> {
    let mut out = Vec::new();
    fn rec(var: usize, left: u32, cur: &mut [u8; FEATURES], out: &mut Vec<[u8; FEATURES]>) {
        if var == FEATURES {
            out.push(*cur);
            return;
        }
        for e in 0..=left {
            cur[var] = e as u8;
            rec(var + 1, left - e, cur, out);
        }
        cur[var] = 0;
    }
    rec(0, DEGREE, &mut [0; FEATURES], &mut out);
    out.sort_by_key(|m| (m.iter().map(|&e| u32::from(e)).sum::<u32>(), std::cmp::Reverse(*m)));
    out
}

fn terms(x: &[f64; FEATURES], monomials: &[[u8; FEATURES]]) -> Vec<f64> {
    monomials
        .iter()
        .map(|m| m.iter().zip(x).map(|(&e, &v)| v.powi(i32::from(e))).product())
        .collect()
}

/// One training sample: a fragment's frontier in one iteration and its observed
/// computation cost per edge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Algorithm.
    pub algorithm: String,
    /// Graph.
    pub graph: String,
    /// Features of the frontier.
    pub features: Features,
    /// Active edges.
    pub edges: u64,
    /// Observed computation time per edge, in picoseconds (kernel time minus the bytes
    /// over the local memory bandwidth).
    pub ps_per_edge: f64,
}

/// SGD settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    /// Seed of the shuffles and the train/test split.
    pub seed: u64,
    /// Passes over the training set.
    pub epochs: u32,
    /// Initial learning rate (decays as `1 / (1 + epoch / 10)`).
    pub learning_rate: f64,
    /// Share of the samples held out to measure the fit.
    pub test_share: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { seed: 1, epochs: 200, learning_rate: 0.02, test_share: 0.2 }
    }
}

/// The fitted `g`: coefficients of the degree-4 polynomial, in units of `scale_ps`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// What the model is (for the file's reader).
    pub description: String,
    /// Picoseconds per unit of the polynomial (the median training target).
    pub scale_ps: f64,
    /// Smallest prediction, in picoseconds per edge (a polynomial can dip below zero
    /// outside its training range).
    pub floor_ps: f64,
    /// Coefficients in [`monomials`] order.
    pub coefficients: Vec<f64>,
    /// RMSRE (Eq. 3) on the training samples.
    pub train_rmsre: f64,
    /// RMSRE on the held-out samples.
    pub test_rmsre: f64,
    /// Samples used for training / held out.
    pub samples: (usize, usize),
    /// The SGD settings.
    pub fit: FitOptions,
}

/// Errors of the cost model.
#[derive(Debug, thiserror::Error)]
pub enum CostModelError {
    /// The file does not parse or has the wrong number of coefficients.
    #[error("cost model `{what}`: {message}; regenerate it with `switchyard gum fit`")]
    Invalid {
        /// Which file.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// Nothing to fit.
    #[error("no usable training samples ({0}); log more runs or lower the minimum edges")]
    NoSamples(String),
}

/// The coefficients shipped with the product.
const EMBEDDED: &str = include_str!("cost_model.json");

impl CostModel {
    /// The shipped model.
    pub fn embedded() -> Result<CostModel, CostModelError> {
        CostModel::from_json(EMBEDDED, "src/runtime/gum/cost_model.json")
    }

    /// Parses and checks a model file.
    pub fn from_json(text: &str, what: &str) -> Result<CostModel, CostModelError> {
        let model: CostModel = serde_json::from_str(text)
            .map_err(|e| CostModelError::Invalid { what: what.into(), message: e.to_string() })?;
        let want = monomials().len();
        if model.coefficients.len() != want
            || model.coefficients.iter().any(|c| !c.is_finite())
            || !(model.scale_ps > 0.0 && model.floor_ps > 0.0)
        {
            return Err(CostModelError::Invalid {
                what: what.into(),
                message: format!(
                    "needs {want} finite coefficients and positive scale and floor, has {}",
                    model.coefficients.len()
                ),
            });
        }
        Ok(model)
    }

    /// `g(W)`: predicted computation cost per edge, in picoseconds.
    pub fn predict_ps(&self, features: &Features) -> f64 {
        let t = terms(&features.inputs(), &monomials());
        let y: f64 = t.iter().zip(&self.coefficients).map(|(a, b)| a * b).sum();
        (y * self.scale_ps).max(self.floor_ps)
    }

    /// RMSRE (Eq. 3) of the model on `samples`.
    pub fn rmsre(&self, samples: &[Sample]) -> f64 {
        rmsre(samples.iter().map(|s| (self.predict_ps(&s.features), s.ps_per_edge)))
    }

    /// Fits `g` by SGD on the relative squared error (Eq. 3), deterministically from the
    /// seed: samples are split into train and test sets and shuffled each epoch by ChaCha8.
    pub fn fit(samples: &[Sample], options: FitOptions) -> Result<CostModel, CostModelError> {
        let usable: Vec<&Sample> =
            samples.iter().filter(|s| s.ps_per_edge.is_finite() && s.ps_per_edge > 0.0).collect();
        if usable.len() < 2 {
            return Err(CostModelError::NoSamples(format!("{} samples", usable.len())));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let mut order: Vec<usize> = (0..usable.len()).collect();
        order.shuffle(&mut rng);
        let test_len = ((usable.len() as f64 * options.test_share) as usize).min(usable.len() - 1);
        let (test_idx, train_idx) = order.split_at(test_len);
        let mut targets: Vec<f64> = train_idx.iter().map(|&i| usable[i].ps_per_edge).collect();
        targets.sort_by(f64::total_cmp);
        let scale_ps = targets[targets.len() / 2];
        let floor_ps = targets[0] / 4.0;
        let monos = monomials();
        let rows: Vec<(Vec<f64>, f64)> = train_idx
            .iter()
            .map(|&i| {
                (terms(&usable[i].features.inputs(), &monos), usable[i].ps_per_edge / scale_ps)
            })
            .collect();
        let mut w = vec![0.0; monos.len()];
        w[0] = 1.0;
        let mut train_order: Vec<usize> = (0..rows.len()).collect();
        for epoch in 0..options.epochs {
            let rate = options.learning_rate / (1.0 + f64::from(epoch) / 10.0);
            train_order.shuffle(&mut rng);
            for &k in &train_order {
                let (x, t) = &rows[k];
                let y: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
                // d/dw ((y - t) / t)^2 = 2 (y - t) / t^2 * x, clipped so that one far-off
                // sample cannot throw the weights away.
                let g = (2.0 * (y - t) / (t * t)).clamp(-10.0, 10.0);
                for (wk, xk) in w.iter_mut().zip(x) {
                    *wk -= rate * g * xk;
                }
            }
        }
        let mut model = CostModel {
            description: "GUM g(W): degree-4 polynomial over Table I features of a frontier, \
                          picoseconds of computation per active edge"
                .into(),
            scale_ps,
            floor_ps,
            coefficients: w,
            train_rmsre: 0.0,
            test_rmsre: 0.0,
            samples: (train_idx.len(), test_idx.len()),
            fit: options,
        };
        let pick = |idx: &[usize]| idx.iter().map(|&i| usable[i].clone()).collect::<Vec<_>>();
        model.train_rmsre = model.rmsre(&pick(train_idx));
        model.test_rmsre = model.rmsre(&pick(test_idx));
        Ok(model)
    }
}

/// Root mean squared relative error of `(predicted, observed)` pairs (Eq. 3).
pub fn rmsre(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for (p, t) in pairs {
        sum += ((p - t) / t).powi(2);
        n += 1;
    }
    if n == 0 { 0.0 } else { (sum / n as f64).sqrt() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::summary::{degree_entropy, gini};

    #[test]
    fn pooled_statistics_are_those_of_the_union() {
        let a = [(3u64, 1u64), (0, 4), (17, 2)];
        let b = [(1u64, 9u64), (250, 1)];
        let pooled = FrontierStats::pooled(&[
            FrontierStats::from_degrees(a),
            FrontierStats::from_degrees([]),
            FrontierStats::from_degrees(b),
        ]);
        let union = FrontierStats::from_degrees(a.into_iter().chain(b));
        assert_eq!(pooled.features(), union.features());
        assert_eq!((pooled.vertices, pooled.out_edges, pooled.in_min), (5, 271, 1));
        assert_eq!(FrontierStats::pooled(&[]), FrontierStats::from_degrees([]));
    }

    #[test]
    fn there_are_210_monomials_constant_first() {
        let m = monomials();
        assert_eq!(m.len(), 210); // C(6 + 4, 4)
        assert_eq!(m[0], [0; FEATURES]);
        assert!(m.iter().all(|e| e.iter().map(|&x| u32::from(x)).sum::<u32>() <= DEGREE));
        let mut dedup = m.clone();
        dedup.dedup();
        assert_eq!(dedup.len(), 210);
    }

    #[test]
    fn features_match_the_exact_gini_and_entropy() {
        // Degrees that are powers of two: each bucket holds equal degrees, so the bucketed
        // Gini is exact; the entropy is always exact.
        let out: Vec<u64> = vec![1, 1, 2, 8, 8, 8, 64, 0, 4];
        let inn: Vec<u64> = vec![3, 0, 7, 1, 1, 1, 2, 9, 4];
        let s = FrontierStats::from_degrees(out.iter().copied().zip(inn.iter().copied()));
        let f = s.features();
        assert!((f.gini - gini(&out)).abs() < 1e-12, "{} vs {}", f.gini, gini(&out));
        assert!((f.entropy - degree_entropy(&out)).abs() < 1e-12);
        assert_eq!(f.avg_out_degree, 96.0 / 9.0);
        assert_eq!(f.avg_in_degree, 28.0 / 9.0);
        assert_eq!(f.out_degree_range, 64.0);
        assert_eq!(f.in_degree_range, 9.0);
        // Unequal degrees inside a bucket: a lower bound.
        let out = vec![2u64, 3, 3, 100, 127];
        let f = FrontierStats::from_degrees(out.iter().map(|&d| (d, d))).features();
        assert!(f.gini <= gini(&out) + 1e-12 && f.gini > gini(&out) - 0.05);
    }

    fn synthetic(n: usize, seed: u64) -> Vec<Sample> {
        use rand::RngExt;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let features = Features {
                    avg_in_degree: rng.random_range(1.0..200.0),
                    avg_out_degree: rng.random_range(1.0..200.0),
                    in_degree_range: rng.random_range(0.0..5000.0),
                    out_degree_range: rng.random_range(0.0..5000.0),
                    gini: rng.random_range(0.0..0.9),
                    entropy: rng.random_range(0.3..1.0),
                };
                let x = features.inputs();
                // A known cost: 40 ps per edge, more for skew, less for long lists.
                let truth = 40.0 * (1.0 + 0.8 * x[4] - 0.5 * x[1] + 0.3 * x[3] * x[3]);
                Sample {
                    algorithm: "synthetic".into(),
                    graph: "synthetic".into(),
                    features,
                    edges: 1000,
                    ps_per_edge: truth,
                }
            })
            .collect()
    }

    #[test]
    fn sgd_recovers_a_known_cost_deterministically() {
        let samples = synthetic(400, 7);
        let options = FitOptions { epochs: 60, ..Default::default() };
        let a = CostModel::fit(&samples, options).unwrap();
        let b = CostModel::fit(&samples, options).unwrap();
        assert_eq!(a, b, "same samples and seed: the same model");
        assert!(a.test_rmsre < 0.05, "held-out RMSRE {}", a.test_rmsre);
        // A constant model (the starting point) is far worse.
        let mut constant = a.clone();
        constant.coefficients = vec![0.0; 210];
        constant.coefficients[0] = 1.0;
        assert!(constant.rmsre(&samples) > 4.0 * a.rmsre(&samples));
        // The JSON round trip keeps it (to the last bit or two: serde_json's float parser).
        let json = serde_json::to_string(&a).unwrap();
        let back = CostModel::from_json(&json, "test").unwrap();
        for (x, y) in back.coefficients.iter().zip(&a.coefficients) {
            assert!((x - y).abs() <= 1e-15 * y.abs().max(1e-3));
        }
    }

    #[test]
    fn the_embedded_model_loads_and_bad_files_are_refused() {
        let m = CostModel::embedded().unwrap();
        assert!(m.predict_ps(&Features::default()) >= m.floor_ps);
        let err = CostModel::from_json("{}", "x.json").unwrap_err().to_string();
        assert!(err.contains("x.json") && err.contains("switchyard gum fit"), "{err}");
        assert!(CostModel::fit(&[], FitOptions::default()).is_err());
    }
}

#!/usr/bin/env python3
"""Fit per-kernel costs from kernel spans of real runs (issue 22, item 1).

Pairs each kernel span of a real run (`switchyard run --backend cuda --trace`, CUDA events)
with the same launch of the same run on the simulator (`switchyard run --backend sim
--trace`: each kernel span carries the counts the cost model charged: items, edges, atomics,
vertices), launch by launch in order per kernel name on GPU 0, then fits per kernel name

    span = fixed + items * item_ps + edges * edge_ps + atomics * atomic_ps + vertices * vertex_ps
           + outputs * output_ps + (rounds - 1) * round_ps

by non-negative least squares on relative error (each launch weighted by 1/span, so that the
many short launches and the few long ones both count), and prints TOML
`[gpu_model.NAME.kernel_cost.KERNEL]` tables with their source. Also prints the gaps between
kernels on the real GPU (inside a superstep: back-to-back launches; between supersteps: the
host's round trip) beside the simulator's, for `launch_overhead_ns` and `sync_overhead_ns`.

Usage: calib_fit.py MODEL PAIRS_FILE
  PAIRS_FILE: lines `label real_trace.json sim_trace.json` (label: which runs went in).
No third-party modules (the fit is a brute-force NNLS over the <= 5 coefficients).
"""
import gzip
import itertools
import json
import statistics
import sys

# In the order of preference when fits tie (two graphs give an exact fit to any two terms).
TERMS = ["edges", "vertices", "items", "outputs", "atomics", "rounds"]
# A kernel that loops on the device (some launch has rounds after its first: BSP's
# `*_levels`, Groute's fused workers, Atos's persistent workers) is one span per launch, so
# its few launches (one per run) fit any terms exactly; its cost is first a cost per round
# (a level's dependent accesses and grid barrier) and then per arc, so its fits must charge
# rounds and prefer arcs next.
LOOP_TERMS = ["rounds", "edges", "items", "atomics", "outputs", "vertices"]


def spans(path):
    events = json.load(gzip.open(path) if path.endswith(".gz") else open(path))["traceEvents"]
    tracks = {}
    names = {}
    for e in events:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat", "kernel") != "kernel":
            continue
        out.append(e)
    out.sort(key=lambda e: e["ts"])
    # GPU 0 only: the first pid that carries kernels.
    pids = sorted({e["pid"] for e in out})
    return [e for e in out if e["pid"] == pids[0]] if pids else []


def solve(rows, cols):
    """Weighted least squares over the columns `cols` (normal equations, Gauss)."""
    k = len(cols)
    a = [[0.0] * k for _ in range(k)]
    b = [0.0] * k
    for x, y, w in rows:
        v = [x[c] for c in cols]
        for i in range(k):
            b[i] += w * v[i] * y
            for j in range(k):
                a[i][j] += w * v[i] * v[j]
    # Gauss-Jordan with partial pivoting.
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(m[r][i]))
        if abs(m[p][i]) < 1e-30:
            return None
        m[i], m[p] = m[p], m[i]
        for r in range(k):
            if r != i:
                f = m[r][i] / m[i][i]
                for c in range(i, k + 1):
                    m[r][c] -= f * m[i][c]
    return [m[i][k] / m[i][i] for i in range(k)]


def nnls(rows):
    """Non-negative fit over subsets of the terms (fixed included): fewer terms than
    distinct launches (at least one), and the fewest terms whose error is within 5 % of the
    best (ties: the earlier terms of TERMS, or of LOOP_TERMS for a device-side loop, whose
    fits must include rounds)."""
    loop = any(x["rounds"] > 0 for x, _, _ in rows)
    all_cols = ["fixed"] + (LOOP_TERMS if loop else TERMS)
    distinct = len({tuple(x[c] for c in all_cols) for x, _, _ in rows})
    fits = []
    for r in range(1, len(all_cols) + 1):
        # One degree of freedom left over: as many terms as launches fit any launches
        # exactly, whatever the terms mean (a device-side loop has one launch per run),
        # except that a loop's two launches may fit its two physical terms (rounds and the
        # next one preferred).
        if r > max(distinct - 1, min(distinct, 2) if loop else 1):
            break
        for cols in itertools.combinations(all_cols, r):
            subset = [c for c in cols if c != "fixed"]
            if any(all(x[c] == 0 for x, _, _ in rows) for c in subset):
                continue
            if loop and "rounds" not in cols:
                continue
            sol = solve(rows, cols)
            if sol is None or any(s < 0 for s in sol):
                continue
            coef = dict.fromkeys(all_cols, 0.0)
            coef.update(zip(cols, sol))
            err = sum(w * (y - sum(coef[c] * x[c] for c in all_cols)) ** 2 for x, y, w in rows)
            fits.append((r, err, coef))
    if not fits:
        return None
    best = min(err for _, err, _ in fits)
    return next(coef for _, err, coef in fits if err <= 1.05 * best + 1e-12)


def main():
    model, pairs_file = sys.argv[1], sys.argv[2]
    by_kernel = {}
    sources = {}
    gaps = {"inside": ([], []), "between": ([], [])}
    for line in open(pairs_file):
        if not line.strip() or line.startswith("#"):
            continue
        label, real_path, sim_path = line.split()
        real, sim = spans(real_path), spans(sim_path)
        rq, sq = {}, {}
        for e in real:
            rq.setdefault(e["name"], []).append(e)
        for e in sim:
            sq.setdefault(e["name"], []).append(e)
        for name in sorted(set(rq) & set(sq)):
            if len(rq[name]) != len(sq[name]):
                print(f"# {label}: {name}: {len(rq[name])} real launches, {len(sq[name])} "
                      f"simulated: paired in order up to the shorter", file=sys.stderr)
            for r, s in zip(rq[name], sq[name]):
                x = {"fixed": 1.0, **{t: float(s["args"].get(t, 0)) for t in TERMS}}
                # Rounds after the first (a device-side loop's grid barriers).
                x["rounds"] = max(x["rounds"] - 1.0, 0.0)
                y = r["dur"] * 1e6  # us -> ps
                by_kernel.setdefault(name, []).append((x, y, 1.0 / max(y, 1e6) ** 2))
                sources.setdefault(name, set()).add(label)
        # Gaps on GPU 0: inside a superstep (the next kernel was queued) or between
        # supersteps (the next launch waited for the host), told apart by the advance kernel
        # that starts every superstep.
        for spans_, i in ((real, 0), (sim, 1)):
            for a, b in zip(spans_, spans_[1:]):
                gap = (b["ts"] - (a["ts"] + a["dur"])) * 1e3  # ns
                kind = "between" if b["name"].endswith(("_advance", "_push")) else "inside"
                gaps[kind][i].append(gap)
    for name in sorted(by_kernel):
        rows = by_kernel[name]
        coef = nnls(rows)
        if coef is None:
            print(f"# {name}: no non-negative fit", file=sys.stderr)
            continue
        errs = []
        for x, y, _ in rows:
            pred = sum(coef[c] * x[c] for c in coef)
            errs.append(abs(pred - y) / y if y else 0.0)
        print(f"[gpu_model.{model}.kernel_cost.{name}]")
        print(f"fixed_ns = {coef['fixed'] / 1e3:.3f}")
        keys = {"items": "item_ps", "edges": "edge_ps", "atomics": "atomic_ps",
                "vertices": "vertex_ps", "outputs": "output_ps", "rounds": "round_ns"}
        for t in TERMS:
            if coef[t] > 0:
                scale = 1e3 if t == "rounds" else 1.0
                print(f"{keys[t]} = {coef[t] / scale:.3f}")
        print(f'source = "fitted (scripts/calib_fit.py) on {len(rows)} launches of '
              f'{", ".join(sorted(sources[name]))}; median launch error '
              f'{100 * statistics.median(errs):.1f} %"')
        print()
    for kind, (real, sim) in gaps.items():
        if real and sim:
            print(f"# gaps {kind} supersteps (ns): real median {statistics.median(real):.0f} "
                  f"(n {len(real)}), simulated median {statistics.median(sim):.0f} (n {len(sim)})")


if __name__ == "__main__":
    main()

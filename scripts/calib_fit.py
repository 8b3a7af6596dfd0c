#!/usr/bin/env python3
"""Fit per-kernel costs from kernel spans of real runs (issue 22, item 1).

Pairs each kernel span of a real run (`switchyard run --backend cuda --trace`, CUDA events)
with the same launch of the same run on the simulator (`switchyard run --backend sim
--trace`: each kernel span carries the counts the cost model charged: items, edges, atomics,
vertices), launch by launch in order per kernel name on GPU 0, then fits per kernel name

    span = fixed + items * item_ps + edges * edge_ps + atomics * atomic_ps + vertices * vertex_ps
           + outputs * output_ps + (rounds - 1) * round_ps
           + min(items, max(rounds, 1) * RAMP_ITEMS) * ramp_item_ps
           + path_edges * path_edge_ps   (device-side loops only)

(the last term, the ramp, is what a launch or a device-side loop's round pays per item until
its items fill one thread block of RAMP_ITEMS = 256 threads, SY_BLOCK of kernels/common.cuh:
c32's bfs_advance costs 14-18 us with up to 64 frontier vertices and 23 us from 256 on,
flat above; a round's items are taken as the launch's average) by non-negative least squares
on relative error (each launch weighted by 1/span, so that the
many short launches and the few long ones both count), and prints TOML
`[gpu_model.NAME.kernel_cost.KERNEL]` tables with their source. Also prints the gaps between
kernels on the real GPU (inside a superstep: back-to-back launches; between supersteps: the
host's round trip) beside the simulator's, for `launch_overhead_ns` and `sync_overhead_ns`.

Usage: calib_fit.py MODEL PAIRS_FILE [--into MODEL_FILE]... [--ramp-items N]
                   [--ramp-from LOOP=KERNEL,...] [--ramp-price KERNEL=PS,...] [--launches]
                   [--loop-min-items N] [--kernels K1,K2,...]
  PAIRS_FILE: lines `label real_trace.json sim_trace.json` (label: which runs went in).
  --ramp-items N: the items a launch's (or round's) ramp is charged for (default 256, one
    block; 0: no ramp term).
  --ramp-from LOOP=KERNEL: kernel LOOP (a device-side loop whose every round runs KERNEL's
    expansion) takes KERNEL's fitted ramp price instead of fitting its own, and fits its
    other terms on what is left of its spans. For loops whose fit launches all have more
    than one block of items a round (the fit graphs' levels), where the ramp cannot be told
    from the per-round cost. KERNEL must be fitted with a ramp; an error names it otherwise.
  --ramp-price KERNEL=PS: kernel KERNEL takes this ramp price (ps an item up to the block,
    e.g. an earlier fit's `ramp_item_ps`) instead of fitting one, and fits its other terms on
    what is left of its spans; a loop that takes KERNEL's ramp (--ramp-from) takes it too.
    For kernels whose fit launches all fill a block (c77B's advances: the device loop runs
    the small frontiers), where the ramp cannot be told from the fixed cost.
  --loop-min-items N: leave out of a device-side loop's fit (a kernel with rounds after its
    first in some launch) its launches of fewer than N items (default 0: none left out).
    c77B's R-MAT loops start with the hub alone (one item, one round, 139K-321K arcs in
    194-408 us: 0.6-1.3 ns an arc, where the advance's arcs cost 14 ps), a cost that no
    count of a loop's span describes; fitted with the rest it drives the fit to fixed costs.
    --launches lists them, priced by the fit of the others.
  --kernels K1,K2,...: fit, print and write (--into) only these kernels (a lender of
    --ramp-from is fitted for its ramp but not printed); every other table of the model file
    stays as it is. For a refit of the device-side loops alone on a wider fit set, whose
    advances' launches would pull the advances' fit away from their own fit set.
  --launches: also print, as `#` lines, every launch's real span beside the fitted cost of
    its counts (which launches a table fits badly).
  --into MODEL_FILE (repeatable): also write the fitted tables into that TOML model file, in
    place: each fitted `[gpu_model.MODEL.kernel_cost.KERNEL]` table replaces the table of the
    same name (its header line and the lines after it up to the next header or blank line),
    or is appended at the end (after a blank line) if the file has none; every other byte of
    the file stays as it was. A file whose GPU model is not MODEL is refused, and then no
    file is written. Prints, as `#` lines after the tables, which tables each file had
    replaced and which added.
No third-party modules (the fit is a brute-force NNLS over the <= 5 coefficients).
"""
import argparse
import gzip
import itertools
import json
import os
import re
import statistics
import sys
import tempfile

# In the order of preference when fits tie (two graphs give an exact fit to any two terms).
TERMS = ["edges", "vertices", "items", "outputs", "atomics", "rounds", "ramp"]
# A kernel that loops on the device (some launch has rounds after its first: BSP's
# `*_levels`, Groute's fused workers, Atos's persistent workers) is one span per launch, so
# its few launches (one per run) fit any terms exactly; its cost is first a cost per round
# (a level's dependent accesses and grid barrier) and then per arc, so its fits must charge
# rounds and prefer arcs next.
# A loop's rounds often fill a few blocks, so a round lasts as long as its busiest block:
# `path_edges` (the busiest block's arcs, summed over the rounds; the simulator's loops
# report them) is a loop's term only (an advance's full grid hides one block's latency).
LOOP_TERMS = ["rounds", "path_edges", "edges", "items", "atomics", "outputs", "vertices", "ramp"]
ALL_TERMS = TERMS + ["path_edges"]
# Items a launch (or each of its rounds) pays the ramp for: one block of SY_BLOCK threads
# (kernels/common.cuh), where c32's advance kernels stop growing with their frontier.
RAMP_ITEMS = 256
# TOML key of each term's coefficient, and its unit in picoseconds.
KEYS = {"items": ("item_ps", 1.0), "edges": ("edge_ps", 1.0), "atomics": ("atomic_ps", 1.0),
        "vertices": ("vertex_ps", 1.0), "outputs": ("output_ps", 1.0),
        "rounds": ("round_ns", 1e3), "path_edges": ("path_edge_ps", 1.0),
        "ramp": ("ramp_item_ps", 1.0)}


def columns(args, ramp_items=RAMP_ITEMS):
    """One launch's fit columns from its simulated span's counts `args`: the counts, rounds
    after the first, and the ramp's items `min(items, max(rounds, 1) * ramp_items)` (0 with
    ramp_items 0)."""
    x = {"fixed": 1.0, **{t: float(args.get(t, 0)) for t in ALL_TERMS if t != "ramp"}}
    x["ramp"] = float(min(x["items"], max(x["rounds"], 1.0) * ramp_items))
    # Rounds after the first (a device-side loop's grid barriers).
    x["rounds"] = max(x["rounds"] - 1.0, 0.0)
    return x


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


def ramp_is_saturated(rows, ramp_items=RAMP_ITEMS):
    """Whether every launch of `rows` fills the ramp (its items at least `ramp_items` a
    round): the ramp's column is then fixed + rounds over again and cannot be fitted."""
    return all(x["ramp"] >= (x["rounds"] + 1.0) * ramp_items for x, _, _ in rows)


def nnls(rows, ramp_items=RAMP_ITEMS, fixed_terms=None):
    """Non-negative fit over subsets of the terms (fixed included): fewer terms than
    distinct launches (at least one), and the fewest terms whose error is within 5 % of the
    best (ties: the earlier terms of TERMS, or of LOOP_TERMS for a device-side loop, whose
    fits must include rounds). The ramp is left out where every launch fills it
    ([`ramp_is_saturated`]) or ramp_items is 0. `fixed_terms` ({term: coefficient}): terms
    whose coefficient is given, not fitted; their part is taken off each span first and
    they are in every fit returned."""
    fixed_terms = dict(fixed_terms or {})
    if fixed_terms:
        rows = [(x, y - sum(c * x[t] for t, c in fixed_terms.items()), w) for x, y, w in rows]
    loop = any(x["rounds"] > 0 for x, _, _ in rows)
    all_cols = ["fixed"] + [t for t in (LOOP_TERMS if loop else TERMS) if t not in fixed_terms]
    if "ramp" in all_cols and (ramp_items == 0 or ramp_is_saturated(rows, ramp_items)):
        all_cols.remove("ramp")
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
    coef = next(coef for _, err, coef in fits if err <= 1.05 * best + 1e-12)
    for t in ALL_TERMS:
        coef.setdefault(t, 0.0)
    coef.update(fixed_terms)
    return coef


# A table header line (`[a.b]`, not an array of tables `[[a]]`), an optional comment after.
HEADER = re.compile(r"^[ \t]*\[(?!\[)[ \t]*([^\[\]]*?)[ \t]*\][ \t]*(#.*)?$")
KERNEL_COST = re.compile(r"^gpu_model\.([^.]+)\.kernel_cost\.([^.]+)$")
GPU_MODEL = re.compile(r"^gpu_model\.([^.]+)(\..*)?$")


class IntoError(Exception):
    """A model file that --into cannot edit; the message names the file and says why."""


def _lines(text):
    """`text` as lines that keep their endings, split at newlines only (a CR, form feed or
    Unicode line separator stays inside its line)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _header(line):
    """The table name of a header line (`gpu_model.M.kernel_cost.K`), else None."""
    m = HEADER.match(line.rstrip("\r\n"))
    return m.group(1) if m else None


def parse_tables(tables_text):
    """The fitted tables of `tables_text` (what the fit prints) as (model, kernel, lines):
    each table's header and key lines, without the blank line after it; comment lines
    outside tables are skipped."""
    tables = []
    current = None
    for line in _lines(tables_text):
        name = _header(line)
        if name is not None:
            m = KERNEL_COST.match(name)
            if not m:
                raise ValueError(f"fitted tables: `{line.strip()}` is not a "
                                 f"[gpu_model.MODEL.kernel_cost.KERNEL] header")
            current = (m.group(1), m.group(2), [line if line.endswith("\n") else line + "\n"])
            tables.append(current)
        elif not line.strip():
            current = None
        elif current is not None:
            current[2].append(line if line.endswith("\n") else line + "\n")
    return tables


def apply_tables(text, tables, path):
    """Write the fitted `tables` (from [`parse_tables`]) into the model file `text` (read from
    `path`, named in errors). Each table replaces the one of the same name (its header line
    and the lines after it up to the next header or blank line) or, when absent, is appended
    at the end after a blank line; every other byte stays. Returns (new text, names replaced,
    names of those whose lines were already the same, names added). Raises IntoError when the
    file's GPU model is not the tables' or a table is defined twice."""
    if not tables:
        return text, [], [], []
    models = sorted({m for m, _, _ in tables})
    if len(models) > 1:
        raise IntoError(f"{path}: the fitted tables are for several GPU models "
                        f"({', '.join(models)}); write one model's tables at a time")
    model = models[0]
    lines = _lines(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    # Table name -> [start, end) of its block, in `lines`.
    blocks = {}
    file_models = []
    i = 0
    while i < len(lines):
        name = _header(lines[i])
        if name is None:
            i += 1
            continue
        m = GPU_MODEL.match(name)
        if m and m.group(1) not in file_models:
            file_models.append(m.group(1))
        j = i + 1
        while j < len(lines) and lines[j].strip() and _header(lines[j]) is None:
            j += 1
        if name in blocks:
            raise IntoError(f"{path}: table [{name}] is defined twice (lines {blocks[name][0] + 1} "
                            f"and {i + 1}); TOML allows one, so remove one of them first")
        blocks[name] = (i, j)
        i = j
    if model not in file_models:
        if not file_models:
            raise IntoError(f"{path}: the file defines no [gpu_model.NAME] table, and the fitted "
                            f"tables are for GPU model `{model}`; give the model file that "
                            f"defines [gpu_model.{model}]")
        raise IntoError(f"{path}: the file's GPU model is `{'`, `'.join(file_models)}` but the "
                        f"fitted tables are for `{model}`; fit with MODEL "
                        f"`{file_models[0]}` for this file, or leave it out of --into")

    def own(table_lines):
        return [line[:-1] + newline if newline != "\n" else line for line in table_lines]

    replaced, same, added = [], [], []
    # Replace from the bottom up, so that earlier blocks keep their line numbers.
    edits = []
    for _, kernel, table_lines in tables:
        name = f"gpu_model.{model}.kernel_cost.{kernel}"
        if name in blocks:
            start, end = blocks[name]
            new = own(table_lines)
            # Keep the old block's last line ending as it was (the file's last line may have
            # none).
            if not lines[end - 1].endswith("\n"):
                new[-1] = new[-1].rstrip("\r\n")
            if lines[start:end] == new:
                same.append(kernel)
            edits.append((start, end, new))
            replaced.append(kernel)
        else:
            added.append((kernel, own(table_lines)))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    out = "".join(lines)
    for _, table_lines in added:
        if out and not out.endswith("\n"):
            out += newline
        if out and not out.endswith(newline * 2):
            out += newline
        out += "".join(table_lines)
    return out, replaced, same, [k for k, _ in added]


def write_into(paths, tables_text):
    """`--into`: apply the fitted tables to every file of `paths`, all checked before any is
    written; returns one summary line per file."""
    tables = parse_tables(tables_text)
    results = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
        except OSError as e:
            raise IntoError(f"{path}: cannot read the model file ({e.strerror}); check the path "
                            f"given to --into") from e
        results.append((path, text, *apply_tables(text, tables, path)))
    summary = []
    for path, old, new, replaced, same, added in results:
        if new != old:
            directory = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".calib_fit.")
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(new)
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            os.replace(tmp, path)
        summary.append(f"# {path}: replaced {len(replaced)} table(s)"
                       f"{f' ({len(same)} unchanged)' if same else ''}"
                       f"{': ' + ', '.join(replaced) if replaced else ''}; "
                       f"added {len(added)}{': ' + ', '.join(added) if added else ''}")
    return summary


def main():
    parser = argparse.ArgumentParser(
        description="Fit per-kernel costs from kernel spans (see the module docstring).")
    parser.add_argument("model", metavar="MODEL",
                        help="the GPU model name of the tables ([gpu_model.MODEL...])")
    parser.add_argument("pairs_file", metavar="PAIRS_FILE",
                        help="lines `label real_trace.json sim_trace.json`")
    parser.add_argument("--into", metavar="MODEL_FILE", action="append", default=[],
                        help="write the fitted tables into this TOML model file in place "
                             "(repeatable)")
    parser.add_argument("--ramp-items", metavar="N", type=int, default=RAMP_ITEMS,
                        help=f"items a launch or round pays the ramp for (default {RAMP_ITEMS},"
                             f" one block; 0: no ramp term)")
    parser.add_argument("--ramp-from", metavar="LOOP=KERNEL", action="append", default=[],
                        help="kernel LOOP takes KERNEL's fitted ramp price (comma-separated "
                             "pairs; repeatable)")
    parser.add_argument("--ramp-price", metavar="KERNEL=PS", action="append", default=[],
                        help="kernel KERNEL takes this ramp price (ps an item) instead of "
                             "fitting one (comma-separated pairs; repeatable)")
    parser.add_argument("--loop-min-items", metavar="N", type=int, default=0,
                        help="leave a device-side loop's launches of fewer than N items out "
                             "of its fit (default 0)")
    parser.add_argument("--kernels", metavar="K1,K2,...", default="",
                        help="fit (and write with --into) only these kernels; every other "
                             "kernel's table is left as it is (default: every kernel of the "
                             "pairs)")
    parser.add_argument("--launches", action="store_true",
                        help="print every launch's real span beside its fitted cost")
    args = parser.parse_args()
    model, pairs_file = args.model, args.pairs_file
    if args.ramp_items < 0:
        parser.error(f"--ramp-items {args.ramp_items}: give 0 (no ramp) or more items")
    ramp_from = {}
    for pair in ",".join(args.ramp_from).split(","):
        if not pair:
            continue
        loop, sep, kernel = pair.partition("=")
        if not sep or not loop or not kernel or loop == kernel:
            parser.error(f"--ramp-from `{pair}`: give LOOP=KERNEL, two different kernel names "
                         f"(e.g. bfs_levels=bfs_advance)")
        ramp_from[loop] = kernel
    ramp_price = {}
    for pair in ",".join(args.ramp_price).split(","):
        if not pair:
            continue
        kernel, sep, price = pair.partition("=")
        try:
            ps = float(price)
        except ValueError:
            ps = -1.0
        if not sep or not kernel or ps <= 0:
            parser.error(f"--ramp-price `{pair}`: give KERNEL=PS, a kernel name and a positive "
                         f"price in ps an item (e.g. bfs_advance=23240.66)")
        if kernel in ramp_from:
            parser.error(f"--ramp-price {kernel}: {kernel} takes its ramp from "
                         f"{ramp_from[kernel]} (--ramp-from); give one of the two")
        ramp_price[kernel] = ps * 1.0
    if (ramp_from or ramp_price) and args.ramp_items == 0:
        parser.error("--ramp-from and --ramp-price need a ramp: drop --ramp-items 0")
    for path in args.into:
        if not os.path.isfile(path):
            parser.error(f"--into {path}: no such file; give an existing model file")
    by_kernel = {}
    launch_ids = {}
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
            for i, (r, s) in enumerate(zip(rq[name], sq[name])):
                launch_ids.setdefault(name, []).append((label, i))
                x = columns(s["args"], args.ramp_items)
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
    printed = []

    def emit(line=""):
        print(line)
        printed.append(line + "\n")

    for loop, kernel in sorted(ramp_from.items()):
        for name in (loop, kernel):
            if name not in by_kernel:
                print(f"calib_fit.py: --ramp-from {loop}={kernel}: no launch of `{name}` in "
                      f"{pairs_file}; add a run of it to the pairs or drop the pair",
                      file=sys.stderr)
                sys.exit(2)
    # --loop-min-items: a loop's launches below N items stay out of its fit (kept for
    # --launches).
    all_launches = {name: list(zip(rows, launch_ids[name])) for name, rows in by_kernel.items()}
    left_out = {}
    for name, rows in list(by_kernel.items()):
        if args.loop_min_items > 0 and any(x["rounds"] > 0 for x, _, _ in rows):
            keep = [r for r in rows if r[0]["items"] >= args.loop_min_items]
            left_out[name] = len(rows) - len(keep)
            if keep and left_out[name]:
                by_kernel[name] = keep
            else:
                left_out[name] = 0
    only = {k for k in args.kernels.split(",") if k}
    if only:
        missing = sorted(only - set(by_kernel))
        if missing:
            print(f"calib_fit.py: --kernels {','.join(missing)}: no launch of "
                  f"{'it' if len(missing) == 1 else 'them'} in {pairs_file}; add runs of "
                  f"{'it' if len(missing) == 1 else 'them'} to the pairs or drop the name",
                  file=sys.stderr)
            sys.exit(2)
        lenders = {ramp_from[n] for n in only if n in ramp_from}
        by_kernel = {n: rows for n, rows in by_kernel.items() if n in only | lenders}
    # Kernels that lend their ramp first, so that the loops can take it.
    fitted = {}
    order = sorted(by_kernel, key=lambda n: (n in ramp_from, n))
    for name in order:
        rows = by_kernel[name]
        given = None
        if name in ramp_price:
            given = {"ramp": ramp_price[name]}
        elif name in ramp_from:
            lender = fitted.get(ramp_from[name])
            if lender is None or lender["ramp"] <= 0:
                why = ("has no non-negative fit" if lender is None else
                       f"was fitted without a ramp (no launch below {args.ramp_items} items, "
                       f"or the ramp did not pay)")
                print(f"calib_fit.py: --ramp-from {name}={ramp_from[name]}: "
                      f"`{ramp_from[name]}` {why}; drop the pair", file=sys.stderr)
                sys.exit(2)
            given = {"ramp": lender["ramp"]}
        coef = nnls(rows, args.ramp_items, given)
        if coef is None:
            print(f"# {name}: no non-negative fit", file=sys.stderr)
            continue
        fitted[name] = coef
    if only:  # a lender fitted for its ramp alone is not printed or written
        fitted = {n: c for n, c in fitted.items() if n in only}
    for name in sorted(fitted):
        rows, coef = by_kernel[name], fitted[name]
        errs = []
        for x, y, _ in rows:
            pred = sum(coef[c] * x[c] for c in coef)
            errs.append(abs(pred - y) / y if y else 0.0)
        emit(f"[gpu_model.{model}.kernel_cost.{name}]")
        emit(f"fixed_ns = {coef['fixed'] / 1e3:.3f}")
        for t in ALL_TERMS:
            if coef[t] > 0:
                key, scale = KEYS[t]
                emit(f"{key} = {coef[t] / scale:.3f}")
        if coef["ramp"] > 0:
            emit(f"ramp_items = {args.ramp_items}")
        lent = (f"; ramp_item_ps from {ramp_from[name]}'s fit (each round runs its expansion)"
                if name in ramp_from else "")
        lender = ramp_from.get(name, name)
        if lender in ramp_price:
            lent += (f"; ramp_item_ps given (--ramp-price {lender}="
                     f"{ramp_price[lender]:.3f}), not fitted")
        if left_out.get(name):
            lent += (f"; {left_out[name]} launch(es) of fewer than {args.loop_min_items} items "
                     f"left out (--loop-min-items)")
        emit(f'source = "fitted (scripts/calib_fit.py) on {len(rows)} launches of '
             f'{", ".join(sorted(sources[name]))}; median launch error '
             f'{100 * statistics.median(errs):.1f} %{lent}"')
        emit()
    if args.launches:
        for name in sorted(fitted):
            coef = fitted[name]
            for (x, y, _), (label, i) in all_launches[name]:
                pred = sum(coef[c] * x[c] for c in coef)
                out = (" (left out of the fit)" if args.loop_min_items > 0 and left_out.get(name)
                       and x["items"] < args.loop_min_items else "")
                print(f"# launch{out} {name} {label} #{i}: real {y / 1e6:.1f} us, fitted "
                      f"{pred / 1e6:.1f} us ({100 * (pred - y) / y:+.1f} %); items "
                      f"{x['items']:.0f}, edges {x['edges']:.0f}, outputs {x['outputs']:.0f}, "
                      f"rounds {x['rounds'] + 1:.0f}")
    for kind, (real, sim) in gaps.items():
        if real and sim:
            print(f"# gaps {kind} supersteps (ns): real median {statistics.median(real):.0f} "
                  f"(n {len(real)}), simulated median {statistics.median(sim):.0f} (n {len(sim)})")
    if args.into:
        try:
            for line in write_into(args.into, "".join(printed)):
                print(line)
        except (IntoError, ValueError) as e:
            print(f"calib_fit.py: --into: {e}", file=sys.stderr)
            sys.exit(2)


if __name__ == "__main__":
    main()

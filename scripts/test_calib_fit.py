"""Tests of `calib_fit.py` (issue 22): the edit of a model file's kernel_cost tables (`--into`)
and the ramp term (`--ramp-items`, `--ramp-from`).

Run from the repository root: `python3 -m unittest scripts/test_calib_fit.py` (standard
library only; no trace data needed).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import calib_fit  # noqa: E402

MODEL = "calibrated-TEST-GPU"

FILE = f"""# A model file: comments, the GPU model, three kernel tables, the machine.
name = "test"

[gpu_model.{MODEL}]
sm_count = 132
launch_overhead_ns = 1306.0   # a comment that must survive

[gpu_model.{MODEL}.kernel_cost.alpha]
fixed_ns = 1.000
source = "hand"

[gpu_model.{MODEL}.kernel_cost.beta]
fixed_ns = 2.000
edge_ps = 3.000
source = "old fit"

[gpu_model.{MODEL}.kernel_cost.gamma]
fixed_ns = 4.000
source = "hand"

[[gpu]]
name = "gpu0"
model = "{MODEL}"

[gpu_model.{MODEL}.kernel_cost.omega]
fixed_ns = 9.000
source = "appended last time"
"""

NEW_BETA = f"""[gpu_model.{MODEL}.kernel_cost.beta]
fixed_ns = 22.000
item_ps = 5.500
output_ps = 7.250
source = "new fit"

"""

NEW_DELTA = f"""[gpu_model.{MODEL}.kernel_cost.delta]
fixed_ns = 8.000
source = "new kernel"

"""


def kernel_cost_blocks(text):
    """The `[gpu_model.*.kernel_cost.*]` tables of a TOML file, each ended by a blank line,
    as the fit prints them (a table runs to the next header or blank line)."""
    out, inside = [], False
    for line in text.split("\n"):
        if line.startswith("["):
            inside = line.startswith("[gpu_model.") and ".kernel_cost." in line
            if inside:
                out.append(line)
        elif not line.strip():
            if inside:
                out.append("")
            inside = False
        elif inside:
            out.append(line)
    return "\n".join(out) + "\n"


def apply(text, tables_text, path="model.toml"):
    return calib_fit.apply_tables(text, calib_fit.parse_tables(tables_text), path)


class ApplyTables(unittest.TestCase):
    def test_replaces_a_table_in_the_middle_and_nothing_else(self):
        out, replaced, same, added = apply(FILE, NEW_BETA)
        old_beta = (f"[gpu_model.{MODEL}.kernel_cost.beta]\nfixed_ns = 2.000\nedge_ps = 3.000\n"
                    f'source = "old fit"\n')
        self.assertEqual(FILE.count(old_beta), 1)
        # The new table takes the old one's place; every other byte is the file's.
        self.assertEqual(out, FILE.replace(old_beta, NEW_BETA.rstrip("\n") + "\n"))
        self.assertEqual((replaced, same, added), (["beta"], [], []))
        # The old key absent from the new fit is gone with its table.
        self.assertNotIn("edge_ps = 3.000", out)

    def test_appends_an_absent_table_after_a_blank_line(self):
        out, replaced, same, added = apply(FILE, NEW_DELTA)
        self.assertEqual(out, FILE + "\n" + NEW_DELTA.rstrip("\n") + "\n")
        self.assertEqual((replaced, added), ([], ["delta"]))

    def test_appends_to_a_file_without_a_final_newline(self):
        text = FILE.rstrip("\n")
        out, _, _, added = apply(text, NEW_DELTA)
        self.assertEqual(out, text + "\n\n" + NEW_DELTA.rstrip("\n") + "\n")
        self.assertEqual(added, ["delta"])

    def test_replaces_the_last_table_of_a_file_without_a_final_newline(self):
        text = FILE.rstrip("\n")
        new_omega = f"[gpu_model.{MODEL}.kernel_cost.omega]\nfixed_ns = 1.500\n"
        out, replaced, _, _ = apply(text, new_omega)
        self.assertEqual(out, text.replace(
            'fixed_ns = 9.000\nsource = "appended last time"', "fixed_ns = 1.500"))
        self.assertEqual(replaced, ["omega"])

    def test_several_tables_at_once_keep_the_rest_byte_identical(self):
        out, replaced, _, added = apply(FILE, NEW_BETA + NEW_DELTA + "# gaps: a comment\n")
        self.assertEqual((replaced, added), (["beta"], ["delta"]))
        old_beta = FILE[FILE.index(f"[gpu_model.{MODEL}.kernel_cost.beta]"):]
        old_beta = old_beta[:old_beta.index("\n\n") + 1]
        expected = (FILE.replace(old_beta, NEW_BETA.rstrip("\n") + "\n")
                    + "\n" + NEW_DELTA.rstrip("\n") + "\n")
        self.assertEqual(out, expected)

    def test_is_idempotent(self):
        tables = NEW_BETA + NEW_DELTA
        once, _, _, _ = apply(FILE, tables)
        twice, replaced, same, added = apply(once, tables)
        self.assertEqual(twice, once)
        self.assertEqual((replaced, same, added), (["beta", "delta"], ["beta", "delta"], []))

    def test_keeps_crlf_line_endings(self):
        text = FILE.replace("\n", "\r\n")
        out, _, _, _ = apply(text, NEW_BETA + NEW_DELTA)
        self.assertEqual(out, apply(FILE, NEW_BETA + NEW_DELTA)[0].replace("\n", "\r\n"))

    def test_rejects_a_file_of_another_model_naming_both(self):
        other = FILE.replace(MODEL, "calibrated-OTHER-GPU")
        with self.assertRaises(calib_fit.IntoError) as e:
            apply(other, NEW_BETA, path="topologies/other.toml")
        message = str(e.exception)
        self.assertIn("topologies/other.toml", message)
        self.assertIn("calibrated-OTHER-GPU", message)
        self.assertIn(MODEL, message)

    def test_rejects_a_file_without_a_gpu_model(self):
        with self.assertRaises(calib_fit.IntoError) as e:
            apply('name = "x"\n\n[[gpu]]\nname = "gpu0"\n', NEW_BETA, path="bare.toml")
        self.assertIn("bare.toml", str(e.exception))
        self.assertIn("defines no [gpu_model.NAME] table", str(e.exception))

    def test_rejects_a_table_defined_twice(self):
        twice = FILE + "\n" + NEW_BETA
        with self.assertRaises(calib_fit.IntoError) as e:
            apply(twice, NEW_BETA, path="dup.toml")
        self.assertIn("dup.toml", str(e.exception))
        self.assertIn("defined twice", str(e.exception))

    def test_the_repository_model_files_take_their_own_tables_unchanged(self):
        # Re-applying a model file's own kernel_cost tables (as the fit would print them)
        # must give back the same bytes: the block boundaries match the files' layout.
        root = os.path.dirname(HERE)
        for rel in ("topologies/calibrated/h100-nvswitch-x4.toml",
                    "reports/bench/gpu_calibrated_h100_2026-11-26.toml"):
            path = os.path.join(root, rel)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            own = kernel_cost_blocks(text)
            tables = calib_fit.parse_tables(own)
            self.assertGreater(len(tables), 10, rel)
            out, replaced, same, added = calib_fit.apply_tables(text, tables, rel)
            self.assertEqual(out, text, rel)
            self.assertEqual(len(replaced), len(tables), rel)
            self.assertEqual(same, replaced, rel)
            self.assertEqual(added, [], rel)


class WriteInto(unittest.TestCase):
    def test_writes_every_file_or_none(self):
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "good.toml")
            bad = os.path.join(d, "bad.toml")
            with open(good, "w") as f:
                f.write(FILE)
            with open(bad, "w") as f:
                f.write(FILE.replace(MODEL, "calibrated-OTHER-GPU"))
            with self.assertRaises(calib_fit.IntoError) as e:
                calib_fit.write_into([good, bad], NEW_BETA)
            self.assertIn(bad, str(e.exception))
            with open(good) as f:
                self.assertEqual(f.read(), FILE)  # checked first, so not written
            summary = calib_fit.write_into([good], NEW_BETA + NEW_DELTA)
            self.assertEqual(summary, [f"# {good}: replaced 1 table(s): beta; added 1: delta"])
            with open(good) as f:
                self.assertEqual(f.read(), apply(FILE, NEW_BETA + NEW_DELTA)[0])


def trace(path, durations_us, edges):
    """A Chrome trace with one kernel span `k_work` per launch on GPU 0."""
    events, ts = [], 0.0
    for dur, e in zip(durations_us, edges):
        events.append({"ph": "X", "cat": "kernel", "name": "k_work", "pid": 0, "tid": 0,
                       "ts": ts, "dur": dur, "args": {"edges": e}})
        ts += dur + 5.0
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


class CommandLine(unittest.TestCase):
    def test_fit_into_a_model_file(self):
        with tempfile.TemporaryDirectory() as d:
            edges = [1000, 2000, 4000, 8000]
            # 10 us fixed and 20 ps an edge: the fit must find them.
            trace(os.path.join(d, "real.json"), [10.0 + 2e-5 * e for e in edges], edges)
            trace(os.path.join(d, "sim.json"), [1.0] * 4, edges)
            pairs = os.path.join(d, "pairs.txt")
            with open(pairs, "w") as f:
                f.write(f"toy {d}/real.json {d}/sim.json\n")
            model = os.path.join(d, "model.toml")
            with open(model, "w") as f:
                f.write(FILE)
            script = os.path.join(HERE, "calib_fit.py")
            run = subprocess.run([sys.executable, script, MODEL, pairs, "--into", model],
                                 capture_output=True, text=True, check=True)
            self.assertIn(f"# {model}: replaced 0 table(s); added 1: k_work", run.stdout)
            with open(model) as f:
                text = f.read()
            self.assertTrue(text.startswith(FILE + "\n"))
            self.assertIn(f"[gpu_model.{MODEL}.kernel_cost.k_work]\nfixed_ns = 10000.000\n"
                          f"edge_ps = 20.000\n", text)
            # A file of another model: refused, exit status 2, the file untouched.
            other = os.path.join(d, "other.toml")
            with open(other, "w") as f:
                f.write(FILE.replace(MODEL, "calibrated-OTHER-GPU"))
            run = subprocess.run([sys.executable, script, MODEL, pairs, "--into", other],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 2)
            self.assertIn(other, run.stderr)
            self.assertIn("calibrated-OTHER-GPU", run.stderr)
            with open(other) as f:
                self.assertEqual(f.read(), FILE.replace(MODEL, "calibrated-OTHER-GPU"))


def launch(items, edges=0, rounds=1):
    """One launch's fit columns from simulated counts."""
    return calib_fit.columns({"items": items, "edges": edges, "rounds": rounds})


def rows_of(launches, cost):
    """Fit rows (columns, span ps, weight) of `launches` priced by `cost(items, edges,
    rounds)` in ps, weighted as the fit weights real spans."""
    out = []
    for items, edges, rounds in launches:
        y = cost(items, edges, rounds)
        out.append((launch(items, edges, rounds), y, 1.0 / max(y, 1e6) ** 2))
    return out


class Ramp(unittest.TestCase):
    def test_the_ramp_column_is_the_items_up_to_a_block_a_round(self):
        self.assertEqual(launch(100)["ramp"], 100.0)
        self.assertEqual(launch(5000)["ramp"], 256.0)
        # A loop's rounds share its items: 10 rounds of 110 items, 10 rounds of 600.
        self.assertEqual(launch(1100, rounds=10)["ramp"], 1100.0)
        self.assertEqual(launch(6000, rounds=10)["ramp"], 2560.0)
        self.assertEqual(launch(6000, rounds=10)["rounds"], 9.0)
        self.assertEqual(calib_fit.columns({"items": 50}, ramp_items=0)["ramp"], 0.0)

    def test_the_fit_finds_a_ramp_below_one_block(self):
        # 15 us fixed, 30 ns an item up to 256 items, 20 ps an edge (bfs_advance's shape).
        launches = [(n, 4 * n, 1) for n in (1, 10, 40, 90, 150, 200, 256, 400, 1000, 5000, 20000)]
        coef = calib_fit.nnls(rows_of(
            launches, lambda i, e, r: 15e6 + 30e3 * min(i, 256) + 20 * e))
        self.assertAlmostEqual(coef["fixed"] / 1e6, 15.0, places=3)
        self.assertAlmostEqual(coef["ramp"] / 1e3, 30.0, places=3)
        self.assertAlmostEqual(coef["edges"], 20.0, places=2)
        # A linear cost, no ramp: the ramp does not pay and is left out.
        coef = calib_fit.nnls(rows_of(launches, lambda i, e, r: 15e6 + 20 * e))
        self.assertEqual(coef["ramp"], 0.0)
        self.assertAlmostEqual(coef["edges"], 20.0, places=2)

    def test_launches_that_all_fill_a_block_leave_the_ramp_out(self):
        rows = rows_of([(n, 4 * n, 1) for n in (300, 1000, 5000, 20000)],
                       lambda i, e, r: 15e6 + 30e3 * min(i, 256) + 20 * e)
        self.assertTrue(calib_fit.ramp_is_saturated(rows))
        coef = calib_fit.nnls(rows)
        self.assertEqual(coef["ramp"], 0.0)
        # The saturated ramp went into the fixed cost: 15 us + 256 * 30 ns.
        self.assertAlmostEqual(coef["fixed"] / 1e6, 15.0 + 7.68, places=3)

    def test_a_loop_takes_a_given_ramp_and_fits_the_rest(self):
        # A device-side loop whose launches all have more than a block a round (the fit
        # graphs' levels): 20 us fixed, 4 us a round, 25 ns an item up to 256 a round.
        launches = [(60000, 0, 110), (2000000, 0, 1024), (8000000, 0, 1024), (500000, 0, 505)]
        rows = rows_of(launches, lambda i, e, r: 20e6 + 4e6 * (r - 1) + 25e3 * min(i, 256 * r))
        self.assertTrue(calib_fit.ramp_is_saturated(rows))
        coef = calib_fit.nnls(rows, fixed_terms={"ramp": 25e3})
        self.assertEqual(coef["ramp"], 25e3)
        self.assertAlmostEqual(coef["fixed"] / 1e6, 20.0, places=3)
        self.assertAlmostEqual(coef["rounds"] / 1e6, 4.0, places=3)
        # Without it, the rounds take the ramp's saturated price.
        coef = calib_fit.nnls(rows)
        self.assertAlmostEqual(coef["rounds"] / 1e6, 4.0 + 6.4, places=3)


class BlockPath(unittest.TestCase):
    def test_a_loop_fits_its_rounds_and_its_busiest_blocks_arcs(self):
        # Rounds of many widths (the strips, a mesh, a social graph): 15 us fixed, 5 us a
        # round, 5 ns an arc on the busiest block's path; the arcs spread over the GPU cost
        # nothing more.
        shapes = [(110, 141282, 393150), (1024, 60000, 109000), (28, 9000, 13188),
                  (5, 60000, 83218), (1024, 400000, 1178661), (373, 90000, 258097)]
        rows = []
        for rounds, path, edges in shapes:
            x = dict(calib_fit.columns({"items": 10 * rounds, "edges": edges, "rounds": rounds,
                                        "path_edges": path}))
            y = 15e6 + 5e6 * (rounds - 1) + 5e3 * path
            rows.append((x, y, 1.0 / y ** 2))
        coef = calib_fit.nnls(rows, ramp_items=0)
        self.assertAlmostEqual(coef["fixed"] / 1e6, 15.0, places=3)
        self.assertAlmostEqual(coef["rounds"] / 1e6, 5.0, places=3)
        self.assertAlmostEqual(coef["path_edges"] / 1e3, 5.0, places=3)
        self.assertEqual(coef["edges"], 0.0)
        # An advance (no rounds) never takes the path term.
        adv = [(dict(calib_fit.columns({"items": n, "edges": 4 * n, "path_edges": n})),
                1e6 + 10 * n, 1.0) for n in (100, 1000, 10000)]
        self.assertEqual(calib_fit.nnls(adv, ramp_items=0)["path_edges"], 0.0)


def trace_of(path, launches):
    """A Chrome trace of kernel spans: (name, duration us, args) per launch on GPU 0."""
    events, ts = [], 0.0
    for name, dur, args in launches:
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 0,
                       "ts": ts, "dur": dur, "args": args})
        ts += dur + 5.0
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


class RampCommandLine(unittest.TestCase):
    def run_fit(self, d, extra):
        script = os.path.join(HERE, "calib_fit.py")
        return subprocess.run([sys.executable, script, MODEL, os.path.join(d, "pairs.txt"),
                               *extra], capture_output=True, text=True)

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        adv = [(n, 4 * n) for n in (1, 10, 40, 90, 150, 200, 256, 400, 1000, 5000)]
        loop = [(60000, 110), (2000000, 1024), (8000000, 1024), (500000, 505)]
        real = ([("k_advance", 15.0 + 0.03 * min(n, 256) + 2e-5 * e, {}) for n, e in adv]
                + [("k_levels", 20.0 + 4.0 * (r - 1) + 0.03 * min(n, 256 * r), {})
                   for n, r in loop])
        sim = ([("k_advance", 1.0, {"items": n, "edges": e}) for n, e in adv]
               + [("k_levels", 1.0, {"items": n, "rounds": r}) for n, r in loop])
        trace_of(os.path.join(d, "real.json"), real)
        trace_of(os.path.join(d, "sim.json"), sim)
        with open(os.path.join(d, "pairs.txt"), "w") as f:
            f.write(f"toy {d}/real.json {d}/sim.json\n")

    def tearDown(self):
        self.dir.cleanup()

    def test_prints_the_ramp_keys_and_lends_the_ramp_to_a_loop(self):
        run = self.run_fit(self.dir.name, ["--ramp-from", "k_levels=k_advance"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"[gpu_model.{MODEL}.kernel_cost.k_advance]\nfixed_ns = 15000.000\n"
                      f"edge_ps = 20.000\nramp_item_ps = 30000.000\nramp_items = 256\n",
                      run.stdout)
        self.assertIn(f"[gpu_model.{MODEL}.kernel_cost.k_levels]\nfixed_ns = 20000.000\n"
                      f"round_ns = 4000.000\nramp_item_ps = 30000.000\nramp_items = 256\n",
                      run.stdout)
        self.assertIn("ramp_item_ps from k_advance's fit", run.stdout)
        # Without --ramp-from the rounds and the fixed cost carry the saturated ramp (256 * 30 ns
        # each), and no ramp keys are printed.
        run = self.run_fit(self.dir.name, [])
        levels = run.stdout.split(f"kernel_cost.k_levels]\n")[1].split("source")[0]
        self.assertEqual(levels, "fixed_ns = 27680.000\nround_ns = 11680.000\n")

    def test_a_given_ramp_price_is_kept_and_lent(self):
        # The advance takes the price given (not the 30 ns its spans would fit), fits its
        # other terms on the rest, and lends the given price to the loop.
        run = self.run_fit(self.dir.name, ["--ramp-price", "k_advance=20000",
                                           "--ramp-from", "k_levels=k_advance"])
        self.assertEqual(run.returncode, 0, run.stderr)
        advance = run.stdout.split("kernel_cost.k_advance]\n")[1].split("source")[0]
        self.assertIn("ramp_item_ps = 20000.000\nramp_items = 256\n", advance)
        levels = run.stdout.split("kernel_cost.k_levels]\n")[1].split("\n\n")[0]
        self.assertIn("ramp_item_ps = 20000.000\n", levels)
        self.assertIn("ramp_item_ps given (--ramp-price k_advance=20000.000), not fitted", levels)
        run = self.run_fit(self.dir.name, ["--ramp-price", "k_advance=0"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("give KERNEL=PS", run.stderr)
        run = self.run_fit(self.dir.name, ["--ramp-price", "k_levels=1",
                                           "--ramp-from", "k_levels=k_advance"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("give one of the two", run.stderr)

    def test_loop_launches_below_the_minimum_are_left_out_and_listed(self):
        run = self.run_fit(self.dir.name, ["--ramp-from", "k_levels=k_advance",
                                           "--loop-min-items", "100000", "--launches"])
        self.assertEqual(run.returncode, 0, run.stderr)
        levels = run.stdout.split("kernel_cost.k_levels]\n")[1].split("\n\n")[0]
        # The three launches left fit the same costs; the one of 60,000 items is left out.
        self.assertIn("fixed_ns = 20000.000\nround_ns = 4000.000\n", levels)
        self.assertIn("on 3 launches of toy", levels)
        self.assertIn("1 launch(es) of fewer than 100000 items left out", levels)
        self.assertIn("# launch (left out of the fit) k_levels toy #0: real 1300.8 us, fitted "
                      "1300.8 us (-0.0 %); items 60000", run.stdout)
        self.assertIn("# launch k_advance toy #0: real 15.0 us, fitted 15.0 us", run.stdout)
        # Advances (no rounds) keep every launch.
        self.assertNotIn("left out (--loop-min-items)", run.stdout.split("k_levels]")[0])

    def test_kernels_fits_and_prints_only_the_kernels_named(self):
        run = self.run_fit(self.dir.name, ["--kernels", "k_levels",
                                           "--ramp-from", "k_levels=k_advance"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"[gpu_model.{MODEL}.kernel_cost.k_levels]\nfixed_ns = 20000.000\n"
                      f"round_ns = 4000.000\nramp_item_ps = 30000.000\n", run.stdout)
        # The lender is fitted for its ramp, not printed.
        self.assertNotIn("kernel_cost.k_advance]", run.stdout)
        run = self.run_fit(self.dir.name, ["--kernels", "k_levels,k_missing"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("--kernels k_missing: no launch of it", run.stderr)

    def test_no_ramp_with_ramp_items_zero(self):
        run = self.run_fit(self.dir.name, ["--ramp-items", "0"])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("ramp_item", run.stdout)

    def test_refuses_a_lender_without_a_ramp_or_absent(self):
        run = self.run_fit(self.dir.name, ["--ramp-from", "k_advance=k_levels"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("`k_levels` was fitted without a ramp", run.stderr)
        run = self.run_fit(self.dir.name, ["--ramp-from", "k_levels=k_missing"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("no launch of `k_missing`", run.stderr)
        run = self.run_fit(self.dir.name, ["--ramp-from", "k_levels"])
        self.assertEqual(run.returncode, 2)
        self.assertIn("give LOOP=KERNEL", run.stderr)


if __name__ == "__main__":
    unittest.main()

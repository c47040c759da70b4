#!/usr/bin/env python3
"""joinery side by side with MuJoCo 2.2, Simbody 3.7 and the hand-written floor.

    python3 bench/peers/run.py [--quick] [--cap SECONDS] [--repeats R] [--out FILE.md]

For every case (workload, size) and every program it finds the cheapest setting that reaches
the case's accuracy (probing each integrator from its loosest setting to its tightest, once
each, under a time cap), then runs the chosen settings R times interleaved, one program after
the other, each pinned to one core (taskset -c 1, OPENBLAS_NUM_THREADS=1), and prints the
median time, steps, right-hand sides and peak memory side by side, with ratios to the best
peer (MuJoCo or Simbody) and to the floor from the same run. From N = 500, W1 also runs
Simbody's RK-Merson at accuracy 1e-8 (issue 12's named setting) as a row of its own. See
docs/bench.md.
Python 3 standard library only."""

import argparse
import math
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "build-peers")
JOINERY = os.path.join(ROOT, "build", "lua", "joinery")
MODELS = os.path.join(ROOT, "bench", "peers", "models")
G = 9.81

# Accuracy each case asks for (the quantity is in the case's description).
TIP_TOL = 1e-6  # m, tip position against the converged reference (small N)
DRIFT_TOL = 1e-9  # energy drift relative to E* = m g L N (N+1) / 2 (chaotic or large N)
W2_TOL = 1e-6  # m, x1 and x2 against the exact modal solution
ANGLE_TOL = 1e-3  # rad, crank angle at T against the one-degree-of-freedom reduction
# The exact modal solution of W2 (omega = 3.961435, 12.621689 rad/s) at 10 s.
W2_EXACT = (0.07738325549366, -0.020689599587574693)

# Tolerances from the loosest: 1, 5, 2 in every decade, 1e-3 to 1e-12 (a ladder of decades
# matched accuracy only to a factor of ten: a program that just missed at one decade paid
# for the next). Finer steps need a measure that is monotone in the tolerance: see
# DRIFT_SAMPLES.
LADDER = [m * 10.0**-k for k in range(3, 13) for m in (1.0, 0.5, 0.2)][:-2]
# The energy drift is the largest |E(t) - E0| at this many evenly spaced instants (every
# driver and joinery's output rows). At the last instant alone it is not monotone in the
# tolerance on a chaotic chain (the floor at N = 100: 3.6e-8 at Adams 1e-6, 2e-10 at 5e-7):
# a lucky setting passed.
DRIFT_SAMPLES = 20
# Issue 12 names its speed target at W1 N = 1000 against Simbody's RK-Merson at accuracy
# 1e-8: that setting runs as its own row from N = 500 (not a peer for /peer, which is the
# cheapest setting reaching the case's accuracy).
NAMED_SIMBODY = "simbody-rkm8"
MUJOCO_DT = [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6]


class Case:
    def __init__(self, workload, n, t_end):
        self.workload, self.n, self.t_end = workload, n, t_end
        self.reference = None  # tip (W1, small N) or crank angle (W3, chain)

    def title(self):
        names = {"w1": "W1 chain N=%d" % self.n, "w2": "W2 springs", "w3": "W3 four-bar",
                 "fbc": "four-bar chain, %d windows" % self.n}
        return "%s, %g s" % (names[self.workload], self.t_end)

    def measure(self):
        if self.workload == "w1":
            if self.reference is not None:
                return "tip error (m) <= %g" % TIP_TOL
            return "max energy drift / (m g L N(N+1)/2) <= %g" % DRIFT_TOL
        if self.workload == "w2":
            return "max error of x1, x2 (m) <= %g" % W2_TOL
        return "crank angle error (rad) <= %g" % ANGLE_TOL

    def error(self, r):
        """The case's accuracy measure for a finished run's values, or None."""
        try:
            if self.workload == "w1":
                if self.reference is not None:
                    return math.hypot(r["tip_x"] - self.reference[0], r["tip_y"] - self.reference[1])
                return r["drift"] / (G * self.n * (self.n + 1) / 2)
            if self.workload == "w2":
                return max(abs(r["x1"] - W2_EXACT[0]), abs(r["x2"] - W2_EXACT[1]))
            return abs(r["theta"] - self.reference)
        except KeyError:
            return None

    def tolerance(self):
        if self.workload == "w1":
            return TIP_TOL if self.reference is not None else DRIFT_TOL
        return W2_TOL if self.workload == "w2" else ANGLE_TOL


MEMORY_LIMIT_MB = [4096]  # address space per run (--mem-limit): a dense O(N^2) model fails alone


def limit_memory():
    limit = MEMORY_LIMIT_MB[0] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_process(cmd, env, cap):
    """Runs cmd on core 1; returns (output, wall seconds, peak RSS in MB, CPU seconds (user +
    system, the whole process: less than wall when other load took the core), timed out).
    GNU time gives the peak RSS: a child of this Python process would inherit its RSS as a
    starting peak (Linux keeps the pre-exec high-water mark). Wall includes time's fork."""
    full_env = dict(os.environ, OPENBLAS_NUM_THREADS="1", **env)
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    with tempfile.TemporaryFile(mode="w+") as out, \
            tempfile.NamedTemporaryFile(mode="r", prefix="peers-rss-") as rss:
        start = time.monotonic()
        proc = subprocess.Popen(pin + ["/usr/bin/time", "-f", "%M %U %S", "-o", rss.name] + cmd,
                                env=full_env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=limit_memory)
        try:
            proc.wait(timeout=cap)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            timed_out = True
        wall = time.monotonic() - start
        out.seek(0)
        fields = (rss.read().strip().splitlines() or [""])[-1].split()
        peak, cpu = None, None
        if len(fields) == 3 and not timed_out:
            peak, cpu = float(fields[0]) / 1024.0, float(fields[1]) + float(fields[2])
        return out.read(), wall, peak, cpu, timed_out


def parse_driver(out):
    line = next((l for l in out.splitlines() if l.startswith("result ")), None)
    if line is None:
        return {"failed": out.strip().splitlines()[-1] if out.strip() else "no output"}
    values = {}
    for item in line.split()[1:]:
        key, _, val = item.partition("=")
        if key == "reason":
            values["failed"] = line.split("reason=", 1)[1][:120]
            break
        try:
            values[key] = float(val)
        except ValueError:
            values[key] = val
    if values.get("failed") == 1.0:
        values["failed"] = "failed"
    return values


def read_csv_rows(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [l.strip().split(",") for l in f if l.strip()]
    return header, rows


def joinery_values(case, kind, csv_path):
    header, rows = read_csv_rows(csv_path)
    first = dict(zip(header, map(float, rows[0])))
    last = dict(zip(header, map(float, rows[-1])))
    energy = header.index("energy")
    v = {"e0": first["energy"], "e1": last["energy"],
         "drift": max(abs(float(row[energy]) - first["energy"]) for row in rows)}
    if case.workload == "w1" and kind == "rod":
        v["tip_x"], v["tip_y"] = last["m%d.x" % case.n], last["m%d.y" % case.n]
    elif case.workload == "w1":
        # links of 1 m from the origin: the tip is the sum of the arms
        th = [last["p%d.theta" % i] for i in range(1, case.n + 1)]
        v["tip_x"] = sum(math.sin(a) for a in th)
        v["tip_y"] = -sum(math.cos(a) for a in th)
    elif case.workload == "w2":
        v["x1"], v["x2"] = last["left.x"], last["left.x"] + last["right.x"]
    else:
        v["theta"] = last["crank0.theta"] if "crank0.theta" in last else last["crank.theta"]
    return v


class Program:
    """One program: its integrators, each with settings from the loosest to the tightest; the
    integrator most often cheapest comes first, so that the others stop early in the search."""

    def __init__(self, name, kind=None):
        self.name, self.kind = name, kind

    def ladders(self, case):
        w1 = case.workload == "w1"
        if self.name.startswith("joinery"):
            return {m: LADDER for m in ("adams", "erk", "bdf")}
        if self.name == "floor":
            states = 2 * case.n if w1 else 4
            ladders = {"adams": LADDER + [1e-13]}
            if states <= 200:
                ladders["bdf"] = LADDER + [1e-13]
            return ladders
        if self.name == "simbody":
            return {m: [1e-2, 5e-3, 2e-3] + LADDER for m in ("rkm", "bdf", "adams")}
        if self.name == NAMED_SIMBODY:
            return {"rkm": [1e-8]}
        return {"rk4": MUJOCO_DT, "euler": MUJOCO_DT}

    def run(self, case, integrator, setting, cap):
        """Returns a dict: time, steps, rhs, wall, rss and the values, or failed."""
        t = "%g" % case.t_end
        if self.name.startswith("joinery"):
            return self._run_joinery(case, integrator, setting, cap, t)
        exe = {"floor": "floor", "simbody": "simbody_driver", NAMED_SIMBODY: "simbody_driver",
               "mujoco": "mujoco_driver"}[self.name]
        cmd = [os.path.join(BIN, exe), case.workload, str(case.n), integrator, "%g" % setting, t]
        out, wall, rss, cpu, timed_out = run_process(cmd, {}, cap)
        r = {"failed": "over %g s" % cap} if timed_out else parse_driver(out)
        r.update(wall=wall, rss=rss, cpu=cpu)
        return r

    def _run_joinery(self, case, method, rtol, cap, t):
        script = {"w1": os.path.join(MODELS, "w1.lua"), "w2": os.path.join(MODELS, "w2.lua"),
                  "w3": os.path.join(ROOT, "examples", "four_bar.lua"),
                  "fbc": os.path.join(ROOT, "examples", "four_bar_chain.lua")}[case.workload]
        fd, csv_path = tempfile.mkstemp(prefix="peers-", suffix=".csv")
        os.close(fd)
        dt_out = "%g" % (case.t_end / DRIFT_SAMPLES) if case.workload == "w1" else t
        cmd = [JOINERY, "run", script, "--t-end", t, "--dt-out", dt_out, "--method", method,
               "--rtol", "%g" % rtol, "--atol", "%g" % (rtol / 100), "--out", csv_path]
        env = {"N": str(case.n), "KIND": self.kind or "rod"}
        out, wall, rss, cpu, timed_out = run_process(cmd, env, cap)
        # "run time: wall W s, CPU C s (S steps, R right-hand-side ...)"; before, "run time W s (..."
        m = re.search(r"run time:? (?:wall )?([0-9.]+) s(?:, CPU [0-9.]+ s)? \((\d+) steps, "
                      r"(\d+) right-hand-side", out)
        if timed_out:
            r = {"failed": "over %g s" % cap}
        elif not m:
            r = {"failed": (out.strip().splitlines() or ["no output"])[-1][:120]}
        else:
            r = {"time": float(m.group(1)), "steps": int(m.group(2)), "rhs": int(m.group(3))}
            r.update(joinery_values(case, self.kind, csv_path))
        if os.path.exists(csv_path):  # a failed run removes its own output
            os.remove(csv_path)
        r.update(wall=wall, rss=rss, cpu=cpu)
        return r


def label(integrator, setting):
    return "%s %g" % (integrator, setting)


def search(program, case, cap, log):
    """The cheapest (integrator, setting) reaching the case's accuracy, or None."""
    best = None  # (time, integrator, setting)
    for integrator, settings in program.ladders(case).items():
        for setting in settings:
            r = program.run(case, integrator, setting, cap)
            err = None if "failed" in r else case.error(r)
            log("    %-12s %-14s %s" % (program.name, label(integrator, setting), r.get("failed")
                                        or "error %s, %.3g s" % (fmt(err, ".2g"), r["time"])))
            if "failed" in r and r["failed"].startswith("over"):
                break  # tighter settings take longer still
            if err is None or not err <= case.tolerance():
                if "time" in r and (r["time"] > cap / 3 or (best and r["time"] > best[0])):
                    break  # the next, tighter setting will not be cheaper nor under the cap
                continue
            if best is None or r["time"] < best[0]:
                best = (r["time"], integrator, setting)
            break  # the first that passes is this integrator's cheapest
    return best


def reference(case, cap):
    """The converged reference of W1 (small N), W3 and the chain: the floor at rtol 1e-13."""
    floor = Program("floor")
    if case.workload in ("w3", "fbc"):
        case.reference = floor.run(case, "adams", 1e-13, cap)["theta"]
    elif case.workload == "w1" and case.n <= 10:
        tight = floor.run(case, "adams", 1e-13, cap)
        check = floor.run(case, "adams", 1e-12, cap)
        tips = [(r.get("tip_x"), r.get("tip_y")) for r in (tight, check)]
        if None not in tips[0] + tips[1] and math.dist(*tips) < TIP_TOL / 100:
            case.reference = tips[0]  # converged: the tip measure; otherwise the energy


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def measure(case, programs, chosen, repeats, cap, key="time"):
    """Median over repeats of the chosen settings, programs interleaved in each repeat: of the
    drivers' own time, or of key (spatial.py: "cpu"); "each" lists every run's value."""
    runs = {p.name: [] for p in programs if chosen.get(p.name)}
    for _ in range(repeats):
        for p in programs:
            if chosen.get(p.name):
                _, integrator, setting = chosen[p.name]
                runs[p.name].append(p.run(case, integrator, setting, cap))
    rows = {}
    for name, rs in runs.items():
        ok = [r for r in rs if "failed" not in r and r.get(key) is not None]
        if not ok:
            continue
        ok.sort(key=lambda r: r[key])
        mid = ok[len(ok) // 2]
        rows[name] = dict(mid, rss=max(r["rss"] or 0.0 for r in ok), err=case.error(mid),
                          each=[r[key] for r in ok])
        rows[name][key] = statistics.median(r[key] for r in ok)
    return rows


def table(case, programs, chosen, rows):
    lines = ["%s; accuracy: %s" % (case.title(), case.measure()),
             "  %-13s %-14s %9s %9s %8s %8s %9s %10s %8s %8s %7s %7s" % (
                 "program", "setting", "error", "time s", "wall s", "cpu s", "steps", "rhs",
                 "us/rhs", "peak MB", "/peer", "/floor")]
    peers = [rows[n]["time"] for n in ("simbody", "mujoco") if n in rows]
    best_peer = min(peers) if peers else None
    floor = rows.get("floor", {}).get("time")
    for p in programs:
        r = rows.get(p.name)
        if r is None:
            lines.append("  %-13s %s" % (p.name, "no setting reached the accuracy within the cap"))
            continue
        _, integrator, setting = chosen[p.name]
        lines.append("  %-13s %-14s %9.2g %9.4f %8.3f %8.3f %9d %10d %8.3g %8.1f %7s %7s" % (
            p.name, label(integrator, setting), r["err"], r["time"], r["wall"], r["cpu"], r["steps"],
            r["rhs"], 1e6 * r["time"] / max(r["rhs"], 1), r["rss"],
            fmt(best_peer and r["time"] / best_peer, ".2f"),
            fmt(floor and r["time"] / floor, ".2f")))
    named = rows.get(NAMED_SIMBODY, {}).get("time")
    for p in programs:
        if named and p.name.startswith("joinery") and p.name in rows:
            lines.append("  %s / Simbody RK-Merson at accuracy 1e-8: %.2f" % (
                p.name, rows[p.name]["time"] / named))
    return "\n".join(lines)


SUMMARY_COLUMNS = ["joinery", "joinery-rod", "joinery-pend", "floor", "simbody", "mujoco"]


def summary(results):
    """A markdown table: each case's median time (s) per program at its cheapest setting."""
    lines = ["| case | accuracy | " + " | ".join(SUMMARY_COLUMNS) + " |",
             "|---" * (len(SUMMARY_COLUMNS) + 2) + "|"]
    for case, rows in results:
        cells = [("%.3g" % rows[n]["time"]) if n in rows else "-" for n in SUMMARY_COLUMNS]
        lines.append("| %s | %s | %s |" % (case.title(), case.measure(), " | ".join(cells)))
    return "\n".join(lines)


def cases(quick):
    if quick:
        sizes = [1, 10, 100]
    else:
        sizes = [1, 2, 5, 10, 50, 100, 500, 1000, 10000]
    out = [Case("w1", n, 1.0 if n >= 10000 else 10.0) for n in sizes]
    out += [Case("w2", 0, 10.0), Case("w3", 1, 10.0), Case("fbc", 40, 20.0)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="W1 N = 1, 10, 100, W2, W3, the chain")
    ap.add_argument("--cap", type=float, help="seconds per run (default 20 quick, 300 full)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", help="workloads to run, e.g. w1,w2")
    ap.add_argument("--sizes", help="W1 sizes, e.g. 1,10,100")
    ap.add_argument("--programs", help="programs to run, e.g. joinery-rod,floor,simbody")
    ap.add_argument("--out", help="also write the tables to this file")
    ap.add_argument("--mem-limit", type=int, default=MEMORY_LIMIT_MB[0],
                    help="address space per run, MB (a run over it fails; default 4096)")
    ap.add_argument("--verbose", action="store_true", help="print every probe of the search")
    args = ap.parse_args()
    MEMORY_LIMIT_MB[0] = args.mem_limit
    cap = args.cap or (20.0 if args.quick else 300.0)
    for exe in ("floor", "mujoco_driver", "simbody_driver"):
        if not os.access(os.path.join(BIN, exe), os.X_OK):
            sys.exit("run bench/peers/build.sh first (missing %s)" % os.path.join(BIN, exe))
    log = (lambda s: print(s, flush=True)) if args.verbose else (lambda s: None)
    selected = cases(args.quick)
    if args.only:
        selected = [c for c in selected if c.workload in args.only.split(",")]
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
        selected = [c for c in selected if c.workload != "w1" or c.n in sizes] + [
            Case("w1", n, 1.0 if n >= 10000 else 10.0) for n in sizes
            if not any(c.workload == "w1" and c.n == n for c in selected)]
    tables, results = [], []
    for case in selected:
        reference(case, cap)
        programs = [Program("joinery-rod", "rod"), Program("joinery-pend", "pend")] \
            if case.workload == "w1" else [Program("joinery")]
        programs += [Program("floor"), Program("simbody"), Program("mujoco")]
        if case.workload == "w1" and case.n >= 500:
            programs.append(Program(NAMED_SIMBODY))
        if args.programs:
            programs = [p for p in programs if p.name in args.programs.split(",")]
        log("%s: searching" % case.title())
        chosen = {p.name: search(p, case, cap, log) for p in programs}
        rows = measure(case, programs, chosen, args.repeats, cap)
        tables.append(table(case, programs, chosen, rows))
        results.append((case, rows))
        print(tables[-1] + "\n", flush=True)
    print(summary(results))
    if args.out:
        with open(args.out, "w") as f:
            f.write(summary(results) + "\n\n" + "\n\n".join(tables) + "\n")


if __name__ == "__main__":
    main()

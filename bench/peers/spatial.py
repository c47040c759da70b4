#!/usr/bin/env python3
"""joinery's spatial workloads (issue 44) side by side with MuJoCo 2.2 and Simbody 3.7.

    python3 bench/peers/spatial.py [--quick] [--sizes 5,20] [--only ball,tree]
                                   [--cap SECONDS] [--repeats R] [--out FILE.md]

Workloads (bench/peers/spatial.h holds the peers' copy of the data):
  ball  N rods on ball joints hanging from the origin (bench/peers/models/ball_chain.lua),
        started at rest from a helix, 10 s, N = 5, 20, 100, 500 (--quick: 5, 20);
  tree  the 14-body humanoid-like tree of bench/joint_rows/tree.lua (torso on a ball joint,
        13 hinges about x, y and z), released at rest, 5 s.
First the same-model check: the last body's centre of mass after 0.5 s, joinery (BDF, rtol
1e-12) and MuJoCo (RK4, dt 1e-5) against Simbody (RK-Merson, accuracy 1e-12). Then for every
program the cheapest setting whose largest energy drift over 20 instants, over E*, is at most
1e-6 (E* = m g L N^2 / 2 for the chain, M g * 1 m for the tree), probing each integrator from
its loosest setting, and joinery at its defaults (no --method, no --rtol). The chosen
settings then run R times interleaved, each pinned to core 1 (taskset) with
OPENBLAS_NUM_THREADS=1; the measure is the median process CPU time (user + system, GNU time,
model building included). Python 3 standard library only."""

import argparse
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as peers  # noqa: E402  (run_process, parse_driver, the ladders)

ROOT, BIN, JOINERY = peers.ROOT, peers.BIN, peers.JOINERY
G = 9.81
DRIFT_TOL = 1e-6
CHECK_T, CHECK_TOL = 0.5, 1e-6
TREE_MASS = 69.0  # kg: 30 + 5 + 2 (2 + 1.5 + 0.5) + 2 (8 + 4 + 1)
SCRIPTS = {"ball": os.path.join(ROOT, "bench", "peers", "models", "ball_chain.lua"),
           "tree": os.path.join(ROOT, "bench", "joint_rows", "tree.lua")}
LADDER = peers.LADDER
PEER_LADDER = [1e-2, 5e-3, 2e-3] + LADDER
# MuJoCo's fixed steps, 1, 5, 2 a decade like the tolerances (run.py's 1, 3 a decade made the
# tree's RK4 jump from a drift of 1.5e-6 at 1e-3 to 5.5e-8 at 3e-4).
MUJOCO_LADDER = [m * 10.0**-k for k in range(2, 7) for m in (1.0, 0.5, 0.2)]


class Case:
    def __init__(self, workload, n):
        self.workload, self.n = workload, n
        self.t_end = 10.0 if workload == "ball" else 5.0

    def title(self):
        return "ball chain N=%d" % self.n if self.workload == "ball" else "tree (14 bodies)"

    def e_star(self):
        return G * self.n ** 2 / 2 if self.workload == "ball" else TREE_MASS * G

    def error(self, r):  # for run.measure
        return rel_drift(self, r)

    def last_body(self):
        return "rod%d" % self.n if self.workload == "ball" else "rleg3"


def run_joinery(case, method, rtol, cap, t_end=None):
    t = "%g" % (t_end or case.t_end)
    fd, csv_path = tempfile.mkstemp(prefix="spatial-", suffix=".csv")
    os.close(fd)
    cmd = [JOINERY, "run", SCRIPTS[case.workload], "--t-end", t,
           "--dt-out", "%g" % (float(t) / peers.DRIFT_SAMPLES), "--out", csv_path]
    if method:
        cmd += ["--method", method, "--rtol", "%g" % rtol, "--atol", "%g" % (rtol / 100)]
    out, wall, rss, cpu, timed_out = peers.run_process(cmd, {"N": str(case.n)}, cap)
    m = re.search(r"run time: wall ([0-9.]+) s, CPU ([0-9.]+) s \((\d+) steps, (\d+) "
                  r"right-hand-side", out)
    if timed_out:
        r = {"failed": "over %g s" % cap}
    elif not m:
        r = {"failed": (out.strip().splitlines() or ["no output"])[-1][:120]}
    else:
        r = {"time": float(m.group(2)), "steps": int(m.group(3)), "rhs": int(m.group(4))}
        header, rows = peers.read_csv_rows(csv_path)
        e = header.index("energy")
        e0 = float(rows[0][e])
        r["drift"] = max(abs(float(row[e]) - e0) for row in rows)
        last = dict(zip(header, rows[-1]))
        b = case.last_body()
        r["tip"] = tuple(float(last["%s.%s" % (b, c)]) for c in "xyz")
    if os.path.exists(csv_path):
        os.remove(csv_path)
    r.update(wall=wall, rss=rss, cpu=cpu)
    return r


def run_driver(exe, case, integrator, setting, cap, t_end=None):
    cmd = [os.path.join(BIN, exe), case.workload, str(case.n), integrator, "%g" % setting,
           "%g" % (t_end or case.t_end)]
    out, wall, rss, cpu, timed_out = peers.run_process(cmd, {}, cap)
    r = {"failed": "over %g s" % cap} if timed_out else peers.parse_driver(out)
    if "tip_x" in r:
        r["tip"] = (r["tip_x"], r["tip_y"], r["tip_z"])
    r.update(wall=wall, rss=rss, cpu=cpu)
    return r


class Program:
    def __init__(self, name):
        self.name = name

    def ladders(self):
        if self.name == "joinery":
            return {m: LADDER for m in ("adams", "erk", "bdf")}
        if self.name == "joinery-defaults":
            return {"defaults": [0]}
        if self.name == "simbody":
            return {m: PEER_LADDER for m in ("rkm", "bdf", "adams")}
        return {"rk4": MUJOCO_LADDER, "euler": MUJOCO_LADDER}

    def run(self, case, integrator, setting, cap, t_end=None):
        if self.name == "joinery":
            return run_joinery(case, integrator, setting, cap, t_end)
        if self.name == "joinery-defaults":
            return run_joinery(case, None, None, cap, t_end)
        exe = "simbody_driver" if self.name == "simbody" else "mujoco_driver"
        return run_driver(exe, case, integrator, setting, cap, t_end)


def label(integrator, setting):
    return "defaults" if integrator == "defaults" else "%s %g" % (integrator, setting)


def rel_drift(case, r):
    return r["drift"] / case.e_star() if "drift" in r and "failed" not in r else None


def search(program, case, cap, log, near=None):
    """The cheapest (cpu, integrator, setting) meeting the drift bound (joinery-defaults: its
    one setting, whatever its drift), or None. near: the (cpu, integrator, setting) chosen at
    the previous chain size; with it only that integrator is probed, from two settings looser."""
    best = None
    ladders = program.ladders()
    if near and near[1] in ladders and near[1] != "defaults":
        ladder = ladders[near[1]]
        ladders = {near[1]: ladder[max(0, ladder.index(near[2]) - 2):]}
    for integrator, settings in ladders.items():
        for setting in settings:
            r = program.run(case, integrator, setting, cap)
            d = rel_drift(case, r)
            log("    %-16s %-14s %s" % (program.name, label(integrator, setting),
                                         r.get("failed") or "drift %.2g, cpu %.3g s" % (d, r["cpu"])))
            if "failed" in r and r["failed"].startswith("over"):
                break
            if integrator == "defaults":
                return (r["cpu"], integrator, setting) if d is not None else None
            if d is None or d > DRIFT_TOL:
                if r.get("cpu") and (r["cpu"] > cap / 3 or (best and r["cpu"] > best[0])):
                    break
                continue
            if best is None or r["cpu"] < best[0]:
                best = (r["cpu"], integrator, setting)
            break
    return best


def check(case, programs, cap):
    """The last body's centre of mass after CHECK_T s at tight settings, against Simbody's."""
    tight = {"joinery": ("bdf", 1e-12), "simbody": ("rkm", 1e-12), "mujoco": ("rk4", 1e-5)}
    tips = {}
    for p in programs:
        if p.name in tight:
            r = p.run(case, *tight[p.name], cap, CHECK_T)
            tips[p.name] = r.get("tip") or r.get("failed", "failed")
    ref = tips.get("simbody")
    parts = []
    for name, tip in tips.items():
        if name == "simbody" or not isinstance(tip, tuple) or not isinstance(ref, tuple):
            parts.append("%s %s" % (name, tip if not isinstance(tip, tuple) else
                                    "(%.9f, %.9f, %.9f)" % tip))
        else:
            parts.append("%s - simbody %.2g m" % (name, math.dist(tip, ref)))
    return "same-model check, %s, last body's centre after %g s: %s" % (
        case.title(), CHECK_T, "; ".join(parts))


def table_rows(case, programs, chosen, rows):
    sim = rows.get("simbody", {}).get("cpu")
    muj = rows.get("mujoco", {}).get("cpu")
    out = []
    for p in programs:
        r = rows.get(p.name)
        n = case.n if case.workload == "ball" else 14
        if r is None:
            out.append("| %s | %d | %s | %s | - | - | - | - | - | - |" % (
                case.workload, n, p.name, "no setting met the bound within the cap"
                if p.name != "joinery-defaults" else "failed", ))
            continue
        _, integrator, setting = chosen[p.name]
        rhs = r.get("rhs")
        out.append("| %s | %d | %s | %s | %.2g | %.3f | %s | %s | %s | %s |" % (
            case.workload, n, p.name, label(integrator, setting), r["err"], r["cpu"],
            " ".join("%.2f" % c for c in r["each"]), "-" if not rhs else "%d" % rhs,
            peers.fmt(sim and r["cpu"] / sim, ".2f"), peers.fmt(muj and r["cpu"] / muj, ".2f")))
    return out


HEADER = ["| workload | N | program | setting | drift / E* | CPU s (median) | CPU s (each run) "
          "| rhs | /Simbody | /MuJoCo |", "|---|---|---|---|---|---|---|---|---|---|"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ball N = 5, 20 and the tree")
    ap.add_argument("--sizes", help="chain sizes, e.g. 5,20,100,500")
    ap.add_argument("--only", help="workloads: ball,tree")
    ap.add_argument("--programs", help="e.g. joinery,joinery-defaults,simbody,mujoco")
    ap.add_argument("--cap", type=float, help="seconds per run (default 20 quick, 1200 full: "
                    "an integrator stops after a failing run over a third of the cap, and "
                    "joinery's and Simbody's probes at N = 500 take 2 to 3 minutes each)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--narrow", type=int, default=100,
                    help="from this chain size on, probe only each program's integrator chosen "
                    "at the previous size, from two settings looser (default 100)")
    ap.add_argument("--near", help="the previous size's choices when it is not in this run, "
                    "e.g. joinery=adams:2e-7,simbody=rkm:5e-7 (for --narrow)")
    ap.add_argument("--no-check", action="store_true", help="skip the same-model check")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--verbose", action="store_true", help="print every probe of the search")
    args = ap.parse_args()
    cap = args.cap or (20.0 if args.quick else 1200.0)
    for exe in ("mujoco_driver", "simbody_driver"):
        if not os.access(os.path.join(BIN, exe), os.X_OK):
            sys.exit("run bench/peers/build.sh first (missing %s)" % os.path.join(BIN, exe))
    log = (lambda s: print(s, flush=True)) if args.verbose else (lambda s: None)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else \
        ([5, 20] if args.quick else [5, 20, 100, 500])
    cases = [Case("ball", n) for n in sizes] + [Case("tree", 14)]
    if args.only:
        cases = [c for c in cases if c.workload in args.only.split(",")]
    lines, checks, previous = list(HEADER), [], {}
    for item in (args.near.split(",") if args.near else []):
        name, _, choice = item.partition("=")
        integrator, _, setting = choice.partition(":")
        ladder = Program(name).ladders()[integrator]
        previous[name] = (None, integrator, min(ladder, key=lambda x: abs(math.log(x / float(setting)))))
    for case in cases:
        programs = [Program(n) for n in ("joinery", "joinery-defaults", "simbody", "mujoco")]
        if args.programs:
            programs = [p for p in programs if p.name in args.programs.split(",")]
        if not args.no_check:
            checks.append(check(case, programs, cap))
            print(checks[-1], flush=True)
        log("%s: searching" % case.title())
        narrow = case.workload == "ball" and case.n >= args.narrow
        chosen = {p.name: search(p, case, cap, log, previous.get(p.name) if narrow else None)
                  for p in programs}
        if case.workload == "ball":
            previous.update((k, v) for k, v in chosen.items() if v)
        rows = peers.measure(case, programs, chosen, args.repeats, cap, key="cpu")
        new = table_rows(case, programs, chosen, rows)
        lines += new
        print("\n".join(new), flush=True)
    text = "\n".join(lines) + ("\n\n" + "\n".join(checks) if checks else "") + "\n"
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

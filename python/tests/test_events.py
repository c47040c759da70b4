"""A run with events from Python (examples/bouncing_ball.lua: impacts on the floor, a user
event that stops the run): the result's events and stopped_by as `joinery run` reports them,
and its rows, those around the events included, equal to joinery run's CSV bit for bit."""
import os
import re
import subprocess
import tempfile

import numpy as np

from common import example, joinery_exe, read_csv
from tap import Tap
import joinery


def main(tap):
    res = joinery.load(example("bouncing_ball.lua")).run()
    impacts = [e for e in res.events if e["name"] == "floor.impact"]
    tap.ok(res.stopped_by == "low_apex" and len(impacts) == 1 and impacts[0]["count"] > 5,
           "stopped by low_apex after %s impacts" % (impacts and impacts[0]["count"]))
    exe = joinery_exe()
    if not exe:
        tap.ok(True, "# SKIP no joinery command (set JOINERY_EXE)")
        tap.ok(True, "# SKIP no joinery command")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ball.csv")
        p = subprocess.run([exe, "run", example("bouncing_ball.lua"), "--out", out],
                           capture_output=True, text=True)
        m = re.search(r"floor\.impact\s+(\d+) x, first t = (\S+), last t = (\S+)", p.stdout)
        stop = re.search(r"stopped by event 'low_apex' at t = (\S+)", p.stdout)
        tap.ok(p.returncode == 0 and m and int(m.group(1)) == impacts[0]["count"] and
               float(m.group(2)) == float("%.9g" % impacts[0]["first"]) and
               stop and float(stop.group(1)) == float("%.8g" % res.t[-1]),
               "joinery run reports the same impacts and stop", p.stdout + p.stderr)
        header, rows = read_csv(out) if p.returncode == 0 else ([], [])
        csv = np.array(rows)
        tap.ok(header == res.columns and csv.shape == res.array.shape and
               np.array_equal(csv, res.array),
               "joinery run's CSV (%d rows, the rows around the events included) equals the "
               "Python run's bit for bit" % len(rows))


Tap(3).run(main)

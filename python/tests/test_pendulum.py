"""The Python binding on examples/pendulum.lua (a 1 kg bob on a 1 m rod, released level with
the pivot): the period and energy conservation read from the run's numpy channels, the
channels views of one row buffer, and the run equal to `joinery run`'s CSV bit for bit."""
import math
import os
import subprocess
import tempfile

import numpy as np

from common import example, joinery_exe, read_csv
from tap import Tap
import joinery

G, L = 9.81, 1.0
# Period of a pendulum of amplitude a: 4 sqrt(L/g) K(sin(a/2)), K the complete elliptic
# integral of the first kind (the arithmetic-geometric mean: K(k) = pi / (2 agm(1, k'))).


def period(amplitude):
    k = math.sin(amplitude / 2)
    a, b = 1.0, math.sqrt(1 - k * k)
    for _ in range(40):
        a, b = (a + b) / 2, math.sqrt(a * b)
    return 4 * math.sqrt(L / G) * math.pi / (2 * a)


def main(tap):
    m = joinery.load(example("pendulum.lua"))
    tap.ok(m.coords == ["bob.x", "bob.y"] and "rod.tension" in m.channels,
           "the model's coordinates and channels: %s" % m.coords)
    st, st2 = m.settings(method="bdf"), joinery.load(example("pendulum.lua"), t_end=3).settings()
    tap.ok(st["t_end"] == 10 and st["dt_out"] == 0.01 and st["method"] == "bdf" and
           st["max_steps"] == 100000 and st2["t_end"] == 3,
           "the settings: the script's sys:settings, then load's, then the sim's")
    res = m.sim(t_end=5, dt_out=0.001).run()
    t, x, y = res.t, res["bob.x"], res["bob.y"]
    tap.ok(res.rows == 5001 and res.columns[0] == "t" and t[-1] == 5.0,
           "5001 rows from t = 0 to 5 (%d)" % res.rows)
    tap.ok(isinstance(x, np.ndarray) and x.base is not None and
           np.shares_memory(x, res.array) and np.shares_memory(t, res.array),
           "the channels are views of the one row buffer (no copy)")

    # The period: the times x crosses 0 going left (y < 0 below the pivot), interpolated.
    cross = [t[i] + (t[i + 1] - t[i]) * x[i] / (x[i] - x[i + 1])
             for i in range(len(t) - 1) if x[i] > 0 >= x[i + 1]]
    expect = period(math.pi / 2)
    tap.ok(len(cross) >= 2 and abs((cross[1] - cross[0]) - expect) < 1e-6,
           "period %.9f s = 4 sqrt(L/g) K(sin 45 deg) = %.9f s" %
           (cross[1] - cross[0] if len(cross) > 1 else float("nan"), expect))
    e = res["energy"]
    tap.ok(abs(e[0] - 0.0) < 1e-12 and np.max(np.abs(e - e[0])) < 1e-8,
           "energy conserved to %.3g J over 5 s" % np.max(np.abs(e - e[0])))
    r = np.hypot(x, y)
    tap.ok(np.max(np.abs(r - L)) < 1e-9, "the rod's length held to %.3g m" % np.max(np.abs(r - L)))
    # At the lowest point (speed sqrt(2 g L)) the tension is 3 m g.
    low = int(np.argmin(y))
    tap.ok(abs(res["rod.tension"][low] - 3 * G) < 1e-2 * 3 * G,
           "tension at the lowest point %.6g N ~ 3 m g" % res["rod.tension"][low])

    # The same settings through `joinery run`: its CSV equals the arrays bit for bit.
    exe = joinery_exe()
    if not exe:
        tap.ok(True, "# SKIP no joinery command (set JOINERY_EXE)")
        tap.ok(True, "# SKIP no joinery command")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "pendulum.csv")
            p = subprocess.run([exe, "run", example("pendulum.lua"), "--t-end", "3",
                                "--method", "bdf", "--out", out],
                               capture_output=True, text=True)
            res2 = m.sim(t_end=3, method="bdf").run()
            header, rows = read_csv(out) if p.returncode == 0 else ([], [])
            tap.ok(p.returncode == 0 and header == res2.columns,
                   "joinery run wrote the same columns", p.stderr)
            csv = np.array(rows)
            tap.ok(csv.shape == res2.array.shape and np.array_equal(csv, res2.array),
                   "every value of joinery run's CSV (%d x %d) equals the Python run's bit for bit"
                   % res2.array.shape,
                   "max difference %r" % (np.max(np.abs(csv - res2.array))
                                          if csv.shape == res2.array.shape else
                                          ("shapes", csv.shape, res2.array.shape),))

    # The result owns its buffer: it outlives the model and the sim.
    col = m.sim(t_end=1, columns="bob.*").run()["bob.y"]
    first = col.copy()
    del m, res, res2
    import gc
    gc.collect()
    junk = [np.ones(10000) for _ in range(50)]
    tap.ok(np.array_equal(col, first) and len(col) == 101,
           "a column stays valid after the model and the result are gone (%d junk arrays)" % len(junk))


Tap(11).run(main)

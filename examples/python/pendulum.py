"""The pendulum of examples/pendulum.lua from Python (docs/python.md): a run to numpy arrays,
the period from the zero crossings, the energy drift; then the same model stepped, with the
state read at each step.

    PYTHONPATH=python JOINERY_PYTHON_LIB=build/python/_joinery_lua.so \\
        /usr/bin/python3 examples/python/pendulum.py      # from a build
    /usr/bin/python3 examples/python/pendulum.py          # after meson install
"""
import os

import numpy as np

import joinery

here = os.path.dirname(os.path.abspath(__file__))
m = joinery.load(os.path.normpath(os.path.join(here, "..", "pendulum.lua")))
print(m)

# A run: every output row in one buffer; res["bob.x"] is a numpy view of its column.
res = m.sim(t_end=10, dt_out=0.001).run()
t, x = res.t, res["bob.x"]
i = np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0]  # x crossing 0 leftwards: once a period
cross = t[i] + (t[i + 1] - t[i]) * x[i] / (x[i] - x[i + 1])
print("%d rows x %d columns; period %.6f s (%d swings)" % (res.rows, len(res.columns),
                                                         np.mean(np.diff(cross)), len(cross) - 1))
energy = res["energy"]
print("energy drift over 10 s: %.3g J; largest rod tension %.4f N" %
      (np.max(np.abs(energy - energy[0])), np.max(res["rod.tension"])))

# Stepping: advance to each time, read the state (q and v in m.coords order).
sim = m.sim(t_end=1)
for step in range(1, 5):
    sim.advance(0.25 * step)
    q, v = sim.state()
    print("t = %.2f  %s = %s  speed %.4f m/s" % (sim.t, m.coords, np.round(q, 6),
                                               np.hypot(*v)))

try:
    m.sim(method="rk4")
except joinery.Error as e:
    print("joinery.Error:", e)

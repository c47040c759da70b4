"""The GIL is released while the engine integrates: a second Python thread keeps counting
during sim.run() and sim.advance() (cffi releases it around every C call, in ABI mode too), and
two models loaded in two threads run at once, each equal to its run alone bit for bit."""
import os
import threading
import time

import numpy as np

from common import example
from tap import Tap
import joinery


class Counter(threading.Thread):
    """Counts, and notes the time every 1000 counts."""

    def __init__(self):
        super().__init__(daemon=True)
        self.count = 0
        self.times = []
        self.done = False

    def run(self):
        while not self.done:
            self.count += 1
            if self.count % 1000 == 0:
                self.times.append(time.perf_counter())


def counted(fn):
    """(the counter's notes in the second half of fn's call, the call's seconds, its result)
    with a counter thread running. With the GIL held through the call the counter could run
    only in the switch interval (5 ms) at its start; released, it keeps counting to the end."""
    c = Counter()
    c.start()
    while c.count == 0:
        time.sleep(0.001)
    t0 = time.perf_counter()
    out = fn()
    t1 = time.perf_counter()
    c.done = True
    c.join()
    late = [t for t in c.times if t0 + 0.5 * (t1 - t0) < t < t1]
    return len(late), t1 - t0, out


def main(tap):
    m = joinery.load(example("pendulum.lua"))
    # A run of a good fraction of a second: the pendulum at a tight tolerance, few rows.
    n, seconds, res = counted(lambda: m.sim(t_end=600, dt_out=1, rtol=1e-13).run())
    tap.diag("sim.run(): %.2f s, %d rows" % (seconds, res.rows))
    tap.ok(seconds > 0.1 and n >= 10,
           "another thread keeps counting through sim.run() (%d notes in the last half of "
           "its %.2f s)" % (n, seconds))
    sim = m.sim(t_end=600, dt_out=1, rtol=1e-13, max_steps=10**7)
    n, seconds, _ = counted(lambda: sim.advance(600))
    tap.ok(seconds > 0.1 and n >= 10,
           "another thread keeps counting through sim.advance() (%d notes in the last half "
           "of its %.2f s)" % (n, seconds))

    # Two threads, each its own model (its own Lua state), running at once.
    settings = dict(t_end=100, dt_out=0.5, rtol=1e-12)
    alone = m.sim(**settings).run().array
    results = [None, None]

    def work(i):
        results[i] = joinery.load(example("pendulum.lua")).sim(**settings).run().array

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tap.ok(all(r is not None and np.array_equal(r, alone) for r in results),
           "two models run in two threads at once, each equal to the run alone bit for bit")

    # Two threads sharing one model whose controller is Lua: the model's lock makes them take
    # turns in its Lua state, and each gets the run alone.
    shared = joinery.load(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       "pd_pendulum.lua"), args=["controller"])

    def final_state(method):
        sim = shared.sim(method=method)
        for k in range(1, 21):
            sim.advance(0.1 * k)
        return np.concatenate(sim.state())

    methods = ["bdf", "adams", "erk", "auto"] * 2
    alone = [final_state(mt) for mt in methods]
    got = [None] * len(methods)

    def worker(i):
        got[i] = final_state(methods[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(methods))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tap.ok(all(g is not None and np.array_equal(g, a) for g, a in zip(got, alone)),
           "%d threads stepping sims of one model with a Lua controller: each as alone"
           % len(methods))

    # Parts written in Lua run only in the thread that loaded the script (joinery.h): another
    # thread gets joinery.Error saying so, not a crash.
    lua_parts = joinery.load(example("double_pendulum_lua.lua"))
    caught = []

    def other():
        try:
            lua_parts.run(t_end=0.1)
            caught.append(None)
        except joinery.Error as e:
            caught.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    tap.ok(caught and caught[0] is not None and "runs only in the thread" in str(caught[0]) and
           lua_parts.run(t_end=0.1).rows == 11,
           "a model with Lua parts: another thread gets joinery.Error (%s), this one runs it"
           % str(caught and caught[0]).split(":")[0])


Tap(5).run(main)

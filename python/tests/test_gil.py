"""The GIL is released while the engine integrates: a second Python thread keeps counting
during sim.run() and sim.advance() (cffi releases it around every C call, in ABI mode too), and
two models loaded in two threads run at once, each equal to its run alone bit for bit."""
import threading
import time

import numpy as np

from common import example
from tap import Tap
import joinery


class Counter(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.count = 0
        self.done = False

    def run(self):
        while not self.done:
            self.count += 1


def counted(fn):
    """(count during fn(), seconds fn took, its result) with a counter thread running."""
    c = Counter()
    c.start()
    while c.count == 0:
        time.sleep(0.001)
    t0, before = time.perf_counter(), c.count
    out = fn()
    during, seconds = c.count - before, time.perf_counter() - t0
    c.done = True
    c.join()
    return during, seconds, out


def main(tap):
    m = joinery.load(example("pendulum.lua"))
    # A run of about a second: the pendulum at a tight tolerance, few output rows.
    n, seconds, res = counted(lambda: m.sim(t_end=250, dt_out=1, rtol=1e-13).run())
    tap.diag("sim.run(): %.2f s, %d rows, the other thread counted %d" % (seconds, res.rows, n))
    # With the GIL held for the whole call the counter could only run in the switch interval
    # (5 ms) before the call; released, it counts millions a second.
    rate = n / seconds
    tap.ok(seconds > 0.2 and rate > 1e5,
           "another thread counts %.3g/s during sim.run() (%.2f s)" % (rate, seconds))
    sim = m.sim(t_end=250, dt_out=1, rtol=1e-13)
    n, seconds, _ = counted(lambda: sim.advance(250))
    tap.ok(seconds > 0.2 and n / seconds > 1e5,
           "another thread counts %.3g/s during sim.advance() (%.2f s)" % (n / seconds, seconds))

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


Tap(3).run(main)

"""Errors from Python: joinery.Error carries the script's message with its file:line, the
sandbox's refusals (the same sandbox as `joinery run`: os.execute, io.popen, writing files),
the engine's messages (a bad setting with the nearest name, an integrator failure with its
status), and an error in a Lua channel function during a run."""
import os
import subprocess
import sys
import tempfile

from common import example
from tap import Tap
import joinery

PENDULUM_HEAD = """local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
"""


def raises(fn):
    """The joinery.Error fn raises, or None."""
    try:
        fn()
    except joinery.Error as e:
        return e
    return None


def main(tap):
    tmp = tempfile.mkdtemp()

    def script(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    bad = script("bad.lua", PENDULUM_HEAD + "local n = nil\nreturn n.field\n")
    e = raises(lambda: joinery.load(bad))
    tap.ok(e is not None and "bad.lua:7:" in str(e) and "attempt to index a nil value" in str(e),
           "a script error raises joinery.Error with file:line: %s" % e)
    e = raises(lambda: joinery.load(script("none.lua", PENDULUM_HEAD)))
    tap.ok(e is not None and "must return a system" in str(e),
           "a script that returns no system: %s" % e)
    e = raises(lambda: joinery.load(os.path.join(tmp, "missing.lua")))
    tap.ok(e is not None and "missing.lua" in str(e), "a missing script: %s" % e)

    marker = os.path.join(tmp, "escaped")
    escape = script("escape.lua", PENDULUM_HEAD +
                    "os.execute('touch %s')\nreturn sys\n" % marker)
    e = raises(lambda: joinery.load(escape))
    tap.ok(e is not None and "os.execute is disabled for model scripts" in str(e) and
           "trust=True" in str(e) and "escape.lua:6:" in str(e) and not os.path.exists(marker),
           "os.execute in an untrusted script raises and runs nothing: %s" % e)
    popen = script("popen.lua", PENDULUM_HEAD + "io.popen('id')\nreturn sys\n")
    e = raises(lambda: joinery.load(popen))
    tap.ok(e is not None and "io.popen is disabled" in str(e), "io.popen refused: %s" % e)
    written = os.path.join(tmp, "written.txt")
    write = script("write.lua", PENDULUM_HEAD + "io.open('%s', 'w')\nreturn sys\n" % written)
    e = raises(lambda: joinery.load(write))
    tap.ok(e is not None and "io.open" in str(e) and not os.path.exists(written),
           "writing a file refused: %s" % e)
    m = joinery.load(escape, trust=True)
    tap.ok(os.path.exists(marker) and m.coords == ["bob.x", "bob.y"],
           "trust=True runs the same script with the full library (as joinery run --trust)")

    m = joinery.load(example("pendulum.lua"))
    e = raises(lambda: m.sim(t_edn=2))
    tap.ok(e is not None and "t_end" in str(e), "an unknown setting names the nearest: %s" % e)
    e = raises(lambda: m.sim(t_end=-1))
    tap.ok(e is not None and "t_end" in str(e), "t_end before t_start: %s" % e)
    e = raises(lambda: m.sim(rank_rcond=1e-12))
    tap.ok(e is not None and "rank_rcond" in str(e) and "compiled" in str(e),
           "a solver setting on a compiled model: %s" % e)
    e = raises(lambda: m.sim(method="rk4"))
    tap.ok(e is not None and "rk4" in str(e), "an unknown method: %s" % e)
    e = raises(lambda: m.sim(columns="nothing*"))
    tap.ok(e is not None and "nothing*" in str(e), "a column pattern that matches nothing: %s" % e)
    e = raises(lambda: m.sim(t_end=10, max_steps=2, method="erk").run())
    tap.ok(e is not None and e.status == "integrator failure" and "t =" in str(e),
           "an integrator failure: status %r, %s" % (e and e.status, e))
    e = raises(lambda: m.sim(t_end=1).advance(2))
    tap.ok(e is not None and e.status == "invalid argument", "advancing past t_end: %s" % e)
    e = raises(lambda: joinery.load(example("pendulum.lua"), rank_rcond=2))
    tap.ok(e is not None and "rank_rcond" in str(e), "a bad solver setting at load: %s" % e)

    chan = script("channel.lua", PENDULUM_HEAD + """sys:channel("bad", function(s)
  if s.t > 0.5 then error("channel gave up") end
  return 0
end)
return sys
""")
    e = raises(lambda: joinery.load(chan).run(t_end=1))
    tap.ok(e is not None and "channel gave up" in str(e) and "channel.lua:7:" in str(e),
           "an error in a Lua channel function during a run: %s" % e)
    m = joinery.load(example("pendulum.lua"))
    s = m.sim(t_end=1)
    e = raises(m.close)
    s.close()
    m.close()
    tap.ok(e is not None and "close its simulations first" in str(e) and
           raises(lambda: m.sim()) is not None,
           "a model with open simulations does not close; closed, it refuses new ones")

    # The C half frees a model only after its last simulation (jyp_close defers), so that
    # the order in which Python drops a model and its sims (at exit: any) never matters:
    # the model's handle released under an open sim, the sim still steps its Lua
    # controller; with freed memory poisoned, no crash.
    code = ("import joinery\n"
            "m = joinery.load(%r, args=['controller'])\n"
            "s = m.sim(t_end=1)\n"
            "h, m._handle = m._handle, None\n"
            "joinery._ffi.release(h)\n"
            "s.advance(1)\n"
            "assert s.input('u') != 0\n"
            "del s\n"
            "print('done')\n" % os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               "pd_pendulum.lua"))
    env = dict(os.environ, MALLOC_PERTURB_="165")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    tap.ok(p.returncode == 0 and p.stdout == "done\n",
           "a model closed under an open sim lives until the sim is gone (exit %d)" % p.returncode,
           p.stderr)


Tap(18).run(main)

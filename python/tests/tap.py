"""A minimal TAP producer for the Python binding's tests (meson runs them with protocol tap)."""
import sys
import traceback


class Tap:
    def __init__(self, plan):
        self.n = 0
        self.failed = 0
        print("1..%d" % plan, flush=True)

    def ok(self, cond, what, diag=None):
        self.n += 1
        if not cond:
            self.failed += 1
        first, _, rest = str(what).partition("\n")
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, first), flush=True)
        if rest:
            self.diag(rest)
        if not cond and diag:
            self.diag(diag)
        return cond

    def diag(self, text):
        for line in str(text).splitlines():
            print("# " + line, flush=True)

    def run(self, fn):
        """Runs fn(self); an exception is one failed test with its traceback as diagnostics."""
        try:
            fn(self)
        except Exception:
            self.ok(False, "unexpected exception", traceback.format_exc())
        sys.exit(1 if self.failed else 0)

"""What the Python binding's tests share: the source root, the joinery command, CSV reading."""
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))


def example(name):
    return os.path.join(ROOT, "examples", name)


def joinery_exe():
    """$JOINERY_EXE (meson sets it to the build's command), else joinery on PATH, else None."""
    return os.environ.get("JOINERY_EXE") or shutil.which("joinery")


def read_csv(path):
    """(header, rows as lists of floats) of a CSV joinery wrote; comment lines skipped."""
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f if not ln.startswith("#")]
    header = lines[0].split(",")
    return header, [[float(x) for x in ln.split(",")] for ln in lines[1:] if ln]


# run-installed.sh: the package (and so its C half) must be the installed one.
_expect = os.environ.get("JOINERY_EXPECT_PACKAGE")
if _expect:
    import joinery

    here = os.path.dirname(os.path.realpath(joinery.__file__))
    if here != os.path.realpath(_expect) or \
            os.path.dirname(os.path.realpath(joinery.library_path())) != here:
        print("Bail out! imported joinery from %s (library %s), not %s"
              % (here, joinery.library_path(), _expect), flush=True)
        sys.exit(1)

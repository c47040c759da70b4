#!/usr/bin/env python3
"""File cycles in the symbol graph of the built objects, as TAP.

File A uses file B when A's object has an undefined symbol that B's object defines. A
cycle (a strongly connected component of more than one file) means a helper sits in a
file above its users instead of below them (docs/developing.md, "The layers"). The
engine (engine/src and components/, the objects of libjoinery) must have none; the
binding (lua/, the objects of the joinery command) none either.

Usage: python3 tests/engine/t_file_cycles.py BUILD_DIR [-v]
  -v also lists, for each cycle, which file uses which symbols of which.
"""
import json
import os
import shutil
import subprocess
import sys

# Each part: its name, the folder of its objects under the build directory, and how many
# cycles it may have.
GROUPS = [
    ("engine", "libjoinery_static.a.p", 0),
    ("lua", os.path.join("lua", "joinery.p"), 0),
]


def file_name(obj):
    """engine_src_sim.c.o -> engine/src/sim.c, components_mass.c.o -> components/mass.c."""
    base = os.path.basename(obj)[: -len(".o")]
    for prefix, folder in (("engine_src_", "engine/src/"), ("components_", "components/")):
        if base.startswith(prefix):
            return folder + base[len(prefix):]
    if "meson-generated_" in base:
        return "lua/(generated)/" + base.split("_")[-1]
    return base


def graph(objs):
    """{file: {file it uses: [symbols]}}, from one nm run over every object."""
    out = subprocess.run(["nm", "-P", "-A"] + objs, capture_output=True, text=True,
                         check=True).stdout
    defined, used = {}, {}
    for obj in objs:
        defined[file_name(obj)], used[file_name(obj)] = set(), set()
    for line in out.splitlines():
        parts = line.split()  # "object: symbol kind [value size]"
        if len(parts) < 3:
            continue
        f, name, kind = file_name(parts[0].rstrip(":")), parts[1], parts[2]
        if kind == "U":
            used[f].add(name)
        elif kind in "TDBRVWGS":
            defined[f].add(name)
    owner = {s: f for f in defined for s in defined[f]}
    edges = {f: {} for f in defined}
    for f in used:
        for s in used[f]:
            g = owner.get(s)
            if g and g != f:
                edges[f].setdefault(g, []).append(s)
    return edges


def components(edges):
    """Tarjan's strongly connected components, the ones of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build, verbose = sys.argv[1], "-v" in sys.argv[2:]
    print("1..%d" % len(GROUPS))
    commands = os.path.join(build, "compile_commands.json")
    if shutil.which("nm") is None or not os.path.exists(commands):
        for i, (name, _, _) in enumerate(GROUPS, 1):
            print("ok %d # SKIP no nm, or no compile_commands.json to find the objects" % i)
        return 0
    with open(commands) as f:
        outputs = [entry["output"] for entry in json.load(f)]
    failed = False
    for i, (name, sub, most) in enumerate(GROUPS, 1):
        # The objects the build makes now (compile_commands.json), not stale ones of files
        # since removed or renamed.
        objs = sorted(os.path.join(build, o) for o in outputs if os.path.dirname(o) == sub)
        edges = graph(objs)
        comps = components(edges)
        good = len(comps) <= most
        failed |= not good
        print("%s %d - %s: %d files, %d file cycles (at most %d)"
              % ("ok" if good else "not ok", i, name, len(edges), len(comps), most))
        for comp in comps:
            print("# cycle of %d files: %s" % (len(comp), " ".join(comp)))
            if verbose or not good:
                inside = set(comp)
                for f in comp:
                    for g in sorted(edges[f]):
                        if g in inside:
                            print("#   %s uses %s: %s" % (f, g, " ".join(sorted(edges[f][g]))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes a man page from a reference page of docs/ with Debian's lowdown, under a NAME and a
SYNOPSIS section; the SYNOPSIS of joinery(1) is the usage text of the built command itself,
so the man page says what `joinery --help` says.

  build_man.py LOWDOWN SECTION NAME SUMMARY INPUT.md OUTPUT [JOINERY]
"""
import subprocess
import sys


def main(lowdown, section, name, summary, source, output, joinery=None):
    with open(source, encoding="utf-8") as f:
        body = f.read()
    # The page's own title becomes DESCRIPTION; its sections move one level down under it.
    lines = body.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    body = "\n".join(("#" + l) if l.startswith("#") else l for l in lines)
    head = ["# NAME", "", f"{name} - {summary}", ""]
    if joinery:
        usage = subprocess.run([joinery, "--help"], capture_output=True, text=True, check=True).stdout
        head += ["# SYNOPSIS", ""] + ["    " + l for l in usage.rstrip().splitlines()] + [""]
    text = "\n".join(head + ["# DESCRIPTION", "", body]) + "\n"
    roff = subprocess.run([lowdown, "-s", "-Tman", "-M", f"title={name}", "-M", f"section={section}",
                           "-M", "source=joinery"], input=text, capture_output=True, text=True, check=True).stdout
    with open(output, "w", encoding="utf-8") as f:
        f.write(roff)


if __name__ == "__main__":
    if len(sys.argv) not in (7, 8):
        sys.exit(__doc__)
    main(*sys.argv[1:])

#!/usr/bin/python3
"""Checks a joinery HDF5 table against the CSV of the same run, through h5py (t_hdf5.lua).

Usage: hdf5_check.py complete CSV H5 METHOD EVERY
       hdf5_check.py incomplete CSV H5 WHY
Prints one line per check, "PASS <what>" or "FAIL <what>: <detail>". The CSV's numbers are
written round-trip exact (engine/src/io_number.c), so float() of each gives back the double
the run computed, and the HDF5 table must hold the same bits.
"""
import csv
import sys

import h5py
import numpy as np


def check(ok, what, detail=""):
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else ": " + str(detail)))


def read_csv(path):
    with open(path, newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]], dtype=np.float64)


def main():
    mode, csv_path, h5_path = sys.argv[1:4]
    header, data = read_csv(csv_path)
    with h5py.File(h5_path, "r") as f:
        table = f["table"]
        names = [str(n) for n in table.attrs["columns"]]
        units = [str(u) for u in table.attrs["units"]]
        got = table[()]
        check(names == header, "the table's 'columns' are the CSV header", (names[:5], header[:5]))
        check(len(units) == len(names) and units[0] == "s"
              and all(u == "J" for n, u in zip(names, units) if n in ("energy", "kinetic")),
              "units: t in s, the energies in J", units[:8])
        if mode == "complete":
            check(got.shape == data.shape and got.dtype == np.float64
                  and np.array_equal(got.view(np.uint64), data.view(np.uint64)),
                  "every number equals the CSV's bit for bit (%d x %d)" % data.shape,
                  (got.shape, data.shape))
            check(table.chunks is not None and table.compression == "gzip" and table.shuffle
                  and table.maxshape == (None, len(names)),
                  "the table is chunked, shuffled, deflated and extensible",
                  (table.chunks, table.compression, table.shuffle, table.maxshape))
            method, every = sys.argv[4], int(sys.argv[5])
            attrs = f.attrs
            check(attrs["format"] == "joinery table 1" and attrs["method"] == method
                  and int(attrs["every"]) == every and "incomplete" not in attrs
                  and isinstance(attrs["report"], str) and float(attrs["rtol"]) > 0,
                  "file attributes: format, the settings (method %s, every %d), the report, "
                  "no 'incomplete'" % (method, every), dict(attrs))
        else:
            why = sys.argv[4]
            n = got.shape[0]
            check(0 < n < data.shape[0] and got.shape[1] == data.shape[1]
                  and np.array_equal(got.view(np.uint64), data[:n].view(np.uint64)),
                  "the rows before the failure equal the complete run's first rows bit for bit",
                  (got.shape, data.shape))
            inc = f.attrs.get("incomplete")
            check(isinstance(inc, str) and why in inc, "the file attribute 'incomplete' says why",
                  inc)


main()

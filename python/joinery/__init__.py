"""joinery from Python: load a Lua model script, simulate it, get the channels as numpy arrays.

    import joinery
    m = joinery.load("examples/pendulum.lua")
    res = m.sim(t_end=2, dt_out=0.01).run()
    res["bob.y"]            # a numpy view of one column of the run's rows
    sim = m.sim(t_end=5)    # or step it: sim.advance(t), sim.set_input(name, x), sim.state()

The package is cffi in ABI mode over the engine's C API (joinery.h) and the binding's C half
(_joinery_lua.so: python/joinery_lua.h), which runs the script in the Lua front end's sandbox
exactly as `joinery run` does. docs/python.md documents the API and how the library is found.
"""

import os
import threading
import weakref

import numpy as np
from cffi import FFI

__all__ = ["Error", "Model", "Sim", "Result", "load", "library_path"]

_CDEF = """
typedef int jyStatus;
typedef struct jyModel jyModel;
typedef struct jySim jySim;
typedef struct jySimDef jySimDef;

typedef struct jyChoiceInfo {
  const char *name;
  int value;
  const char *usage;
} jyChoiceInfo;
typedef struct jySettingInfo {
  const char *name;
  int domain;
  double default_value;
  double max;
  const char *must_be;
  const char *arg;
  const char *doc;
  const char *what;
  const jyChoiceInfo *choices;
  int nchoices;
} jySettingInfo;
typedef struct jySimStats {
  long steps, rhs_evals, error_test_fails, nonlinear_fails;
  long jac_evals;
  long jac_rhs_evals, krylov_iters;
  long restarts;
  long projections_skipped;
  long events;
  long guard_evals;
  double method_time[4];
  long method_steps[4];
  long to_stiff, to_singular, to_collapse, to_adams;
  double erk_rtol;
  long spatial_evals;
} jySimStats;
typedef struct jyEventSummary {
  const char *name;
  long count;
  double first_t, last_t;
} jyEventSummary;

const char *jy_status_text(jyStatus status);

int jy_model_num_coords(const jyModel *model);
int jy_model_num_rows(const jyModel *model);
const char *jy_model_coord_name(const jyModel *model, int i);
const double *jy_model_initial_q(const jyModel *model);
const double *jy_model_initial_v(const jyModel *model);
const char *jy_model_report(const jyModel *model);
int jy_model_num_channels(const jyModel *model);
const char *jy_model_channel_name(const jyModel *model, int i);
int jy_model_num_inputs(const jyModel *model);
const char *jy_model_input_name(const jyModel *model, int k);
const char *jy_model_input_unit(const jyModel *model, int k);
double jy_model_input_initial(const jyModel *model, int k);
int jy_model_find_input(const jyModel *model, const char *name);

const jySettingInfo *jy_sim_setting(int i);
jySim *jy_sim_create(const jyModel *model, const jySimDef *def, jyStatus *status);
void jy_sim_destroy(jySim *sim);
const char *jy_sim_error(const jySim *sim);
jyStatus jy_sim_set_state(jySim *sim, double t, const double *q, const double *v);
double jy_sim_time(const jySim *sim);
const double *jy_sim_q(const jySim *sim);
const double *jy_sim_v(const jySim *sim);
jyStatus jy_sim_set_input(jySim *sim, const char *name, double value);
double jy_sim_input(const jySim *sim, int k);
jyStatus jy_sim_advance(jySim *sim, double t_out);
jyStatus jy_sim_channels(jySim *sim, double *out);
int jy_sim_num_columns(const jySim *sim);
int jy_sim_column(const jySim *sim, int k);
jySimStats jy_sim_stats(const jySim *sim);
int jy_sim_num_event_kinds(const jySim *sim);
jyEventSummary jy_sim_event_summary(const jySim *sim, int k);
const char *jy_sim_stopped_by(const jySim *sim);

typedef struct jypSetting {
  const char *name;
  int kind;
  double x;
  const char *text;
} jypSetting;
typedef struct jypScript jypScript;
jypScript *jyp_load(const char *path, const char *const *args, int nargs, int trust,
                    const jypSetting *settings, int nsettings, char *error, size_t error_len);
void jyp_close(jypScript *s);
const jyModel *jyp_model(const jypScript *s);
jySim *jyp_sim_create(jypScript *s, const jySimDef *def, jyStatus *status);
void jyp_sim_destroy(jypScript *s, jySim *sim);
jySimDef *jyp_sim_def(jypScript *s, const jypSetting *settings, int nsettings, char *error,
                      size_t error_len);
void jyp_sim_def_free(jySimDef *d);
double jyp_sim_def_get(const jySimDef *d, int i);
typedef struct jypRows {
  double *data;
  size_t nrows, cap;
  int ncols;
  int failed;
} jypRows;
jypRows *jyp_rows_new(void);
void jyp_rows_free(jypRows *r);
jyStatus jyp_run(jySim *sim, jypRows *r);
double *jyp_rows_take(jypRows *r);
void jyp_free(void *p);
size_t jyp_sizeof(int which);
"""

_LIB_NAME = "_joinery_lua.so"
_ERROR_LEN = 16384
# jyDomain's JY_DOMAIN_COUNT, JY_DOMAIN_COUNT_POSITIVE, JY_DOMAIN_FLAG, JY_DOMAIN_CHOICE
_DOMAIN_COUNTS, _DOMAIN_FLAG, _DOMAIN_CHOICE = (5, 6), 7, 8


class Error(Exception):
    """An error of the engine or of the model script, with its message as joinery says it
    (a script's error names file:line). status: the engine's status text when there is one
    ("integrator failure"), else None."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


def library_path():
    """The C half the package opens: $JOINERY_PYTHON_LIB when set, else _joinery_lua.so
    beside this file (where meson install puts it)."""
    env = os.environ.get("JOINERY_PYTHON_LIB")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIB_NAME)


_ffi = FFI()
_ffi.cdef(_CDEF)
_lib = None
_lib_lock = threading.Lock()


def _open():
    global _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            try:
                lib = _ffi.dlopen(path)
            except OSError as e:
                raise Error("cannot open the joinery library %s: %s (set JOINERY_PYTHON_LIB to "
                            "the _joinery_lua.so of a build or an install)" % (path, e)) from None
            for which, name in enumerate(("jySimStats", "jySettingInfo", "jyChoiceInfo",
                                          "jyEventSummary")):
                if lib.jyp_sizeof(which) != _ffi.sizeof(name):
                    raise Error("%s: struct %s is %d bytes there, %d in this package: the "
                                "package and the library are of different versions"
                                % (path, name, lib.jyp_sizeof(which), _ffi.sizeof(name)))
            _lib = lib
    return _lib


def _str(p):
    return _ffi.string(p).decode("utf-8", "replace") if p != _ffi.NULL else None


def _status_error(lib, status, message):
    text = _str(lib.jy_status_text(status))
    return Error(message or text, text)


def _settings(values):
    """The jypSetting array for a dict of settings, and what keeps its strings alive."""
    keep = []
    arr = _ffi.new("jypSetting[]", max(len(values), 1))
    for i, (name, value) in enumerate(values.items()):
        cname = _ffi.new("char[]", str(name).encode())
        keep.append(cname)
        arr[i].name = cname
        if isinstance(value, (bool, np.bool_)):
            arr[i].kind, arr[i].x = 1, float(bool(value))
        elif isinstance(value, str) or (isinstance(value, (list, tuple)) and
                                         all(isinstance(v, str) for v in value)):
            text = value if isinstance(value, str) else ",".join(value)
            ctext = _ffi.new("char[]", text.encode())
            keep.append(ctext)
            arr[i].kind, arr[i].text = 2, ctext
        else:
            try:
                x = float(value)
            except (TypeError, ValueError):
                raise Error("setting '%s' must be a number, true/false or a string, got %r"
                            % (name, value)) from None
            arr[i].kind, arr[i].x = 0, x
    return arr, keep


def load(path, args=(), trust=False, **settings):
    """Loads and compiles the Lua model script at path, as `joinery run` does.

    args: the script's arguments (strings: `...` and arg[1..] in the script). trust=False
    runs the script in the sandbox of `joinery run` (no os.execute, io.popen, C modules,
    writing files, ...); trust=True is `joinery run --trust`. settings: run and solver
    settings over the script's sys:settings, as joinery run's flags (t_end=2,
    method="bdf", rank_rcond=1e-12, columns="bob.*"); the run settings become the model's
    defaults for m.sim(). Raises joinery.Error with the script's or the engine's message."""
    lib = _open()
    path = os.fspath(path)
    cargs = [_ffi.new("char[]", str(a).encode()) for a in args]
    argv = _ffi.new("const char *[]", cargs or [_ffi.NULL])
    arr, keep = _settings(settings)
    err = _ffi.new("char[]", _ERROR_LEN)
    handle = lib.jyp_load(path.encode(), argv, len(cargs), 1 if trust else 0, arr,
                          len(settings), err, _ERROR_LEN)
    del keep
    if handle == _ffi.NULL:
        raise Error(_str(err))
    return Model(lib, path, handle)


class Model:
    """A compiled model and the Lua state of its script. Its simulations keep it alive; one
    thread at a time uses it (a lock here serializes the calls: the script's Lua functions
    share one Lua state). For runs in parallel threads, load the script once per thread."""

    def __init__(self, lib, path, handle):
        self._lib = lib
        # Reentrant: a sim's destructor takes it too, and the garbage collector may run one
        # in a thread that holds it (between two C calls, never inside one).
        self._lock = threading.RLock()
        self._sims = weakref.WeakSet()
        lock = self._lock

        def close(h):
            with lock:
                lib.jyp_close(h)

        self._handle = _ffi.gc(handle, close)
        self._model = lib.jyp_model(handle)
        self.path = path
        m = self._model
        self.coords = [_str(lib.jy_model_coord_name(m, i))
                       for i in range(lib.jy_model_num_coords(m))]
        self.channels = [_str(lib.jy_model_channel_name(m, i))
                         for i in range(lib.jy_model_num_channels(m))]
        self.inputs = [_str(lib.jy_model_input_name(m, k))
                       for k in range(lib.jy_model_num_inputs(m))]
        self.num_rows = lib.jy_model_num_rows(m)
        self.report = _str(lib.jy_model_report(m)) or ""
        n = len(self.coords)
        self.initial_q = np.array(_ffi.unpack(lib.jy_model_initial_q(m), n), dtype=float)
        self.initial_v = np.array(_ffi.unpack(lib.jy_model_initial_v(m), n), dtype=float)

    def _check_open(self):
        if self._handle is None:
            raise Error("the model %s is closed" % self.path)

    def input_unit(self, name):
        k = self._input_index(name)
        return _str(self._lib.jy_model_input_unit(self._model, k)) or ""

    def input_initial(self, name):
        return self._lib.jy_model_input_initial(self._model, self._input_index(name))

    def _input_index(self, name):
        k = self._lib.jy_model_find_input(self._model, str(name).encode())
        if k < 0:
            raise Error("no input '%s' (the model's inputs: %s)"
                        % (name, ", ".join(self.inputs) or "none"))
        return k

    def settings(self, **overrides):
        """The run settings a sim(**overrides) would use, as a dict (choices by name,
        flags as bool)."""
        d = self._sim_def(overrides)
        try:
            out = {}
            i = 0
            while True:
                info = self._lib.jy_sim_setting(i)
                if info == _ffi.NULL:
                    break
                x = self._lib.jyp_sim_def_get(d, i)
                if info.domain == _DOMAIN_CHOICE:
                    names = {info.choices[c].value: _str(info.choices[c].name)
                             for c in range(info.nchoices)}
                    out[_str(info.name)] = names.get(int(x), x)
                elif info.domain == _DOMAIN_FLAG:
                    out[_str(info.name)] = bool(x)
                elif info.domain in _DOMAIN_COUNTS:
                    out[_str(info.name)] = int(x)
                else:
                    out[_str(info.name)] = x
                i += 1
            return out
        finally:
            self._lib.jyp_sim_def_free(d)

    def _sim_def(self, settings):
        self._check_open()
        arr, keep = _settings(settings)
        err = _ffi.new("char[]", _ERROR_LEN)
        with self._lock:
            d = self._lib.jyp_sim_def(self._handle, arr, len(settings), err, _ERROR_LEN)
        del keep
        if d == _ffi.NULL:
            raise Error(_str(err))
        return d

    def sim(self, **settings):
        """A simulation from the initial state, with the model's run settings overridden by
        these (t_end=, dt_out=, method=, rtol=, columns=, ...: docs/cli.md's table)."""
        return Sim(self, settings)

    def run(self, **settings):
        """self.sim(**settings).run(): a run from the initial state to t_end."""
        with self.sim(**settings) as s:
            return s.run()

    def close(self):
        """Frees the Lua state and the model now (every sim of it must be closed)."""
        if self._handle is not None:
            if any(s._sim is not None for s in self._sims):
                raise Error("model %s: close its simulations first" % self.path)
            h, self._handle = self._handle, None
            _ffi.release(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<joinery.Model %s: %d coordinates, %d rows, %d channels, %d inputs>" % (
            self.path, len(self.coords), self.num_rows, len(self.channels), len(self.inputs))


class Sim:
    """One simulation of a model: sim.run() to t_end, or stepped with advance, set_input,
    state. Integration runs with the GIL released."""

    def __init__(self, model, settings):
        self.model = model
        self._lib = lib = model._lib
        d = model._sim_def(settings)
        status = _ffi.new("jyStatus *")
        try:
            with model._lock:
                sim = lib.jyp_sim_create(model._handle, d, status)
        finally:
            lib.jyp_sim_def_free(d)
        if sim == _ffi.NULL:
            raise Error("out of memory creating a simulation", "out of memory")
        if status[0] != 0:
            msg = _str(lib.jy_sim_error(sim))
            lib.jyp_sim_destroy(model._handle, sim)
            raise _status_error(lib, status[0], msg)
        # The script counts its sims (jyp_sim_create) and frees the model only after the
        # last one, so the order in which Python drops the objects (a Sim's attributes go in
        # any order; at exit anything goes) cannot free the model under a sim.
        # The destructor takes the model's lock: the count and the Lua state are the model's.
        raw, lock = _ffi.cast("jypScript *", model._handle), model._lock

        def destroy(p):
            with lock:
                lib.jyp_sim_destroy(raw, p)

        self._sim = _ffi.gc(sim, destroy)
        model._sims.add(self)
        self.columns = [model.channels[lib.jy_sim_column(sim, k)]
                        for k in range(lib.jy_sim_num_columns(sim))]
        self._n = len(model.coords)
        self._ran = False

    def _check(self, status):
        if status != 0:
            raise _status_error(self._lib, status, _str(self._lib.jy_sim_error(self._sim)))

    def _live(self):
        if self._sim is None:
            raise Error("the simulation is closed")
        return self._sim

    @property
    def t(self):
        """The current time."""
        return self._lib.jy_sim_time(self._live())

    def advance(self, t):
        """Integrates to time t (>= the current time, <= t_end); returns the time reached (the
        stop of an event that stops the run may come first)."""
        sim = self._live()
        with self.model._lock:
            self._check(self._lib.jy_sim_advance(sim, float(t)))
            return self._lib.jy_sim_time(sim)

    def set_input(self, name, value):
        """Holds input `name` at value from the current time on (exactly there: the
        integrator restarts)."""
        sim = self._live()
        with self.model._lock:
            self._check(self._lib.jy_sim_set_input(sim, str(name).encode(), float(value)))

    def input(self, name):
        """The value of input `name` now."""
        k = self.model._input_index(name)
        with self.model._lock:
            return self._lib.jy_sim_input(self._live(), k)

    def state(self):
        """(q, v): the coordinates and velocities now (model.coords order), numpy copies."""
        sim = self._live()
        with self.model._lock:
            q = np.array(_ffi.unpack(self._lib.jy_sim_q(sim), self._n), dtype=float)
            v = np.array(_ffi.unpack(self._lib.jy_sim_v(sim), self._n), dtype=float)
        return q, v

    def set_state(self, t, q, v):
        """Restarts from time t at (q, v) (made consistent with the constraints)."""
        q = np.ascontiguousarray(q, dtype=float)
        v = np.ascontiguousarray(v, dtype=float)
        if q.shape != (self._n,) or v.shape != (self._n,):
            raise Error("set_state: q and v must each have %d values" % self._n)
        sim = self._live()
        with self.model._lock:
            self._check(self._lib.jy_sim_set_state(
                sim, float(t), _ffi.from_buffer("double[]", q), _ffi.from_buffer("double[]", v)))

    def channels(self):
        """Every output channel now, {name: value} (model.channels order)."""
        sim = self._live()
        out = np.empty(len(self.model.channels))
        with self.model._lock:
            self._check(self._lib.jy_sim_channels(sim, _ffi.from_buffer("double[]", out)))
        return dict(zip(self.model.channels, out.tolist()))

    def stats(self):
        """The integrator's counters (steps, rhs_evals, ...; joinery.h's jySimStats)."""
        with self.model._lock:
            st = self._lib.jy_sim_stats(self._live())
        out = {name: getattr(st, name) for name in (
            "steps", "rhs_evals", "error_test_fails", "nonlinear_fails", "jac_evals",
            "jac_rhs_evals", "krylov_iters", "restarts", "projections_skipped", "events",
            "guard_evals", "to_stiff", "to_singular", "to_collapse", "to_adams",
            "spatial_evals")}
        out["method_time"] = list(st.method_time)
        out["method_steps"] = list(st.method_steps)
        out["erk_rtol"] = st.erk_rtol
        return out

    def events(self):
        """The events that fired: [{name, count, first, last}]."""
        with self.model._lock:
            sim = self._live()
            out = []
            for k in range(self._lib.jy_sim_num_event_kinds(sim)):
                e = self._lib.jy_sim_event_summary(sim, k)
                out.append({"name": _str(e.name), "count": e.count, "first": e.first_t,
                            "last": e.last_t})
        return out

    @property
    def stopped_by(self):
        """The event that stopped the run, or None."""
        with self.model._lock:
            return _str(self._lib.jy_sim_stopped_by(self._live())) or None

    def run(self):
        """Runs from the current state (the initial one unless advanced) to t_end, once per
        Sim, and returns the Result: every output row in one C buffer that the result owns,
        the columns numpy views of it."""
        sim = self._live()
        if self._ran:
            raise Error("sim.run() runs a simulation once: create another with model.sim()")
        self._ran = True
        lib = self._lib
        rows = _ffi.gc(lib.jyp_rows_new(), lib.jyp_rows_free)
        if rows == _ffi.NULL:
            raise Error("out of memory", "out of memory")
        with self.model._lock:
            status = lib.jyp_run(sim, rows)  # the GIL is released during the call
        self._check(status)
        nrows, ncols = rows.nrows, rows.ncols
        if nrows == 0:
            array = np.empty((0, ncols))
        else:
            data = _ffi.gc(lib.jyp_rows_take(rows), lib.jyp_free)
            buf = _ffi.buffer(data, nrows * ncols * _ffi.sizeof("double"))  # keeps data alive
            array = np.frombuffer(buf, dtype=np.float64).reshape(nrows, ncols)
        return Result(self.columns, array, self.stats(), self.events(), self.stopped_by)

    def close(self):
        """Frees the simulation now (the garbage collector does it otherwise)."""
        if self._sim is not None:
            s, self._sim = self._sim, None
            _ffi.release(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Result:
    """A run's output: array, the rows x columns (numpy, over the C buffer the run filled, no
    copy); columns, their names ("t" first); res["name"] or res.t a column (a view);
    stats, events, stopped_by as on the Sim."""

    def __init__(self, columns, array, stats, events, stopped_by):
        self.columns = columns
        self.array = array
        self.stats = stats
        self.events = events
        self.stopped_by = stopped_by
        self._index = {name: k for k, name in enumerate(columns)}

    @property
    def rows(self):
        return self.array.shape[0]

    @property
    def t(self):
        return self.array[:, 0]

    def __getitem__(self, name):
        k = self._index.get(name)
        if k is None:
            raise KeyError("no column '%s' in this run (columns: %s)"
                           % (name, ", ".join(self.columns)))
        return self.array[:, k]

    def __contains__(self, name):
        return name in self._index

    def keys(self):
        return list(self.columns)

    def __repr__(self):
        return "<joinery.Result: %d rows x %d columns>" % self.array.shape

/* lua/simulation.c — running a model: the Sim userdata (joinery.Sim, stepped from Lua) and
 * model:simulate / sys:simulate, which run a fresh simulation to its end and collect every
 * output row through a row sink that only copies numbers into a malloc'ed buffer, so that no
 * Lua error is raised while the engine is on the C stack.
 *
 * Result of simulate: res.channels (the run's columns, jySimDef.columns: the names in CSV
 *   order, "t" first; by default every channel but the eliminated copies and glue forces
 *   and the outputs of parts that keep them on request: joinery.h, jySimDef.columns),
 *   res[<channel>] (array
 *   per channel: res.t, res["bob.x"], res["der(bob.x)"], res.energy, res["force.hinge.x"],
 *   ...), res.rows (number of output rows), res.report, res.stats ({steps=, rhs_evals=,
 *   error_test_fails=, nonlinear_fails=, jac_evals=, jac_rhs_evals=, krylov_iters=,
 *   restarts=, events=, guard_evals=, spatial_evals=, ...}), res.events (the events that fired: {name=, count=,
 *   first=, last=} each), res.stopped_by (the event that stopped the run, if one did),
 *   res.seconds (wall time of the
 *   integration), res.model. With opts.out = "file.csv" the engine writes the rows to that
 *   file (jy_sim_write_csv: the file appears only when the run succeeded; a failed run's rows
 *   go to <stem>.incomplete.csv and the error says so); "file.h5" or "file.hdf5" is written as
 *   HDF5 (jy_sim_write_hdf5, the same way: <stem>.incomplete.h5) and the same
 *   rows fill the arrays; res.out is the path, and res.out_note says when that file is no
 *   longer (or will not stay) this run's: a concurrent run with the same output replaced it
 *   or is writing it too. On a terminal, a run longer than a second
 *   shows the simulated time on stderr as it goes.
 *
 * Sim (joinery.Sim; __gc/__close/sim:close()): sim:advance(t_out), sim:time(),
 *   sim:state() -> q, v, sim:set_state(t, q, v), sim:channels() -> {name = value},
 *   sim:stats(). A sim keeps its model alive; closing the model while sims are open
 *   defers the release until the last sim is gone. A Lua part or channel function that
 *   reaches the sim running it may not close, advance, set or evaluate it during that
 *   step: an error names the call (it would free or re-enter the integrator under it).
 *
 * joinery run (jylRunOpts.streamed) keeps only the rows it prints, the first three and the
 * last, whatever the run's length, and stops at the next row when a signal arrives.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "binding_private.h"
#include "sandbox.h"
#include "joinery/joinery.h"

/* Output rows collected by the row sink (malloc'ed; freed by __gc or at once). Streamed:
 * only the first STREAM_HEAD rows and the last are kept. */
#define STREAM_HEAD 3
typedef struct LRows {
  double *data;
  size_t n, cap; /* doubles */
  size_t nrows;  /* rows seen */
  int nch;
  int streamed;
  const volatile sig_atomic_t *stop;
  jySim *sim; /* told why when a signal stops it */
  int failed; /* 1: out of memory, 2: row width differs from the model's, 3: stopped */
  /* Progress of a long run: 1 a line rewritten on a terminal (from 1 s on, twice a second),
   * 2 a line every 10 s when stderr is not a terminal (joinery run without --quiet), 0 none. */
  int progress, reported;
  double t0, t_start, t_end, next_report, every;
} LRows;

/* The process's CPU time, s: the summary's CPU time beside the wall time. */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The functions a step calls (Lua parts, sys:channel functions) may reach the sim through
 * an upvalue; closing or stepping it there would free or re-enter the integrator under the
 * running step. */
static void refuse_if_busy(lua_State *L, const LSim *sm, const char *what) {
  if (sm->busy)
    luaL_error(L,
               "%s called on a simulation from inside its own step (a part or channel "
               "function running during sim:advance); call it after sim:advance returns",
               what);
}

static int sim_gc(lua_State *L) {
  LSim *sm = (LSim *)luaL_checkudata(L, 1, JYL_SIM);
  if (!sm->sim) return 0;
  refuse_if_busy(L, sm, "sim:close()");
  jy_sim_destroy(sm->sim);
  sm->sim = NULL;
  lua_getiuservalue(L, 1, 1);
  LModel *m = (LModel *)lua_touserdata(L, -1);
  if (m) {
    m->nsims--;
    if (m->closed && m->nsims == 0) jyl_model_release(m);
  }
  return 0;
}

static LSim *check_sim(lua_State *L, int idx) {
  LSim *sm = (LSim *)luaL_checkudata(L, idx, JYL_SIM);
  if (!sm->sim) luaL_error(L, "the simulation is closed");
  return sm;
}

LSim *jyl_new_sim(lua_State *L, int model_idx, const jySimDef *def) {
  model_idx = lua_absindex(L, model_idx);
  LModel *m = jyl_check_model(L, model_idx);
  LSim *sm = (LSim *)lua_newuserdatauv(L, sizeof *sm, 1);
  sm->sim = NULL;
  sm->busy = 0;
  luaL_setmetatable(L, JYL_SIM);
  lua_pushvalue(L, model_idx);
  lua_setiuservalue(L, -2, 1);
  jyStatus st = JY_OK;
  jySim *sim = jy_sim_create(m->model, def, &st);
  if (sim && st == JY_OK) {
    sm->sim = sim;
    m->nsims++;
    return sm;
  }
  lua_pushstring(L, jyl_msg_or(sim ? jy_sim_error(sim) : NULL, st != JY_OK ? st : JY_ERR_NOMEM));
  jy_sim_destroy(sim);
  luaL_error(L, "%s", lua_tostring(L, -1));
  return NULL;
}

static int rows_gc(lua_State *L) {
  LRows *r = (LRows *)luaL_checkudata(L, 1, JYL_ROWS);
  free(r->data);
  r->data = NULL;
  return 0;
}

/* Room for w more doubles; 0 on success, else r->failed = 1. */
static int rows_reserve(LRows *r, size_t w) {
  if (r->streamed) { /* the head and one slot for the latest row, allocated once */
    size_t slot = r->nrows < STREAM_HEAD ? r->nrows : STREAM_HEAD;
    r->n = slot * (size_t)r->nch;
    if (r->data) return 0;
    r->cap = (STREAM_HEAD + 1) * (size_t)r->nch;
    r->data = (double *)malloc(r->cap * sizeof *r->data);
    return r->data ? 0 : (r->failed = 1);
  }
  if (r->cap - r->n >= w) return 0;
  size_t cap = r->cap ? r->cap : 256 * (size_t)(r->nch > 0 ? r->nch : 1);
  while (cap - r->n < w) {
    if (cap > SIZE_MAX / 2 / sizeof(double)) return r->failed = 1;
    cap *= 2;
  }
  double *p = (double *)realloc(r->data, cap * sizeof *p);
  if (!p) return r->failed = 1;
  r->data = p;
  r->cap = cap;
  return 0;
}

/* The progress line at simulated time t: the fraction done, the steps, the wall time so far
 * and an estimate of what is left (from the pace so far). */
static void report_progress(LRows *r, double t, double now) {
  double span = r->t_end - r->t_start, done = span > 0 ? (t - r->t_start) / span : 1;
  double spent = now - r->t0, left = done > 0 ? spent * (1 - done) / done : NAN;
  jySimStats st = jy_sim_stats(r->sim);
  char eta[32] = "?";
  if (isfinite(left)) snprintf(eta, sizeof eta, "%.0f s", left);
  if (r->progress == 1) {
    fprintf(stderr, "\r  t = %.6g of %.6g s (%.1f%%), %ld steps, %.0f s so far, about %s left ", t,
            r->t_end, 100 * done, st.steps, spent, eta);
    r->reported = 1;
    r->next_report = now + 0.5;
  } else {
    fprintf(stderr,
            "progress: t = %.6g of %.6g s (%.1f%%), %ld steps, %.0f s so far, about %s left\n", t,
            r->t_end, 100 * done, st.steps, spent, eta);
    r->next_report = now + r->every;
  }
  fflush(stderr);
}

/* The row sink: copies the row; never calls Lua. */
static int rows_sink(void *ud, const double *row, int nchannels) {
  LRows *r = (LRows *)ud;
  if (r->stop && *r->stop) {
    jy_sim_set_stop_reason(r->sim,
                           *r->stop == SIGTERM    ? "interrupted by SIGTERM"
                             : *r->stop == SIGINT ? "interrupted by SIGINT"
                                                  : "interrupted by a signal");
    return r->failed = 3;
  }
  if (nchannels != r->nch) return r->failed = 2;
  if (rows_reserve(r, (size_t)nchannels)) return 1;
  memcpy(r->data + r->n, row, (size_t)nchannels * sizeof *row);
  r->n += (size_t)nchannels;
  r->nrows++;
  if (r->progress) {
    double now = now_seconds();
    if (now >= r->next_report) report_progress(r, row[0], now);
  }
  return 0;
}

static void push_stats(lua_State *L, const jySim *sim) {
  jySimStats st = jy_sim_stats(sim);
  const struct {
    const char *name;
    long value;
  } fields[] = {{"steps", st.steps},
                {"rhs_evals", st.rhs_evals},
                {"error_test_fails", st.error_test_fails},
                {"nonlinear_fails", st.nonlinear_fails},
                {"jac_evals", st.jac_evals},
                {"jac_rhs_evals", st.jac_rhs_evals},
                {"krylov_iters", st.krylov_iters},
                {"restarts", st.restarts},
                {"events", st.events},
                {"guard_evals", st.guard_evals},
                {"to_stiff", st.to_stiff},
                {"to_singular", st.to_singular},
                {"to_collapse", st.to_collapse},
                {"to_adams", st.to_adams},
                {"spatial_evals", st.spatial_evals}};
  lua_createtable(L, 0, 16);
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    lua_pushinteger(L, (lua_Integer)fields[i].value);
    lua_setfield(L, -2, fields[i].name);
  }
  /* methods = { adams = { time =, steps = }, ... }: the methods that ran */
#define METHOD_NAME_(id, name, ...) name,
  static const char *const method_names[] = {JY_METHODS(METHOD_NAME_)};
#undef METHOD_NAME_
  lua_createtable(L, 0, 2);
  for (int k = 0; k < JY_METHOD_COUNT; k++) {
    if (st.method_steps[k] == 0 && st.method_time[k] == 0) continue;
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, st.method_time[k]);
    lua_setfield(L, -2, "time");
    lua_pushinteger(L, (lua_Integer)st.method_steps[k]);
    lua_setfield(L, -2, "steps");
    if (k == JY_METHOD_ERK) {
      lua_pushnumber(L, st.erk_rtol);
      lua_setfield(L, -2, "rtol");
    }
    lua_setfield(L, -2, method_names[k]);
  }
  lua_setfield(L, -2, "methods");
}

/* res.events: the events that fired ({name=, count=, first=, last=} in the order they first
 * fired); res.stopped_by: the event that stopped the run (absent when none did). */
static void set_event_summary(lua_State *L, int res, const jySim *sim) {
  int kinds = jy_sim_num_event_kinds(sim);
  lua_createtable(L, kinds, 0);
  for (int k = 0; k < kinds; k++) {
    jyEventSummary e = jy_sim_event_summary(sim, k);
    lua_createtable(L, 0, 4);
    lua_pushstring(L, e.name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, (lua_Integer)e.count);
    lua_setfield(L, -2, "count");
    lua_pushnumber(L, e.first_t);
    lua_setfield(L, -2, "first");
    lua_pushnumber(L, e.last_t);
    lua_setfield(L, -2, "last");
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, res, "events");
  const char *by = jy_sim_stopped_by(sim);
  if (by && *by) {
    lua_pushstring(L, by);
    lua_setfield(L, res, "stopped_by");
  }
}

/* The registry key of the host's stop flag (jyl_set_stop_flag): its address is unique. */
static const char stop_flag_key = 's';

void jyl_set_stop_flag(lua_State *L, const volatile sig_atomic_t *flag) {
  lua_pushlightuserdata(L, (void *)(uintptr_t)flag);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &stop_flag_key);
}

static const volatile sig_atomic_t *host_stop_flag(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &stop_flag_key);
  const volatile sig_atomic_t *flag = (const volatile sig_atomic_t *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return flag;
}

/* Pushes the row buffer of a run of nch channels to t_end, started at t0 (wall time). */
static LRows *new_rows(lua_State *L, int nch, double t_end, double t0, const jylRunOpts *opts) {
  LRows *r = (LRows *)lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  r->nch = nch;
  r->streamed = opts->streamed;
  r->stop = opts->stop ? opts->stop : opts->out ? host_stop_flag(L) : NULL;
  luaL_setmetatable(L, JYL_ROWS);
  r->t0 = t0;
  r->t_end = t_end;
  r->progress = isatty(STDERR_FILENO) ? 1 : opts->streamed && !opts->quiet ? 2 : 0;
  r->every = 10.0; /* JOINERY_PROGRESS_SECONDS: the interval of the lines to a file */
  const char *every = getenv("JOINERY_PROGRESS_SECONDS");
  if (every && strtod(every, NULL) > 0) r->every = strtod(every, NULL);
  r->next_report = t0 + (r->progress == 2 ? r->every : 1.0); /* short runs stay quiet */
  return r;
}

/* Sets res[<channel>] to the array of that channel's values in the collected rows (streamed:
 * rows 1..3 and the last, at their row numbers), and res.channels and res.rows; frees the
 * rows. */
static void set_channel_columns(lua_State *L, int res, const jyModel *model, const jySim *sim,
                                LRows *r) {
  int nch = r->nch;
  lua_createtable(L, nch, 0);
  for (int c = 0; c < nch; c++) {
    lua_pushstring(L, jy_model_channel_name(model, jy_sim_column(sim, c)));
    lua_rawseti(L, -2, c + 1);
  }
  lua_setfield(L, res, "channels");
  size_t nrows = r->nrows, kept = r->n / (size_t)nch;
  for (int c = 0; c < nch; c++) {
    lua_createtable(L, (int)kept, 0);
    for (size_t i = 0; i < kept; i++) {
      lua_pushnumber(L, r->data[i * (size_t)nch + (size_t)c]);
      lua_rawseti(L, -2, r->streamed && i == STREAM_HEAD ? (lua_Integer)nrows : (lua_Integer)i + 1);
    }
    lua_setfield(L, res, jy_model_channel_name(model, jy_sim_column(sim, c)));
  }
  free(r->data);
  r->data = NULL;
  lua_pushinteger(L, (lua_Integer)nrows);
  lua_setfield(L, res, "rows");
  lua_pushboolean(L, r->streamed);
  lua_setfield(L, res, "streamed");
}

/* Pushes the result table of a finished run of the sim at sim_idx (model at model_idx). */
static void push_result(lua_State *L, int model_idx, int sim_idx, LRows *r, const char *out,
                        double seconds, double cpu) {
  const jyModel *model = ((LModel *)lua_touserdata(L, model_idx))->model;
  lua_createtable(L, 0, r->nch + 8);
  int res = lua_gettop(L);
  const jySim *sim = ((LSim *)lua_touserdata(L, sim_idx))->sim;
  set_channel_columns(L, res, model, sim, r);
  if (out) {
    lua_pushstring(L, out);
    lua_setfield(L, res, "out");
    static const char *const notes[] = {
      "another run with the same output has replaced it since", "it has been removed since",
      "another run with the same output is writing it too and will replace it when it ends"};
    int replaced = jy_sim_output_replaced(sim, out);
    if (replaced >= 1 && replaced <= 3) {
      lua_pushstring(L, notes[replaced - 1]);
      lua_setfield(L, res, "out_note");
    }
  }
  const char *report = jy_model_report(model);
  lua_pushstring(L, report ? report : "");
  lua_setfield(L, res, "report");
  push_stats(L, sim);
  lua_setfield(L, res, "stats");
  set_event_summary(L, res, sim);
  lua_pushnumber(L, seconds);
  lua_setfield(L, res, "seconds");
  lua_pushnumber(L, cpu);
  lua_setfield(L, res, "cpu_seconds");
  lua_pushvalue(L, model_idx);
  lua_setfield(L, res, "model");
}

int jyl_is_hdf5_path(const char *path) {
  size_t n = strlen(path);
  return (n > 3 && strcmp(path + n - 3, ".h5") == 0) ||
    (n > 5 && strcmp(path + n - 5, ".hdf5") == 0);
}

int jyl_run_simulation(lua_State *L, int model_idx, const jySimDef *def, const jylRunOpts *opts) {
  model_idx = lua_absindex(L, model_idx);
  LModel *m = jyl_check_model(L, model_idx);
  if (opts->out) jyl_check_output_not_input(L, opts->out);
  LSim *sm = jyl_new_sim(L, model_idx, def);
  int sim_idx = lua_gettop(L);
  double t0 = now_seconds(), cpu0 = cpu_seconds();
  (void)m;
  LRows *r = new_rows(L, jy_sim_num_columns(sm->sim), def->t_end, t0, opts);
  r->t_start = def->t_start;
  r->sim = sm->sim;
  const char *out = opts->out;
  jyStatus st = out && jyl_is_hdf5_path(out) ? jy_sim_write_hdf5(sm->sim, out, rows_sink, r)
    : out                                    ? jy_sim_write_csv(sm->sim, out, rows_sink, r)
                                             : jy_sim_run(sm->sim, rows_sink, r);
  double seconds = now_seconds() - t0, cpu = cpu_seconds() - cpu0;
  if (r->reported) fprintf(stderr, "\r%100s\r", "");
  if (r->failed == 1) return luaL_error(L, "out of memory collecting the output rows");
  if (r->failed == 2) return luaL_error(L, "the engine gave rows of the wrong width");
  if (r->failed == 3) return luaL_error(L, "%s", jy_sim_error(sm->sim));
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_sim_error(sm->sim), st));
  push_result(L, model_idx, sim_idx, r, out, seconds, cpu);
  /* Release the integrator now rather than at the next collection. */
  lua_pushcfunction(L, sim_gc);
  lua_pushvalue(L, sim_idx);
  lua_call(L, 1, 0);
  return 1;
}

/* The model of a sim (pushed). */
static LModel *sim_model(lua_State *L, int idx) {
  lua_getiuservalue(L, idx, 1);
  return (LModel *)lua_touserdata(L, -1);
}

static int sim_advance(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  double t = luaL_checknumber(L, 2);
  refuse_if_busy(L, sm, "sim:advance");
  sm->busy = 1; /* no Lua error can escape the engine: part calls are protected */
  jyStatus st = jy_sim_advance(sm->sim, t);
  sm->busy = 0;
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_sim_error(sm->sim), st));
  lua_pushnumber(L, jy_sim_time(sm->sim));
  return 1;
}

static int sim_time(lua_State *L) {
  lua_pushnumber(L, jy_sim_time(check_sim(L, 1)->sim));
  return 1;
}

static int sim_state(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  int n = jy_model_num_coords(sim_model(L, 1)->model);
  jyl_push_array(L, jy_sim_q(sm->sim), n);
  jyl_push_array(L, jy_sim_v(sm->sim), n);
  return 2;
}

static int sim_set_state(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  refuse_if_busy(L, sm, "sim:set_state");
  double t = luaL_checknumber(L, 2);
  lua_settop(L, 4);
  int n = jy_model_num_coords(sim_model(L, 1)->model);
  double *buf = jyl_scratch(L, 2 * (size_t)n);
  jyl_read_vector(L, 3, n, buf, "q");
  jyl_read_vector(L, 4, n, buf + n, "v");
  jyStatus st = jy_sim_set_state(sm->sim, t, buf, buf + n);
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_sim_error(sm->sim), st));
  return 0;
}

/* The index of input `name` of the sim's model, or a Lua error with the nearest name. */
int jyl_input_index(lua_State *L, const jyModel *model, const char *name, const char *what) {
  int k = jy_model_find_input(model, name);
  if (k >= 0) return k;
  int n = jy_model_num_inputs(model);
  if (n == 0)
    return luaL_error(L, "%s: no input '%s' (the model has no inputs: sys:input declares one)",
                      what, name);
  const char **names = (const char **)lua_newuserdatauv(L, sizeof *names * (size_t)n, 0);
  for (int i = 0; i < n; i++) names[i] = jy_model_input_name(model, i);
  const char *near = jy_nearest_name(name, names, n);
  if (near) return luaL_error(L, "%s: no input '%s'; did you mean '%s'?", what, name, near);
  return luaL_error(L, "%s: no input '%s' (model:inputs() lists them)", what, name);
}

/* sim:set_input(name, value): from now on (the integrator restarts here when it changes). */
static int sim_set_input(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  refuse_if_busy(L, sm, "sim:set_input");
  const char *name = luaL_checkstring(L, 2);
  double value = luaL_checknumber(L, 3);
  int k = jyl_input_index(L, sim_model(L, 1)->model, name, "sim:set_input");
  sm->busy = 1;
  jyStatus st = jy_sim_set_input_index(sm->sim, k, value);
  sm->busy = 0;
  if (st != JY_OK) return luaL_error(L, "sim:set_input: %s", jyl_msg_or(jy_sim_error(sm->sim), st));
  return 0;
}

/* sim:input(name): its value now. */
static int sim_input(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  int k = jyl_input_index(L, sim_model(L, 1)->model, luaL_checkstring(L, 2), "sim:input");
  lua_pushnumber(L, jy_sim_input(sm->sim, k));
  return 1;
}

static int sim_channels(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  refuse_if_busy(L, sm, "sim:channels");
  LModel *m = sim_model(L, 1);
  double *buf = jyl_scratch(L, (size_t)jy_model_num_channels(m->model));
  sm->busy = 1; /* sys:channel functions run in here */
  jyStatus st = jy_sim_channels(sm->sim, buf);
  sm->busy = 0;
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_sim_error(sm->sim), st));
  jyl_push_channel_table(L, m->model, buf);
  return 1;
}

static int sim_stats(lua_State *L) {
  push_stats(L, check_sim(L, 1)->sim);
  return 1;
}

static int sim_tostring(lua_State *L) {
  LSim *sm = (LSim *)luaL_checkudata(L, 1, JYL_SIM);
  if (!sm->sim)
    lua_pushliteral(L, "joinery.Sim (closed)");
  else
    lua_pushfstring(L, "joinery.Sim (t = %f)", jy_sim_time(sm->sim));
  return 1;
}

/* ---- registration ---------------------------------------------------------------------- */

static const luaL_Reg sim_meta[] = {
  {"__gc", sim_gc}, {"__close", sim_gc}, {"__tostring", sim_tostring}, {NULL, NULL}};
static const luaL_Reg sim_methods[] = {{"advance", sim_advance},
                                       {"time", sim_time},
                                       {"state", sim_state},
                                       {"set_state", sim_set_state},
                                       {"channels", sim_channels},
                                       {"stats", sim_stats},
                                       {"set_input", sim_set_input},
                                       {"input", sim_input},
                                       {"close", sim_gc},
                                       {NULL, NULL}};

static const luaL_Reg rows_meta[] = {{"__gc", rows_gc}, {NULL, NULL}};

void jyl_open_simulation(lua_State *L) {
  jyl_new_class(L, JYL_SIM, sim_meta, sim_methods);
  jyl_new_class(L, JYL_ROWS, rows_meta, NULL);
}

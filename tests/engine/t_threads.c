/* The thread contract (joinery.h): one compiled model of built-in parts, shared read-only by
 * several simulations each in its own thread, gives every one of them exactly what the same
 * simulation gives run alone. Each model runs once serially per configuration, then
 * NTHREADS simulations of it start together (a barrier) in NTHREADS threads; their output
 * rows and final states must equal the serial ones bit for bit: a simulation owns all its
 * mutable state, so nothing another thread does may change a single rounding. Built by
 * tests/run.sh under ThreadSanitizer too, which reports any data race the comparison could
 * miss. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

enum { NTHREADS = 4, NCONFIGS = 4 };

/* One thread's run (or the serial reference): its settings in, its rows and state out. */
typedef struct run {
  const jyModel *model;
  jySimDef def;
  pthread_barrier_t *start; /* NULL for the serial runs */
  double *rows;             /* capacity rows x nchannels */
  int nrows, capacity, nchannels;
  double *q, *v; /* final state, n each */
  jyStatus status;
} run;

static int store_row(void *ud, const double *row, int nchannels) {
  run *r = ud;
  if (r->nrows >= r->capacity) return 1; /* more rows than t_end / dt_out allows: fail */
  memcpy(r->rows + (size_t)r->nrows * (size_t)nchannels, row, sizeof(double) * (size_t)nchannels);
  r->nrows++;
  return 0;
}

static void *simulate(void *arg) {
  run *r = arg;
  if (r->start) pthread_barrier_wait(r->start);
  jySim *sim = jy_sim_create(r->model, &r->def, &r->status);
  if (sim && r->status == JY_OK) r->status = jy_sim_run(sim, store_row, r);
  if (sim && r->status == JY_OK) {
    size_t n = (size_t)jy_model_num_coords(r->model);
    memcpy(r->q, jy_sim_q(sim), sizeof(double) * n);
    memcpy(r->v, jy_sim_v(sim), sizeof(double) * n);
  }
  if (!sim) r->status = JY_ERR_NOMEM;
  jy_sim_destroy(sim);
  return NULL;
}

static int run_init(run *r, const jyModel *model, const jySimDef *def) {
  size_t n = (size_t)jy_model_num_coords(model);
  *r = (run){.model = model, .def = *def, .nchannels = jy_model_num_channels(model)};
  r->capacity = (int)((def->t_end - def->t_start) / def->dt_out + 0.5) + 1;
  r->rows = calloc((size_t)r->capacity * (size_t)r->nchannels, sizeof(double));
  r->q = calloc(n + 1, sizeof(double));
  r->v = calloc(n + 1, sizeof(double));
  return r->rows && r->q && r->v;
}

static void run_free(run *r) {
  free(r->rows);
  free(r->q);
  free(r->v);
}

/* Bitwise equality of everything a run produced (memcmp: -0 differs from 0, and NaN from
 * NaN only when its bits differ, as they would under a race). */
static int same_run(const run *a, const run *b, int n) {
  return a->status == JY_OK && b->status == JY_OK && a->nrows == b->nrows &&
    !memcmp(a->rows, b->rows, sizeof(double) * (size_t)a->nrows * (size_t)a->nchannels) &&
    !memcmp(a->q, b->q, sizeof(double) * (size_t)n) &&
    !memcmp(a->v, b->v, sizeof(double) * (size_t)n);
}

/* Every method and both drift controls: four simulations that share the model but step
 * differently, so the threads are in different parts of the engine at once. */
static jySimDef config(int k) {
  jySimDef def = jy_default_sim_def();
  def.t_end = 3.0;
  def.dt_out = 0.01;
  def.rtol = 1e-9;
  def.atol = 1e-11;
  static const jyMethod methods[NCONFIGS] = {JY_METHOD_BDF, JY_METHOD_ADAMS, JY_METHOD_ERK,
                                             JY_METHOD_BDF};
  def.method = methods[k];
  if (k == 3) def.drift = JY_DRIFT_BAUMGARTE;
  return def;
}

/* Runs every configuration serially, then NTHREADS at once (thread i takes configuration
 * i % NCONFIGS), and checks each threaded run against its serial one. */
static void check_threads(const jyModel *model, const char *what) {
  int n = jy_model_num_coords(model);
  run serial[NCONFIGS], threaded[NTHREADS];
  int ready = 1, serial_ok = 1;
  for (int k = 0; k < NCONFIGS; k++) {
    jySimDef def = config(k);
    ready &= run_init(&serial[k], model, &def);
  }
  for (int i = 0; i < NTHREADS; i++) {
    jySimDef def = config(i % NCONFIGS);
    ready &= run_init(&threaded[i], model, &def);
  }
  if (ready)
    for (int k = 0; k < NCONFIGS; k++) {
      simulate(&serial[k]);
      serial_ok &= serial[k].status == JY_OK && serial[k].nrows == serial[k].capacity;
    }
  ok(ready && serial_ok, "%s: %d serial runs (BDF, Adams, ERK, BDF with Baumgarte) complete", what,
     NCONFIGS);

  pthread_barrier_t start;
  pthread_t ids[NTHREADS];
  int started = 0;
  if (ready && !pthread_barrier_init(&start, NULL, NTHREADS)) {
    for (int i = 0; i < NTHREADS; i++) {
      threaded[i].start = &start;
      if (pthread_create(&ids[i], NULL, simulate, &threaded[i])) break;
      started++;
    }
    /* A thread that could not start would leave the others at the barrier forever. */
    if (started < NTHREADS) {
      diag("only %d threads started", started);
      exit(1);
    }
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&start);
  }
  int same = started == NTHREADS;
  for (int i = 0; i < started; i++) {
    int equal = same_run(&threaded[i], &serial[i % NCONFIGS], n);
    if (!equal) diag("thread %d differs from its serial run (status %d)", i, threaded[i].status);
    same &= equal;
  }
  ok(same, "%s: %d simulations in %d threads equal their serial runs bitwise (%d rows each)", what,
     NTHREADS, NTHREADS, serial[0].nrows);
  for (int k = 0; k < NCONFIGS; k++) run_free(&serial[k]);
  for (int i = 0; i < NTHREADS; i++) run_free(&threaded[i]);
}

/* A chain of `links` point masses on rods hanging from a ground in 2-D, started off the
 * vertical: a double pendulum at links = 2. Diagonal mass, so sparse_min_coords decides
 * between the dense and the sparse (CHOLMOD) solve. */
static jyModel *rod_chain(jyEnv *env, int links, int sparse_min_coords) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId ground = jy_system_add_part(sys, "ground", "g", (jyParamSetting[]){{"dim", 2}}, 1);
  jyTerminalId prev = jy_system_terminal(sys, ground, "pos");
  char name[32];
  for (int i = 1; i <= links; i++) {
    snprintf(name, sizeof name, "m%d", i);
    jyPartId mass =
      jy_system_add_part(sys, "mass", name, (jyParamSetting[]){{"dim", 2}, {"m", 1 + 0.1 * i}}, 2);
    jy_system_set_coord(sys, mass, "x", 0.3 * i);
    jy_system_set_coord(sys, mass, "y", -0.4 * i);
    snprintf(name, sizeof name, "r%d", i);
    jyPartId rod =
      jy_system_add_part(sys, "rod", name, (jyParamSetting[]){{"dim", 2}, {"L", 0.5}}, 2);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "a"), prev, NULL);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "b"), jy_system_terminal(sys, mass, "pos"),
                   NULL);
    prev = jy_system_terminal(sys, mass, "pos");
  }
  jySolverDef def = jy_default_solver_def();
  def.sparse_min_coords = sparse_min_coords;
  jyModel *model = NULL;
  if (jy_model_compile(sys, &def, &model) != JY_OK) diag("compile: %s", jy_system_error(sys));
  jy_system_destroy(sys);
  return model;
}

int main(void) {
  plan(6);
  jyEnv *env = jy_env_create(NULL);
  ok(env && jy_components_register(env) == JY_OK, "environment with the built-in parts");
  jyModel *pendulum = rod_chain(env, 2, 0), *chain = rod_chain(env, 8, 1);
  ok(pendulum && chain,
     "a double pendulum (dense solve) and an 8-link chain (sparse solve) compile");
  if (pendulum) check_threads(pendulum, "double pendulum, dense");
  if (chain) check_threads(chain, "8-link chain, sparse");
  jy_model_destroy(pendulum);
  jy_model_destroy(chain);
  jy_env_destroy(env);
  return done();
}

/* The right-hand side never allocates: every malloc of the process is counted (the C
 * library's malloc is wrapped here) while the acceleration is evaluated and while CVODE
 * integrates, after a warm-up. The environment's allocator is counted too, and a failing
 * allocator shows that running out of memory is an error, not a crash. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "joinery/joinery.h"
#include "tap.h"

#include "count_malloc.h"
#include "fail_in_child.h"

typedef struct counting {
  long allocations, frees, live;
  long fail_after; /* < 0: never fail */
  int fail_once;   /* 1: only allocation number fail_after fails, the later ones succeed */
  long attempts;
} counting;

static void *count_alloc(void *ud, size_t size) {
  counting *c = ud;
  long k = c->attempts++;
  if (c->fail_after >= 0 && (c->fail_once ? k == c->fail_after : k >= c->fail_after)) return NULL;
  c->allocations++;
  c->live++;
  return RAW_MALLOC(size);
}
static void *count_realloc(void *ud, void *p, size_t size) {
  counting *c = ud;
  c->allocations++;
  return RAW_REALLOC(p, size);
}
static void count_free(void *ud, void *p) {
  counting *c = ud;
  c->frees++;
  c->live--;
  free(p);
}

/* A model built step by step through the public API, each step skipped once one has
 * failed: under a failing allocator any call may run out of memory. */
typedef struct builder {
  jySystem *sys;
  int ok;
} builder;

static jyPartId add(builder *b, const char *type, const char *name, const jyParamSetting *params,
                    int nparams) {
  jyPartId id = {-1};
  if (b->ok) id = jy_system_add_part(b->sys, type, name, params, nparams);
  b->ok = b->ok && id.index >= 0;
  return id;
}

/* Holds coordinate `coord` at q and starts it at velocity v (0: not set). */
static void set(builder *b, jyPartId part, const char *coord, double q, double v) {
  b->ok = b->ok && jy_system_set_coord(b->sys, part, coord, q) == JY_OK &&
    (v == 0 || jy_system_set_velocity(b->sys, part, coord, v) == JY_OK);
}

static void glue(builder *b, jyPartId pa, const char *ta, jyPartId pb, const char *tb) {
  if (!b->ok) return;
  jyTerminalId a = jy_system_terminal(b->sys, pa, ta), c = jy_system_terminal(b->sys, pb, tb);
  b->ok = a.part >= 0 && c.part >= 0 && jy_system_glue(b->sys, a, c, NULL) == JY_OK;
}

/* body:point(name, {rx, ry}) of the examples: a marker2d "<body>_<name>" glued to the frame. */
static jyPartId point2d(builder *b, jyPartId body, const char *body_name, const char *name,
                        double rx, double ry) {
  char full[64];
  snprintf(full, sizeof full, "%s_%s", body_name, name);
  jyPartId m = add(b, "marker2d", full, (jyParamSetting[]){{"rx", rx}, {"ry", ry}}, 2);
  glue(b, m, "body", body, "frame");
  return m;
}

/* examples/pendulum.lua: the Cartesian pendulum, a mass on a rod (glues eliminated). */
static void pendulum(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  jyPartId g = add(b, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId bob = add(b, "mass", "bob", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jyPartId rod = add(b, "rod", "rod", (jyParamSetting[]){{"dim", 2}, {"L", 1}}, 2);
  set(b, bob, "x", 1, 0);
  set(b, bob, "y", 0, 0);
  glue(b, rod, "a", g, "pos");
  glue(b, rod, "b", bob, "pos");
}

/* examples/double_pendulum.lua: singular M, glue rows, gravity; p1.theta = 2 is held. */
static void double_pendulum_parts(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  jyPartId g = add(b, "ground", "ground", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId p1 = add(b, "pendulum", "p1", (jyParamSetting[]){{"m", 1}, {"l", 1}}, 2);
  jyPartId p2 = add(b, "pendulum", "p2", (jyParamSetting[]){{"m", 0.5}, {"l", 0.7}}, 2);
  set(b, p1, "theta", 2.0, 0);
  set(b, p2, "theta", -1.0, 0);
  glue(b, p1, "pivot", g, "pos");
  glue(b, p2, "pivot", p1, "bob");
}

/* examples/spring_chain.lua: two spring_mass parts, each M singular on purpose. */
static void spring_chain(builder *b) {
  jyPartId wall = add(b, "ground", "wall", (jyParamSetting[]){{"dim", 1}}, 1);
  jyPartId left =
    add(b, "spring_mass", "left", (jyParamSetting[]){{"m", 1}, {"k", 100}, {"X", 1}}, 3);
  jyPartId right =
    add(b, "spring_mass", "right", (jyParamSetting[]){{"m", 2}, {"k", 50}, {"X", 1}}, 3);
  set(b, left, "x", 0.1, 0);
  set(b, right, "x", 0, 0);
  glue(b, left, "base", wall, "pos");
  glue(b, right, "base", left, "tip");
}

/* A uniform bar of 1 m and 1 kg (examples/four_bar.lua). */
static jyPartId bar(builder *b, const char *name, const double q[3], const double v[3]) {
  jyPartId p = add(b, "body2d", name, (jyParamSetting[]){{"m", 1}, {"J", 1.0 / 12}}, 2);
  static const char *const coord[3] = {"x", "y", "theta"};
  for (int i = 0; i < 3; i++) set(b, p, coord[i], q[i], v[i]);
  return p;
}

/* examples/four_bar.lua: three body2d bars pinned through marker2d points. */
static void four_bar(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  const double up = 1.5707963267948966;
  jyPartId crank = bar(b, "crank", (double[3]){0, 0.5, up}, (double[3]){0.5, 0, -1});
  jyPartId rocker = bar(b, "rocker", (double[3]){1, 0.5, up}, (double[3]){0.5, 0, -1});
  jyPartId coupler = bar(b, "coupler", (double[3]){0.5, 1, 0}, (double[3]){1, 0, 0});
  jyPartId ground = add(b, "ground", "ground", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId pivot_b = add(b, "ground", "pivot_b", (jyParamSetting[]){{"dim", 2}, {"x", 1}}, 2);
  glue(b, point2d(b, crank, "crank", "foot", -0.5, 0), "pos", ground, "pos");
  glue(b, point2d(b, rocker, "rocker", "foot", -0.5, 0), "pos", pivot_b, "pos");
  glue(b, point2d(b, coupler, "coupler", "left", -0.5, 0), "pos",
       point2d(b, crank, "crank", "tip", 0.5, 0), "pos");
  glue(b, point2d(b, coupler, "coupler", "right", 0.5, 0), "pos",
       point2d(b, rocker, "rocker", "tip", 0.5, 0), "pos");
}

/* examples/slider_crank.lua with its Lua motor replaced by a constant torque2d: body2d
 * crank, rod and piston, a ground2d, marker2d pins and a slider2d. */
static void slider_crank(builder *b) {
  const double r = 0.1, l = 0.3, xp = sqrt(l * l - r * r);
  jyPartId base = add(b, "ground2d", "base", NULL, 0);
  jyPartId crank =
    add(b, "body2d", "crank", (jyParamSetting[]){{"m", 0.5}, {"J", 0.25 * r * r}}, 2);
  jyPartId rod =
    add(b, "body2d", "rod", (jyParamSetting[]){{"m", 0.2}, {"J", 0.2 * l * l / 12}}, 2);
  jyPartId piston = add(b, "body2d", "piston", (jyParamSetting[]){{"m", 0.3}, {"J", 1e-4}}, 2);
  set(b, crank, "theta", 1.5707963267948966, 0);
  set(b, rod, "x", xp / 2, 0);
  set(b, rod, "y", r / 2, 0);
  set(b, rod, "theta", atan2(-r, xp), 0);
  set(b, piston, "x", xp, 0);
  glue(b, crank, "pos", base, "pos");
  glue(b, point2d(b, crank, "crank", "pin", r, 0), "pos",
       point2d(b, rod, "rod", "big_end", -l / 2, 0), "pos");
  glue(b, point2d(b, rod, "rod", "small_end", l / 2, 0), "pos", piston, "pos");
  jyPartId cylinder = add(b, "slider2d", "cylinder", NULL, 0);
  glue(b, cylinder, "a", base, "frame");
  glue(b, cylinder, "b", piston, "frame");
  jyPartId motor = add(b, "torque2d", "motor", (jyParamSetting[]){{"tau", 0.5}}, 1);
  glue(b, motor, "frame", crank, "frame");
}

/* examples/free_body.lua: a torque-free body3d spinning about its intermediate axis. */
static void free_body(builder *b) {
  jyPartId p =
    add(b, "body3d", "b", (jyParamSetting[]){{"m", 2}, {"Ixx", 1}, {"Iyy", 2}, {"Izz", 2.5}}, 4);
  static const char *const coord[7] = {"x", "y", "z", "q0", "q1", "q2", "q3"};
  const double q[7] = {0, 0, 0, 1, 0, 0, 0}, v[7] = {0.1, 0, 0.05, 0, 0.025, 1, 0.025};
  for (int i = 0; i < 7; i++) set(b, p, coord[i], q[i], v[i]);
}

/* examples/heavy_top.lua: a body3d whose marker3d tip is held at the origin by a ball
 * joint, tilted by pi/6 about x and spinning at 50 rad/s about its symmetry axis k. */
static void heavy_top(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, 0, -9.81});
  const double l = 0.1, th = 0.5235987755982988, w3 = 50;
  const double c = cos(th / 2), s = sin(th / 2), k[3] = {0, -sin(th), cos(th)};
  /* q' = 1/2 E(q)^T w for q = (c, s, 0, 0) and w = w3 k; the tip fixed: x' = w x x. */
  const double w[3] = {0, w3 * k[1], w3 * k[2]};
  const double qd[4] = {-0.5 * s * w[0], 0.5 * c * w[0], 0.5 * (c * w[1] - s * w[2]),
                        0.5 * (s * w[1] + c * w[2])};
  const double x[3] = {0, l * k[1], l * k[2]};
  const double v[3] = {w[1] * x[2] - w[2] * x[1], w[2] * x[0] - w[0] * x[2],
                       w[0] * x[1] - w[1] * x[0]};
  jyPartId ground = add(b, "ground", "pivot", (jyParamSetting[]){{"dim", 3}}, 1);
  jyPartId top =
    add(b, "body3d", "top",
        (jyParamSetting[]){{"m", 1}, {"Ixx", 0.006}, {"Iyy", 0.006}, {"Izz", 0.01}}, 4);
  static const char *const coord[7] = {"x", "y", "z", "q0", "q1", "q2", "q3"};
  const double q0[7] = {x[0], x[1], x[2], c, s, 0, 0};
  const double v0[7] = {v[0], v[1], v[2], qd[0], qd[1], qd[2], qd[3]};
  for (int i = 0; i < 7; i++) set(b, top, coord[i], q0[i], v0[i]);
  jyPartId tip = add(b, "marker3d", "top_tip", (jyParamSetting[]){{"rz", -l}}, 1);
  glue(b, tip, "body", top, "frame");
  glue(b, tip, "pos", ground, "pos");
}

/* examples/bouncing_ball.lua without its event: a mass over a floor (a part with modes). */
static void bouncing_ball(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  jyPartId ball = add(b, "mass", "ball", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jyPartId floor =
    add(b, "floor", "floor",
        (jyParamSetting[]){{"dim", 2}, {"nx", 0}, {"ny", 1}, {"d", 0}, {"e", 0.8}}, 5);
  set(b, ball, "x", 0, 0);
  set(b, ball, "y", 1, 0);
  glue(b, floor, "pos", ball, "pos");
}

/* examples/stick_slip.lua: a block on a guide with stick–slip friction, on a spring. */
static void stick_slip(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  jyPartId wall = add(b, "ground", "wall", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId block = add(b, "mass", "block", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jyPartId table = add(
    b, "guide", "table",
    (jyParamSetting[]){{"dim", 2}, {"nx", 0}, {"ny", 1}, {"d", 0}, {"mu", 0.3}, {"mu_s", 0.3}}, 6);
  jyPartId spring =
    add(b, "spring", "spring", (jyParamSetting[]){{"dim", 2}, {"k", 100}, {"L", 0}}, 3);
  set(b, block, "x", 0.5, 0);
  set(b, block, "y", 0, 0);
  glue(b, table, "pos", block, "pos");
  glue(b, spring, "a", wall, "pos");
  glue(b, spring, "b", block, "pos");
}

/* examples/rope_pendulum.lua: a bob on a rope (taut and slack modes), taut at the start. */
static void rope_pendulum(builder *b) {
  jy_system_set_gravity(b->sys, (double[3]){0, -9.81, 0});
  jyPartId pivot = add(b, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId bob = add(b, "mass", "bob", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jyPartId rope = add(b, "rope", "rope", (jyParamSetting[]){{"dim", 2}, {"L", 1}, {"e", 0}}, 3);
  set(b, bob, "x", 0, 4.95227220857);
  set(b, bob, "y", -1, 0);
  glue(b, rope, "a", pivot, "pos");
  glue(b, rope, "b", bob, "pos");
}

typedef struct model_case {
  const char *name;
  void (*build)(builder *b);
} model_case;

static const model_case models[] = {
  {"pendulum", pendulum},         {"double_pendulum", double_pendulum_parts},
  {"spring_chain", spring_chain}, {"four_bar", four_bar},
  {"slider_crank", slider_crank}, {"free_body", free_body},
  {"heavy_top", heavy_top},       {"bouncing_ball", bouncing_ball},
  {"stick_slip", stick_slip},     {"rope_pendulum", rope_pendulum},
};
enum { NUM_MODELS = (int)(sizeof models / sizeof models[0]) };

/* A system built by `build`; *built says whether every step succeeded. */
static jySystem *build_system(jyEnv *env, void (*build)(builder *), int *built) {
  builder b = {jy_system_create(env), 1};
  *built = 0;
  if (!b.sys) return NULL;
  build(&b);
  *built = b.ok;
  return b.sys;
}

static jySystem *double_pendulum_system(jyEnv *env, int *built) {
  return build_system(env, double_pendulum_parts, built);
}

/* Builds and compiles; *status is the compile's (JY_ERR_NOMEM too when building ran out). */
static jyModel *compile_status(jyEnv *env, void (*build)(builder *), char *why, size_t len,
                               jyStatus *status) {
  int built = 0;
  jySystem *sys = build_system(env, build, &built);
  jyModel *model = NULL;
  *status = JY_ERR_NOMEM;
  if (sys && built) *status = jy_model_compile(sys, NULL, &model);
  snprintf(why, len, "%s", sys ? jy_system_error(sys) : "no system");
  jy_system_destroy(sys);
  return model;
}

static jyModel *double_pendulum(jyEnv *env, char *why, size_t len) {
  jyStatus st;
  return compile_status(env, double_pendulum_parts, why, len, &st);
}

/* A model compiled under failing allocations is the model compiled without: every initial
 * coordinate bitwise (the held p1.theta exactly 2) and the same report (a lost line or a
 * half-done Newton step is not). */
static int same_model(const jyModel *got, const jyModel *want) {
  int n = jy_model_num_coords(want);
  return jy_model_num_coords(got) == n &&
    memcmp(jy_model_initial_q(got), jy_model_initial_q(want), sizeof(double) * (size_t)n) == 0 &&
    memcmp(jy_model_initial_v(got), jy_model_initial_v(want), sizeof(double) * (size_t)n) == 0 &&
    strcmp(jy_model_report(got), jy_model_report(want)) == 0;
}

/* Fails the Nth allocation of the process (what LAPACKE's own workspaces would come from:
 * compile gives LAPACK workspaces from the environment) while the double pendulum compiles:
 * JY_ERR_NOMEM naming the stage, or the same model; counts the other outcomes. */
static int compile_under_failing_malloc(jyEnv *env, const jyModel *want, long *points) {
  int wrong = 0;
  for (long fail = 0; fail < 1000; fail++) {
    int built = 0;
    jySystem *sys = double_pendulum_system(env, &built);
    jyModel *got = NULL;
    long before = process_allocations;
    process_fail_after = before + fail;
    jyStatus st = jy_model_compile(sys, NULL, &got);
    process_fail_after = -1;
    int fine = st == JY_OK ? same_model(got, want)
                           : st == JY_ERR_NOMEM && strstr(jy_system_error(sys), "out of memory") &&
        strstr(jy_system_error(sys), ", in ");
    if (!fine) {
      wrong++;
      diag("failing malloc %ld of compile: %s, %s", fail, jy_status_text(st),
           st == JY_OK ? "a different model" : jy_system_error(sys));
    }
    jy_model_destroy(got);
    jy_system_destroy(sys);
    *points = fail;
    if (process_allocations - before < fail) break; /* no allocation failed */
  }
  return wrong;
}

/* A model under one method, and where its simulation is after T_CHECK without failures. */
enum { MAX_STATE = 64 };
static const double T_CHECK = 0.05; /* s: long enough for the integrator's first steps */
typedef struct reference {
  const model_case *mc;
  jySimDef def;
  jyModel *model;
  int n;
  double q[MAX_STATE], v[MAX_STATE];
} reference;

static const char *method_name(const jySimDef *d) {
  if (d->method == JY_METHOD_BDF) return d->newton == JY_NEWTON_KRYLOV ? "bdf-krylov" : "bdf";
  return d->method == JY_METHOD_ADAMS ? "adams" : "erk";
}

/* Creates a simulation and advances it to T_CHECK; JY_OK only if it then holds the
 * reference's state bitwise (*same says whether it did). */
static jyStatus run_check(const jyModel *model, const reference *ref, int *same) {
  jyStatus st = JY_ERR_NOMEM;
  jySim *sim = jy_sim_create(model, &ref->def, &st);
  if (sim && st == JY_OK) st = jy_sim_advance(sim, T_CHECK);
  if (st != JY_OK && st != JY_ERR_NOMEM) diag("%s", sim ? jy_sim_error(sim) : "no simulation");
  *same = st == JY_OK && memcmp(jy_sim_q(sim), ref->q, sizeof(double) * (size_t)ref->n) == 0 &&
    memcmp(jy_sim_v(sim), ref->v, sizeof(double) * (size_t)ref->n) == 0;
  jy_sim_destroy(sim);
  return st;
}

/* One environment whose allocation number `fail` fails (and the later ones too unless
 * once): registering, compiling, creating and advancing a simulation each return JY_OK or
 * JY_ERR_NOMEM, and what succeeds is the reference model and state bitwise. */
static int fail_one_point(long fail, int once, const reference *ref, counting *f) {
  *f = (counting){0, 0, 0, fail, once, 0};
  jyAllocator fa = {count_alloc, count_realloc, count_free, f};
  jyEnv *env = jy_env_create(&fa);
  int wrong = 0, same = 1;
  char why[1024] = "";
  jyStatus st = env ? jy_components_register(env) : JY_ERR_NOMEM;
  jyModel *model = NULL;
  if (st == JY_OK) model = compile_status(env, ref->mc->build, why, sizeof why, &st);
  if (st == JY_OK && !same_model(model, ref->model)) {
    wrong = 1;
    diag("%s, failing allocation %ld%s: compiled, but a different model (report '%s')",
         ref->mc->name, fail, once ? " alone" : "", jy_model_report(model));
  }
  if (st == JY_OK) st = run_check(model, ref, &same);
  if ((st != JY_OK && st != JY_ERR_NOMEM) || (st == JY_OK && !same)) {
    wrong = 1;
    diag("%s %s, failing allocation %ld%s: %s%s (%s)", ref->mc->name, method_name(&ref->def), fail,
         once ? " alone" : "", jy_status_text(st), same ? "" : ", a different state", why);
  }
  jy_model_destroy(model);
  jy_env_destroy(env);
  return wrong;
}

typedef struct failing_outcome {
  long points;
  int leaks, wrong;
} failing_outcome;

static void fail_every_allocation(int once, const reference *ref, failing_outcome *out) {
  for (long fail = 0;; fail++) {
    counting f;
    out->wrong += fail_one_point(fail, once, ref, &f);
    if (f.live != 0) {
      out->leaks++;
      diag("%s, failing allocation %ld%s leaves %ld blocks", ref->mc->name, fail,
           once ? " alone" : "", f.live);
    }
    if (f.attempts <= fail) break; /* allocation number `fail` never came: all points covered */
    out->points++;
  }
}

/* The child's run: the simulation with every malloc failing from `fail` on. */
static int child_point(long fail, void *ctx) {
  const reference *ref = ctx;
  long before = process_allocations;
  int same = 1;
  process_fail_after = before + fail;
  jyStatus st = run_check(ref->model, ref, &same);
  process_fail_after = -1;
  int fine = (st == JY_OK && same) || st == JY_ERR_NOMEM;
  if (!fine)
    diag("%s %s, failing malloc %ld on: %s%s", ref->mc->name, method_name(&ref->def), fail,
         jy_status_text(st), st == JY_OK ? ", a different state" : "");
  return process_allocations - before < fail ? POINT_NOT_REACHED : fine ? POINT_FINE : POINT_WRONG;
}

/* Fails every malloc of the process from the Nth on (SUNDIALS's own vectors and matrices
 * come from there) while a simulation is created and advanced: JY_OK with the reference's
 * state, JY_ERR_NOMEM, or a crash inside SUNDIALS (listed); anything else is wrong. */
static void sim_under_failing_malloc(const reference *ref, failing_outcome *out,
                                     crash_sites *sites) {
  for (long fail = 0;; fail++) {
    void *where[2];
    int got = fail_malloc_in_child(fail, child_point, (void *)ref, where);
    if (got == POINT_NOT_REACHED) break;
    out->points++;
    if (got == POINT_FINE || (got < 0 && sundials_crash_site(where, sites))) continue;
    out->wrong++;
    if (got < 0) {
      char site[96];
      code_site(where[0], site, sizeof site);
      diag("%s %s, failing malloc %ld on: a crash in %s", ref->mc->name, method_name(&ref->def),
           fail, site);
    }
  }
}

/* Out of memory at every point of building, compiling and running one example model under
 * each method (every allocation from the Nth on, and the Nth alone), then every malloc of
 * the process while its simulation runs. */
static void example_under_failing_allocators(jyEnv *ref_env, const model_case *mc,
                                             crash_sites *sites) {
  /* BDF twice: its dense Jacobian, and Newton–Krylov (forced; auto takes it for large
   * models only). */
  static const jyMethod methods[] = {JY_METHOD_ADAMS, JY_METHOD_BDF, JY_METHOD_BDF, JY_METHOD_ERK};
  failing_outcome env_out = {0}, proc_out = {0};
  char why[1024] = "";
  jyStatus st;
  reference ref = {.mc = mc, .def = jy_default_sim_def()};
  ref.def.t_end = 1;
  ref.model = compile_status(ref_env, mc->build, why, sizeof why, &st);
  ref.n = ref.model ? jy_model_num_coords(ref.model) : 0;
  int usable = st == JY_OK && ref.n <= MAX_STATE;
  for (int m = 0; usable && m < 4; m++) {
    ref.def.method = methods[m];
    ref.def.newton = m == 2 ? JY_NEWTON_KRYLOV : JY_NEWTON_AUTO;
    jySim *sim = jy_sim_create(ref.model, &ref.def, &st);
    if (st == JY_OK) st = jy_sim_advance(sim, T_CHECK);
    if (st == JY_OK) memcpy(ref.q, jy_sim_q(sim), sizeof(double) * (size_t)ref.n);
    if (st == JY_OK) memcpy(ref.v, jy_sim_v(sim), sizeof(double) * (size_t)ref.n);
    if (st != JY_OK) snprintf(why, sizeof why, "%s: %s", method_name(&ref.def), jy_sim_error(sim));
    jy_sim_destroy(sim);
    usable = st == JY_OK;
    for (int once = 0; usable && once < 2; once++) fail_every_allocation(once, &ref, &env_out);
    if (usable && WRAP_MALLOC) sim_under_failing_malloc(&ref, &proc_out, sites);
  }
  ok(
    usable && env_out.leaks == 0 && env_out.wrong == 0,
    "%s, adams/bdf/bdf-krylov/erk, failing every allocation from the Nth on and the Nth alone: nothing "
    "leaks, every status JY_OK (then the same model and state bitwise) or JY_ERR_NOMEM "
    "(%ld points, %d leaks, %d otherwise) %s",
    mc->name, env_out.points, env_out.leaks, env_out.wrong, usable ? "" : why);
  ok(!WRAP_MALLOC || (usable && proc_out.wrong == 0),
     "%s: failing every malloc of the process from the Nth on while it runs: the same state "
     "or JY_ERR_NOMEM (%ld points, %d otherwise)%s",
     mc->name, proc_out.points, proc_out.wrong,
     WRAP_MALLOC ? "" : " # SKIP malloc belongs to the sanitizer");
  jy_model_destroy(ref.model);
}

int main(void) {
  plan(11 + 2 * NUM_MODELS);
  counting c = {0, 0, 0, -1, 0, 0};
  jyAllocator alloc = {count_alloc, count_realloc, count_free, &c};
  jyEnv *env = jy_env_create(&alloc);
  jy_components_register(env);
  char why[1024] = "";
  jyModel *model = double_pendulum(env, why, sizeof why);
  ok(model != NULL, "double pendulum compiles with a counting allocator %s", why);
  if (!model) return done() || 1;
  const char *report = jy_model_report(model); /* its first line: TAP takes one per check */
  ok(report[0] != '\0', "the double pendulum's compile report: %.*s", (int)strcspn(report, "\n"),
     report);

  int n = jy_model_num_coords(model);
  double q[64], v[64], acc[64];
  memcpy(q, jy_model_initial_q(model), sizeof(double) * (size_t)n);
  memcpy(v, jy_model_initial_v(model), sizeof(double) * (size_t)n);
  jyEval *eval = jy_eval_create(model);
  jy_eval_acceleration(eval, q, v, 0, acc); /* warm-up: BLAS may set up buffers once */
  long env_before = c.allocations, proc_before = process_allocations;
  int failures = 0;
  for (int k = 0; k < 1000; k++) {
    v[2] = 0.001 * k; /* vary the state a little */
    failures += jy_eval_acceleration(eval, q, v, 0.001 * k, acc) != JY_OK;
  }
  ok(failures == 0 && c.allocations == env_before,
     "1000 acceleration evaluations take nothing from the environment's allocator");
  ok(!WRAP_MALLOC || process_allocations == proc_before, "... nor from malloc (%ld calls)%s",
     process_allocations - proc_before,
     WRAP_MALLOC ? "" : " # SKIP malloc belongs to the sanitizer");
  jy_eval_destroy(eval);

  if (WRAP_MALLOC) {
    long points = 0;
    int wrong = compile_under_failing_malloc(env, model, &points);
    ok(wrong == 0,
       "failing the Nth malloc of the process while compiling, for every N: out of memory "
       "or the same model (%ld points, %d otherwise)",
       points, wrong);
  } else {
    ok(1, "# SKIP malloc belongs to the sanitizer");
  }

  /* The Cartesian pendulum: the rod's glues are eliminated, so its evaluation goes through
   * the mapped path (source terminals evaluated every time). */
  {
    jySystem *sys = jy_system_create(env);
    jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
    jyPartId g = jy_system_add_part(sys, "ground", "g", (jyParamSetting[]){{"dim", 2}}, 1);
    jyPartId bob = jy_system_add_part(sys, "mass", "bob", (jyParamSetting[]){{"dim", 2}}, 1);
    jyPartId rod = jy_system_add_part(sys, "rod", "rod", (jyParamSetting[]){{"dim", 2}}, 1);
    jy_system_set_coord(sys, bob, "x", 1.0);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "a"), jy_system_terminal(sys, g, "pos"), NULL);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "b"), jy_system_terminal(sys, bob, "pos"),
                   NULL);
    jyModel *pm = NULL;
    jy_model_compile(sys, NULL, &pm);
    jy_system_destroy(sys);
    jyEval *pe = jy_eval_create(pm);
    double pq[2] = {1, 0}, pv[2] = {0, 0}, pa[2];
    jy_eval_acceleration(pe, pq, pv, 0, pa);
    env_before = c.allocations;
    proc_before = process_allocations;
    failures = 0;
    for (int k = 0; k < 1000; k++) {
      pv[1] = 0.001 * k;
      failures += jy_eval_acceleration(pe, pq, pv, 0, pa) != JY_OK;
    }
    ok(pm && jy_model_num_coords(pm) == 2 && failures == 0 && c.allocations == env_before &&
         (!WRAP_MALLOC || process_allocations == proc_before),
       "eliminated glues (pendulum, 2 coordinates): 1000 evaluations allocate nothing");
    jy_eval_destroy(pe);
    jy_model_destroy(pm);
  }

  /* A chain of 40 masses on rods: 80 coordinates, a diagonal mass matrix, so the sparse
   * (CHOLMOD) solve runs; after a warm-up it must not allocate either. */
  {
    jySystem *sys = jy_system_create(env);
    jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
    jyTerminalId prev = jy_system_terminal(
      sys, jy_system_add_part(sys, "ground", "g", (jyParamSetting[]){{"dim", 2}}, 1), "pos");
    for (int i = 1; i <= 40; i++) {
      char mname[16], rname[16];
      snprintf(mname, sizeof mname, "m%d", i);
      snprintf(rname, sizeof rname, "r%d", i);
      jyPartId mp = jy_system_add_part(sys, "mass", mname, (jyParamSetting[]){{"dim", 2}}, 1);
      jyPartId rp =
        jy_system_add_part(sys, "rod", rname, (jyParamSetting[]){{"dim", 2}, {"L", 0.1}}, 2);
      jy_system_set_coord(sys, mp, "x", 0.1 * i);
      jy_system_glue(sys, jy_system_terminal(sys, rp, "a"), prev, NULL);
      jy_system_glue(sys, jy_system_terminal(sys, rp, "b"), jy_system_terminal(sys, mp, "pos"),
                     NULL);
      prev = jy_system_terminal(sys, mp, "pos");
    }
    jyModel *cm = NULL;
    jy_model_compile(sys, NULL, &cm);
    jy_system_destroy(sys);
    jyEval *ce = jy_eval_create(cm);
    double cq[80], cv[80], ca[80];
    memcpy(cq, jy_model_initial_q(cm), sizeof cq);
    memcpy(cv, jy_model_initial_v(cm), sizeof cv);
    jy_eval_acceleration(ce, cq, cv, 0, ca);
    env_before = c.allocations;
    proc_before = process_allocations;
    failures = 0;
    for (int k = 0; k < 1000; k++) {
      cv[1] = 1e-3 * k;
      failures += jy_eval_acceleration(ce, cq, cv, 0, ca) != JY_OK;
    }
    ok(cm && jy_model_num_coords(cm) == 80 && failures == 0 && c.allocations == env_before &&
         (!WRAP_MALLOC || process_allocations == proc_before),
       "sparse path (80 coordinates): 1000 evaluations allocate nothing (%ld malloc calls)",
       process_allocations - proc_before);
    jy_eval_destroy(ce);
    jy_model_destroy(cm);
  }

  jySimDef def = jy_default_sim_def();
  def.t_end = 2;
  /* Adams, BDF with its dense Jacobian, BDF with Newton–Krylov (forced: the auto choice
   * takes it only for large models). */
  static const char *const stepping[] = {"Adams", "BDF", "BDF Newton-Krylov"};
  for (int k = 0; k < 3; k++) {
    def.method = k ? JY_METHOD_BDF : JY_METHOD_ADAMS;
    def.newton = k == 2 ? JY_NEWTON_KRYLOV : JY_NEWTON_AUTO;
    jySim *sim = jy_sim_create(model, &def, NULL);
    jy_sim_advance(sim, 0.5); /* warm-up: the integrator's own first-step setup */
    env_before = c.allocations;
    proc_before = process_allocations;
    jySimStats before = jy_sim_stats(sim);
    jyStatus st = jy_sim_advance(sim, 2.0);
    jySimStats stats = jy_sim_stats(sim);
    long jacobians = stats.jac_evals - before.jac_evals,
         krylov = stats.krylov_iters - before.krylov_iters,
         mallocs = process_allocations - proc_before;
    /* BDF's dense Jacobian is joinery's own (CVODE 6's difference quotients clone an empty
     * N_Vector per Jacobian), so nothing at all is allocated; GMRES works in the vectors
     * SPGMR allocated at setup. */
    ok(st == JY_OK && c.allocations == env_before && (!WRAP_MALLOC || mallocs == 0) &&
         (k != 1 || jacobians > 0) && (k != 2 || (krylov > 0 && jacobians == 0)),
       "%s: integrating 0.5 s -> 2 s (%ld steps) allocates nothing (%ld malloc calls, "
       "%ld Jacobians, %ld Krylov iterations)",
       stepping[k], stats.steps, mallocs, jacobians, krylov);
    jy_sim_destroy(sim);
  }
  jy_model_destroy(model);
  jy_env_destroy(env);
  ok(c.live == 0, "everything taken from the allocator was given back (%ld live)", c.live);

  jyEnv *ref_env = jy_env_create(NULL);
  jy_components_register(ref_env);
  crash_sites sites = {0};
  for (int k = 0; k < NUM_MODELS; k++)
    example_under_failing_allocators(ref_env, &models[k], &sites);
  /* Listed in docs/numerics.md ("Out of memory"): SUNDIALS 6.4 uses some of its own
   * allocations unchecked, where joinery cannot intervene. */
  for (int k = 0; k < sites.n; k++) diag("SUNDIALS crashes in %s", sites.site[k]);
  jy_env_destroy(ref_env);
  return done();
}

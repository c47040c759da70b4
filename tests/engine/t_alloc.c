/* The right-hand side never allocates: every malloc of the process is counted (the C
 * library's malloc is wrapped here) while the acceleration is evaluated and while CVODE
 * integrates, after a warm-up. The environment's allocator is counted too, and a failing
 * allocator shows that running out of memory is an error, not a crash. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

#include "count_malloc.h"

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

/* The double pendulum of the examples: singular M, glue rows, gravity; p1.theta = 2 is held
 * by the script. */
static jySystem *double_pendulum_system(jyEnv *env, int *built) {
  jySystem *sys = jy_system_create(env);
  *built = 0;
  if (!sys) return NULL;
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId g = jy_system_add_part(sys, "ground", "ground", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId p1 =
    jy_system_add_part(sys, "pendulum", "p1", (jyParamSetting[]){{"m", 1}, {"l", 1}}, 2);
  jyPartId p2 =
    jy_system_add_part(sys, "pendulum", "p2", (jyParamSetting[]){{"m", 0.5}, {"l", 0.7}}, 2);
  *built = g.index >= 0 && p1.index >= 0 && p2.index >= 0 &&
    jy_system_set_coord(sys, p1, "theta", 2.0) == JY_OK &&
    jy_system_set_coord(sys, p2, "theta", -1.0) == JY_OK &&
    jy_system_glue(sys, jy_system_terminal(sys, p1, "pivot"), jy_system_terminal(sys, g, "pos"),
                   "hinge") == JY_OK &&
    jy_system_glue(sys, jy_system_terminal(sys, p2, "pivot"), jy_system_terminal(sys, p1, "bob"),
                   "elbow") == JY_OK;
  return sys;
}

/* Builds and compiles; *status is the compile's (JY_ERR_NOMEM too when building ran out). */
static jyModel *double_pendulum_status(jyEnv *env, char *why, size_t len, jyStatus *status) {
  int built = 0;
  jySystem *sys = double_pendulum_system(env, &built);
  jyModel *model = NULL;
  *status = JY_ERR_NOMEM;
  if (sys && built) *status = jy_model_compile(sys, NULL, &model);
  snprintf(why, len, "%s", sys ? jy_system_error(sys) : "no system");
  jy_system_destroy(sys);
  return model;
}

static jyModel *double_pendulum(jyEnv *env, char *why, size_t len) {
  jyStatus st;
  return double_pendulum_status(env, why, len, &st);
}

/* A model compiled under failing allocations is the model compiled without: the held
 * p1.theta exactly 2 and the same report (a lost line or a half-done Newton step is not). */
static int same_model(const jyModel *got, const jyModel *want) {
  int k = jy_model_find_coord(want, "p1.theta");
  return jy_model_find_coord(got, "p1.theta") == k && k >= 0 &&
    jy_model_initial_q(got)[k] == jy_model_initial_q(want)[k] &&
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

typedef struct failing_outcome {
  long points;
  int leaks, wrong;
} failing_outcome;

/* One environment whose allocation number `fail` fails (and the later ones too unless
 * once): registering, compiling, creating and advancing a simulation each return JY_OK or
 * JY_ERR_NOMEM, a compiled model is the reference model, and nothing leaks. */
static int fail_one_point(long fail, int once, const jyModel *reference, const jySimDef *def,
                          counting *f) {
  *f = (counting){0, 0, 0, fail, once, 0};
  jyAllocator fa = {count_alloc, count_realloc, count_free, f};
  jyEnv *env = jy_env_create(&fa);
  int wrong = 0;
  char why[1024] = "";
  jyStatus st = env ? jy_components_register(env) : JY_ERR_NOMEM;
  jyModel *model = NULL;
  if (st == JY_OK) model = double_pendulum_status(env, why, sizeof why, &st);
  if (st == JY_OK && !same_model(model, reference)) {
    wrong = 1;
    diag("failing allocation %ld%s: compiled, but p1.theta = %.17g and the report is '%s'", fail,
         once ? " alone" : "", jy_model_initial_q(model)[jy_model_find_coord(model, "p1.theta")],
         jy_model_report(model));
  }
  if (st == JY_OK) {
    jySim *sim = jy_sim_create(model, def, &st);
    if (st == JY_OK) st = jy_sim_advance(sim, 0.1);
    jy_sim_destroy(sim);
  }
  if (st != JY_OK && st != JY_ERR_NOMEM) {
    wrong = 1;
    diag("failing allocation %ld%s: %s (%s)", fail, once ? " alone" : "", jy_status_text(st), why);
  }
  jy_model_destroy(model);
  jy_env_destroy(env);
  return wrong;
}

static failing_outcome fail_every_allocation(int once, const jyModel *reference,
                                             const jySimDef *def) {
  failing_outcome out = {0, 0, 0};
  for (long fail = 0; fail < 1000; fail++) {
    counting f;
    out.wrong += fail_one_point(fail, once, reference, def, &f);
    if (f.live != 0) {
      out.leaks++;
      diag("failing allocation %ld%s leaves %ld blocks", fail, once ? " alone" : "", f.live);
    }
    out.points = f.attempts;
    if (f.attempts <= fail) break; /* allocation number `fail` never came: all points covered */
  }
  return out;
}

int main(void) {
  plan(14);
  counting c = {0, 0, 0, -1, 0, 0};
  jyAllocator alloc = {count_alloc, count_realloc, count_free, &c};
  jyEnv *env = jy_env_create(&alloc);
  jy_components_register(env);
  char why[1024] = "";
  jyModel *model = double_pendulum(env, why, sizeof why);
  ok(model != NULL, "double pendulum compiles with a counting allocator %s", why);
  if (!model) return done() || 1;
  ok(jy_model_report(model)[0] != '\0', "the double pendulum's compile report: %s",
     jy_model_report(model));

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
  for (int method = 0; method < 2; method++) {
    def.method = method ? JY_METHOD_BDF : JY_METHOD_ADAMS;
    jySim *sim = jy_sim_create(model, &def, NULL);
    jy_sim_advance(sim, 0.5); /* warm-up: the integrator's own first-step setup */
    env_before = c.allocations;
    proc_before = process_allocations;
    long jacobians_before = jy_sim_stats(sim).jac_evals;
    jyStatus st = jy_sim_advance(sim, 2.0);
    jySimStats stats = jy_sim_stats(sim);
    long jacobians = stats.jac_evals - jacobians_before,
         mallocs = process_allocations - proc_before;
    /* BDF's dense Jacobian is joinery's own (CVODE 6's difference quotients clone an empty
     * N_Vector per Jacobian), so nothing at all is allocated. */
    ok(st == JY_OK && c.allocations == env_before && (!WRAP_MALLOC || mallocs == 0) &&
         (method == 0 || jacobians > 0),
       "%s: integrating 0.5 s -> 2 s (%ld steps) allocates nothing (%ld malloc calls, "
       "%ld Jacobians)",
       method ? "BDF" : "Adams", stats.steps, mallocs, jacobians);
    jy_sim_destroy(sim);
  }
  jy_model_destroy(model);
  jy_env_destroy(env);
  ok(c.live == 0, "everything taken from the allocator was given back (%ld live)", c.live);

  /* Out of memory at every possible point of building, compiling and running (every
   * allocation from the Nth on, and the Nth alone): an error each time, never a crash, a
   * leak or a model that silently differs. */
  jyEnv *ref_env = jy_env_create(NULL);
  jy_components_register(ref_env);
  jyModel *reference = double_pendulum(ref_env, why, sizeof why);
  for (int once = 0; once < 2; once++) {
    failing_outcome out = fail_every_allocation(once, reference, &def);
    const char *which = once ? "the Nth allocation alone" : "every allocation from the Nth on";
    ok(out.leaks == 0, "failing %s, for every N: nothing leaks (%ld points)", which, out.points);
    ok(out.wrong == 0,
       "... every status is JY_OK (then the same model, whole report included) or "
       "JY_ERR_NOMEM");
  }
  jy_model_destroy(reference);
  jy_env_destroy(ref_env);
  return done();
}

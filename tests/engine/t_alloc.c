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
} counting;

static void *count_alloc(void *ud, size_t size) {
  counting *c = ud;
  if (c->fail_after >= 0 && c->allocations >= c->fail_after) return NULL;
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

/* The double pendulum of the examples: singular M, glue rows, gravity. */
static jyModel *double_pendulum(jyEnv *env, char *why, size_t len) {
  jySystem *sys = jy_system_create(env);
  if (!sys) return NULL;
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId g = jy_system_add_part(sys, "ground", "ground", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId p1 =
    jy_system_add_part(sys, "pendulum", "p1", (jyParamSetting[]){{"m", 1}, {"l", 1}}, 2);
  jyPartId p2 =
    jy_system_add_part(sys, "pendulum", "p2", (jyParamSetting[]){{"m", 0.5}, {"l", 0.7}}, 2);
  jy_system_set_coord(sys, p1, "theta", 2.0);
  jy_system_set_coord(sys, p2, "theta", -1.0);
  jy_system_glue(sys, jy_system_terminal(sys, p1, "pivot"), jy_system_terminal(sys, g, "pos"),
                 "hinge");
  jy_system_glue(sys, jy_system_terminal(sys, p2, "pivot"), jy_system_terminal(sys, p1, "bob"),
                 "elbow");
  jyModel *model = NULL;
  if (jy_model_compile(sys, NULL, &model) != JY_OK) snprintf(why, len, "%s", jy_system_error(sys));
  jy_system_destroy(sys);
  return model;
}

int main(void) {
  plan(9);
  counting c = {0, 0, 0, -1};
  jyAllocator alloc = {count_alloc, count_realloc, count_free, &c};
  jyEnv *env = jy_env_create(&alloc);
  jy_components_register(env);
  char why[1024] = "";
  jyModel *model = double_pendulum(env, why, sizeof why);
  ok(model != NULL, "double pendulum compiles with a counting allocator %s", why);
  if (!model) return done() || 1;

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

  /* Out of memory at every possible point of building, compiling and running: an error
   * each time, never a crash or a leak. */
  int crashes = 0;
  long total = 0;
  for (long fail = 0; fail < 400; fail += 1) {
    counting f = {0, 0, 0, fail};
    jyAllocator fa = {count_alloc, count_realloc, count_free, &f};
    jyEnv *e2 = jy_env_create(&fa);
    if (e2 && jy_components_register(e2) == JY_OK) {
      jyModel *m2 = double_pendulum(e2, why, sizeof why);
      if (m2) {
        jySim *s2 = jy_sim_create(m2, &def, NULL);
        if (s2) jy_sim_advance(s2, 0.1);
        jy_sim_destroy(s2);
      }
      jy_model_destroy(m2);
    }
    jy_env_destroy(e2);
    if (f.live != 0) {
      crashes++;
      diag("failing allocation %ld leaves %ld blocks", fail, f.live);
    }
    total = f.allocations;
    if (f.allocations < fail) break; /* no allocation failed: all points covered */
  }
  ok(crashes == 0, "failing the Nth allocation for every N leaks nothing (%ld points)", total);
  return done();
}

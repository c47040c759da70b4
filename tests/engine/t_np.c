/* The Natsiavas–Paraskevopoulos formulation (engine/src/dyn_np.c) against Udwadia–Kalaba:
 *  1. the reduction the right-hand side uses equals the direct solve of the seed's (70)+(76)
 *     as one (n + m) x (n + m) linear system, at states off the constraint manifold;
 *  2. the Cartesian pendulum, the double pendulum and the spring chain, with and without
 *     glue elimination: trajectories of both formulations agree over 3 s, and the
 *     multiplier force sum_R a_R h_R rebuilt from the integrated lambda, lambda' and
 *     lambda'' equals the UK ideal constraint force;
 *  3. the decay of a violation along a rod that sees a spring and a damper follows
 *     m phi'' + c phi' + k phi = 0 with the computed coefficients;
 *  4. massless rows (m_RR = 0) take the auxiliary mass and stay finite; a bad formulation
 *     is an error; the N–P right-hand side never allocates. */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_np.h"
#include "internal.h"
#include "sim.h"
#include "tap.h"

#include "count_malloc.h"

/* The coefficients of the N–P work's last evaluation (m each; valid until the next). */
typedef struct NpRows {
  const double *mass, *damping, *stiffness, *force; /* m_RR, c_RR, k_RR, f_R */
  const double *mass_rate;                          /* m_RR' along the motion */
  const double *mu;                                 /* UK multiplier of the modified problem */
  const double *dir;                                /* c_R, column R of an n x m matrix */
  const unsigned char *kind;                        /* jyNpRowKind */
} NpRows;

static NpRows np_rows(const jyNpWork *w) {
  return (NpRows){w->mass,      w->damping, w->stiffness, w->force,
                  w->mass_rate, w->mu,      w->dir,       w->kind};
}

/* An N–P simulation's multiplier coordinates at its current time and lambda'' from the
 * right-hand side there (m each; NULL to skip). */
static jyStatus np_multipliers(jySim *sim, double *lam, double *lamdot, double *lamdd) {
  if (!sim || !sim->np || !sim->ready) return JY_ERR_INVALID;
  int m = sim->model->m, n = sim->model->n;
  if (lam) memcpy(lam, sim->lam, sizeof(double) * (size_t)m);
  if (lamdot) memcpy(lamdot, sim->lamdot, sizeof(double) * (size_t)m);
  if (!lamdd) return JY_OK;
  N_Vector dy = N_VClone(sim->y);
  if (!dy) return JY_ERR_NOMEM;
  int flag = jy_sim_rhs(sim->t, sim->y, dy, sim);
  if (flag == 0) memcpy(lamdd, N_VGetArrayPointer(dy) + sim->nq + n, sizeof(double) * (size_t)m);
  N_VDestroy(dy);
  return flag == 0 ? JY_OK : JY_ERR_INTEGRATOR;
}

/* The multiplier forces h_R = m_RR lambda'' + (m_RR' + c_RR) lambda' + k_RR lambda - f_R
 * (m values) with the coefficients at (q, v, t) and lambda'' given (from the integrator):
 * the ideal constraint force is sum_R a_R h_R. */
static jyStatus np_multiplier_forces(jyNpWork *w, const double *q, const double *lam,
                                     const double *v, const double *lamdot, const double *lamdd,
                                     double t, double *h) {
  jyStatus st = jy_np_coefficients(w, q, v, t);
  if (st != JY_OK) return st;
  for (int r = 0; r < w->m; r++)
    h[r] = w->kind[r] == JY_NP_ROW_EMPTY ? 0.0
                                         : w->mass[r] * lamdd[r] +
        (w->mass_rate[r] + w->damping[r]) * lamdot[r] + w->stiffness[r] * lam[r] - w->force[r];
  return JY_OK;
}

typedef enum { PENDULUM, DOUBLE_PENDULUM, SPRING_CHAIN, ROD_SPRING_DAMPER, NMODELS } model_id;
static const char *const model_names[] = {"pendulum", "double pendulum", "spring chain",
                                          "rod with spring and damper"};

static jyTerminalId term(jySystem *sys, jyPartId p, const char *name) {
  return jy_system_terminal(sys, p, name);
}

/* The examples' models, built through the C API (the scripts in examples/ hold the same). */
static jyModel *build(jyEnv *env, model_id id, int eliminate) {
  jySystem *sys = jy_system_create(env);
  if (id != SPRING_CHAIN) jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  if (id == PENDULUM || id == ROD_SPRING_DAMPER) {
    jyPartId pivot = jy_system_add_part(sys, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
    jyPartId bob =
      jy_system_add_part(sys, "mass", "bob", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
    jyPartId rod =
      jy_system_add_part(sys, "rod", "rod", (jyParamSetting[]){{"dim", 2}, {"L", 1}}, 2);
    jy_system_glue(sys, term(sys, rod, "a"), term(sys, pivot, "pos"), "rod.a");
    jy_system_glue(sys, term(sys, rod, "b"), term(sys, bob, "pos"), "rod.b");
    if (id == PENDULUM) {
      jy_system_set_coord(sys, bob, "x", 1);
      jy_system_set_coord(sys, bob, "y", 0);
    } else {
      /* hanging at rest below the pivot; spring at its rest length along the rod */
      jy_system_set_coord(sys, bob, "x", 0);
      jy_system_set_coord(sys, bob, "y", -1);
      jyPartId spring = jy_system_add_part(sys, "spring", "spring",
                                           (jyParamSetting[]){{"dim", 2}, {"k", 100}, {"L", 1}}, 3);
      jyPartId damper =
        jy_system_add_part(sys, "damper", "damper", (jyParamSetting[]){{"dim", 2}, {"c", 2}}, 2);
      jy_system_glue(sys, term(sys, spring, "a"), term(sys, pivot, "pos"), "spring.a");
      jy_system_glue(sys, term(sys, spring, "b"), term(sys, bob, "pos"), "spring.b");
      jy_system_glue(sys, term(sys, damper, "a"), term(sys, pivot, "pos"), "damper.a");
      jy_system_glue(sys, term(sys, damper, "b"), term(sys, bob, "pos"), "damper.b");
    }
  } else if (id == DOUBLE_PENDULUM) {
    jyPartId ground =
      jy_system_add_part(sys, "ground", "ground", (jyParamSetting[]){{"dim", 2}}, 1);
    jyPartId p1 =
      jy_system_add_part(sys, "pendulum", "p1", (jyParamSetting[]){{"m", 1}, {"l", 1}}, 2);
    jyPartId p2 =
      jy_system_add_part(sys, "pendulum", "p2", (jyParamSetting[]){{"m", 0.5}, {"l", 0.7}}, 2);
    jy_system_set_coord(sys, p1, "theta", 2.0);
    jy_system_set_coord(sys, p2, "theta", -1.0);
    jy_system_glue(sys, term(sys, p1, "pivot"), term(sys, ground, "pos"), "p1.pivot");
    jy_system_glue(sys, term(sys, p2, "pivot"), term(sys, p1, "bob"), "p2.pivot");
  } else {
    jyPartId wall = jy_system_add_part(sys, "ground", "wall", (jyParamSetting[]){{"dim", 1}}, 1);
    jyPartId left = jy_system_add_part(sys, "spring_mass", "left",
                                       (jyParamSetting[]){{"m", 1}, {"k", 100}, {"X", 1}}, 3);
    jyPartId right = jy_system_add_part(sys, "spring_mass", "right",
                                        (jyParamSetting[]){{"m", 2}, {"k", 50}, {"X", 1}}, 3);
    jy_system_set_coord(sys, left, "x", 0.1);
    jy_system_set_coord(sys, right, "x", 0.0);
    jy_system_glue(sys, term(sys, left, "base"), term(sys, wall, "pos"), "left.base");
    jy_system_glue(sys, term(sys, right, "base"), term(sys, left, "tip"), "right.base");
  }
  jySolverDef solver = jy_default_solver_def();
  solver.eliminate_glue = eliminate & 1;
  /* N-P itself here: a tree model (the eliminated double pendulum) runs N-P as
   * Udwadia-Kalaba without rows (check_tree_runs_uk) */
  solver.tree_recursion = (eliminate & 2) != 0;
  jyModel *model = NULL;
  if (jy_model_compile(sys, &solver, &model) != JY_OK) {
    diag("compile of %s failed: %s", model_names[id], jy_system_error(sys));
    model = NULL;
  }
  jy_system_destroy(sys);
  return model;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void) { /* xorshift64*, in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* 1. The (n + m) system of (70) and (76)/(78), solved directly by LU, against the
 * reduction, at 5 random states 1e-3 off the manifold. Needs every row massive. */
static void check_direct_solve(const jyModel *model, const char *what) {
  int n = model->n, m = model->m, N = n + m;
  jyNpWork *w = jy_np_create(model);
  jyEval *e = jy_eval_create(model);
  double *q = calloc((size_t)n, sizeof *q), *v = calloc((size_t)n, sizeof *v);
  double *lam = calloc((size_t)m, sizeof *lam), *lamdot = calloc((size_t)m, sizeof *lamdot);
  double *qdd = calloc((size_t)n, sizeof *qdd), *lamdd = calloc((size_t)m, sizeof *lamdd);
  double *K = calloc((size_t)N * N, sizeof *K), *rhs = calloc((size_t)N, sizeof *rhs);
  lapack_int *piv = calloc((size_t)N, sizeof *piv);
  double worst = 0;
  int massive = 1;
  for (int trial = 0; trial < 5; trial++) {
    for (int j = 0; j < n; j++) {
      q[j] = model->q0[j] + 1e-3 * uniform();
      v[j] = model->v0[j] + 0.5 * uniform();
    }
    for (int r = 0; r < m; r++) {
      lam[r] = uniform();
      lamdot[r] = uniform();
    }
    if (jy_np_accelerations(w, q, lam, v, lamdot, 0.3, qdd, lamdd) != JY_OK) {
      diag("N-P accelerations failed: %s", jy_np_error(w));
      worst = INFINITY;
      break;
    }
    NpRows rows = np_rows(w);
    jy_assemble(e, q, v, 0.3,
                JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                  JY_ASM_RESIDUALS);
    memset(K, 0, sizeof(double) * (size_t)N * N);
    /* [ M    -A^T D ] [q'' ]   [ f + A^T r                       ]
     * [ D A   0     ] [lam'']= [ D b - (m' + c) phi' - k phi     ]   (D = diag m_RR) */
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) K[i + (size_t)j * N] = e->mass[i + (size_t)j * n];
      rhs[j] = e->force[j] + e->nonideal[j];
    }
    for (int r = 0; r < m; r++) {
      massive = massive && rows.kind[r] == JY_NP_ROW_MASSIVE;
      double d = rows.mass[r], damp = rows.mass_rate[r] + rows.damping[r];
      double rr = damp * lamdot[r] + rows.stiffness[r] * lam[r] - rows.force[r];
      for (int j = 0; j < n; j++) {
        double a = e->jac[r + (size_t)j * m];
        K[j + (size_t)(n + r) * N] = -a * d;
        K[(n + r) + (size_t)j * N] = d * a;
        rhs[j] += a * rr;
      }
      rhs[n + r] = d * e->rhs[r] -
        (model->row_kinds[r] == JY_ROW_POSITION
           ? damp * e->rate[r] + rows.stiffness[r] * e->residual[r]
           : damp * e->residual[r]);
    }
    if (LAPACKE_dgesv(LAPACK_COL_MAJOR, N, 1, K, N, piv, rhs, N) != 0) {
      diag("the (n + m) system is singular");
      worst = INFINITY;
      break;
    }
    double scale = 0;
    for (int j = 0; j < N; j++) scale = fmax(scale, fabs(rhs[j]));
    for (int j = 0; j < n; j++) worst = fmax(worst, fabs(qdd[j] - rhs[j]) / scale);
    for (int r = 0; r < m; r++) worst = fmax(worst, fabs(lamdd[r] - rhs[n + r]) / scale);
  }
  ok(massive, "%s: every row has an equivalent mass of its own", what);
  /* Both are direct solves of well-conditioned systems (condition ~1e3 here): 1e-9 leaves
   * room for the different factorizations. */
  is_near(worst, 0, 1e-9, "reduction = direct solve of (70)+(76), relative");
  free(q), free(v), free(lam), free(lamdot), free(qdd), free(lamdd), free(K), free(rhs);
  free(piv);
  jy_eval_destroy(e);
  jy_np_destroy(w);
}

static jySim *make_sim(const jyModel *model, jyFormulation f, double t_end) {
  jySimDef d = jy_default_sim_def();
  d.formulation = f;
  d.rtol = 1e-11;
  d.atol = 1e-12;
  d.t_end = t_end;
  jyStatus st;
  jySim *sim = jy_sim_create(model, &d, &st);
  if (st != JY_OK) diag("sim: %s", jy_sim_error(sim));
  return sim;
}

/* 2. Both formulations over 3 s. */
static void check_agreement(const jyModel *model, const char *what) {
  int n = model->n, m = model->m;
  jySim *uk = make_sim(model, JY_FORMULATION_UK, 3), *np = make_sim(model, JY_FORMULATION_NP, 3);
  jyEval *e = jy_eval_create(model);
  jyNpWork *w = jy_np_create(model);
  double *row = calloc((size_t)model->nchannels, sizeof *row);
  double *lam = calloc((size_t)m + 1, sizeof *lam), *lamdot = calloc((size_t)m + 1, sizeof *lamdot);
  double *lamdd = calloc((size_t)m + 1, sizeof *lamdd), *h = calloc((size_t)m + 1, sizeof *h);
  double *fuk = calloc((size_t)n, sizeof *fuk), *fnp = calloc((size_t)n, sizeof *fnp);
  double dq = 0, dv = 0, dforce = 0, force_scale = 0;
  int failed = 0;
  for (int k = 1; k <= 300 && !failed; k++) {
    double t = 0.01 * k;
    if (jy_sim_advance(uk, t) != JY_OK || jy_sim_advance(np, t) != JY_OK) {
      diag("advance failed: %s / %s", jy_sim_error(uk), jy_sim_error(np));
      failed = 1;
      break;
    }
    const double *qu = jy_sim_q(uk), *vu = jy_sim_v(uk), *qn = jy_sim_q(np), *vn = jy_sim_v(np);
    for (int j = 0; j < n; j++) {
      dq = fmax(dq, fabs(qu[j] - qn[j]));
      dv = fmax(dv, fabs(vu[j] - vn[j]));
    }
    if (k % 10) continue;
    /* UK: A^T mu at the UK state; N–P: A^T h from the integrated multipliers. */
    if (jy_eval_channels(e, qu, vu, t, row) != JY_OK) failed = 1;
    if (!failed && jy_eval_dense_ready(e) != 0) failed = 1; /* A where the solve was sparse */
    for (int j = 0; j < n; j++) {
      fuk[j] = 0;
      for (int r = 0; r < m; r++) fuk[j] += e->jac[r + (size_t)j * m] * e->multipliers[r];
    }
    if (np_multipliers(np, lam, lamdot, lamdd) != JY_OK ||
        np_multiplier_forces(w, qn, lam, vn, lamdot, lamdd, t, h) != JY_OK ||
        jy_assemble(e, qn, vn, t, JY_ASM_CONSTRAINTS) != JY_OK)
      failed = 1;
    double diff = 0, size = 0;
    for (int j = 0; j < n; j++) {
      fnp[j] = 0;
      for (int r = 0; r < m; r++) fnp[j] += e->jac[r + (size_t)j * m] * h[r];
      diff = hypot(diff, fnp[j] - fuk[j]);
      size = hypot(size, fuk[j]);
    }
    dforce = fmax(dforce, diff);
    force_scale = fmax(force_scale, size);
  }
  ok(!failed, "%s: both formulations run 3 s", what);
  /* rtol 1e-11: each run is within ~1e-9 of the exact motion; 1e-7 is the bound
   * and leaves room for the double pendulum's divergence of neighbouring trajectories. */
  is_near(dq, 0, 1e-7, "  coordinates agree (max abs over 300 outputs)");
  is_near(dv, 0, 1e-7, "  velocities agree");
  /* Relative to the largest constraint force of the run (the pendulum's starts at 0). */
  is_near(force_scale > 0 ? dforce / force_scale : dforce, 0, 1e-6,
          "  sum a_R h_R (integrated lambda) = UK ideal constraint force, relative");
  diag("  max |dq| %.2e, |dv| %.2e, force %.2e of %.3g N", dq, dv, dforce, force_scale);
  jySimStats su = jy_sim_stats(uk), sn = jy_sim_stats(np);
  diag("  steps UK %ld, N-P %ld; rhs UK %ld, N-P %ld", su.steps, sn.steps, su.rhs_evals,
       sn.rhs_evals);
  free(row), free(lam), free(lamdot), free(lamdd), free(h), free(fuk), free(fnp);
  jy_np_destroy(w);
  jy_eval_destroy(e);
  jy_sim_destroy(uk);
  jy_sim_destroy(np);
}

/* 3. phi(0) = 1e-3 along the rod, at rest: with glue elimination the one row is the rod's,
 * c_R is the rod's direction, and m phi'' + c phi' + k phi = 0 has m = 1 kg, c = 2 N s/m,
 * k = 100 N/m: phi = phi0 e^(-s t) (cos w t + s/w sin w t), s = c / 2m, w^2 = k/m - s^2. */
static void check_decay(jyEnv *env) {
  jyModel *model = build(env, ROD_SPRING_DAMPER, 1);
  if (!model) {
    ok(0, "rod, spring and damper compile");
    return;
  }
  ok(model->n == 2 && model->m == 1, "rod, spring, damper: 2 coordinates, 1 row (%d, %d)", model->n,
     model->m);
  int iy = jy_model_find_coord(model, "bob.y");
  double phi0 = 1e-3;
  double q[2] = {0, 0}, v[2] = {0, 0};
  memcpy(q, model->q0, sizeof q);
  q[iy] -= phi0;
  jySim *sim = make_sim(model, JY_FORMULATION_NP, 4);
  ok(jy_sim_set_state(sim, 0, q, v) == JY_OK, "started 1e-3 off the rod");
  NpRows rows = np_rows(sim->np); /* the initial multipliers evaluated them */
  /* FD step 6e-6 on a linear spring and damper: exact up to rounding, ~1e-10 */
  is_near(rows.mass[0], 1, 1e-12, "m_RR = bob mass");
  is_near(rows.stiffness[0], 100, 1e-6, "k_RR = spring stiffness (finite differences)");
  is_near(rows.damping[0], 2, 1e-6, "c_RR = damper coefficient (finite differences)");
  double mass = rows.mass[0], c = rows.damping[0], k = rows.stiffness[0];
  double s = c / (2 * mass), w = sqrt(k / mass - s * s), period = 2 * 3.14159265358979323846 / w;
  double worst = 0;
  for (int i = 1; i <= 400; i++) {
    double t = 0.01 * i;
    if (jy_sim_advance(sim, t) != JY_OK) break;
    double phi = -jy_sim_q(sim)[iy] - 1;
    double want = phi0 * exp(-s * t) * (cos(w * t) + s / w * sin(w * t));
    worst = fmax(worst, fabs(phi - want));
  }
  is_near(worst / phi0, 0, 1e-6, "phi(t) follows the predicted decay (relative to phi0)");
  /* The rate from whole periods of the predicted frequency: phi(N T) = phi0 e^(-s N T). */
  jySim *again = make_sim(model, JY_FORMULATION_NP, 4 * period + 1);
  jy_sim_set_state(again, 0, q, v);
  jy_sim_advance(again, 4 * period);
  double phi = -jy_sim_q(again)[iy] - 1;
  double rate = -log(phi / phi0) / (4 * period);
  is_near(rate / s, 1, 1e-3, "decay rate over 4 periods = c / 2m, relative");
  diag("  decay rate %.9g 1/s, predicted %.9g", rate, s);
  jy_sim_destroy(again);
  jy_sim_destroy(sim);
  jy_model_destroy(model);

  /* Without elimination the rod's row joins massless end coordinates: auxiliary mass, no
   * stiffness or damping of its own, so the violation stays (phi'' = 0). */
  model = build(env, ROD_SPRING_DAMPER, 0);
  if (!model) return;
  int n = model->n;
  double *qq = calloc((size_t)n, sizeof *qq), *vv = calloc((size_t)n, sizeof *vv);
  memcpy(qq, model->q0, sizeof(double) * (size_t)n);
  const char *ys[] = {"bob.y", "rod.by", "spring.by", "damper.by"};
  for (int i = 0; i < 4; i++) {
    int j = jy_model_find_coord(model, ys[i]);
    if (j >= 0) qq[j] -= phi0;
  }
  sim = make_sim(model, JY_FORMULATION_NP, 1);
  ok(jy_sim_set_state(sim, 0, qq, vv) == JY_OK && jy_sim_advance(sim, 1) == JY_OK,
     "without elimination the same start runs 1 s: %s", jy_sim_error(sim));
  rows = np_rows(sim->np);
  int rod_row = -1;
  for (int r = 0; r < model->m; r++)
    if (strcmp(model->row_names[r], "rod.length") == 0) rod_row = r;
  ok(rod_row >= 0 && rows.kind[rod_row] == JY_NP_ROW_AUX && rows.stiffness[rod_row] == 0 &&
       rows.damping[rod_row] == 0,
     "the rod's row is massless: auxiliary mass, k_RR = c_RR = 0");
  double len = hypot(jy_sim_q(sim)[jy_model_find_coord(model, "rod.bx")] -
                       jy_sim_q(sim)[jy_model_find_coord(model, "rod.ax")],
                     jy_sim_q(sim)[jy_model_find_coord(model, "rod.by")] -
                       jy_sim_q(sim)[jy_model_find_coord(model, "rod.ay")]);
  is_near(len - 1, phi0, 1e-9, "  ...and its violation neither grows nor decays");
  free(qq), free(vv);
  jy_sim_destroy(sim);
  jy_model_destroy(model);
}

/* 4. Massless rows stay finite; bad formulation; no allocation in the right-hand side. */
static void check_massless_and_errors(jyEnv *env) {
  jyModel *model = build(env, PENDULUM, 0);
  if (!model) return;
  jySim *sim = make_sim(model, JY_FORMULATION_NP, 1);
  NpRows rows = np_rows(sim->np);
  int aux = 0, finite = 1;
  for (int r = 0; r < model->m; r++) {
    aux += rows.kind[r] == JY_NP_ROW_AUX;
    finite = finite && isfinite(rows.mass[r]) && rows.mass[r] > 0 && isfinite(sim->lam[r]) &&
      isfinite(sim->lamdot[r]);
  }
  ok(aux > 0 && finite,
     "pendulum without elimination: %d massless rows take the auxiliary "
     "mass, all finite and positive",
     aux);
  /* BDF (the default) sets up its linear solver on its first step: 5 allocations, once. */
  jy_sim_advance(sim, 0.5);
  long before = process_allocations;
  ok(jy_sim_advance(sim, 1) == JY_OK, "runs 1 s");
  long during = process_allocations - before;
#if WRAP_MALLOC
  ok(during == 0, "no allocation while integrating with N-P (%ld)", during);
#else
  ok(1, "# SKIP allocation count under the sanitizer (%ld)", during);
#endif
  jy_sim_destroy(sim);

  jySimDef d = jy_default_sim_def();
  d.formulation = (jyFormulation)7;
  jyStatus st;
  sim = jy_sim_create(model, &d, &st);
  ok(st == JY_ERR_INVALID && strstr(jy_sim_error(sim), "natsiavas-paraskevopoulos"),
     "an unknown formulation is invalid and the message names the valid ones: %s",
     jy_sim_error(sim));
  jy_sim_destroy(sim);
  jy_model_destroy(model);
}

/* 4. A tree model (no rows: N-P's equation is M q'' = Q + C) runs N-P as the tree
 * recursion, the Udwadia-Kalaba path: the same motion to the last bit. */
static void check_tree_runs_uk(jyEnv *env) {
  jyModel *model = build(env, DOUBLE_PENDULUM, 1 | 2);
  jySim *uk = model ? make_sim(model, JY_FORMULATION_UK, 1) : NULL;
  jySim *np = model ? make_sim(model, JY_FORMULATION_NP, 1) : NULL;
  int ran = model && model->tree && uk && np && jy_sim_advance(uk, 1) == JY_OK &&
    jy_sim_advance(np, 1) == JY_OK;
  ok(ran, "double pendulum as a tree model: both formulations run 1 s");
  double diff = 0;
  for (int j = 0; ran && j < model->n; j++)
    diff = fmax(diff, fabs(jy_sim_q(uk)[j] - jy_sim_q(np)[j]));
  ok(ran && diff == 0, "... the same motion (max |dq| %g)", diff);
  jy_sim_destroy(uk);
  jy_sim_destroy(np);
  jy_model_destroy(model);
}

int main(void) {
  plan(2 * 2 + 3 * 2 * 4 + 10 + 4 + 2);
  jyEnv *env = jy_env_create(NULL);
  jy_components_register(env);
  for (int elim = 0; elim < 2; elim++) {
    jyModel *model = build(env, DOUBLE_PENDULUM, elim);
    char what[96];
    snprintf(what, sizeof what, "double pendulum, eliminate_glue = %d", elim);
    if (model) check_direct_solve(model, what);
    jy_model_destroy(model);
  }
  for (int id = PENDULUM; id <= SPRING_CHAIN; id++)
    for (int elim = 0; elim < 2; elim++) {
      jyModel *model = build(env, (model_id)id, elim);
      char what[96];
      snprintf(what, sizeof what, "%s, eliminate_glue = %d (%d coordinates, %d rows)",
               model_names[id], elim, model ? model->n : 0, model ? model->m : 0);
      if (model) check_agreement(model, what);
      jy_model_destroy(model);
    }
  check_decay(env);
  check_massless_and_errors(env);
  check_tree_runs_uk(env);
  jy_env_destroy(env);
  return done();
}

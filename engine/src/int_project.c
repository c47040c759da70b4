/* Projection onto the constraint manifold, for CVODE's projection interface (BDF).
 *
 * A correction dx that satisfies the linearized constraints J dx = -r with the least
 * kinetic-energy norm dx^T M dx is exactly what the acceleration solve computes for an
 * unforced system (Gauss's principle): the Udwadia–Kalaba solve with Q = 0, A = J and
 * b = -r. So the projection reuses the solver, including singular M (auxiliary-mass
 * form) and redundant rows (minimum-norm solve):
 *   positions: Gauss–Newton on the position rows, q <- q + dq, until the weighted RMS norm
 *              of dq is below eps;
 *   velocities: one linear step on all rows (position rows' rate A v + phi_t, velocity
 *              rows' psi; exact for rows linear in v, a Newton step otherwise). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

/* min_kinetic_step on the evaluator's store (a large model): the rows not selected are left
 * out as the dependent ones are (decoupled in the KKT matrix), not copied into a dense A. */
static jyStatus sparse_step(jyEval *e, const unsigned char *use_row, const double *target,
                            double *dx) {
  const jyModel *m = e->model;
  for (int i = 0; i < m->m; i++) {
    e->solve_dropped[i] = !use_row[i] || (e->ndependent > 0 && e->dependent[i]);
    e->proj_rhs[i] = use_row[i] ? target[i] : 0.0;
  }
  jyUkProblem p = {m->n, m->m, e->mass, e->proj_zero, NULL, e->jac, e->proj_rhs, e->solve_dropped};
  jyUkOptions opt = {m->solver.rank_rcond, m->solver.augment_scale, INFINITY /* any b: project */};
  jyUkResult res;
  jyUkOutcome out = jy_eval_solve(e, &p, &opt, dx, NULL, &res);
  return out == JY_UK_NOT_UNIQUE ? JY_ERR_NOT_UNIQUE : JY_OK;
}

/* dx = argmin dx^T M dx subject to A_rows dx = target (rows not selected are left free by
 * giving them a zero row). M and A are the eval's assembled ones; when every row is
 * selected (the usual case) A is used in place, not copied. */
static jyStatus min_kinetic_step(jyEval *e, const unsigned char *use_row, const double *target,
                                 double *dx) {
  const jyModel *m = e->model;
  int n = m->n, rows = m->m, every_row = 1;
  for (int i = 0; i < rows; i++) every_row &= use_row[i] != 0;
  if (e->store_solves && !every_row) return sparse_step(e, use_row, target, dx);
  const double *jac = e->jac, *rhs = target;
  if (!every_row) {
    for (int i = 0; i < rows; i++) {
      e->proj_rhs[i] = use_row[i] ? target[i] : 0.0;
      for (int j = 0; j < n; j++)
        e->proj_jac[i + (size_t)j * rows] = use_row[i] ? e->jac[i + (size_t)j * rows] : 0.0;
    }
    jac = e->proj_jac;
    rhs = e->proj_rhs;
  }
  jyUkProblem p = {n, rows, e->mass, e->proj_zero, NULL, jac, rhs, NULL};
  jyUkOptions opt = {m->solver.rank_rcond, m->solver.augment_scale, INFINITY /* any b: project */};
  jyUkResult res;
  /* jy_eval_sparse_or_dense leaves out the rows the dynamics leaves out (the evaluator's dependent
   * rows): the projection moves on the same manifold with the same well-conditioned rows. */
  jyUkOutcome out = jy_eval_sparse_or_dense(e, &p, &opt, dx, &res);
  return out == JY_UK_NOT_UNIQUE ? JY_ERR_NOT_UNIQUE : JY_OK;
}

static double wrms(const double *x, const double *w, int n) {
  double s = 0;
  for (int j = 0; j < n; j++) s += (x[j] * w[j]) * (x[j] * w[j]);
  return n > 0 ? sqrt(s / n) : 0.0;
}

static double weighted_max(const double *x, const double *w, int n) {
  double largest = 0;
  for (int j = 0; j < n; j++) largest = jy_larger(largest, fabs(x[j] * w[j]));
  return largest;
}

/* The velocity step, on what the last jy_assemble with JY_ASM_PROJECTION left (M, A and the
 * rows' rates at the state's q): v <- v + dv. */
static jyStatus project_velocity(jyEval *e, double *v) {
  const jyModel *m = e->model;
  int n = m->n, rows = m->m;
  if (rows == 0) return JY_OK;
  for (int i = 0; i < rows; i++) {
    e->proj_use[i] = m->row_kinds[i] != JY_ROW_ACCELERATION;
    e->proj_target[i] = -(m->row_kinds[i] == JY_ROW_POSITION ? e->rate[i] : e->residual[i]);
  }
  jyStatus st = min_kinetic_step(e, e->proj_use, e->proj_target, e->proj_dx);
  if (st != JY_OK) return st;
  for (int j = 0; j < n; j++) v[j] += e->proj_dx[j];
  return JY_OK;
}

jyStatus jy_project_state(jyEval *e, double t, double *q, double *v, const double *weights,
                          double eps, unsigned how, int *iterations) {
  const jyModel *m = e->model;
  int n = m->n, rows = m->m, any_position = 0;
  *iterations = 0;
  if (rows == 0) return JY_OK;
  for (int i = 0; i < rows; i++) {
    e->proj_use[i] = m->row_kinds[i] == JY_ROW_POSITION;
    any_position |= e->proj_use[i];
  }
  /* Converged also when the residuals themselves are below what the weights resolve: near
   * a singular configuration a rounding-level residual still yields corrections that
   * wander by ~eps/sigma without ever shrinking. */
  double w_max = 0;
  for (int j = 0; j < n; j++) w_max = jy_larger(w_max, weights[j]);
  int assembled_at_q = (how & JY_PROJ_ASSEMBLED) != 0; /* the last assembly was at this q */
  double best = INFINITY;                              /* the smallest residual so far */
  for (int it = 0; any_position && it < 10; it++) {
    if (!assembled_at_q) {
      jyStatus st = jy_assemble(e, q, v, t, JY_ASM_PROJECTION);
      if (st != JY_OK) return st;
      assembled_at_q = 1;
    }
    double worst = 0;
    for (int i = 0; i < rows; i++)
      if (e->proj_use[i]) worst = jy_larger(worst, fabs(e->residual[i]));
    double qscale = 1;
    for (int j = 0; j < n; j++) qscale = jy_larger(qscale, fabs(q[j]));
    if (it > 0 && (worst * w_max <= eps || worst <= 64 * DBL_EPSILON * qscale)) break;
    /* Asked (auto's step ends): a residual that no longer halves after two corrections
     * wanders at a singular configuration's floor and settles no better in ten. */
    if ((how & JY_PROJ_STALL_STOPS) && it >= 2 && !(worst <= 0.5 * best))
      return JY_ERR_INCONSISTENT;
    best = fmin(best, worst);
    for (int i = 0; i < rows; i++) e->proj_target[i] = -e->residual[i];
    jyStatus st = min_kinetic_step(e, e->proj_use, e->proj_target, e->proj_dx);
    if (st != JY_OK) return st;
    /* A first correction within eps in every coordinate: q is as converged as the corrected
     * one (the test every later iteration passes by, in the RMS norm), so it stays; the
     * velocity step then solves with the M and A in hand, and the right-hand side at the
     * projected state with their factor: one assembly and one factorization fewer a step. */
    if (it == 0 && (how & JY_PROJ_KEEP_CLOSE) && weighted_max(e->proj_dx, weights, n) <= eps) break;
    for (int j = 0; j < n; j++) q[j] += e->proj_dx[j];
    assembled_at_q = 0;
    *iterations = it + 1;
    if (wrms(e->proj_dx, weights, n) <= eps) break;
    if (it == 9) return JY_ERR_INCONSISTENT; /* not converging: CVODE retries smaller */
  }
  if (!assembled_at_q) {
    jyStatus st = jy_assemble(e, q, v, t, JY_ASM_PROJECTION);
    if (st != JY_OK) return st;
  }
  return project_velocity(e, v);
}

jyStatus jy_project_estimate(jyEval *e, double t, const double *q, const double *v,
                             const double *weights, double *q_work, double *dv) {
  const jyModel *m = e->model;
  int n = m->n, rows = m->m, any_position = 0;
  memset(dv, 0, sizeof(double) * (size_t)n);
  memcpy(q_work, q, sizeof(double) * (size_t)n);
  if (rows == 0) return JY_OK;
  for (int i = 0; i < rows; i++) {
    e->proj_use[i] = m->row_kinds[i] == JY_ROW_POSITION;
    e->proj_target[i] = -e->residual[i];
    any_position |= e->proj_use[i];
  }
  /* With position rows only, both corrections use every row (but the dependent ones) with
   * the same M and A: when the last right-hand side's factor is at hand, solved together. */
  int position_rows_only = any_position, have_dq = 0;
  for (int i = 0; i < rows; i++) position_rows_only &= e->proj_use[i];
  if (position_rows_only) {
    for (int i = 0; i < rows; i++) e->proj_rhs[i] = -e->rate[i];
    if (jy_eval_correction_pair(e, e->proj_target, e->proj_rhs, e->proj_dx, dv) == 0) {
      if (weighted_max(e->proj_dx, weights, n) <= 1) return JY_OK; /* the rates at q itself */
      memset(dv, 0, sizeof(double) * (size_t)n);                   /* at the corrected q: below */
      have_dq = 1;
    }
  }
  /* a step the store cannot solve is no estimate worth its dense solve: the caller projects */
  e->store_only = 1;
  jyStatus st = JY_OK;
  if (any_position) { /* one Gauss–Newton step, then the rows' rates at the corrected q */
    if (!have_dq) st = min_kinetic_step(e, e->proj_use, e->proj_target, e->proj_dx);
    /* within tolerance in every coordinate: the rates at q itself (as JY_PROJ_KEEP_CLOSE) */
    if (st == JY_OK && !(weighted_max(e->proj_dx, weights, n) <= 1)) {
      for (int j = 0; j < n; j++) q_work[j] += e->proj_dx[j];
      st = jy_assemble(e, q_work, v, t, JY_ASM_RESIDUALS);
    }
  }
  if (st == JY_OK) st = project_velocity(e, dv);
  e->store_only = 0;
  return st;
}

jyStatus jy_project_error(jyEval *e, double *err_q, double *err_v) {
  /* The error estimate loses its components across the manifold: err -= P err with the
   * same M-orthogonal projector, P x = argmin ... s.t. J dx = J x. A and M are those of the
   * last jy_project_state. */
  const jyModel *m = e->model;
  int n = m->n, rows = m->m;
  if (rows == 0) return JY_OK;
  double *parts[2] = {err_q, err_v};
  for (int k = 0; k < 2; k++) {
    jy_eval_constraint_times(e, parts[k], e->proj_target);
    for (int i = 0; i < rows; i++)
      e->proj_use[i] = (unsigned char)(k == 0 ? m->row_kinds[i] == JY_ROW_POSITION
                                              : m->row_kinds[i] != JY_ROW_ACCELERATION);
    jyStatus st = min_kinetic_step(e, e->proj_use, e->proj_target, e->proj_dx);
    if (st != JY_OK) return st;
    for (int j = 0; j < n; j++) parts[k][j] -= e->proj_dx[j];
  }
  return JY_OK;
}

/* The acceleration of one state: assembly, the Udwadia–Kalaba solve by the sparse route (in
 * the store) or the dense one, the dependent rows decided again when they stop following,
 * the fixed point of non-ideal laws, Baumgarte terms, and the impulse solve of an impact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

/* Appends s to buf (bounded). */
static void append(char *buf, size_t len, const char *s) {
  size_t used = strlen(buf);
  if (used + 1 < len) snprintf(buf + used, len - used, "%s", s);
}

/* The sparse solves of a problem made of the evaluator's own M and A (in the store): the
 * diagonal path when M is diagonal and positive, else the KKT one. JY_UK_NOT_UNIQUE: the
 * caller solves dense. */
static jyUkOutcome store_solve(jyEval *e, const jyUkProblem *p, const jyUkOptions *opt, double *acc,
                               double *mu, jyUkResult *result) {
  int n = e->model->n;
  if (e->sparse && e->mass_diagonal) {
    for (int j = 0; j < n; j++)
      e->mass_diag[j] = e->store_mass_diag[j] >= 0 ? e->store_mass.x[e->store_mass_diag[j]] : 0;
    if (jy_sparse_applies(e->mass_diag, n)) {
      e->factorizations++;
      if (jy_sparse_solve(e->sparse, e->mass_diag, e->store_jac.x, p, opt, acc, mu, result) ==
          JY_UK_OK)
        return JY_UK_OK;
    }
  }
  /* store_solves is set only with a KKT solver (sparse_solvers) */
  long factored = jy_kkt_factorizations(e->kkt);
  jyUkOutcome out = jy_kkt_solve(e->kkt, &e->store_mass, &e->store_jac, p, opt, acc, mu, result);
  e->factorizations += jy_kkt_factorizations(e->kkt) - factored;
  return out;
}

jyUkOutcome jy_eval_solve(jyEval *e, const jyUkProblem *problem_in, const jyUkOptions *opt,
                          double *acc, double *mu, jyUkResult *result) {
  jyUkProblem p = *problem_in; /* every solve leaves out the evaluator's dependent rows */
  if (!p.dropped) p.dropped = e->ndependent > 0 ? e->dependent : NULL;
  unsigned both = JY_ASM_MASS | JY_ASM_CONSTRAINTS;
  int own = p.mass == e->mass && p.jac == e->jac;
  e->dense_refused = 0;
  e->store_solved = 0;
  if (own && e->store_solves && (e->store_valid & both) == both) {
    jyUkOutcome out = store_solve(e, &p, opt, acc, mu, result);
    e->store_solved = out == JY_UK_OK;
    if (out == JY_UK_OK) return out;
    if (e->store_only) return result->outcome = JY_UK_NOT_UNIQUE;
    if (e->model->n > JY_DENSE_FALLBACK_MAX_COORDS) { /* O(n^3): minutes, gigabytes */
      e->dense_refused = 1; /* singular, or rows it could not meet: not checked densely */
      return out;
    }
    /* Rank lost, a free direction, or rows the sparse solve could not meet (near a singular
     * configuration): the rank-revealing solve decides. */
  }
  if (e->large || (!e->uk && jy_eval_dense_ready(e) != 0)) { /* no dense solve here */
    e->dense_refused = 1;
    return result->outcome = JY_UK_NOT_UNIQUE;
  }
  if (own) { /* the dense arrays may have been made just now */
    jy_eval_make_dense(e);
    p.mass = e->mass;
    p.jac = e->jac;
  }
  e->factorizations++;
  jyUkOutcome out = jy_uk_solve(e->uk, &p, opt, acc, result);
  if (mu && out != JY_UK_NOT_UNIQUE) jy_uk_multipliers(e->uk, &p, acc, mu, NULL);
  return out;
}

int jy_eval_correction_pair(jyEval *e, const double *target_a, const double *target_b, double *dx_a,
                            double *dx_b) {
  int n = e->model->n;
  unsigned both = JY_ASM_MASS | JY_ASM_CONSTRAINTS;
  if (!e->sparse || !e->store_solved || !e->mass_diagonal || (e->store_valid & both) != both)
    return -1;
  for (int j = 0; j < n; j++)
    e->mass_diag[j] = e->store_mass_diag[j] >= 0 ? e->store_mass.x[e->store_mass_diag[j]] : 0;
  if (!jy_sparse_applies(e->mass_diag, n)) return -1;
  return jy_sparse_correction_pair(e->sparse, e->mass_diag, e->store_jac.x,
                                   e->ndependent > 0 ? e->dependent : NULL, target_a, target_b,
                                   dx_a, dx_b);
}

jyUkOutcome jy_eval_sparse_or_dense(jyEval *e, const jyUkProblem *p, const jyUkOptions *opt,
                                    double *acc, jyUkResult *result) {
  jyUkProblem q = *p;
  q.dropped = NULL; /* the evaluator's dependent rows */
  return jy_eval_solve(e, &q, opt, acc, NULL, result);
}

void jy_eval_restore_dependent(jyEval *e) {
  const jyModel *m = e->model;
  int count = 0;
  for (int i = 0; i < m->m; i++) {
    e->dependent[i] =
      (m->dependent_rows && m->dependent_rows[i]) || (e->inactive && e->inactive[i]);
    count += e->dependent[i];
  }
  e->ndependent = count;
  jy_spatial_forget_rows(e->spatial);
}

int jy_eval_decide_dependent(jyEval *e) {
  const jyModel *m = e->model;
  if (jy_eval_dense_ready(e) != 0) return -1;
  jyUkProblem p = jy_eval_problem(e);
  int count = jy_uk_dependent_rows(e->uk, &p, m->solver.rank_rcond, 0, -1, e->dependent);
  e->ndependent = count > 0 ? count : 0;
  return count;
}

/* A dependent row that the solve left out no longer follows from the others (the rows kept
 * are losing rank where the whole set does not, or the state has left a configuration that
 * was singular): decide the dependent rows again at this state and solve again. Among rows
 * whose pivot is below dependent_rcond (drift makes a dependent row look independent by
 * about the distance from the manifold) at most as many as before are left out. */
static jyUkOutcome redecide_dependent_and_retry(jyEval *e, const jyUkOptions *opt, double *acc,
                                                double *mu, jyUkResult *res) {
  const jyModel *m = e->model;
  if (e->large) return res->outcome; /* O(n^3): kept as compiled (docs/numerics.md) */
  /* the rank-revealing decision is dense (a rank change: rare) */
  if (jy_eval_dense_ready(e) != 0) return res->outcome;
  jyUkProblem p = jy_eval_problem(e);
  int count = jy_uk_dependent_rows(e->uk, &p, m->solver.rank_rcond, m->solver.dependent_rcond,
                                   e->ndependent, e->dependent);
  if (count < 0) return res->outcome;
  for (int i = 0; e->inactive && i < m->m; i++) /* inactive rows stay out (zero rows) */
    if (e->inactive[i] && !e->dependent[i]) e->dependent[i] = 1, count++;
  e->ndependent = count;
  e->rank_changes++;
  p = jy_eval_problem(e);
  p.dropped = NULL; /* the new dependent rows */
  return jy_eval_solve(e, &p, opt, acc, mu, res);
}

/* The message of a solve whose acceleration is not unique: the massless coordinates no
 * constraint determines. Not the hot path: naming them may allocate. */
static jyStatus not_unique(jyEval *e, const jyUkProblem *p, double t) {
  const jyModel *m = e->model;
  if (e->dense_refused) {
    jy_set_error(e->error,
                 "acceleration not unique at t = %.9g: the sparse solve found its KKT matrix "
                 "singular (massless coordinates that no constraint determines, or constraint "
                 "rows that depend on the others and contradict them); with %d coordinates the "
                 "model is too large for the dense rank-revealing solve that would name them "
                 "(at most %d)",
                 t, m->n, JY_DENSE_FALLBACK_MAX_COORDS);
    return JY_ERR_NOT_UNIQUE;
  }
  if (jy_eval_dense_ready(e) != 0) {
    jy_set_error(e->error, "out of memory naming the free coordinates at t = %.9g", t);
    return JY_ERR_NOMEM;
  }
  jyUkProblem dense = *p; /* made before the dense arrays may have been */
  if (!dense.mass) dense.mass = e->mass;
  if (!dense.jac) dense.jac = e->jac;
  jy_uk_free_directions(e->uk, &dense, 1e-6, e->flags);
  jy_set_error(e->error,
               "acceleration not unique at t = %.9g: massless coordinates that no "
               "constraint determines: ",
               t);
  int listed = 0;
  for (int j = 0; j < m->n; j++)
    if (e->flags[j]) {
      if (listed++) append(e->error, JY_ERROR_LEN, ", ");
      append(e->error, JY_ERROR_LEN, m->coord_names[j]);
    }
  if (!listed) append(e->error, JY_ERROR_LEN, "(a combination of coordinates)");
  append(e->error, JY_ERROR_LEN, "; give them mass or glue them to something");
  return JY_ERR_NOT_UNIQUE;
}

/* The message of an inconsistent solve: the rows that cannot all hold. */
static jyStatus inconsistent(jyEval *e, const jyUkResult *res, double t) {
  const jyModel *m = e->model;
  if (e->dense_refused) /* the sparse solve alone: its accuracy is the suspect as much */
    jy_set_error(e->error,
                 "constraints not met at t = %.9g (relative residual %.3g, %d rows): the sparse "
                 "solve could not meet them to the tolerance, and with %d coordinates the model "
                 "is too large for the dense rank-revealing solve that would tell inconsistent "
                 "rows from an ill-conditioned sparse solve (at most %d; docs/numerics.md, "
                 "\"Which path\"); the rows missed most: ",
                 t, res->residual, m->m, m->n, JY_DENSE_FALLBACK_MAX_COORDS);
  else
    jy_set_error(e->error,
                 "inconsistent constraints at t = %.9g (relative residual %.3g, %d "
                 "rows): these rows cannot all hold: ",
                 t, res->residual, m->m);
  int listed = 0;
  for (int i = 0; i < m->m; i++)
    if (fabs(res->row_residual[i]) > m->solver.consistency_tol) {
      if (listed++) append(e->error, JY_ERROR_LEN, ", ");
      append(e->error, JY_ERROR_LEN, m->row_names[i]);
    }
  return JY_ERR_INCONSISTENT;
}

/* How many of the dependent rows are inactive in the current modes (every inactive row is
 * among the dependent ones: jy_eval_set_modes, redecide_dependent_and_retry). */
static int inactive_dependent(const jyEval *e) {
  if (e->ninactive == 0) return 0;
  int count = 0;
  for (int i = 0; i < e->model->m; i++) count += e->inactive[i] && e->dependent[i];
  return count;
}

/* The acceleration, and the multipliers into mu when mu is not NULL. */
static jyStatus assembled_acceleration(jyEval *e, double t, double *acc, double *mu) {
  const jyModel *m = e->model;
  jyUkProblem p = jy_eval_problem(e);
  p.dropped = NULL; /* the evaluator's dependent rows */
  jyUkOptions opt = {m->solver.rank_rcond, m->solver.augment_scale, m->solver.consistency_tol};
  jyUkResult res;
  jyUkOutcome outcome = jy_eval_solve(e, &p, &opt, acc, mu, &res);
  if (outcome != JY_UK_NOT_UNIQUE && e->ndependent > 0 &&
      !(res.dropped_residual <= m->solver.dependent_tol))
    outcome = redecide_dependent_and_retry(e, &opt, acc, mu, &res);
  if (outcome == JY_UK_NOT_UNIQUE) return not_unique(e, &p, t);
  if (outcome != JY_UK_OK) return inconsistent(e, &res, t);
  for (int j = 0; j < m->n; j++)
    if (!isfinite(acc[j])) {
      jy_set_error(e->error, "acceleration of %s is not finite at t = %.9g", m->coord_names[j], t);
      return JY_ERR_NOT_UNIQUE;
    }
  /* Rows left out only because their mode leaves them inactive have no force either way
   * (below); only redundant rows need the dense solve's choice. */
  if (mu && e->ndependent > inactive_dependent(e) && e->store_solves && !e->large) {
    /* The sparse solves give dropped rows no force; the dense choice spreads it over them
     * (jy_uk_multipliers): the same row forces from either path. */
    if (jy_eval_dense_ready(e) != 0) return JY_ERR_NOMEM;
    p = jy_eval_problem(e);
    jy_uk_multipliers(e->uk, &p, acc, mu, NULL);
  }
  for (int i = 0; mu && e->ninactive > 0 && i < m->m; i++)
    if (e->inactive[i]) mu[i] = 0.0;
  return JY_OK;
}

/* The impact rows inactive in the current modes (a bounce leaves the contact open) take
 * part in the impulse solve: out of `dependent` for it (lift), back in after (restore). */
static void impact_rows_active(jyEval *e, const unsigned char *inactive, const double *restitution,
                               int restore) {
  for (int i = 0; i < e->model->m; i++) {
    if (isnan(restitution[i]) || !inactive[i]) continue;
    e->dependent[i] = (unsigned char)restore;
    e->ndependent += restore ? 1 : -1;
    e->ninactive += restore ? 1 : -1;
  }
}

jyStatus jy_eval_impulse(jyEval *e, const double *q, const double *v, double t,
                         const double *restitution, double *dv, double *impulse) {
  const jyModel *m = e->model;
  int n = m->n, rows = m->m;
  /* the inactive flags of impact rows are lifted for the solve through a scratch copy */
  unsigned char *inactive = e->inactive;
  if (inactive) {
    for (int i = 0; i < rows; i++) e->proj_use[i] = inactive[i] && isnan(restitution[i]);
    e->inactive = e->proj_use;
    impact_rows_active(e, inactive, restitution, 0);
  }
  jyStatus st = jy_assemble(
    e, q, v, t, JY_ASM_MASS | JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS | JY_ASM_SPARSE_ONLY);
  if (st == JY_OK) {
    /* M dv = A^T impulse with A dv = c: the acceleration solve with Q = C = 0, b = c */
    memset(e->force, 0, sizeof(double) * (size_t)n);
    memset(e->nonideal, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < rows; i++) {
      double rate = m->row_kinds[i] == JY_ROW_POSITION ? e->rate[i]
        : m->row_kinds[i] == JY_ROW_VELOCITY           ? e->residual[i]
                                                       : 0.0;
      /* An active row the impact does not act on holds after it (phi' = 0, psi = 0: a
       * stuck contact stays stuck), as the projection would make it: keeping its drift
       * instead contradicts the impacted rows wherever both bind one body (four corners
       * of a box sticking one after another), by amounts the relative consistency test
       * cannot tell from a real contradiction. */
      if (isnan(restitution[i]))
        e->rhs[i] = -rate;
      else
        e->rhs[i] = -(1.0 + restitution[i]) * rate;
    }
    st = assembled_acceleration(e, t, dv, impulse ? impulse : e->multipliers);
  }
  if (inactive) {
    e->inactive = inactive;
    impact_rows_active(e, inactive, restitution, 1);
  }
  if (st != JY_OK) {
    char why[JY_ERROR_LEN];
    snprintf(why, sizeof why, "%s", e->error);
    jy_set_error(e->error, "impact at t = %.9g: %s", t, why);
  }
  return st;
}

jyStatus jy_eval_assembled_acceleration(jyEval *e, double t, double *acc) {
  return assembled_acceleration(e, t, acc, NULL);
}

jyStatus jy_eval_acceleration_and_multipliers(jyEval *e, const double *q, const double *v, double t,
                                              double *acc) {
  if (e->model->has_laws) return jy_eval_acceleration_with_laws(e, q, v, t, acc);
  return assembled_acceleration(e, t, acc, e->multipliers);
}

jyStatus jy_eval_acceleration_with_laws(jyEval *e, const double *q, const double *v, double t,
                                        double *acc) {
  const jyModel *m = e->model;
  if (!m->has_laws) return jy_eval_assembled_acceleration(e, t, acc);
  int n = m->n;
  memcpy(e->static_nonideal, e->nonideal, sizeof(double) * (size_t)n);
  memset(acc, 0, sizeof(double) * (size_t)n);
  /* Row forces and the acceleration settle when a further pass changes them by less than
   * 1e-12 of their size: far below any physical use, a few hundred ulps above rounding.
   * The acceleration too, for laws that depend on it: Coulomb friction at rest takes its
   * direction from the acceleration, and where the applied force cannot overcome it (the
   * body should stick) the passes flip that direction for ever while the row forces stay
   * put; taking such a state as settled made the motion creep. */
  /* A body held at rest has an acceleration of rounding size, whose relative changes never
   * settle: below 1e-12 of gravity a change is rounding too. */
  const double *gv = m->gravity;
  double g_size = sqrt(gv[0] * gv[0] + gv[1] * gv[1] + gv[2] * gv[2]);
  for (int it = 1; it <= 100; it++) {
    memcpy(e->law_acc, acc, sizeof(double) * (size_t)n);
    memcpy(e->nonideal, e->static_nonideal, sizeof(double) * (size_t)n);
    jyStatus st = jy_assemble_laws(e, q, v, t, e->law_mu, acc);
    if (st == JY_OK) st = assembled_acceleration(e, t, acc, e->multipliers);
    if (st != JY_OK) return st;
    double change = jy_max_diff(e->multipliers, e->law_mu, m->m);
    double size = jy_max_abs(e->multipliers, m->m);
    double acc_change = jy_max_diff(acc, e->law_acc, n), acc_size = jy_max_abs(acc, n);
    memcpy(e->law_mu, e->multipliers, sizeof(double) * (size_t)m->m);
    int rows_settled = change <= 1e-12 * fmax(size, 1e-300) || change == 0;
    int acc_settled = acc_change <= 1e-12 * fmax(fmax(acc_size, g_size), 1e-300) || acc_change == 0;
    if (it > 1 && rows_settled && acc_settled) return JY_OK;
  }
  jy_set_error(e->error,
               "non-ideal laws did not converge at t = %.9g: the row forces or the "
               "acceleration still change after 100 passes (a body at rest against friction "
               "it cannot overcome, or a friction coefficient too large for this geometry?)",
               t);
  return JY_ERR_CONVERGENCE;
}

jyStatus jy_eval_acceleration(jyEval *e, const double *q, const double *v, double t, double *acc) {
  if (!e || !q || !v || !acc) return JY_ERR_INVALID;
  if (e->tree) return jy_tree_acceleration(e, q, v, t, acc, 0);
  if (e->spatial) {
    jyStatus st = jy_spatial_acceleration(e, q, v, t, acc);
    if (st != JY_ERR_NOT_UNIQUE) return st; /* else the row path, which says why */
  }
  int stabilize = e->baumgarte_rate > 0;
  jyStatus st = jy_assemble(e, q, v, t,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                              (stabilize ? JY_ASM_RESIDUALS : 0u) | JY_ASM_SPARSE_ONLY);
  if (st != JY_OK) return st;
  if (stabilize) {
    /* Baumgarte: phi'' + 2 w phi' + w^2 phi = 0 (critically damped), psi' + w psi = 0. */
    const jyModel *m = e->model;
    double w = e->baumgarte_rate;
    for (int i = 0; i < m->m; i++) {
      if (m->row_kinds[i] == JY_ROW_POSITION)
        e->rhs[i] -= 2 * w * e->rate[i] + w * w * e->residual[i];
      else if (m->row_kinds[i] == JY_ROW_VELOCITY)
        e->rhs[i] -= w * e->residual[i];
    }
  }
  return jy_eval_acceleration_with_laws(e, q, v, t, acc);
}

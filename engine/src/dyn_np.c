/* The Natsiavas–Paraskevopoulos right-hand side: per-row equivalent mass, damping and
 * stiffness, the recovery-modified acceleration solve, and the multiplier accelerations.
 * See dyn_np.h for the equations and docs/formulations.md for the choices. */
#include "dyn_np.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "vec.h"

/* Relative finite-difference step, about cbrt(DBL_EPSILON): central differences then lose
 * about eps^(2/3) ~ 4e-11 relative to rounding and truncation together. */
#define NP_FD_STEP 6e-6
/* m_RR below this fraction of alpha |c_R|^2 (the mass an ordinary coordinate of mean mass
 * would give along c_R) counts as a massless row. */
#define NP_MASSLESS 1e-12
/* A difference of two evaluations within this many roundings of the terms is zero. */
#define NP_ROUNDING (64 * DBL_EPSILON)

void jy_np_destroy(jyNpWork *w) {
  if (!w) return;
  jyAllocator a = w->alloc;
  double *buffers[] = {w->dir, w->mass, w->damping, w->stiffness, w->force, w->mass_rate,
                       w->mu,  w->plus, w->minus,   w->qp,        w->vp,    w->acc};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) jy_free(&a, buffers[i]);
  jy_free(&a, w->kind);
  jy_eval_destroy(w->e);
  jy_eval_destroy(w->fd);
  jy_free(&a, w);
}

jyNpWork *jy_np_create(const jyModel *model) {
  if (!model) return NULL;
  const jyAllocator *a = &model->alloc;
  jyNpWork *w = jy_calloc(a, 1, sizeof *w);
  if (!w) return NULL;
  w->model = model;
  w->alloc = model->alloc;
  w->n = model->n;
  w->m = model->m;
  size_t n = (size_t)model->n + 1, m = (size_t)model->m + 1;
  w->e = jy_eval_create_dense(model); /* N–P reads the dense M and A */
  w->fd = jy_eval_create_dense(model);
  w->dir = jy_calloc(a, n * m, sizeof(double));
  double **rows[] = {&w->mass,      &w->damping, &w->stiffness, &w->force,
                     &w->mass_rate, &w->mu,      &w->plus,      &w->minus};
  int ok = w->e && w->fd && w->dir;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    *rows[i] = jy_calloc(a, m, sizeof(double));
    ok = ok && *rows[i];
  }
  w->kind = jy_calloc(a, m, 1);
  w->qp = jy_calloc(a, n, sizeof(double));
  w->vp = jy_calloc(a, n, sizeof(double));
  w->acc = jy_calloc(a, n, sizeof(double));
  if (!ok || !w->kind || !w->qp || !w->vp || !w->acc) {
    jy_np_destroy(w);
    return NULL;
  }
  /* The N–P right-hand side owns its stabilization: no Baumgarte terms in its solves. */
  w->e->baumgarte_rate = 0;
  w->fd->baumgarte_rate = 0;
  return w;
}

const char *jy_np_error(const jyNpWork *w) { return w ? w->error : ""; }

/* alpha of the auxiliary mass, as the UK solve takes it. */
static double aux_alpha(const jyModel *model, const double *mass) {
  return jy_uk_augmentation(mass, model->n, model->solver.augment_scale);
}

/* c_R^T M c_R for row r of the eval's A (and c_R into dir when dir != NULL); with aux, the
 * auxiliary mass alpha sum_S (a_S . c_R)^2 / |a_S|^2 is added. Returns -1 for a zero row. */
static double row_mass(const jyModel *model, const jyEval *e, int r, int aux, double *dir) {
  int n = model->n, m = model->m;
  const double *A = e->jac, *M = e->mass;
  double aa = 0;
  for (int j = 0; j < n; j++) aa += A[r + (size_t)j * m] * A[r + (size_t)j * m];
  if (!(aa > 0)) return -1;
  double mass = 0;
  for (int i = 0; i < n; i++) {
    double ci = A[r + (size_t)i * m] / aa;
    if (dir) dir[i] = ci;
    if (ci == 0) continue;
    double s = 0;
    for (int j = 0; j < n; j++) s += M[i + (size_t)j * n] * A[r + (size_t)j * m];
    mass += ci * s / aa;
  }
  if (aux) {
    double alpha = aux_alpha(model, M), extra = 0;
    for (int s = 0; s < m; s++) {
      double dot = 0, norm = 0;
      for (int j = 0; j < n; j++) {
        dot += A[s + (size_t)j * m] * A[r + (size_t)j * m] / aa;
        norm += A[s + (size_t)j * m] * A[s + (size_t)j * m];
      }
      if (norm > 0) extra += dot * dot / norm;
    }
    mass += alpha * extra;
  }
  return mass;
}

/* Whether a part carries mass: some row of M over its own coordinates is not zero. */
static int part_has_mass(const jyModel *model, const jyEval *e, int part) {
  const jyModelPart *p = &model->parts[part];
  int n = model->n;
  for (int k = 0; k < p->shape->ncoords; k++) {
    int j = p->coord_map[k];
    if (j < 0) continue;
    for (int i = 0; i < n; i++)
      if (e->mass[j + (size_t)i * n] != 0) return 1;
  }
  return 0;
}

/* Whether row r is massless (c_R^T M c_R = 0) although it moves a coordinate of a part that
 * carries mass; writes that coordinate into *coord. */
static int massless_among_masses(const jyModel *model, const jyEval *e, int r, int *coord) {
  int n = model->n;
  double alpha = aux_alpha(model, e->mass), aa = 0;
  double mass = row_mass(model, e, r, 0, NULL);
  if (mass < 0) return 0;
  for (int j = 0; j < n; j++) {
    double a = e->jac[r + (size_t)j * model->m];
    aa += a * a;
  }
  if (mass > NP_MASSLESS * alpha / aa) return 0; /* |c_R|^2 = 1 / |a_R|^2 */
  for (int i = 0; i < model->nparts; i++)
    for (int k = 0; k < model->parts[i].shape->ncoords; k++) {
      int j = model->parts[i].coord_map[k];
      if (j >= 0 && e->jac[r + (size_t)j * model->m] != 0 && part_has_mass(model, e, i)) {
        *coord = j;
        return 1;
      }
    }
  return 0;
}

jyStatus jy_np_check_model(jyNpWork *w, const double *q, const double *v, double t) {
  const jyModel *model = w->model;
  jyStatus st = jy_assemble(w->e, q, v, t, JY_ASM_MASS | JY_ASM_CONSTRAINTS);
  if (st != JY_OK) {
    jy_set_error(w->error, "%s", jy_eval_error(w->e));
    return st;
  }
  for (int r = 0; r < model->m; r++) {
    int coord = -1;
    if (model->row_kinds[r] == JY_ROW_ACCELERATION ||
        !massless_among_masses(model, w->e, r, &coord))
      continue;
    jy_set_error(w->error,
                 "the natsiavas-paraskevopoulos formulation cannot integrate this model: row "
                 "'%s' has no equivalent mass (c_R^T M c_R = 0, like the length of a body3d's "
                 "quaternion) although the coordinates it moves carry mass (%s), so the velocity "
                 "terms of their Lagrangian act along it as a stiffness of the size of the "
                 "kinetic energy, often negative, against an arbitrary auxiliary mass: the "
                 "violation of the row grows exponentially (the heavy top fails at 3.1 s, the "
                 "free body loses its energy; docs/formulations.md). Use formulation = "
                 "\"udwadia-kalaba\" (the default)",
                 model->row_names[r], model->coord_names[coord]);
    return JY_ERR_INVALID;
  }
  return JY_OK;
}

static jyStatus fd_failed(jyNpWork *w, jyStatus st) {
  jy_set_error(w->error, "finite differences of the N-P coefficients: %s", jy_eval_error(w->fd));
  return st;
}

/* c_R . (Q + C) of the fd eval, and the sum of the magnitudes of its terms. */
static double row_force(const jyNpWork *w, const double *c, double *size) {
  double s = 0, z = 0;
  for (int j = 0; j < w->n; j++) {
    double f = w->fd->force[j] + w->fd->nonideal[j];
    s += c[j] * f;
    z += fabs(c[j] * f);
  }
  *size = z;
  return s;
}

/* Central difference of a row quantity from the plus and minus values and their sizes. */
static double central(double plus, double minus, double size, double step) {
  double d = plus - minus;
  return fabs(d) <= NP_ROUNDING * size ? 0.0 : d / (2 * step);
}

/* m_RR, f_R and the kind of every row at the state w->e has assembled; c_R into w->dir. */
static void row_masses(jyNpWork *w) {
  const jyModel *model = w->model;
  int n = w->n;
  double alpha = aux_alpha(model, w->e->mass);
  for (int r = 0; r < w->m; r++) {
    double *c = w->dir + (size_t)r * n;
    double mass = row_mass(model, w->e, r, 0, c);
    w->damping[r] = w->stiffness[r] = w->force[r] = w->mass_rate[r] = 0;
    if (mass < 0) {
      w->kind[r] = JY_NP_ROW_EMPTY;
      memset(c, 0, sizeof(double) * (size_t)n);
      w->mass[r] = 0;
      continue;
    }
    double cc = 0, f = 0;
    for (int j = 0; j < n; j++) {
      cc += c[j] * c[j];
      f += c[j] * (w->e->force[j] + w->e->nonideal[j]);
    }
    w->force[r] = f;
    if (mass > NP_MASSLESS * alpha * cc) {
      w->kind[r] = JY_NP_ROW_MASSIVE;
      w->mass[r] = mass;
    } else {
      w->kind[r] = JY_NP_ROW_AUX;
      w->mass[r] = row_mass(model, w->e, r, 1, NULL);
    }
  }
}

/* m_RR' along the motion: (q, t) -> (q + h v, t + h), v held (exact for rows linear in
 * v). h moves q by NP_FD_STEP relative to its size. */
static jyStatus mass_rates(jyNpWork *w, const double *q, const double *v, double t) {
  int n = w->n, m = w->m;
  double vmax = jy_max_abs(v, n), qmax = fmax(1.0, jy_max_abs(q, n));
  double h = NP_FD_STEP * qmax / fmax(1.0, vmax);
  for (int side = 0; side < 2; side++) {
    double sign = side == 0 ? 1.0 : -1.0, *out = side == 0 ? w->plus : w->minus;
    for (int j = 0; j < n; j++) w->qp[j] = q[j] + sign * h * v[j];
    jyStatus st = jy_assemble(w->fd, w->qp, v, t + sign * h, JY_ASM_MASS | JY_ASM_CONSTRAINTS);
    if (st != JY_OK) return fd_failed(w, st);
    for (int r = 0; r < m; r++)
      out[r] = w->kind[r] == JY_NP_ROW_EMPTY
        ? 0.0
        : fmax(0.0, row_mass(w->model, w->fd, r, w->kind[r] == JY_NP_ROW_AUX, NULL));
  }
  for (int r = 0; r < m; r++)
    w->mass_rate[r] = central(w->plus[r], w->minus[r], fabs(w->plus[r]) + fabs(w->minus[r]), h);
  return JY_OK;
}

/* k_RR (which = 0) or c_RR (which = 1) of row r: the directional central difference of
 * -f_R along c_R in q or in v. The step moves the largest coordinate (velocity)
 * NP_FD_STEP times max(1, |q|_inf) (|v|_inf). */
static jyStatus row_derivative(jyNpWork *w, int r, int which, const double *q, const double *v,
                               double t, double *out) {
  int n = w->n;
  const double *c = w->dir + (size_t)r * n;
  double scale = fmax(1.0, jy_max_abs(which == 0 ? q : v, n));
  double step = NP_FD_STEP * scale / jy_max_abs(c, n);
  double val[2], size[2];
  for (int side = 0; side < 2; side++) {
    double sign = side == 0 ? 1.0 : -1.0, *shifted = which == 0 ? w->qp : w->vp;
    const double *from = which == 0 ? q : v;
    for (int j = 0; j < n; j++) shifted[j] = from[j] + sign * step * c[j];
    jyStatus st = jy_assemble(w->fd, which == 0 ? shifted : q, which == 0 ? v : shifted, t,
                              JY_ASM_FORCE | JY_ASM_NONIDEAL);
    if (st != JY_OK) return fd_failed(w, st);
    val[side] = row_force(w, c, &size[side]);
  }
  *out = -central(val[0], val[1], size[0] + size[1], step);
  return JY_OK;
}

jyStatus jy_np_coefficients(jyNpWork *w, const double *q, const double *v, double t) {
  jyStatus st = jy_assemble(w->e, q, v, t,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                              JY_ASM_RESIDUALS);
  if (st != JY_OK) {
    jy_set_error(w->error, "%s", jy_eval_error(w->e));
    return st;
  }
  if (w->m == 0) return JY_OK;
  row_masses(w);
  st = mass_rates(w, q, v, t);
  for (int r = 0; r < w->m && st == JY_OK; r++) {
    if (w->kind[r] == JY_NP_ROW_EMPTY) continue;
    st = row_derivative(w, r, 0, q, v, t, &w->stiffness[r]);
    if (st == JY_OK) st = row_derivative(w, r, 1, q, v, t, &w->damping[r]);
  }
  return st;
}

/* q'' from the UK solve with b~, then mu; the eval holds the state's matrices. Rows given
 * at the acceleration level have nothing to recover: b~ = b. */
static jyStatus solve(jyNpWork *w, const double *q, const double *v, double t, double *qdd) {
  const jyModel *model = w->model;
  jyEval *e = w->e;
  for (int r = 0; r < w->m; r++) {
    if (w->kind[r] == JY_NP_ROW_EMPTY) continue;
    double damp = w->mass_rate[r] + w->damping[r];
    if (model->row_kinds[r] == JY_ROW_POSITION)
      e->rhs[r] -= (damp * e->rate[r] + w->stiffness[r] * e->residual[r]) / w->mass[r];
    else if (model->row_kinds[r] == JY_ROW_VELOCITY)
      e->rhs[r] -= damp * e->residual[r] / w->mass[r];
  }
  /* Non-ideal laws that depend on the row forces are resolved as in the UK path; their
   * force then enters f_R (but not the finite-difference Jacobians). */
  jyStatus st = jy_eval_acceleration_with_laws(e, q, v, t, qdd);
  if (st != JY_OK) {
    jy_set_error(w->error, "%s", jy_eval_error(e));
    return st;
  }
  if (model->has_laws)
    for (int r = 0; r < w->m; r++) {
      const double *c = w->dir + (size_t)r * w->n;
      double f = 0;
      for (int j = 0; j < w->n; j++) f += c[j] * (e->force[j] + e->nonideal[j]);
      w->force[r] = f;
    }
  if (w->m > 0) {
    jyUkProblem p = jy_eval_problem(e);
    if (jy_uk_multipliers(e->uk, &p, qdd, w->mu, NULL) != 0) {
      jy_set_error(w->error, "multipliers: problem larger than the workspace");
      return JY_ERR_INVALID;
    }
  }
  return JY_OK;
}

jyStatus jy_np_accelerations(jyNpWork *w, const double *q, const double *lam, const double *v,
                             const double *lamdot, double t, double *qdd, double *lamdd) {
  if (!w || !q || !lam || !v || !lamdot || !qdd || !lamdd) return JY_ERR_INVALID;
  jyStatus st = jy_np_coefficients(w, q, v, t);
  if (st == JY_OK) st = solve(w, q, v, t, qdd);
  if (st != JY_OK) return st;
  for (int r = 0; r < w->m; r++) {
    if (w->kind[r] == JY_NP_ROW_EMPTY) {
      lamdd[r] = 0;
      continue;
    }
    lamdd[r] = (w->mu[r] + w->force[r] - (w->mass_rate[r] + w->damping[r]) * lamdot[r] -
                w->stiffness[r] * lam[r]) /
      w->mass[r];
    if (!isfinite(lamdd[r])) {
      jy_set_error(w->error, "multiplier acceleration of row %s is not finite at t = %.9g",
                   w->model->row_names[r], t);
      return JY_ERR_NOT_UNIQUE;
    }
  }
  return JY_OK;
}

jyStatus jy_np_initial_multipliers(jyNpWork *w, const double *q, const double *v, double t,
                                   double *lam, double *lamdot) {
  if (!w || !q || !v || !lam || !lamdot) return JY_ERR_INVALID;
  jyStatus st = jy_np_coefficients(w, q, v, t);
  if (st == JY_OK) st = solve(w, q, v, t, w->acc);
  if (st != JY_OK) return st;
  for (int r = 0; r < w->m; r++) {
    double load = w->mu[r] + w->force[r], damp = w->mass_rate[r] + w->damping[r];
    lam[r] = lamdot[r] = 0;
    if (w->kind[r] == JY_NP_ROW_EMPTY) continue;
    if (w->stiffness[r] != 0)
      lam[r] = load / w->stiffness[r];
    else if (damp != 0)
      lamdot[r] = load / damp;
    if (!isfinite(lam[r]) || !isfinite(lamdot[r])) lam[r] = lamdot[r] = 0;
  }
  return JY_OK;
}

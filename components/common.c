/* components/common.c — helpers the built-in parts share. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "parts.h"

const char *const jy_names_xyz[3] = {"x", "y", "z"};
const char *const jy_names_a[3] = {"ax", "ay", "az"};
const char *const jy_names_b[3] = {"bx", "by", "bz"};

int jy_part_fail(char *error, size_t error_len, const char *fmt, ...) {
  if (error && error_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_len, fmt, ap);
    va_end(ap);
  }
  return 1;
}

int jy_part_dim(const double *params) { return (int)params[0]; }

void jy_point_terminal(int dim, int offset, int ncoords, const double *q, double *value,
                       double *jac) {
  (void)ncoords; /* the block is dim x ncoords with leading dimension dim */
  for (int i = 0; i < dim; i++) {
    value[i] = q[offset + i];
    if (jac) jac[i + (offset + i) * dim] = 1.0;
  }
}

void jy_ends_shape(jyPartShape *shape, int dim, double b_x) {
  shape->ncoords = 2 * dim;
  for (int i = 0; i < dim; i++) {
    shape->coord_names[i] = jy_names_a[i];
    shape->coord_names[dim + i] = jy_names_b[i];
  }
  shape->coord_defaults[dim] = b_x;
  shape->nterminals = 2;
  shape->terminals[0] = (jyTerminalSpec){"a", dim, 1, 0};
  shape->terminals[1] = (jyTerminalSpec){"b", dim, 1, dim};
  shape->flags = JY_PART_CONSTANT_MASS; /* massless ends: M = 0 */
}

int jy_ends_terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                     double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias; /* the ends are coordinates: no time dependence, no convective term */
  (void)acc_bias;
  int dim = self->ncoords / 2;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has a and b)", k);
  jy_point_terminal(dim, k * dim, self->ncoords, state->q, value, jac);
  return 0;
}

void jy_ends_eval(jyEnds *e, int dim, const double *q, const double *v) {
  double sq = 0.0;
  for (int i = 0; i < 3; i++) e->d[i] = e->rate[i] = e->u[i] = 0.0;
  for (int i = 0; i < dim; i++) {
    e->d[i] = q[dim + i] - q[i];
    e->rate[i] = v[dim + i] - v[i];
    sq += e->d[i] * e->d[i];
  }
  if (dim == 1) {
    /* A 1-D spring may pass through itself: keep the sign so the force stays smooth. */
    e->len = e->d[0];
    e->u[0] = 1.0;
  } else {
    e->len = sqrt(sq);
  }
  /* u and its rate in one loop: each u_i is used from a register, not stored and reloaded */
  double len_rate = 0.0;
  for (int i = 0; i < dim; i++) {
    if (dim > 1 && e->len > 0.0) e->u[i] = e->d[i] / e->len;
    len_rate += e->u[i] * e->rate[i];
  }
  e->len_rate = len_rate;
}

int jy_ss_check_coefficients(double mu, double mu_s, char *error, size_t error_len) {
  if (mu_s < 0 && mu_s != -1)
    return jy_part_fail(error, error_len, "mu_s = %g must be >= 0 (or -1: equal to mu)", mu_s);
  if (mu_s >= 0 && mu_s < mu)
    return jy_part_fail(error, error_len,
                        "mu_s = %g is below mu = %g: static friction must be at least the "
                        "kinetic (mu_s >= mu)",
                        mu_s, mu);
  return 0;
}

int jy_ss_mode_of_velocity(double vt) {
  return vt > 0 ? JY_SS_FORWARD : vt < 0 ? JY_SS_BACKWARD : JY_SS_STICK;
}

double jy_ss_direction(int mode, double vt, double at) {
  if (mode == JY_SS_STICK) return 0.0;
  if (mode == JY_SS_FORWARD) return 1.0;
  if (mode == JY_SS_BACKWARD) return -1.0;
  double x = vt != 0.0 ? vt : at;
  return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

double jy_ss_guard(int mode, double vt, double margin) { return mode == JY_SS_STICK ? margin : vt; }

void jy_ss_transition(int mode, int direction, double f_t, int *new_mode, double *reset) {
  /* A slide ends where its own velocity falls to zero; the other way is the start of one
   * (a slip leaves a residual velocity of rounding size, either sign). */
  if ((mode == JY_SS_FORWARD && direction > 0) || (mode == JY_SS_BACKWARD && direction < 0)) return;
  if (mode != JY_SS_STICK) {
    *new_mode = JY_SS_STICK;
    *reset = 0.0;
  } else if (direction < 0) {
    *new_mode = f_t > 0 ? JY_SS_BACKWARD : JY_SS_FORWARD;
  }
}

void jy_ss_admissible(int mode, double margin, double f_t, int *new_mode) {
  if (mode == JY_SS_STICK && margin < 0) *new_mode = f_t > 0 ? JY_SS_BACKWARD : JY_SS_FORWARD;
}

void jy_visual_point(jyVisual *out, int kind, int dim, const double *x) {
  out->kind = kind;
  for (int i = 0; i < dim && i < 3; i++) out->a[i] = x[i];
}

void jy_visual_ends(jyVisual *out, int kind, int dim, const double *q) {
  out->kind = kind;
  for (int i = 0; i < dim; i++) {
    out->a[i] = q[i];
    out->b[i] = q[dim + i];
  }
}

void jy_visual_ground(jyVisual *out, int dim, const double *n, double d) {
  double nn = 0;
  for (int i = 0; i < dim; i++) nn += n[i] * n[i];
  out->kind = JY_VISUAL_GROUND;
  for (int i = 0; i < dim; i++) {
    out->a[i] = nn > 0 ? d * n[i] / nn : 0.0;
    out->b[i] = n[i];
  }
}

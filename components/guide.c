/* components/guide.c — a point held on a line (2-D), a plane (3-D) or a point (1-D),
 * n . p = d, optionally with a constant non-ideal constraint force (Udwadia-Kalaba-Fan 2005,
 * section 4, uses c = (1, 2)). */
#include <math.h>

#include "parts.h"

enum { P_DIM, P_NX, P_D = P_NX + 3, P_CX };

static const jyParamSpec params[] = {
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"nx", 0, JY_PARAM_REAL, "1", "x component of the normal n (any length)"},
  {"ny", 1, JY_PARAM_REAL, "1", "y component of the normal n (2-D and 3-D)"},
  {"nz", 0, JY_PARAM_REAL, "1", "z component of the normal n (3-D)"},
  {"d", 0, JY_PARAM_REAL, "m", "offset: the point stays where n . p = d"},
  {"cx", 0, JY_PARAM_REAL, "N", "x component of the constant non-ideal constraint force"},
  {"cy", 0, JY_PARAM_REAL, "N", "y component of the constant non-ideal constraint force"},
  {"cz", 0, JY_PARAM_REAL, "N", "z component of the constant non-ideal constraint force"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  int dim = jy_part_dim(p);
  int zero = 1;
  for (int i = 0; i < dim; i++) zero &= p[P_NX + i] == 0.0;
  if (zero)
    return jy_part_fail(error, error_len,
                        "the normal (nx%s%s) is zero in %d-D: set a non-zero component",
                        dim > 1 ? ", ny" : "", dim > 2 ? ", nz" : "", dim);
  s->ncoords = dim;
  for (int i = 0; i < dim; i++) s->coord_names[i] = jy_names_xyz[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", dim, 1, 0};
  s->nrows = 1;
  s->row_names[0] = "surface";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 1;
  s->output_names[0] = "normal_force";
  s->flags = JY_PART_CONSTANT_MASS; /* massless: M = 0 */
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(self->ncoords, 0, self->ncoords, state->q, value, jac);
  return 0;
}

/* A flat surface: A = n^T, and b = 0 because A does not change along the motion. */
static int constraints(const jyPartInstance *self, const jyPartState *state, double *A,
                       double *rhs, double *residual, double *rate) {
  (void)rhs;
  const double *n = self->params + P_NX;
  double np = 0.0, nv = 0.0;
  for (int i = 0; i < self->ncoords; i++) {
    A[i] = n[i];
    np += n[i] * state->q[i];
    nv += n[i] * state->v[i];
  }
  if (residual) residual[0] = np - self->params[P_D];
  if (rate) rate[0] = nv;
  return 0;
}

static int nonideal(const jyPartInstance *self, const jyPartState *state, double *C) {
  (void)state;
  for (int i = 0; i < self->ncoords; i++) C[i] = self->params[P_CX + i];
  return 0;
}

/* The ideal force on the point is n lambda: its signed size along the unit normal. */
static int outputs(const jyPartInstance *self, const jyPartState *state,
                   const double *row_forces, double *out) {
  (void)state;
  const double *n = self->params + P_NX;
  double nn = 0.0;
  for (int i = 0; i < self->ncoords; i++) nn += n[i] * n[i];
  out[0] = row_forces[0] * sqrt(nn);
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "guide",
  .doc = "a point pos held where n . pos = d (line in 2-D, plane in 3-D), with optional force c",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .nonideal = nonideal,
  .outputs = outputs,
};

const jyPartType *jy_part_guide(void) { return &type; }

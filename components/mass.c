/* components/mass.c — a point mass in 1, 2 or 3 dimensions. */
#include "parts.h"

enum { P_DIM, P_M };

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
};

/* A ball at the mass. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  jy_visual_point(out, JY_VISUAL_POINT, jy_part_dim(self->params), state->q);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  int dim = jy_part_dim(p);
  s->ncoords = dim;
  for (int i = 0; i < dim; i++) s->coord_names[i] = jy_names_xyz[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", dim, 1, 0};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  s->nvisuals = 1;
  s->visual = visual;
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

static int mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  (void)state;
  int n = self->ncoords;
  for (int i = 0; i < n; i++) M[i + i * n] = self->params[P_M];
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  for (int i = 0; i < self->ncoords; i++) Q[i] = self->params[P_M] * state->gravity[i];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  double m = self->params[P_M], vv = 0.0, gx = 0.0;
  for (int i = 0; i < self->ncoords; i++) {
    vv += state->v[i] * state->v[i];
    gx += state->gravity[i] * state->q[i];
  }
  *kinetic = 0.5 * m * vv;
  *potential = -m * gx;
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "mass",
  .doc = "a point mass m at coordinates (x, y, z) with terminal pos",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .mass = mass,
  .force = force,
  .energy = energy,
};

const jyPartType *jy_part_mass(void) { return &type; }

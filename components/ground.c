/* components/ground.c — a fixed point to glue things to. */
#include "parts.h"

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions of the point"},
  {"x", 0, JY_PARAM_REAL, "m", "x position of the point"},
  {"y", 0, JY_PARAM_REAL, "m", "y position of the point (2-D and 3-D)"},
  {"z", 0, JY_PARAM_REAL, "m", "z position of the point (3-D)"},
};

/* A fixed point: a pivot mark (no normal). */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)state;
  (void)row_forces;
  jy_visual_point(out, JY_VISUAL_GROUND, jy_part_dim(self->params), self->params + 1);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  s->ncoords = 0;
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){.name = "pos", .dim = jy_part_dim(p)};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  if (jy_part_dim(p) == 3) s->spatial = JY_SPATIAL_POINT, s->spatial_param = 1; /* x, y, z */
  s->nvisuals = 1;
  s->visual = visual;
  return 0;
}

/* No coordinates: J is dim x 0 and both biases are 0, so only the value is written. */
static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)jac;
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  int dim = jy_part_dim(self->params);
  for (int i = 0; i < dim; i++) value[i] = self->params[1 + i];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "ground",
  .doc = "a fixed point at (x, y, z) with terminal pos",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
};

const jyPartType *jy_part_ground(void) { return &type; }

/* components/ground2d.c — a fixed planar frame: the origin (x, y) and the orientation theta,
 * terminal `frame` (x, y, theta) for welds, sliders and rotational springs to the ground,
 * and `pos` (x, y) for pins. No coordinates. */
#include "parts.h"

enum { P_X, P_Y, P_THETA };

static const jyParamSpec params[] = {
  {"x", 0, JY_PARAM_REAL, "m", "x of the frame's origin"},
  {"y", 0, JY_PARAM_REAL, "m", "y of the frame's origin"},
  {"theta", 0, JY_PARAM_REAL, "rad", "orientation of the frame's x axis"},
};

/* A fixed point: a pivot mark (no normal). */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)state;
  (void)row_forces;
  jy_visual_point(out, JY_VISUAL_GROUND, 2, self->params);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = 0;
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){.name = "frame", .dim = 3};
  s->terminals[1] = (jyTerminalSpec){.name = "pos", .dim = 2};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
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
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has frame and pos)", k);
  for (int i = 0; i < (k == 0 ? 3 : 2); i++) value[i] = self->params[P_X + i];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "ground2d",
  .doc = "a fixed planar frame (x, y, theta) with terminals frame and pos",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
};

const jyPartType *jy_part_ground2d(void) { return &type; }

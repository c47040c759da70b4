/* components/ground3d.c — a fixed spatial frame: a point and an orientation to hang joints
 * from. No coordinates. */
#include <math.h>

#include "parts.h"
#include "spatial.h"

enum { P_X, P_Y, P_Z, P_Q0, P_Q1, P_Q2, P_Q3, NP };

static const jyParamSpec params[] = {
  {"x", 0, JY_PARAM_REAL, "m", "x of the frame's origin"},
  {"y", 0, JY_PARAM_REAL, "m", "y of the frame's origin"},
  {"z", 0, JY_PARAM_REAL, "m", "z of the frame's origin"},
  {"q0", 1, JY_PARAM_REAL, "1", "orientation quaternion, scalar part (normalized)"},
  {"q1", 0, JY_PARAM_REAL, "1", "orientation quaternion, x part (normalized)"},
  {"q2", 0, JY_PARAM_REAL, "1", "orientation quaternion, y part (normalized)"},
  {"q3", 0, JY_PARAM_REAL, "1", "orientation quaternion, z part (normalized)"},
};

static double qnorm(const double *p) {
  return sqrt(p[P_Q0] * p[P_Q0] + p[P_Q1] * p[P_Q1] + p[P_Q2] * p[P_Q2] + p[P_Q3] * p[P_Q3]);
}

/* A fixed frame: a pivot mark at its origin (no normal). */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)state;
  (void)row_forces;
  jy_visual_point(out, JY_VISUAL_GROUND, 3, self->params + P_X);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  if (!(qnorm(p) > 0.0))
    return jy_part_fail(error, error_len,
                        "the quaternion (q0, q1, q2, q3) is zero, which is no orientation: set "
                        "a non-zero one (q0 = 1 for the identity)");
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){.name = "frame", .dim = JY_FRAME_DIM};
  s->terminals[1] = (jyTerminalSpec){.name = "pos", .dim = 3};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  s->spatial = JY_SPATIAL_FIXED;
  s->spatial_param = P_X;
  s->nvisuals = 1;
  s->visual = visual;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)jac; /* no coordinates: J is dim x 0, both biases 0 */
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has frame and pos)", k);
  const double *p = self->params;
  for (int i = 0; i < 3; i++) value[i] = p[P_X + i];
  if (k == 0) {
    double n = qnorm(p);
    for (int i = 0; i < 4; i++) value[3 + i] = p[P_Q0 + i] / n;
  }
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "ground3d",
  .doc = "a fixed spatial frame at (x, y, z) with orientation (q0..q3): terminals frame and pos",
  .params = params,
  .nparams = NP,
  .shape = shape,
  .terminal = terminal,
};

const jyPartType *jy_part_ground3d(void) { return &type; }

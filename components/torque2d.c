/* components/torque2d.c — a constant load on a planar frame: the force (fx, fy) (space
 * axes) at the frame's origin and the torque tau. The part owns a massless copy
 * (x, y, theta) of the frame it is glued to (eliminated with the glue, like a marker), and
 * Q = (fx, fy, tau). A constant load is conservative: V = -(fx x + fy y + tau theta), so the
 * energy channel of a driven mechanism stays constant. Loads that vary with time or state
 * are Lua parts (docs/bodies2d.md shows one). */
#include "parts.h"

enum { P_TAU, P_FX, P_FY };
enum { C_X, C_Y, C_TH, NC };

static const jyParamSpec params[] = {
  {"tau", 0, JY_PARAM_REAL, "N m", "torque on the frame (counter-clockwise positive)"},
  {"fx", 0, JY_PARAM_REAL, "N", "x component of the force at the frame's origin"},
  {"fy", 0, JY_PARAM_REAL, "N", "y component of the force at the frame's origin"},
};

static const char *const coord_names[NC] = {"x", "y", "theta"};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = coord_names[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"frame", 3, 1, 0};
  s->noutputs = 1;
  s->output_names[0] = "power";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(3, 0, self->ncoords, state->q, value, jac);
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  (void)state;
  Q[C_X] = self->params[P_FX];
  Q[C_Y] = self->params[P_FY];
  Q[C_TH] = self->params[P_TAU];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  const double *p = self->params, *q = state->q;
  *kinetic = 0.0;
  *potential = -(p[P_FX] * q[C_X] + p[P_FY] * q[C_Y] + p[P_TAU] * q[C_TH]);
  return 0;
}

/* The power the load delivers, W. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *p = self->params, *v = state->v;
  out[0] = p[P_FX] * v[C_X] + p[P_FY] * v[C_Y] + p[P_TAU] * v[C_TH];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "torque2d",
  .doc =
    "a constant torque tau and force (fx, fy) on the planar frame its terminal frame is glued to",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_torque2d(void) { return &type; }

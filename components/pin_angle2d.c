/* components/pin_angle2d.c — the joint angle and rate of a planar pin, as output channels.
 * A pin is a glue, not a part, so it has no outputs; sys:pin adds this part under the pin's
 * name with its frame terminals glued to the two bodies' frames (docs/bodies2d.md). It is
 * massless, exerts nothing and has no rows: its terminals are copies of the frames, which
 * glue elimination substitutes away, so it costs no coordinates and no rows at run time.
 * A side on the ground has no terminal: `world` fixes it at the angle theta_world. */
#include "parts.h"

enum { P_WORLD, P_THETA_WORLD };

static const jyParamSpec params[] = {
  {"world", 0, JY_PARAM_BOUND, "1",
   "0: a and b are frames; 1: side a is fixed (no terminal a); 2: side b is fixed"},
  {"theta_world", 0, JY_PARAM_REAL, "rad", "orientation of the fixed side (world = 1 or 2)"},
};

/* Named a_* and b_* so that no coordinate channel clashes with the outputs angle, rate. */
static const char *const names_a[3] = {"a_x", "a_y", "a_theta"};
static const char *const names_b[3] = {"b_x", "b_y", "b_theta"};

/* Which sides have a terminal (0: none). */
static int world_of(const double *p) { return (int)p[P_WORLD]; }

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  double w = p[P_WORLD];
  if (w != 0.0 && w != 1.0 && w != 2.0)
    return jy_part_fail(error, error_len,
                        "world = %g: 0 (a and b frames), 1 (a fixed) or 2 (b fixed)", w);
  int world = world_of(p);
  if (world != 1) {
    for (int i = 0; i < 3; i++) s->coord_names[s->ncoords + i] = names_a[i];
    s->terminals[s->nterminals++] = (jyTerminalSpec){"a", 3, 1, s->ncoords};
    s->ncoords += 3;
  }
  if (world != 2) {
    for (int i = 0; i < 3; i++) s->coord_names[s->ncoords + i] = names_b[i];
    s->terminals[s->nterminals++] = (jyTerminalSpec){"b", 3, 1, s->ncoords};
    s->ncoords += 3;
  }
  s->noutputs = 2;
  s->output_names[0] = "angle";
  s->output_names[1] = "rate";
  /* No mass, no force: the copies follow the glued frames. angle_outputs stays 0: the
   * angle is a difference of continuous coordinates, never an atan2. */
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k < 0 || 3 * k >= self->ncoords)
    return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(3, 3 * k, self->ncoords, state->q, value, jac);
  return 0;
}

/* angle = theta_b - theta_a (continuous: the bodies' theta are never wrapped), rate its
 * derivative; a fixed side contributes theta_world and no rate. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *q = state->q, *v = state->v, tw = self->params[P_THETA_WORLD];
  switch (world_of(self->params)) {
  case 1:
    out[0] = q[2] - tw;
    out[1] = v[2];
    break;
  case 2:
    out[0] = tw - q[2];
    out[1] = -v[2];
    break;
  default:
    out[0] = q[5] - q[2];
    out[1] = v[5] - v[2];
  }
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "pin_angle2d",
  .doc = "a planar pin's joint angle theta_b - theta_a and rate, from frames a, b glued to the "
         "bodies (added by sys:pin)",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .outputs = outputs,
};

const jyPartType *jy_part_pin_angle2d(void) { return &type; }

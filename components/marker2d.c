/* components/marker2d.c — a point and a frame fixed on a planar body. The marker owns a
 * massless copy (x, y, theta) of the body's frame, its terminal `body`, which is glued to the
 * body's frame: glue elimination then substitutes the copy by the body's coordinates, so a
 * marker costs no coordinates and no constraint rows. Its terminals `pos`, the point
 * (x, y) + R(theta) (rx, ry), and `frame`, that point with the orientation theta + angle,
 * are what joints and force elements attach to (docs/bodies2d.md). Its output channels
 * "<marker>.x|y|angle|vx|vy|omega" are the point's world pose and velocity; the copy's
 * coordinates are "<marker>.body_x|body_y|body_theta" (the body's centre, eliminated). */
#include <math.h>

#include "parts.h"

enum { P_RX, P_RY, P_ANGLE };
enum { C_X, C_Y, C_TH, NC };
enum { T_BODY, T_POS, T_FRAME, NT };

static const jyParamSpec params[] = {
  {"rx", 0, JY_PARAM_REAL, "m", "x of the point in body axes, from the body's centre of mass"},
  {"ry", 0, JY_PARAM_REAL, "m", "y of the point in body axes, from the body's centre of mass"},
  {"angle", 0, JY_PARAM_REAL, "rad", "orientation of the marker's frame relative to the body"},
};

/* The copy of the body's frame is named body_* so that the names x, y, angle under the
 * marker's name are the point's own (its outputs), never the body's centre. */
static const char *const coord_names[NC] = {"body_x", "body_y", "body_theta"};

/* The point's world pose and velocity: what a user plotting "point b" means. */
enum { O_X, O_Y, O_ANGLE, O_VX, O_VY, O_OMEGA, NO };
static const char *const output_names[NO] = {"x", "y", "angle", "vx", "vy", "omega"};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = coord_names[i];
  s->nterminals = NT;
  s->terminals[T_BODY] = (jyTerminalSpec){"body", 3, 1, 0};
  s->terminals[T_POS] = (jyTerminalSpec){.name = "pos", .dim = 2};
  s->terminals[T_FRAME] = (jyTerminalSpec){.name = "frame", .dim = 3};
  s->noutputs = NO;
  for (int i = 0; i < NO; i++) s->output_names[i] = output_names[i];
  /* massless: M = 0, Q = 0 */
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

/* The point p = (x, y) + R r: J = [[1, 0, -(R r)_y], [0, 1, (R r)_x]] and
 * gamma = J' v = -theta'^2 R r (centripetal). Frames add the row theta (+ angle). */
static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  const double *q = state->q;
  if (k == T_BODY) {
    jy_point_terminal(3, 0, NC, q, value, jac);
    return 0;
  }
  if (k != T_POS && k != T_FRAME)
    return jy_part_fail(state->error, state->error_len,
                        "no terminal %d (it has body, pos and frame)", k);
  int dim = k == T_POS ? 2 : 3;
  double c = cos(q[C_TH]), s = sin(q[C_TH]), rx = self->params[P_RX], ry = self->params[P_RY];
  double ax = c * rx - s * ry, ay = s * rx + c * ry, w = state->v[C_TH];
  value[0] = q[C_X] + ax;
  value[1] = q[C_Y] + ay;
  if (dim == 3) value[2] = q[C_TH] + self->params[P_ANGLE];
  if (jac) {
    jac[0 + C_X * dim] = 1.0;
    jac[1 + C_Y * dim] = 1.0;
    jac[0 + C_TH * dim] = -ay;
    jac[1 + C_TH * dim] = ax;
    if (dim == 3) jac[2 + C_TH * dim] = 1.0;
  }
  if (acc_bias) {
    acc_bias[0] = -w * w * ax;
    acc_bias[1] = -w * w * ay;
  }
  return 0;
}

/* The point (x, y) + R r, its frame's angle theta + angle (continuous: theta is the body's,
 * never wrapped) and their rates: (x', y') + theta' (-(R r)_y, (R r)_x) and theta'. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *q = state->q, *v = state->v;
  double c = cos(q[C_TH]), s = sin(q[C_TH]), rx = self->params[P_RX], ry = self->params[P_RY];
  double ax = c * rx - s * ry, ay = s * rx + c * ry;
  out[O_X] = q[C_X] + ax;
  out[O_Y] = q[C_Y] + ay;
  out[O_ANGLE] = q[C_TH] + self->params[P_ANGLE];
  out[O_VX] = v[C_X] - v[C_TH] * ay;
  out[O_VY] = v[C_Y] + v[C_TH] * ax;
  out[O_OMEGA] = v[C_TH];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "marker2d",
  .doc =
    "a point pos and frame at (rx, ry), angle, on the planar body its terminal body is glued to",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .outputs = outputs,
};

const jyPartType *jy_part_marker2d(void) { return &type; }

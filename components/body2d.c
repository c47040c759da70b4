/* components/body2d.c — a planar rigid body: centre of mass (x, y) and absolute orientation
 * theta (continuous, never wrapped), mass m and moment of inertia J about the centre of mass.
 * M = diag(m, m, J) is constant and Q is its weight: in absolute coordinates a planar body
 * has no velocity-dependent inertia terms. Terminals: `frame` (x, y, theta) and `pos`
 * (x, y), both plain blocks of the coordinates; points and frames elsewhere on the body are
 * marker2d parts glued to `frame` (docs/bodies2d.md). */
#include <math.h>

#include "parts.h"

enum { P_M, P_J };
enum { C_X, C_Y, C_TH, NC };

static const jyParamSpec params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
  {"J", 1, JY_PARAM_POSITIVE, "kg m^2", "moment of inertia about the centre of mass"},
};

static const char *const coord_names[NC] = {"x", "y", "theta"};

/* Its frame at the centre of mass, turned by theta about z. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)self;
  (void)row_forces;
  jy_visual_point(out, JY_VISUAL_FRAME, 2, state->q);
  out->quat[0] = cos(0.5 * state->q[C_TH]);
  out->quat[3] = sin(0.5 * state->q[C_TH]);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = coord_names[i];
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"frame", 3, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"pos", 2, 1, 0};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  s->nvisuals = 1;
  s->visual = visual;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has frame and pos)", k);
  jy_point_terminal(k == 0 ? 3 : 2, 0, self->ncoords, state->q, value, jac);
  return 0;
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  (void)state;
  M[0 + 0 * NC] = M[1 + 1 * NC] = self->params[P_M];
  M[2 + 2 * NC] = self->params[P_J];
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  Q[C_X] = self->params[P_M] * state->gravity[0];
  Q[C_Y] = self->params[P_M] * state->gravity[1];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  const double *q = state->q, *v = state->v, *g = state->gravity;
  double m = self->params[P_M];
  *kinetic =
    0.5 * (m * (v[C_X] * v[C_X] + v[C_Y] * v[C_Y]) + self->params[P_J] * v[C_TH] * v[C_TH]);
  *potential = -m * (g[0] * q[C_X] + g[1] * q[C_Y]);
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "body2d",
  .doc = "planar rigid body: centre of mass (x, y), angle theta; terminals frame and pos",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .mass = mass,
  .force = force,
  .energy = energy,
};

const jyPartType *jy_part_body2d(void) { return &type; }

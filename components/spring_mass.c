/* components/spring_mass.c — the SICM spring-mass part: a mass on a spring whose base is a
 * coordinate of its own (xi), so that the base can be glued to another part. Along one axis:
 * L = 1/2 m (xi' + x')^2 - 1/2 k x^2 + m g0 (xi + X + x). */
#include "parts.h"

enum { P_M, P_K, P_X };
enum { C_XI, C_X };

static const jyParamSpec params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass at the tip"},
  {"k", 1, JY_PARAM_NONNEGATIVE, "N/m", "spring stiffness"},
  {"X", 1, JY_PARAM_NONNEGATIVE, "m", "rest length of the spring"},
};

/* On the x axis: the spring from the base to the tip, and the mass at the tip. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  double ends[2] = {state->q[C_XI], state->q[C_XI] + self->params[P_X] + state->q[C_X]};
  jy_visual_ends(&out[0], JY_VISUAL_SPRING, 1, ends);
  jy_visual_point(&out[1], JY_VISUAL_POINT, 1, ends + 1);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = 2;
  s->coord_names[C_XI] = "xi";
  s->coord_names[C_X] = "x";
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"base", 1, 1, 0};
  s->terminals[1] = (jyTerminalSpec){.name = "tip", .dim = 1};
  s->noutputs = 1;
  s->output_names[0] = "tension";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  s->nvisuals = 2;
  s->visual = visual;
  return 0;
}

/* base = xi, tip = xi + X + x: both linear, so the biases are 0. */
static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  const double *q = state->q;
  if (k == 0) {
    value[0] = q[C_XI];
    if (jac) jac[C_XI] = 1.0;
  } else if (k == 1) {
    value[0] = q[C_XI] + self->params[P_X] + q[C_X];
    if (jac) jac[C_XI] = jac[C_X] = 1.0;
  } else {
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has base and tip)", k);
  }
  return 0;
}

/* Singular on purpose: the base carries no mass of its own. */
static int mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  (void)state;
  double m = self->params[P_M];
  M[0] = M[1] = M[2] = M[3] = m;
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  double mg = self->params[P_M] * state->gravity[0];
  Q[C_XI] = mg;
  Q[C_X] = mg - self->params[P_K] * state->q[C_X];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  const double *p = self->params, *q = state->q, *v = state->v;
  double w = v[C_XI] + v[C_X];
  *kinetic = 0.5 * p[P_M] * w * w;
  double tip = q[C_XI] + p[P_X] + q[C_X];
  *potential = 0.5 * p[P_K] * q[C_X] * q[C_X] - p[P_M] * state->gravity[0] * tip;
  return 0;
}

static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  out[0] = self->params[P_K] * state->q[C_X];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "spring_mass",
  .doc = "1-D mass m on a spring (k, rest length X) from terminal base (xi) to tip (xi + X + x)",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .mass = mass,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_spring_mass(void) { return &type; }

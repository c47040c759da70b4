/* components/rotational_spring2d.c — a rotational spring-damper between two planar frames
 * (dim = 3: terminals a and b are frames (x, y, theta)) or two angles (dim = 1: a and b are
 * angle terminals, such as a body's coordinate terminal body.theta). With the relative
 * angle phi = theta_b - theta_a - theta0 the part applies the torque
 *   T = k phi + c phi' - tau
 * to a, and -T to b: the spring pulls the two towards phi = 0, the damper resists the
 * relative rotation, and tau is a constant torque that turns b against a (a motor between
 * them). The ends are massless coordinate blocks, eliminated with their glues. */
#include "parts.h"

enum { P_DIM, P_K, P_C, P_THETA0, P_TAU };

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "3: a and b are planar frames (x, y, theta); 1: angles"},
  {"k", 0, JY_PARAM_NONNEGATIVE, "N m/rad", "stiffness"},
  {"c", 0, JY_PARAM_NONNEGATIVE, "N m s/rad", "damping"},
  {"theta0", 0, JY_PARAM_REAL, "rad", "relative angle theta_b - theta_a at rest"},
  {"tau", 0, JY_PARAM_REAL, "N m", "constant torque on b (and -tau on a)"},
};

static const char *const names3[6] = {"ax", "ay", "atheta", "bx", "by", "btheta"};
static const char *const names1[2] = {"atheta", "btheta"};

static int dim_of(const jyPartInstance *self) { return self->ncoords / 2; }

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  int dim = jy_part_dim(p);
  if (dim == 2)
    return jy_part_fail(error, error_len,
                        "dim = 2 is no planar rotation: use dim = 3 (frames) or 1 (angles)");
  s->ncoords = 2 * dim;
  for (int i = 0; i < 2 * dim; i++) s->coord_names[i] = dim == 3 ? names3[i] : names1[i];
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"a", dim, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"b", dim, 1, dim};
  s->noutputs = 3;
  s->output_names[0] = "angle";
  s->output_names[1] = "rate";
  s->output_names[2] = "torque";
  s->flags = JY_PART_CONSTANT_MASS; /* massless ends */
  if (p[P_C] == 0.0) s->flags |= JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  int dim = dim_of(self);
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has a and b)", k);
  jy_point_terminal(dim, k * dim, self->ncoords, state->q, value, jac);
  return 0;
}

/* The spring-damper torque T on a (the torque on b is -T). */
static double torque(const jyPartInstance *self, const jyPartState *state) {
  int dim = dim_of(self);
  const double *p = self->params, *q = state->q, *v = state->v;
  double phi = q[2 * dim - 1] - q[dim - 1] - p[P_THETA0];
  double rate = v[2 * dim - 1] - v[dim - 1];
  return p[P_K] * phi + p[P_C] * rate - p[P_TAU];
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  int dim = dim_of(self);
  double T = torque(self, state);
  Q[dim - 1] = T;
  Q[2 * dim - 1] = -T;
  return 0;
}

/* V = k phi^2 / 2 - tau (theta_b - theta_a): the spring and the constant torque. */
static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  int dim = dim_of(self);
  const double *p = self->params, *q = state->q;
  double rel = q[2 * dim - 1] - q[dim - 1], phi = rel - p[P_THETA0];
  *kinetic = 0.0;
  *potential = 0.5 * p[P_K] * phi * phi - p[P_TAU] * rel;
  return 0;
}

/* angle = theta_b - theta_a, rate = its derivative, torque = k phi + c phi' - tau (on a). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  int dim = dim_of(self);
  out[0] = state->q[2 * dim - 1] - state->q[dim - 1];
  out[1] = state->v[2 * dim - 1] - state->v[dim - 1];
  out[2] = torque(self, state);
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "rotational_spring2d",
  .doc =
    "rotational spring-damper k, c (and constant torque tau) between planar frames or angles a, b",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_rotational_spring2d(void) { return &type; }

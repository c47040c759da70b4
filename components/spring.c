/* components/spring.c — a linear spring between two massless ends a and b. */
#include "parts.h"

enum { P_DIM, P_K, P_L };

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"k", 1, JY_PARAM_NONNEGATIVE, "N/m", "stiffness"},
  {"L", 0, JY_PARAM_NONNEGATIVE, "m", "rest length"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  jy_ends_shape(s, jy_part_dim(p), p[P_L]);
  /* a mesh holds thousands: its tension and length are there when asked for */
  s->flags |= JY_PART_CONSERVATIVE | JY_PART_OUTPUTS_ON_REQUEST;
  s->noutputs = 2;
  s->output_names[0] = "tension";
  s->output_names[1] = "length";
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  int dim = jy_part_dim(self->params);
  double k = self->params[P_K], L = self->params[P_L];
  jyEnds e;
  jy_ends_eval(&e, dim, state->q, state->v);
  if (dim > 1 && L == 0.0) {
    /* k (len - 0) u = k d: no direction needed, even when the ends meet. */
    for (int i = 0; i < dim; i++) {
      Q[i] = k * e.d[i];
      Q[dim + i] = -k * e.d[i];
    }
    return 0;
  }
  if (dim > 1 && e.len == 0.0)
    return jy_part_fail(state->error, state->error_len,
                        "the ends coincide, so the direction of the spring force (rest length "
                        "%g m) is undefined",
                        L);
  double f = k * (e.len - L); /* tension: pulls a toward b */
  for (int i = 0; i < dim; i++) {
    Q[i] = f * e.u[i];
    Q[dim + i] = -f * e.u[i];
  }
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  jyEnds e;
  jy_ends_eval(&e, jy_part_dim(self->params), state->q, state->v);
  double stretch = e.len - self->params[P_L];
  *kinetic = 0.0;
  *potential = 0.5 * self->params[P_K] * stretch * stretch;
  return 0;
}

static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  jyEnds e;
  jy_ends_eval(&e, jy_part_dim(self->params), state->q, state->v);
  out[0] = self->params[P_K] * (e.len - self->params[P_L]);
  out[1] = e.len;
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "spring",
  .doc = "a massless linear spring of stiffness k and rest length L between terminals a and b",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = jy_ends_terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_spring(void) { return &type; }

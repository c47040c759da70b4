/* components/damper.c — a linear viscous damper between two massless ends a and b. */
#include "parts.h"

enum { P_DIM, P_C };

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"c", 1, JY_PARAM_NONNEGATIVE, "N*s/m", "damping coefficient"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  jy_ends_shape(s, jy_part_dim(p), 1.0);
  s->flags |= JY_PART_OUTPUTS_ON_REQUEST; /* as a spring's: there when asked for */
  s->noutputs = 1;
  s->output_names[0] = "force";
  return 0;
}

/* The damper's force f = c len' (positive while it lengthens), or a failure when the ends
 * coincide in 2-D/3-D: then the line of action is undefined. */
static int damper_force(const jyPartInstance *self, const jyPartState *state, jyEnds *e,
                        double *f) {
  int dim = jy_part_dim(self->params);
  jy_ends_eval(e, dim, state->q, state->v);
  if (dim > 1 && e->len == 0.0)
    return jy_part_fail(state->error, state->error_len,
                        "the ends coincide, so the direction of the damper force is undefined");
  *f = self->params[P_C] * e->len_rate;
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  int dim = jy_part_dim(self->params);
  jyEnds e;
  double f = 0.0;
  if (damper_force(self, state, &e, &f)) return 1;
  for (int i = 0; i < dim; i++) {
    Q[i] = f * e.u[i];
    Q[dim + i] = -f * e.u[i];
  }
  return 0;
}

static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  jyEnds e;
  return damper_force(self, state, &e, &out[0]);
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "damper",
  .doc = "a massless linear viscous damper of coefficient c between terminals a and b",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = jy_ends_terminal,
  .force = force,
  .outputs = outputs,
};

const jyPartType *jy_part_damper(void) { return &type; }

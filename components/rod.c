/* components/rod.c — a massless rigid rod: the distance between ends a and b is L. */
#include "parts.h"

enum { P_DIM, P_L };

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"L", 1, JY_PARAM_POSITIVE, "m", "length"},
};

/* Drawn between its ends. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  jy_visual_ends(out, JY_VISUAL_ROD, jy_part_dim(self->params), state->q);
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  jy_ends_shape(s, jy_part_dim(p), p[P_L]);
  s->flags |= JY_PART_CONSERVATIVE;
  s->nrows = 1;
  s->row_names[0] = "length";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 1;
  s->output_names[0] = "tension";
  s->nvisuals = 1;
  s->visual = visual;
  return 0;
}

/* phi = len - L. In 1-D len is the signed b - a, so phi is linear and b = 0. */
static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  int dim = jy_part_dim(self->params);
  jyEnds e;
  jy_ends_eval(&e, dim, state->q, state->v);
  if (dim > 1 && e.len == 0.0)
    return jy_part_fail(state->error, state->error_len,
                        "the ends coincide, so the direction of the rod is undefined");
  for (int i = 0; i < dim; i++) {
    A[i] = -e.u[i]; /* one row: leading dimension 1 */
    A[dim + i] = e.u[i];
  }
  if (dim > 1) {
    /* len'' = u . d'' + (|d'|^2 - (u . d')^2) / len */
    double rr = 0.0;
    for (int i = 0; i < dim; i++) rr += e.rate[i] * e.rate[i];
    rhs[0] = -(rr - e.len_rate * e.len_rate) / e.len;
  }
  if (residual) residual[0] = e.len - self->params[P_L];
  if (rate) rate[0] = e.len_rate;
  return 0;
}

/* The force on b is u lambda; tension pulls b toward a, so it is -lambda. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)self;
  (void)state;
  out[0] = -row_forces[0];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "rod",
  .doc = "a massless rigid rod holding terminals a and b at distance L",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = jy_ends_terminal,
  .constraints = constraints,
  .outputs = outputs,
};

const jyPartType *jy_part_rod(void) { return &type; }

/* components/slider2d.c — a planar prismatic joint (slider) between frames a and b: b keeps
 * its orientation relative to a (theta_b - theta_a = theta0) and its origin stays on the
 * line through a's origin along the axis u = (cos psi, sin psi), psi = theta_a + angle.
 * With d = p_b - p_a and n = (-sin psi, cos psi) the rows are
 *   rotation: theta_b - theta_a - theta0 = 0,
 *   across:   n . d = 0,
 * and the joint's constraint torque and normal force are the channels
 * force.<slider>.rotation (torque on b, N m) and force.<slider>.across (force on b along n,
 * N). The ends are massless copies of the two frames, eliminated with their glues. */
#include <math.h>

#include "parts.h"

enum { P_ANGLE, P_THETA0 };
enum { AX, AY, ATH, BX, BY, BTH, NC };

static const jyParamSpec params[] = {
  {"angle", 0, JY_PARAM_REAL, "rad", "direction of the sliding axis in frame a"},
  {"theta0", 0, JY_PARAM_REAL, "rad", "the fixed relative angle theta_b - theta_a"},
};

static const char *const coord_names[NC] = {"ax", "ay", "atheta", "bx", "by", "btheta"};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = coord_names[i];
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"a", 3, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"b", 3, 1, 3};
  s->nrows = 2;
  s->row_names[0] = "rotation";
  s->row_names[1] = "across";
  s->row_kinds[0] = s->row_kinds[1] = JY_ROW_POSITION;
  s->noutputs = 2;
  s->output_names[0] = "slide";
  s->output_names[1] = "slide_rate";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has a and b)", k);
  jy_point_terminal(3, 3 * k, self->ncoords, state->q, value, jac);
  return 0;
}

/* The axis u, the normal n, the offset d = p_b - p_a and its rate. */
typedef struct Axis {
  double u[2], n[2], d[2], dd[2];
} Axis;

static void axis_eval(const jyPartInstance *self, const jyPartState *state, Axis *x) {
  const double *q = state->q, *v = state->v;
  double psi = q[ATH] + self->params[P_ANGLE];
  x->u[0] = cos(psi);
  x->u[1] = sin(psi);
  x->n[0] = -x->u[1];
  x->n[1] = x->u[0];
  x->d[0] = q[BX] - q[AX];
  x->d[1] = q[BY] - q[AY];
  x->dd[0] = v[BX] - v[AX];
  x->dd[1] = v[BY] - v[AY];
}

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1]; }

/* across: phi = n . d, phi' = n . d' - (u . d) w_a (n' = -u w_a), and
 * phi'' = n . d'' - (u . d) w_a' - 2 (u . d') w_a - (n . d) w_a^2 (u' = n w_a). */
static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  const int m = 2;
  Axis x;
  axis_eval(self, state, &x);
  double wa = state->v[ATH], ud = dot(x.u, x.d);
  A[0 + ATH * m] = -1.0;
  A[0 + BTH * m] = 1.0;
  A[1 + AX * m] = -x.n[0];
  A[1 + AY * m] = -x.n[1];
  A[1 + BX * m] = x.n[0];
  A[1 + BY * m] = x.n[1];
  A[1 + ATH * m] = -ud;
  rhs[1] = 2.0 * dot(x.u, x.dd) * wa + dot(x.n, x.d) * wa * wa;
  if (residual) {
    residual[0] = state->q[BTH] - state->q[ATH] - self->params[P_THETA0];
    residual[1] = dot(x.n, x.d);
  }
  if (rate) {
    rate[0] = state->v[BTH] - state->v[ATH];
    rate[1] = dot(x.n, x.dd) - ud * wa;
  }
  return 0;
}

/* slide = u . d, the position of b's origin along the axis; slide_rate its derivative. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  Axis x;
  axis_eval(self, state, &x);
  out[0] = dot(x.u, x.d);
  out[1] = dot(x.u, x.dd) + dot(x.n, x.d) * state->v[ATH];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "slider2d",
  .doc = "planar prismatic joint: frame b slides along an axis of frame a without turning",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
};

const jyPartType *jy_part_slider2d(void) { return &type; }

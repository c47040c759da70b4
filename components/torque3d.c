/* components/torque3d.c — a constant load on a spatial frame: the torque (tx, ty, tz) and the
 * force (fx, fy, fz) at the frame's origin, both in space axes. The part owns a massless
 * copy (x, y, z, q0..q3) of the frame it is glued to (eliminated with the glue to a body3d's
 * frame), and Q = (f, 2 E(q)^T tau / |q|^2): the virtual work of tau through the space
 * angular velocity w = 2 E(q) q' / |q|^2.
 *
 * The force is conservative (V = -f . x). A constant torque in space axes is not: 2 E(q)^T
 * tau = B q with B antisymmetric, a field without a potential on the unit quaternions (it
 * has no zero there), so the part is flagged conservative only when tau = 0 and the energy
 * channel of a model with a torque changes by the work done (the output `power`). Loads
 * that vary with time or state are Lua parts (docs/bodies3d.md shows one). */
#include "parts.h"
#include "spatial.h"

enum { P_TX, P_TY, P_TZ, P_FX, P_FY, P_FZ, NP };
enum { NC = JY_FRAME_DIM, C_Q = JY_FRAME_Q };

static const jyParamSpec params[] = {
  {"tx", 0, JY_PARAM_REAL, "N m", "x component of the torque, space axes"},
  {"ty", 0, JY_PARAM_REAL, "N m", "y component of the torque, space axes"},
  {"tz", 0, JY_PARAM_REAL, "N m", "z component of the torque, space axes"},
  {"fx", 0, JY_PARAM_REAL, "N", "x component of the force at the frame's origin, space axes"},
  {"fy", 0, JY_PARAM_REAL, "N", "y component of the force at the frame's origin, space axes"},
  {"fz", 0, JY_PARAM_REAL, "N", "z component of the force at the frame's origin, space axes"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = jy_names_frame[i];
  s->coord_defaults[C_Q] = 1.0;
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"frame", JY_FRAME_DIM, 1, 0};
  s->noutputs = 1;
  s->output_names[0] = "power";
  s->flags = JY_PART_CONSTANT_MASS;
  if (p[P_TX] == 0.0 && p[P_TY] == 0.0 && p[P_TZ] == 0.0) s->flags |= JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)self;
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(JY_FRAME_DIM, 0, NC, state->q, value, jac);
  return 0;
}

static double qnorm2(const jyPartState *state) {
  const double *q = state->q + C_Q;
  return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
}

static int zero_quaternion(const jyPartState *state) {
  if (qnorm2(state) > 0.0) return 0;
  return jy_part_fail(state->error, state->error_len,
                      "the frame's quaternion is zero: no orientation to apply the torque in");
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  const double *p = self->params;
  for (int i = 0; i < 3; i++) Q[i] = p[P_FX + i];
  if (p[P_TX] == 0.0 && p[P_TY] == 0.0 && p[P_TZ] == 0.0) return 0;
  if (zero_quaternion(state)) return 1;
  double E[12], n2 = qnorm2(state);
  jy_q_E(E, state->q + C_Q);
  for (int j = 0; j < 4; j++)
    Q[C_Q + j] = 2.0 * (E[j] * p[P_TX] + E[4 + j] * p[P_TY] + E[8 + j] * p[P_TZ]) / n2;
  return 0;
}

/* V = -f . x: the force's potential (the torque has none). */
static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  const double *p = self->params, *q = state->q;
  *kinetic = 0.0;
  *potential = -(p[P_FX] * q[0] + p[P_FY] * q[1] + p[P_FZ] * q[2]);
  return 0;
}

/* The power the load delivers, f . x' + tau . w (W), w the space angular velocity. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *p = self->params, *v = state->v;
  if (zero_quaternion(state)) return 1;
  double E[12], n2 = qnorm2(state), P = 0.0;
  jy_q_E(E, state->q + C_Q);
  for (int i = 0; i < 3; i++) {
    double w = 0.0;
    for (int j = 0; j < 4; j++) w += 2.0 * E[i * 4 + j] * v[C_Q + j] / n2;
    P += p[P_FX + i] * v[i] + p[P_TX + i] * w;
  }
  out[0] = P;
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "torque3d",
  .doc = "a constant torque (tx, ty, tz) and force (fx, fy, fz), space axes, on the spatial "
         "frame its terminal frame is glued to",
  .params = params,
  .nparams = NP,
  .shape = shape,
  .terminal = terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_torque3d(void) { return &type; }

/* components/rotational_spring3d.c — a rotational spring-damper between two spatial frames
 * a and b (7-D: x, y, z, q0..q3 each).
 *
 * The relative rotation q_r = q_a* (x) q_b = (w, u) (b's orientation in a's axes) has the
 * rotation vector theta = 2 atan2(|u|, w) u / |u| (a's axes, and b's: the axis is what the
 * relative rotation leaves fixed), written as f(u.u, w) u with a power series near u = 0, so
 * it is smooth there. It is invariant under scaling q_a or q_b (off the unit sphere too), and
 * continuous along a motion up to |theta| = 2 pi, where q_r = -1 and the direction is
 * undefined: like a torsion bar, a twist past pi keeps pulling back, it does not wrap.
 *
 * The spring's potential is V = 1/2 k |theta|^2 and its generalized force Q = -dV/dq is
 * computed exactly with hyper-dual numbers; on unit quaternions it is the torque -k theta on
 * b (b's axes) and +k theta on a (a's axes). The damper applies -c (w_b - w_a) to b and the
 * opposite to a (space axes, w = 2 E(q) q' / |q|^2), Q_q = 2 E(q)^T tau / |q|^2, so its power
 * is exactly -c |w_b - w_a|^2. The ends are massless coordinate blocks, eliminated with their
 * glues to body3d or ground3d frames. */
#include <math.h>

#include "parts.h"
#include "spatial.h"

enum { P_K, P_C, NP };
enum { NC = 2 * JY_FRAME_DIM, C_A = 0, C_B = JY_FRAME_DIM };
enum { O_ANGLE, O_TX, O_TY, O_TZ, NO };

static const jyParamSpec params[] = {
  {"k", 0, JY_PARAM_NONNEGATIVE, "N m/rad", "rotational stiffness"},
  {"c", 0, JY_PARAM_NONNEGATIVE, "N m s/rad", "rotational damping"},
};

static const char *const output_names[NO] = {"angle", "torque_x", "torque_y", "torque_z"};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < JY_FRAME_DIM; i++) {
    s->coord_names[C_A + i] = jy_names_frame_a[i];
    s->coord_names[C_B + i] = jy_names_frame_b[i];
  }
  s->coord_defaults[C_A + JY_FRAME_Q] = s->coord_defaults[C_B + JY_FRAME_Q] = 1.0;
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"a", JY_FRAME_DIM, 1, C_A};
  s->terminals[1] = (jyTerminalSpec){"b", JY_FRAME_DIM, 1, C_B};
  s->noutputs = NO;
  for (int i = 0; i < NO; i++) s->output_names[i] = output_names[i];
  s->flags = JY_PART_CONSTANT_MASS; /* massless ends */
  if (p[P_C] == 0.0) s->flags |= JY_PART_CONSERVATIVE;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)self;
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has a and b)", k);
  jy_point_terminal(JY_FRAME_DIM, k == 0 ? C_A : C_B, NC, state->q, value, jac);
  return 0;
}

/* theta = f(s, w) u with s = u.u: f = 2 atan2(sqrt s, w) / sqrt s, and near s = 0 (w > 0)
 * f = (2 / w) sum_n (-1)^n y^n / (2n + 1), y = s / w^2 (atan(x)/x; y < 1e-2: 12 terms leave
 * < 1e-25). */
static void rotation_vector(const jyHyper *q, jyHyper theta[3]) {
  jyHyper ac[4], r[4];
  jy_hq_conj(ac, q + C_A + JY_FRAME_Q);
  jy_hq_mul(r, ac, q + C_B + JY_FRAME_Q);
  jyHyper w = r[0], s = jy_hd_dot3(r + 1, r + 1), f;
  if (w.v > 0.0 && s.v < 1e-2 * w.v * w.v) {
    jyHyper y = jy_hd_div(s, jy_hd_mul(w, w)), g = jy_hd_const(0.0);
    for (int n = 11; n >= 0; n--)
      g = jy_hd_add_scalar(jy_hd_mul(g, y), (n % 2 ? -1.0 : 1.0) / (2.0 * n + 1.0));
    f = jy_hd_div(jy_hd_scale(g, 2.0), w);
  } else {
    jyHyper n = jy_hd_sqrt(s);
    f = jy_hd_div(jy_hd_scale(jy_hd_atan2(n, w), 2.0), n);
  }
  for (int i = 0; i < 3; i++) theta[i] = jy_hd_mul(f, r[1 + i]);
}

static void theta_fn(const void *ctx, const jyHyper *q, jyHyper *out) {
  (void)ctx;
  rotation_vector(q, out);
}

/* V / k = 1/2 |theta|^2 */
static void potential_fn(const void *ctx, const jyHyper *q, jyHyper *out) {
  (void)ctx;
  jyHyper th[3];
  rotation_vector(q, th);
  out[0] = jy_hd_scale(jy_hd_dot3(th, th), 0.5);
}

static double qnorm2(const double *q) {
  return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
}

/* Refuses zero quaternions and the relative rotation of 2 pi (q_r = -1), where the spring's
 * direction is undefined. */
static int check_state(const jyPartState *state) {
  const double *qa = state->q + C_A + JY_FRAME_Q, *qb = state->q + C_B + JY_FRAME_Q;
  if (!(qnorm2(qa) > 0.0) || !(qnorm2(qb) > 0.0))
    return jy_part_fail(state->error, state->error_len,
                        "a zero quaternion on frame %s: no orientation",
                        qnorm2(qa) > 0.0 ? "b" : "a");
  double ua[3] = {-qa[1], -qa[2], -qa[3]};
  double w = qa[0] * qb[0] - (ua[0] * qb[1] + ua[1] * qb[2] + ua[2] * qb[3]);
  double u[3] = {qa[0] * qb[1] + ua[0] * qb[0] + ua[1] * qb[3] - ua[2] * qb[2],
                 qa[0] * qb[2] + ua[1] * qb[0] + ua[2] * qb[1] - ua[0] * qb[3],
                 qa[0] * qb[3] + ua[2] * qb[0] + ua[0] * qb[2] - ua[1] * qb[1]};
  if (u[0] == 0.0 && u[1] == 0.0 && u[2] == 0.0 && w <= 0.0)
    return jy_part_fail(state->error, state->error_len,
                        "frame b is turned by 2 pi relative to a (q_a* q_b = -1): the "
                        "spring's direction is undefined (start with q_a* q_b near +1)");
  return 0;
}

/* Space angular velocity of the frame whose quaternion is q: 2 E(q) q' / |q|^2. */
static void omega_space(const double *q, const double *v, double w[3]) {
  double E[12], n2 = qnorm2(q);
  jy_q_E(E, q);
  for (int i = 0; i < 3; i++) {
    w[i] = 0.0;
    for (int j = 0; j < 4; j++) w[i] += 2.0 * E[i * 4 + j] * v[j] / n2;
  }
}

/* The damper's torque on b, space axes: -c (w_b - w_a). */
static void damper_torque(const jyPartInstance *self, const jyPartState *state, double tb[3]) {
  double wa[3], wb[3];
  omega_space(state->q + C_A + JY_FRAME_Q, state->v + C_A + JY_FRAME_Q, wa);
  omega_space(state->q + C_B + JY_FRAME_Q, state->v + C_B + JY_FRAME_Q, wb);
  for (int i = 0; i < 3; i++) tb[i] = -self->params[P_C] * (wb[i] - wa[i]);
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  if (check_state(state)) return 1;
  double k = self->params[P_K], c = self->params[P_C];
  if (k != 0.0) {
    double dV[NC];
    jy_spatial_eval(potential_fn, NULL, NC, 1, state->q, NULL, NULL, dV, NULL, NULL);
    for (int j = 0; j < NC; j++) Q[j] = -k * dV[j];
  }
  if (c != 0.0) {
    double tb[3], E[12];
    damper_torque(self, state, tb);
    for (int end = 0; end < 2; end++) {
      const double *q = state->q + (end ? C_B : C_A) + JY_FRAME_Q;
      double sign = end ? 1.0 : -1.0, n2 = qnorm2(q);
      jy_q_E(E, q);
      for (int j = 0; j < 4; j++)
        Q[(end ? C_B : C_A) + JY_FRAME_Q + j] +=
          sign * 2.0 * (E[j] * tb[0] + E[4 + j] * tb[1] + E[8 + j] * tb[2]) / n2;
    }
  }
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  *kinetic = 0.0;
  if (self->params[P_K] == 0.0) return 0;
  if (check_state(state)) return 1;
  double V;
  jy_spatial_eval(potential_fn, NULL, NC, 1, state->q, NULL, &V, NULL, NULL, NULL);
  *potential = self->params[P_K] * V;
  return 0;
}

/* angle = |theta| (rad); torque_x/y/z = the torque on b in space axes, N m (a gets the
 * opposite): -k R(q_a) theta / |q_a|^2 - c (w_b - w_a). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  if (check_state(state)) return 1;
  double th[3], ts[3], tb[3];
  const double *qa = state->q + C_A + JY_FRAME_Q;
  jy_spatial_eval(theta_fn, NULL, NC, 3, state->q, NULL, th, NULL, NULL, NULL);
  jy_q_rotate(ts, qa, th);
  damper_torque(self, state, tb);
  out[O_ANGLE] = sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2]);
  for (int i = 0; i < 3; i++) out[O_TX + i] = -self->params[P_K] * ts[i] / qnorm2(qa) + tb[i];
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "rotational_spring3d",
  .doc = "rotational spring-damper k, c between spatial frames a and b (torque -k theta - c "
         "(w_b - w_a) on b, theta the relative rotation vector)",
  .params = params,
  .nparams = NP,
  .shape = shape,
  .terminal = terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_rotational_spring3d(void) { return &type; }

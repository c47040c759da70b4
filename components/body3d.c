/* components/body3d.c — a spatial rigid body: centre of mass (x, y, z) and a unit
 * quaternion (q0, q1, q2, q3), scalar first, whose unit norm is the part's own position row.
 *
 * With the body angular velocity w = 2 G(q) q' (G below), the kinetic energy is
 * T = 1/2 m |x'|^2 + 1/2 w^T J w, so M = diag(m I, 4 G^T J G): rank 3 in the four rotational
 * coordinates (G q = 0), which the engine's auxiliary-mass solve handles exactly together
 * with the norm row. Lagrange's equations give Q = (m g, -4 G(q')^T J w): the gyroscopic
 * terms, with no special case (G(q) q' = -G(q') q because G is bilinear and antisymmetric). */
#include <math.h>

#include "parts.h"
#include "spatial.h"

enum { P_M, P_IXX, P_IYY, P_IZZ, P_IXY, P_IXZ, P_IYZ, NP };
enum { NC = 7, C_Q = 3 };

static const jyParamSpec params[] = {
  {"m", 1, JY_PARAM_NONNEGATIVE, "kg", "mass"},
  {"Ixx", 0.4, JY_PARAM_POSITIVE, "kg m^2", "moment of inertia about the body x axis at the CoM"},
  {"Iyy", 0.4, JY_PARAM_POSITIVE, "kg m^2", "moment of inertia about the body y axis at the CoM"},
  {"Izz", 0.4, JY_PARAM_POSITIVE, "kg m^2", "moment of inertia about the body z axis at the CoM"},
  {"Ixy", 0, JY_PARAM_REAL, "kg m^2", "inertia tensor element xy (= -integral of x y dm)"},
  {"Ixz", 0, JY_PARAM_REAL, "kg m^2", "inertia tensor element xz (= -integral of x z dm)"},
  {"Iyz", 0, JY_PARAM_REAL, "kg m^2", "inertia tensor element yz (= -integral of y z dm)"},
};

enum { O_WX, O_WY, O_WZ, O_HX, O_HY, O_HZ, NO };
static const char *const output_names[NO] = {"omega_x", "omega_y", "omega_z", "Lx", "Ly", "Lz"};

/* The inertia tensor J in body axes (row-major). */
static void inertia(const double *p, double J[9]) {
  J[0] = p[P_IXX], J[4] = p[P_IYY], J[8] = p[P_IZZ];
  J[1] = J[3] = p[P_IXY];
  J[2] = J[6] = p[P_IXZ];
  J[5] = J[7] = p[P_IYZ];
}

/* Positive definite, and each principal moment at most the sum of the other two (a body's
 * mass lies in space: the second moment matrix tr(J)/2 I - J is positive semi-definite). */
static int check_inertia(const double *p, char *error, size_t error_len) {
  double J[9], l[3];
  inertia(p, J);
  int diagonal = p[P_IXY] == 0.0 && p[P_IXZ] == 0.0 && p[P_IYZ] == 0.0;
  double tr = J[0] + J[4] + J[8], tol = 1e-12 * tr;
  if (diagonal) {
    static const char *const names[3] = {"Ixx", "Iyy", "Izz"};
    const double d[3] = {J[0], J[4], J[8]};
    for (int i = 0; i < 3; i++) {
      int j = (i + 1) % 3, k = (i + 2) % 3;
      if (d[i] - (d[j] + d[k]) > tol)
        return jy_part_fail(error, error_len,
                            "the inertia violates the triangle inequality: %s = %g kg m^2 "
                            "exceeds %s + %s = %g (each principal moment must be at most the "
                            "sum of the other two)",
                            names[i], d[i], names[j], names[k], d[j] + d[k]);
    }
    return 0;
  }
  jy_sym3_eig(J, l);
  if (!(l[0] > tol))
    return jy_part_fail(error, error_len,
                        "the inertia tensor (Ixx %g, Iyy %g, Izz %g, Ixy %g, Ixz %g, Iyz %g) is "
                        "not positive definite: principal moments %g, %g, %g kg m^2",
                        J[0], J[4], J[8], J[1], J[2], J[5], l[0], l[1], l[2]);
  if (l[2] - (l[0] + l[1]) > tol)
    return jy_part_fail(error, error_len,
                        "the inertia tensor (Ixx %g, Iyy %g, Izz %g, Ixy %g, Ixz %g, Iyz %g) "
                        "violates the triangle inequality: principal moment %g kg m^2 exceeds "
                        "%g + %g (each must be at most the sum of the other two)",
                        J[0], J[4], J[8], J[1], J[2], J[5], l[2], l[0], l[1]);
  return 0;
}

/* Its frame at the centre of mass with its quaternion, normalized for drawing. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)self;
  (void)row_forces;
  const double *q = state->q + C_Q;
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  jy_visual_point(out, JY_VISUAL_FRAME, 3, state->q);
  for (int i = 0; i < 4 && n > 0; i++) out->quat[i] = q[i] / n;
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  if (check_inertia(p, error, error_len)) return 1;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = jy_names_frame[i];
  s->coord_defaults[C_Q] = 1.0; /* the identity orientation */
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"frame", JY_FRAME_DIM, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"pos", 3, 1, 0};
  s->nrows = 1;
  s->row_names[0] = "norm";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = NO;
  for (int i = 0; i < NO; i++) s->output_names[i] = output_names[i];
  s->flags = JY_PART_CONSERVATIVE;
  s->spatial = JY_SPATIAL_BODY;
  s->spatial_param = P_M;
  s->nvisuals = 1;
  s->visual = visual;
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)self;
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0 && k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has frame and pos)", k);
  jy_point_terminal(k == 0 ? JY_FRAME_DIM : 3, 0, NC, state->q, value, jac);
  return 0;
}

/* The quaternion must not be zero: it would give no orientation and no rotational mass. */
static int zero_quaternion(const jyPartState *state) {
  const double *q = state->q + C_Q;
  if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 0.0) return 0;
  return jy_part_fail(state->error, state->error_len,
                      "the quaternion (q0, q1, q2, q3) is zero, which is no orientation: set a "
                      "non-zero initial value (e.g. init = { q0 = 1 } for the identity)");
}

/* w = 2 G(q) q', body axes. */
static void omega(const double *q, const double *v, double w[3]) {
  double G[12];
  jy_q_G(G, q);
  for (int i = 0; i < 3; i++) {
    w[i] = 0.0;
    for (int j = 0; j < 4; j++) w[i] += 2.0 * G[i * 4 + j] * v[j];
  }
}

static void mat3_vec(const double J[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = J[i * 3] * x[0] + J[i * 3 + 1] * x[1] + J[i * 3 + 2] * x[2];
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  if (zero_quaternion(state)) return 1;
  double m = self->params[P_M], J[9], G[12], JG[12];
  for (int i = 0; i < 3; i++) M[i + i * NC] = m;
  inertia(self->params, J);
  jy_q_G(G, state->q + C_Q);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      JG[i * 4 + j] = J[i * 3] * G[j] + J[i * 3 + 1] * G[4 + j] + J[i * 3 + 2] * G[8 + j];
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      double s = 0.0;
      for (int i = 0; i < 3; i++) s += G[i * 4 + a] * JG[i * 4 + b];
      M[(C_Q + a) + (C_Q + b) * NC] = 4.0 * s;
    }
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  double m = self->params[P_M], J[9], w[3], Jw[3], Gv[12];
  for (int i = 0; i < 3; i++) Q[i] = m * state->gravity[i];
  inertia(self->params, J);
  omega(state->q + C_Q, state->v + C_Q, w);
  mat3_vec(J, w, Jw);
  jy_q_G(Gv, state->v + C_Q);
  for (int a = 0; a < 4; a++)
    Q[C_Q + a] = -4.0 * (Gv[a] * Jw[0] + Gv[4 + a] * Jw[1] + Gv[8 + a] * Jw[2]);
  return 0;
}

/* phi = q . q - 1: A = 2 q^T, b = -2 q' . q', rate 2 q . q'. */
static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  (void)self;
  if (zero_quaternion(state)) return 1;
  const double *q = state->q + C_Q, *v = state->v + C_Q;
  double qq = 0.0, vv = 0.0, qv = 0.0;
  for (int i = 0; i < 4; i++) {
    A[C_Q + i] = 2.0 * q[i];
    qq += q[i] * q[i];
    vv += v[i] * v[i];
    qv += q[i] * v[i];
  }
  rhs[0] = -2.0 * vv;
  if (residual) residual[0] = qq - 1.0;
  if (rate) rate[0] = 2.0 * qv;
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  double m = self->params[P_M], J[9], w[3], Jw[3], vv = 0.0, gx = 0.0;
  inertia(self->params, J);
  omega(state->q + C_Q, state->v + C_Q, w);
  mat3_vec(J, w, Jw);
  for (int i = 0; i < 3; i++) {
    vv += state->v[i] * state->v[i];
    gx += state->gravity[i] * state->q[i];
  }
  *kinetic = 0.5 * m * vv + 0.5 * (w[0] * Jw[0] + w[1] * Jw[1] + w[2] * Jw[2]);
  *potential = -m * gx;
  return 0;
}

/* Angular velocity in body axes; angular momentum about the centre of mass in space axes,
 * R(q) J w / |q|^2 (R(q) is |q|^2 times the rotation). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *q = state->q + C_Q;
  double J[9], w[3], Jw[3], h[3], qq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (qq == 0.0) return zero_quaternion(state);
  inertia(self->params, J);
  omega(q, state->v + C_Q, w);
  mat3_vec(J, w, Jw);
  jy_q_rotate(h, q, Jw);
  for (int i = 0; i < 3; i++) {
    out[O_WX + i] = w[i];
    out[O_HX + i] = h[i] / qq;
  }
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "body3d",
  .doc = "spatial rigid body: centre of mass (x, y, z) and unit quaternion (q0..q3), "
         "terminals frame and pos",
  .params = params,
  .nparams = NP,
  .shape = shape,
  .terminal = terminal,
  .mass = mass,
  .force = force,
  .constraints = constraints,
  .energy = energy,
  .outputs = outputs,
};

const jyPartType *jy_part_body3d(void) { return &type; }

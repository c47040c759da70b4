/* components/joint3d.c — spatial joints between two frames: hinge3d (revolute about an
 * axis), prismatic3d (sliding along an axis) and weld3d (rigid).
 *
 * A joint is a massless part whose coordinates are copies of the two frames it joins:
 * terminals a and b are exactly those blocks (x, y, z, q0..q3 each), so gluing them to
 * body3d frames lets glue elimination substitute them away: only the joint's rows remain.
 * Joint points: P_a = x_a + R(q_a) r_a and P_b = x_b + R(q_b) r_b (offsets in each frame's
 * axes). Relative orientation rows use the vector part of q_ref* q_a* q_b, which vanishes for
 * q_b = +-q_a q_ref: q and -q are the same rotation, so quaternions are never glued directly.
 * Every row is a polynomial in the coordinates: `rows` gives it with its derivatives in closed
 * form (spatial.h, jyPairVec); `rows_ad` is the same rows in hyper-dual arithmetic, the
 * reference tests/engine/t_joint_rows.c checks the closed form against. */
#include <math.h>
#include <string.h>

#include "parts.h"
#include "spatial.h"

typedef enum { HINGE, PRISMATIC, WELD } Kind;
enum { NC = 2 * JY_FRAME_DIM, C_A = 0, C_B = JY_FRAME_DIM };

/* Parameters shared by the three types come first: the joint point in each frame. */
enum { P_RA = 0, P_RB = 3, P_AXIS = 6 };

/* One parameter a line (clang-format would pack the braces). */
/* clang-format off */
#define R_PARAMS                                                                         \
  {"rax", 0, JY_PARAM_REAL, "m", "x of the joint point in frame a's axes, from its origin"}, \
  {"ray", 0, JY_PARAM_REAL, "m", "y of the joint point in frame a's axes, from its origin"}, \
  {"raz", 0, JY_PARAM_REAL, "m", "z of the joint point in frame a's axes, from its origin"}, \
  {"rbx", 0, JY_PARAM_REAL, "m", "x of the joint point in frame b's axes, from its origin"}, \
  {"rby", 0, JY_PARAM_REAL, "m", "y of the joint point in frame b's axes, from its origin"}, \
  {"rbz", 0, JY_PARAM_REAL, "m", "z of the joint point in frame b's axes, from its origin"}
#define QREF_PARAMS(what)                                                        \
  {"q0", 1, JY_PARAM_REAL, "1", "scalar part of b's orientation relative to a, " what}, \
  {"q1", 0, JY_PARAM_REAL, "1", "x part of b's orientation relative to a, " what},      \
  {"q2", 0, JY_PARAM_REAL, "1", "y part of b's orientation relative to a, " what},      \
  {"q3", 0, JY_PARAM_REAL, "1", "z part of b's orientation relative to a, " what}
/* clang-format on */

static const jyParamSpec hinge_params[] = {
  R_PARAMS,
  {"nax", 0, JY_PARAM_REAL, "1", "x of the hinge axis in frame a's axes (any length)"},
  {"nay", 0, JY_PARAM_REAL, "1", "y of the hinge axis in frame a's axes (any length)"},
  {"naz", 1, JY_PARAM_REAL, "1", "z of the hinge axis in frame a's axes (any length)"},
  {"nbx", 0, JY_PARAM_REAL, "1", "x of the hinge axis in frame b's axes (any length)"},
  {"nby", 0, JY_PARAM_REAL, "1", "y of the hinge axis in frame b's axes (any length)"},
  {"nbz", 1, JY_PARAM_REAL, "1", "z of the hinge axis in frame b's axes (any length)"},
};
enum { HINGE_NB = P_AXIS + 3 };

static const jyParamSpec prismatic_params[] = {
  R_PARAMS,
  {"nax", 0, JY_PARAM_REAL, "1", "x of the sliding axis in frame a's axes (any length)"},
  {"nay", 0, JY_PARAM_REAL, "1", "y of the sliding axis in frame a's axes (any length)"},
  {"naz", 1, JY_PARAM_REAL, "1", "z of the sliding axis in frame a's axes (any length)"},
  QREF_PARAMS("held (normalized)"),
};
enum { PRISMATIC_Q = P_AXIS + 3 };

static const jyParamSpec weld_params[] = {
  R_PARAMS,
  QREF_PARAMS("held (normalized)"),
};
enum { WELD_Q = P_AXIS };

/* What the rows need, computed once from the parameters. */
typedef struct Joint {
  Kind kind;
  double ra[3], rb[3];
  double u[3], s1[3], s2[3]; /* the axis and two normals to it, frame a's axes */
  double ub[3], tb[3];       /* hinge: the axis and a normal to it, frame b's axes */
  double qref_conj[4];       /* conjugate of the held relative orientation */
} Joint;

static Kind kind_of(const jyPartType *type);

/* Fills j from the parameters; also the validation `shape` reports. */
static int joint_setup(Kind kind, const double *p, Joint *j, char *error, size_t error_len) {
  j->kind = kind;
  for (int i = 0; i < 3; i++) j->ra[i] = p[P_RA + i], j->rb[i] = p[P_RB + i];
  if (kind != WELD && jy_spatial_basis(p + P_AXIS, j->u, j->s1, j->s2))
    return jy_part_fail(error, error_len, "the axis (nax, nay, naz) is zero: give it a direction");
  if (kind == HINGE) {
    double s2[3];
    if (jy_spatial_basis(p + HINGE_NB, j->ub, j->tb, s2))
      return jy_part_fail(error, error_len,
                          "the axis in frame b (nbx, nby, nbz) is zero: give it a direction");
    return 0;
  }
  const double *q = p + (kind == WELD ? WELD_Q : PRISMATIC_Q);
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > 0.0) || !isfinite(n))
    return jy_part_fail(error, error_len,
                        "the relative orientation (q0, q1, q2, q3) is zero: set a non-zero "
                        "quaternion (q0 = 1: the frames aligned)");
  j->qref_conj[0] = q[0] / n;
  for (int i = 1; i < 4; i++) j->qref_conj[i] = -q[i] / n;
  return 0;
}

static void hvec(jyHyper out[3], const double x[3]) {
  for (int i = 0; i < 3; i++) out[i] = jy_hd_const(x[i]);
}

/* The joint point of one frame: x + R(q) r. */
static void joint_point(jyHyper out[3], const jyHyper *frame, const double r[3]) {
  jyHyper rh[3], rot[3];
  hvec(rh, r);
  jy_hq_rotate(rot, frame + JY_FRAME_Q, rh);
  for (int i = 0; i < 3; i++) out[i] = jy_hd_add(frame[i], rot[i]);
}

/* R(q) x for a constant x. */
static void axis(jyHyper out[3], const jyHyper *frame, const double x[3]) {
  jyHyper xh[3];
  hvec(xh, x);
  jy_hq_rotate(out, frame + JY_FRAME_Q, xh);
}

/* Vector part of q_ref* q_a* q_b: zero when b's orientation relative to a is +-q_ref. */
static void relative_rotation(jyHyper out[3], const Joint *j, const jyHyper *q) {
  jyHyper ac[4], rel[4], ref[4];
  jy_hq_conj(ac, q + C_A + JY_FRAME_Q);
  jy_hq_mul(rel, ac, q + C_B + JY_FRAME_Q);
  for (int i = 0; i < 4; i++) ref[i] = jy_hd_const(j->qref_conj[i]);
  jy_hq_mul(ac, ref, rel);
  for (int i = 0; i < 3; i++) out[i] = ac[1 + i];
}

/* The rows phi(q), and after them the extra outputs derived by the same arithmetic. */
enum { MAX_ROWS = 6 };
static void rows_ad(const void *ctx, const jyHyper *q, jyHyper *out) {
  const Joint *j = ctx;
  jyHyper pa[3], pb[3], d[3], n1[3], n2[3], nb[3], n0[3];
  joint_point(pa, q + C_A, j->ra);
  joint_point(pb, q + C_B, j->rb);
  for (int i = 0; i < 3; i++) d[i] = jy_hd_sub(pb[i], pa[i]);
  switch (j->kind) {
  case HINGE:
    axis(n1, q + C_A, j->s1);
    axis(n2, q + C_A, j->s2);
    axis(nb, q + C_B, j->ub);
    for (int i = 0; i < 3; i++) out[i] = d[i];
    out[3] = jy_hd_dot3(n1, nb);
    out[4] = jy_hd_dot3(n2, nb);
    break;
  case PRISMATIC:
    relative_rotation(out, j, q);
    axis(n1, q + C_A, j->s1);
    axis(n2, q + C_A, j->s2);
    axis(n0, q + C_A, j->u);
    out[3] = jy_hd_dot3(n1, d);
    out[4] = jy_hd_dot3(n2, d);
    out[5] = jy_hd_dot3(n0, d); /* the displacement along the axis (an output) */
    break;
  case WELD:
    for (int i = 0; i < 3; i++) out[i] = d[i];
    relative_rotation(out + 3, j, q);
    break;
  }
}

static int nrows_of(Kind kind) { return kind == WELD ? 6 : 5; }
/* prismatic computes one more value (its displacement) than it has rows */
static int nout_of(Kind kind) { return kind == PRISMATIC ? 6 : nrows_of(kind); }

/* rows_ad's values in closed form, with their Jacobian (nout x NC, leading dimension nout),
 * rate phi_q v and curvature v^T phi_qq v, as jy_spatial_eval gives them. v may be NULL
 * (at rest); any output but value may be NULL. */
/* rows' values and rates alone (no Jacobian, no curvature): the same rows, term for term. */
static void rows_light(const Joint *j, const double *q, const double *v, double *value,
                       double *rate) {
  int nout = nout_of(j->kind);
  double pa[3], ra[3], pb[3], rb[3], d[3], dd[3], n[3], nd[3], nb[3], nbd[3];
  jy_vr_point(pa, ra, q, v, 0, j->ra);
  jy_vr_point(pb, rb, q, v, 1, j->rb);
  for (int i = 0; i < 3; i++) d[i] = pb[i] - pa[i], dd[i] = rb[i] - ra[i];
  if (j->kind != PRISMATIC)
    for (int i = 0; i < 3; i++) value[i] = d[i], rate[i] = dd[i];
  if (j->kind != HINGE) {
    int row = j->kind == WELD ? 3 : 0;
    jy_vr_relative(n, nd, q, v, j->qref_conj);
    for (int i = 0; i < 3; i++) value[row + i] = n[i], rate[row + i] = nd[i];
  }
  if (j->kind == WELD) return;
  const double *across = d, *across_rate = dd;
  if (j->kind == HINGE) jy_vr_rotated(nb, nbd, q, v, 1, j->ub), across = nb, across_rate = nbd;
  const double *normal[3] = {j->s1, j->s2, j->u};
  for (int k = 0; k < nout - 3; k++) {
    jy_vr_rotated(n, nd, q, v, 0, normal[k]);
    double x = 0.0, r = 0.0;
    for (int i = 0; i < 3; i++)
      x += n[i] * across[i], r += nd[i] * across[i] + n[i] * across_rate[i];
    value[3 + k] = x;
    rate[3 + k] = r;
  }
}

/* The rows' values, Jacobian, rates and curvatures; with jac and curv NULL, the values and
 * rates alone (rows_light). */
static void rows(const Joint *j, const double *q, const double *v, double *value, double *jac,
                 double *rate, double *curv) {
  if (!jac && !curv) {
    rows_light(j, q, v, value, rate);
    return;
  }
  int nout = nout_of(j->kind);
  jyPairVec pa, pb, d, n, nb;
  jy_pair_point(&pa, q, v, 0, j->ra);
  jy_pair_point(&pb, q, v, 1, j->rb);
  jy_pair_sub(&d, &pb, &pa);
  if (j->kind != PRISMATIC) jy_pair_put(&d, 0, nout, value, jac, rate, curv);
  if (j->kind != HINGE) {
    jy_pair_relative(&n, q, v, j->qref_conj);
    jy_pair_put(&n, j->kind == WELD ? 3 : 0, nout, value, jac, rate, curv);
  }
  if (j->kind == WELD) return;
  /* hinge: a's normals across b's axis; prismatic: across the gap, then the axis along it */
  const jyPairVec *across = &d;
  if (j->kind == HINGE) jy_pair_rotated(&nb, q, v, 1, j->ub), across = &nb;
  const double *normal[3] = {j->s1, j->s2, j->u};
  for (int k = 0; k < nout - 3; k++) {
    jy_pair_rotated(&n, q, v, 0, normal[k]);
    jy_pair_dot(&n, across, value + 3 + k, jac ? jac + 3 + k : NULL, nout,
                rate ? rate + 3 + k : NULL, curv ? curv + 3 + k : NULL);
  }
}

int jy_joint3d_rows(const jyPartInstance *self, const double *q, const double *v, int ad,
                    double *value, double *jac, double *rate, double *curv) {
  const Joint *j = self->data;
  if (ad)
    jy_spatial_eval(rows_ad, j, NC, nout_of(j->kind), q, v, value, jac, rate, curv);
  else
    rows(j, q, v, value, jac, rate, curv);
  return nout_of(j->kind);
}

static const char *const hinge_rows[] = {"x", "y", "z", "align1", "align2"};
static const char *const prismatic_rows[] = {"rx", "ry", "rz", "side1", "side2"};
static const char *const weld_rows[] = {"x", "y", "z", "rx", "ry", "rz"};

enum { O_FX, O_FY, O_FZ, O_TX, O_TY, O_TZ, O_EXTRA };
static const char *const force_outputs[] = {"fx", "fy", "fz", "tx", "ty", "tz"};

static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out);

static int shape_kind(Kind kind, const double *p, jyPartShape *s, char *error, size_t error_len) {
  Joint j;
  if (joint_setup(kind, p, &j, error, error_len)) return 1;
  s->ncoords = NC;
  for (int i = 0; i < JY_FRAME_DIM; i++) {
    s->coord_names[C_A + i] = jy_names_frame_a[i];
    s->coord_names[C_B + i] = jy_names_frame_b[i];
  }
  s->coord_defaults[C_A + JY_FRAME_Q] = s->coord_defaults[C_B + JY_FRAME_Q] = 1.0;
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"a", JY_FRAME_DIM, 1, C_A};
  s->terminals[1] = (jyTerminalSpec){"b", JY_FRAME_DIM, 1, C_B};
  s->nrows = nrows_of(kind);
  const char *const *names = kind == HINGE ? hinge_rows
    : kind == PRISMATIC                    ? prismatic_rows
                                           : weld_rows;
  for (int i = 0; i < s->nrows; i++) {
    s->row_names[i] = names[i];
    s->row_kinds[i] = JY_ROW_POSITION;
  }
  for (int i = 0; i < O_EXTRA; i++) s->output_names[i] = force_outputs[i];
  s->noutputs = O_EXTRA;
  if (kind == HINGE) {
    s->angle_outputs = 1u << s->noutputs; /* an atan2: reported continuous */
    s->output_names[s->noutputs++] = "angle";
    s->output_names[s->noutputs++] = "rate";
  }
  if (kind == PRISMATIC) {
    s->output_names[s->noutputs++] = "displacement";
    s->output_names[s->noutputs++] = "speed";
  }
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE | /* massless */
    JY_PART_RESIDUALS_ALONE;
  s->spatial = kind == HINGE ? JY_SPATIAL_HINGE
    : kind == PRISMATIC      ? JY_SPATIAL_SLIDER
                             : JY_SPATIAL_WELD;
  s->spatial_param = P_RA;
  s->instance_size = sizeof(Joint);
  s->nvisuals = 3;
  s->visual = visual;
  return 0;
}

static int init(const jyPartInstance *self, void *data, char *error, size_t error_len) {
  return joint_setup(kind_of(self->type), self->params, data, error, error_len);
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

static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  const Joint *j = self->data;
  int nr = nrows_of(j->kind), nout = nout_of(j->kind); /* the displacement is dropped */
  double value[JY_SPATIAL_MAX_OUT], jac[JY_SPATIAL_MAX_OUT * NC], r[JY_SPATIAL_MAX_OUT];
  double curv[JY_SPATIAL_MAX_OUT];
  if (!A && !rhs) { /* the residuals alone (JY_PART_RESIDUALS_ALONE) */
    rows(j, state->q, state->v, value, NULL, r, NULL);
    for (int i = 0; i < nr; i++) {
      if (residual) residual[i] = value[i];
      if (rate) rate[i] = r[i];
    }
    return 0;
  }
  rows(j, state->q, state->v, value, jac, r, curv);
  for (int c = 0; c < NC; c++)
    for (int i = 0; i < nr; i++) A[i + c * nr] = jac[i + c * nout];
  for (int i = 0; i < nr; i++) {
    rhs[i] = -curv[i];
    if (residual) residual[i] = value[i];
    if (rate) rate[i] = r[i];
  }
  return 0;
}

/* The force on frame b (space axes) and the torque on b about its joint point P_b: from the
 * generalized force A^T mu on b's coordinates, the torque about b's origin is 1/2 E(q_b) times
 * its quaternion part. Frame a gets the opposite force and, about P_a, the opposite torque
 * plus the moment of the force about the gap between P_a and P_b (zero unless prismatic). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  const Joint *j = self->data;
  int nr = nrows_of(j->kind), nout = nout_of(j->kind);
  double value[JY_SPATIAL_MAX_OUT], jac[JY_SPATIAL_MAX_OUT * NC], r[JY_SPATIAL_MAX_OUT];
  rows(j, state->q, state->v, value, jac, r, NULL);
  double gen[JY_FRAME_DIM] = {0}, E[12], tau[3] = {0}, arm[3];
  for (int c = 0; c < JY_FRAME_DIM; c++)
    for (int i = 0; i < nr; i++) gen[c] += jac[i + (C_B + c) * nout] * row_forces[i];
  const double *qb = state->q + C_B + JY_FRAME_Q;
  jy_q_E(E, qb);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) tau[i] += 0.5 * E[i * 4 + k] * gen[JY_FRAME_Q + k];
  jy_q_rotate(arm, qb, j->rb);
  out[O_FX] = gen[0], out[O_FY] = gen[1], out[O_FZ] = gen[2];
  out[O_TX] = tau[0] - (arm[1] * gen[2] - arm[2] * gen[1]);
  out[O_TY] = tau[1] - (arm[2] * gen[0] - arm[0] * gen[2]);
  out[O_TZ] = tau[2] - (arm[0] * gen[1] - arm[1] * gen[0]);
  if (j->kind == PRISMATIC) {
    out[O_EXTRA] = value[nr];
    out[O_EXTRA + 1] = r[nr];
  }
  if (j->kind == HINGE) {
    /* The rotation of b about the axis: from a's normal s1 to b's normal tb. */
    const double *qa = state->q + C_A + JY_FRAME_Q;
    double na[3], sa[3], tb[3], c[3];
    jy_q_rotate(na, qa, j->u);
    jy_q_rotate(sa, qa, j->s1);
    jy_q_rotate(tb, qb, j->tb);
    c[0] = sa[1] * tb[2] - sa[2] * tb[1];
    c[1] = sa[2] * tb[0] - sa[0] * tb[2];
    c[2] = sa[0] * tb[1] - sa[1] * tb[0];
    out[O_EXTRA] = atan2(c[0] * na[0] + c[1] * na[1] + c[2] * na[2],
                         sa[0] * tb[0] + sa[1] * tb[1] + sa[2] * tb[2]);
    /* Its rate: b's angular velocity relative to a (space axes, w = 2 E(q) q') along the
     * axis; the angle's derivative while the rows hold. */
    double Ea[12], wrel[3] = {0};
    const double *va = state->v + C_A + JY_FRAME_Q, *vb = state->v + C_B + JY_FRAME_Q;
    jy_q_E(Ea, qa);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 4; k++) wrel[i] += 2.0 * (E[i * 4 + k] * vb[k] - Ea[i * 4 + k] * va[k]);
    out[O_EXTRA + 1] = wrel[0] * na[0] + wrel[1] * na[1] + wrel[2] * na[2];
  }
  return 0;
}

/* The material from each frame's origin to its joint point (so that bodies hinged at an
 * offset are drawn joined), and the joint point of frame a. Its force is the glues' arrows'. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  const Joint *j = self->data;
  const double *q = state->q;
  double ends[6], arm[3];
  for (int side = 0; side < 2; side++) {
    const double *frame = q + (side ? C_B : C_A);
    jy_q_rotate(arm, frame + JY_FRAME_Q, side ? j->rb : j->ra);
    for (int i = 0; i < 3; i++) ends[i] = frame[i], ends[3 + i] = frame[i] + arm[i];
    jy_visual_ends(&out[side], JY_VISUAL_ROD, 3, ends);
    if (!side) jy_visual_point(&out[2], JY_VISUAL_POINT, 3, ends + 3);
  }
  return 0;
}

static int hinge_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(HINGE, p, s, e, n);
}
static int prismatic_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e,
                           size_t n) {
  (void)t;
  return shape_kind(PRISMATIC, p, s, e, n);
}
static int weld_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(WELD, p, s, e, n);
}

#define JOINT_TYPE(var, tname, tdoc, table, shape_fn) \
  static const jyPartType var = {                     \
    .version = JY_PART_PROTOCOL_VERSION,              \
    .name = tname,                                    \
    .doc = tdoc,                                      \
    .params = table,                                  \
    .nparams = (int)(sizeof table / sizeof table[0]), \
    .shape = shape_fn,                                \
    .init = init,                                     \
    .terminal = terminal,                             \
    .constraints = constraints,                       \
    .outputs = outputs,                               \
  }

JOINT_TYPE(hinge_type, "hinge3d",
           "spatial revolute joint: frames a and b share a point and an axis (5 rows)",
           hinge_params, hinge_shape);
JOINT_TYPE(prismatic_type, "prismatic3d",
           "spatial prismatic joint: frame b slides along an axis of frame a without turning "
           "(5 rows)",
           prismatic_params, prismatic_shape);
JOINT_TYPE(weld_type, "weld3d",
           "spatial weld: frames a and b share a point and a relative orientation (6 rows)",
           weld_params, weld_shape);

static Kind kind_of(const jyPartType *type) {
  return strcmp(type->name, "hinge3d") == 0  ? HINGE
    : strcmp(type->name, "prismatic3d") == 0 ? PRISMATIC
                                             : WELD;
}

const jyPartType *jy_part_hinge3d(void) { return &hinge_type; }
const jyPartType *jy_part_prismatic3d(void) { return &prismatic_type; }
const jyPartType *jy_part_weld3d(void) { return &weld_type; }

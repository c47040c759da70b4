/* components/marker3d.c — a point and a frame fixed on a spatial body, at the body-fixed
 * offset r = (rx, ry, rz) from the body's frame origin (its centre of mass).
 *
 * The marker is massless and its seven coordinates are a copy of the body's frame: its
 * terminal `body` is exactly those coordinates, so gluing it to a body3d's `frame` lets glue
 * elimination substitute them away (no coordinates, no rows). Its terminals `pos`
 * (x + R(q) r) and `frame` (that point with the body's quaternion) are what joints, springs
 * and other parts glue to. Its output channels "<marker>.x|y|z|q0..q3|vx|vy|vz|omega_*" are
 * the point's world pose and velocity; the copy's coordinates are "<marker>.body_x" ..
 * "<marker>.body_q3" (the body's frame, eliminated). The point and its derivatives are in
 * closed form (spatial.h, jyPairVec); the hyper-dual version stays as the reference
 * tests/engine/t_marker_rows.c checks them against. */
#include "parts.h"
#include "spatial.h"

enum { P_RX, P_RY, P_RZ, NP };
enum { NC = JY_FRAME_DIM, C_Q = JY_FRAME_Q };
enum { T_BODY, T_POS, T_FRAME, NT };

static const jyParamSpec params[] = {
  {"rx", 0, JY_PARAM_REAL, "m", "x of the point in body axes, from the body's frame origin"},
  {"ry", 0, JY_PARAM_REAL, "m", "y of the point in body axes, from the body's frame origin"},
  {"rz", 0, JY_PARAM_REAL, "m", "z of the point in body axes, from the body's frame origin"},
};

/* The copy of the body's frame is named body_* so that the names under the marker's name
 * are the point's own (its outputs), never the body's centre. */
static const char *const coord_names[NC] = {"body_x",  "body_y",  "body_z", "body_q0",
                                            "body_q1", "body_q2", "body_q3"};

/* The point's world pose (position and the frame's quaternion, the body's) and velocity,
 * with the angular velocity in body axes as body3d reports it. */
enum { O_X, O_Q0 = 3, O_VX = 7, O_WX = 10, NO = 13 };
static const char *const output_names[NO] = {"x",  "y",  "z",  "q0",      "q1",      "q2",     "q3",
                                             "vx", "vy", "vz", "omega_x", "omega_y", "omega_z"};

static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out);

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  for (int i = 0; i < NC; i++) s->coord_names[i] = coord_names[i];
  s->noutputs = NO;
  for (int i = 0; i < NO; i++) s->output_names[i] = output_names[i];
  s->coord_defaults[C_Q] = 1.0;
  s->nterminals = NT;
  s->terminals[T_BODY] = (jyTerminalSpec){"body", JY_FRAME_DIM, 1, 0};
  s->terminals[T_POS] = (jyTerminalSpec){.name = "pos", .dim = 3};
  s->terminals[T_FRAME] = (jyTerminalSpec){.name = "frame", .dim = JY_FRAME_DIM};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE; /* massless */
  s->spatial = JY_SPATIAL_OFFSET;
  s->spatial_param = P_RX;
  s->nvisuals = 2;
  s->visual = visual;
  return 0;
}

/* x + R(q) r in hyper-dual arithmetic: the reference the closed form is checked against
 * (jy_marker3d_terminal with ad = 1, tests/engine/t_marker_rows.c). */
static void point_ad(const void *ctx, const jyHyper *q, jyHyper *out) {
  const double *r = ctx;
  jyHyper rh[3] = {jy_hd_const(r[0]), jy_hd_const(r[1]), jy_hd_const(r[2])}, rot[3];
  jy_hq_rotate(rot, q + C_Q, rh);
  for (int i = 0; i < 3; i++) out[i] = jy_hd_add(q[i], rot[i]);
}

/* The point x + R(q) r: value, Jacobian (3 x NC, leading dimension 3), rate J v and
 * curvature v^T p_qq v (the acceleration bias). Closed form: jy_pair_point on frame 0, which
 * reads only that frame's seven coordinates (the marker's own) and fills the first NC columns
 * of its 3 x 14 Jacobian. v may be NULL (at rest); any output but value may be NULL. */
static void point(const double *r, const double *q, const double *v, int ad, double *value,
                  double *jac, double *rate, double *curv) {
  if (ad) {
    jy_spatial_eval(point_ad, r, NC, 3, q, v, value, jac, rate, curv);
    return;
  }
  jyPairVec p;
  jy_pair_point(&p, q, v, 0, r);
  for (int i = 0; i < 3; i++) {
    value[i] = p.val[i];
    if (rate) rate[i] = p.rate[i];
    if (curv) curv[i] = p.curv[i];
  }
  if (jac)
    for (int i = 0; i < 3 * NC; i++) jac[i] = p.jac[i];
}

static int point_terminal(const jyPartInstance *self, const jyPartState *state, int k, int ad,
                          double *value, double *jac, double *acc_bias) {
  if (k == T_BODY) {
    jy_point_terminal(JY_FRAME_DIM, 0, NC, state->q, value, jac);
    return 0;
  }
  if (k != T_POS && k != T_FRAME)
    return jy_part_fail(state->error, state->error_len,
                        "no terminal %d (it has body, pos and frame)", k);
  int dim = k == T_POS ? 3 : JY_FRAME_DIM;
  double pj[3 * NC]; /* pos: the Jacobian is the point's; frame: its first three rows */
  point(self->params + P_RX, state->q, state->v, ad, value, jac && k == T_FRAME ? pj : jac, NULL,
        acc_bias);
  if (jac && k == T_FRAME)
    for (int j = 0; j < NC; j++)
      for (int i = 0; i < 3; i++) jac[i + j * dim] = pj[i + j * 3];
  if (k == T_FRAME)
    for (int i = 0; i < 4; i++) {
      value[3 + i] = state->q[C_Q + i];
      if (jac) jac[(3 + i) + (C_Q + i) * dim] = 1.0;
    }
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias; /* no time dependence */
  return point_terminal(self, state, k, 0, value, jac, acc_bias);
}

int jy_marker3d_terminal(const jyPartInstance *self, const double *q, const double *v, int k,
                         int ad, double *value, double *jac, double *acc_bias) {
  char error[128];
  jyPartState state = {.q = q, .v = v, .error = error, .error_len = sizeof error};
  return point_terminal(self, &state, k, ad, value, jac, acc_bias);
}

/* The point x + R(q) r and its velocity J v (exact, by the same closed form as the
 * terminal), the quaternion as the body's coordinates hold it, w = 2 G(q) q'. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  double value[3], rate[3], G[12];
  point(self->params + P_RX, state->q, state->v, 0, value, NULL, rate, NULL);
  const double *q = state->q + C_Q, *qd = state->v + C_Q;
  jy_q_G(G, q);
  for (int i = 0; i < 3; i++) {
    out[O_X + i] = value[i];
    out[O_VX + i] = rate[i];
    out[O_WX + i] = 0.0;
    for (int j = 0; j < 4; j++) out[O_WX + i] += 2.0 * G[i * 4 + j] * qd[j];
  }
  for (int i = 0; i < 4; i++) out[O_Q0 + i] = q[i];
  return 0;
}

/* The body's material from its centre to the point (a bar drawn by its markers), and the
 * point. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  double ends[6];
  for (int i = 0; i < 3; i++) ends[i] = state->q[i];
  if (terminal(self, state, T_POS, ends + 3, NULL, NULL, NULL) != 0) return 1;
  jy_visual_ends(&out[0], JY_VISUAL_ROD, 3, ends);
  jy_visual_point(&out[1], JY_VISUAL_POINT, 3, ends + 3);
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "marker3d",
  .doc = "a point (pos) and frame (frame) at body-fixed offset (rx, ry, rz) on the body3d whose "
         "frame is glued to terminal body",
  .params = params,
  .nparams = NP,
  .shape = shape,
  .terminal = terminal,
  .outputs = outputs,
};

const jyPartType *jy_part_marker3d(void) { return &type; }

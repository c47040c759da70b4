/* components/motor.c — driven joints and actuators: a drive on one scalar coordinate s(q) of
 * a joint (the relative angle of a pin, the displacement of a slider, the rotation about a
 * hinge3d axis, the displacement along a prismatic3d axis, or a plain 1-D coordinate).
 *
 * A drive works in one of three modes (parameter `mode`):
 *   0 position: the rheonomic row phi = s(q) - r(t) = 0, r = x0 + speed t + gain u(t);
 *   1 velocity: the velocity row psi = s'(q, v) - w(t) = 0, w = speed + gain u(t);
 *   2 effort:   the applied generalized force Q = f g^T, f = effort + gain u(t), g = ds/dq,
 * where u is the model input the part reads (parameter `input`, its index; -1: none) with
 * its first and second time derivatives, so a driven row is exact (phi'' = g q'' + c - r''),
 * not a stiff servo. In modes 0 and 1 the row's multiplier lambda is the exact drive
 * force: the force on the coordinates is g^T lambda, conjugate to s (a torque for an angle,
 * a force for a length); the output `torque` (or `force`) reports lambda, or f in mode 2.
 *
 * The parts are massless copies of the frames (or the coordinate) they drive: terminals a
 * and b are coordinate blocks, so gluing them to body frames lets glue elimination
 * substitute them away (a drive costs its one row and nothing else). They carry none of the
 * joint's own rows: a pin_motor2d goes with a pin, a hinge_motor3d with a hinge3d. */
#include <math.h>
#include <string.h>

#include "parts.h"
#include "spatial.h"

typedef enum { PIN2, SLIDER2, HINGE3, PRISMATIC3, ACTUATOR } Kind;
enum { MODE_POSITION, MODE_VELOCITY, MODE_EFFORT };

/* Parameters every drive has, first, in this order. */
enum { P_MODE, P_INPUT, P_GAIN, P_X0, P_SPEED, P_EFFORT, P_GEOM };

/* clang-format off */
#define DRIVE_PARAMS(x0name, x0unit, x0doc, speedunit, effname, effunit, effdoc)                \
  {"mode", 0, JY_PARAM_BOUND, "1", "0: position s = x0 + speed t + gain u; 1: velocity s' = "    \
    "speed + gain u; 2: effort (applied torque or force) effort + gain u"},                     \
  {"input", -1, JY_PARAM_BOUND, "1", "index of the model input u the drive reads (-1: none)"},  \
  {"gain", 1, JY_PARAM_REAL, "1", "factor on the input u"},                                   \
  {x0name, 0, JY_PARAM_REAL, x0unit, x0doc},                                                  \
  {"speed", 0, JY_PARAM_REAL, speedunit, "constant rate: ds/dt in mode 0, s' in mode 1"},     \
  {effname, 0, JY_PARAM_REAL, effunit, effdoc}
#define ROTARY DRIVE_PARAMS("angle0", "rad", "position mode: the angle at t = 0 (with no input)", \
  "rad/s", "torque", "N m", "effort mode: the constant torque on b about the axis (-it on a)")
#define LINEAR DRIVE_PARAMS("x0", "m", "position mode: the displacement at t = 0 (with no input)",\
  "m/s", "force", "N", "effort mode: the constant force on b along the axis (-it on a)")
/* clang-format on */

static const jyParamSpec pin_params[] = {
  ROTARY,
  {"dim", 3, JY_PARAM_DIMENSION, "1", "3: a and b are planar frames (x, y, theta); 1: angles"},
};
static const jyParamSpec slider_params[] = {
  LINEAR,
  {"angle", 0, JY_PARAM_REAL, "rad", "direction of the sliding axis in frame a"},
};
static const jyParamSpec hinge_params[] = {
  ROTARY,
  {"nax", 0, JY_PARAM_REAL, "1", "x of the hinge axis in frame a's axes (any length)"},
  {"nay", 0, JY_PARAM_REAL, "1", "y of the hinge axis in frame a's axes (any length)"},
  {"naz", 1, JY_PARAM_REAL, "1", "z of the hinge axis in frame a's axes (any length)"},
  {"nbx", 0, JY_PARAM_REAL, "1", "x of the hinge axis in frame b's axes (any length)"},
  {"nby", 0, JY_PARAM_REAL, "1", "y of the hinge axis in frame b's axes (any length)"},
  {"nbz", 1, JY_PARAM_REAL, "1", "z of the hinge axis in frame b's axes (any length)"},
};
static const jyParamSpec prismatic_params[] = {
  LINEAR,
  {"rax", 0, JY_PARAM_REAL, "m", "x of the joint point in frame a's axes, from its origin"},
  {"ray", 0, JY_PARAM_REAL, "m", "y of the joint point in frame a's axes, from its origin"},
  {"raz", 0, JY_PARAM_REAL, "m", "z of the joint point in frame a's axes, from its origin"},
  {"rbx", 0, JY_PARAM_REAL, "m", "x of the joint point in frame b's axes, from its origin"},
  {"rby", 0, JY_PARAM_REAL, "m", "y of the joint point in frame b's axes, from its origin"},
  {"rbz", 0, JY_PARAM_REAL, "m", "z of the joint point in frame b's axes, from its origin"},
  {"nax", 0, JY_PARAM_REAL, "1", "x of the sliding axis in frame a's axes (any length)"},
  {"nay", 0, JY_PARAM_REAL, "1", "y of the sliding axis in frame a's axes (any length)"},
  {"naz", 1, JY_PARAM_REAL, "1", "z of the sliding axis in frame a's axes (any length)"},
};
static const jyParamSpec actuator_params[] = {
  DRIVE_PARAMS("x0", "1", "position mode: the coordinate at t = 0 (its unit: m or rad)", "1/s",
               "force", "1", "effort mode: the constant generalized force (N or N m)"),
};

/* What the drive needs, computed once from the parameters. */
typedef struct Motor {
  Kind kind;
  int mode, input, dim;
  double ra[3], rb[3];       /* prismatic: the joint points */
  double u[3], s1[3], s2[3]; /* the axis and two normals to it, frame a's axes */
  double ub[3], tb[3];       /* hinge: the axis and a normal to it, frame b's axes */
} Motor;

static Kind kind_of(const jyPartType *type);

/* Fills m from the parameters; also the validation `shape` reports. */
static int motor_setup(Kind kind, const double *p, Motor *m, char *error, size_t error_len) {
  memset(m, 0, sizeof *m);
  m->kind = kind;
  double mode = p[P_MODE], input = p[P_INPUT];
  if (mode != 0.0 && mode != 1.0 && mode != 2.0)
    return jy_part_fail(error, error_len,
                        "parameter mode = %g: give 0 (position), 1 (velocity) or 2 (effort)", mode);
  if (input != floor(input) || input < -1.0 || input >= 1e9)
    return jy_part_fail(error, error_len,
                        "parameter input = %g: give the index of a model input (0, 1, ...) or -1 "
                        "for none",
                        input);
  m->mode = (int)mode;
  m->input = (int)input;
  switch (kind) {
  case PIN2:
    m->dim = (int)p[P_GEOM];
    if (m->dim == 2)
      return jy_part_fail(error, error_len,
                          "dim = 2 is no planar rotation: use dim = 3 (frames) or 1 (angles)");
    break;
  case SLIDER2:
  case ACTUATOR:
    break;
  case HINGE3:
    if (jy_spatial_basis(p + P_GEOM, m->u, m->s1, m->s2))
      return jy_part_fail(error, error_len,
                          "the axis (nax, nay, naz) is zero: give it a direction");
    {
      double s2[3];
      if (jy_spatial_basis(p + P_GEOM + 3, m->ub, m->tb, s2))
        return jy_part_fail(error, error_len,
                            "the axis in frame b (nbx, nby, nbz) is zero: give it a direction");
    }
    break;
  case PRISMATIC3:
    for (int i = 0; i < 3; i++) m->ra[i] = p[P_GEOM + i], m->rb[i] = p[P_GEOM + 3 + i];
    if (jy_spatial_basis(p + P_GEOM + 6, m->u, m->s1, m->s2))
      return jy_part_fail(error, error_len,
                          "the axis (nax, nay, naz) is zero: give it a direction");
    break;
  }
  return 0;
}

static int ncoords_of(const Motor *m) {
  switch (m->kind) {
  case PIN2:
    return 2 * m->dim;
  case SLIDER2:
    return 6;
  case HINGE3:
  case PRISMATIC3:
    return 2 * JY_FRAME_DIM;
  case ACTUATOR:
    return 1;
  }
  return 0;
}

static const char *const planar_names[6] = {"ax", "ay", "atheta", "bx", "by", "btheta"};
static const char *const angle_names[2] = {"atheta", "btheta"};
static const char *const coord_name[1] = {"x"};

static int shape_kind(Kind kind, const double *p, jyPartShape *s, char *error, size_t error_len) {
  Motor m;
  if (motor_setup(kind, p, &m, error, error_len)) return 1;
  int nc = ncoords_of(&m);
  s->ncoords = nc;
  for (int i = 0; i < nc; i++) {
    switch (kind) {
    case PIN2:
      s->coord_names[i] = m.dim == 3 ? planar_names[i] : angle_names[i];
      break;
    case SLIDER2:
      s->coord_names[i] = planar_names[i];
      break;
    case HINGE3:
    case PRISMATIC3:
      s->coord_names[i] =
        i < JY_FRAME_DIM ? jy_names_frame_a[i] : jy_names_frame_b[i - JY_FRAME_DIM];
      break;
    case ACTUATOR:
      s->coord_names[i] = coord_name[i];
      break;
    }
  }
  if (kind == HINGE3 || kind == PRISMATIC3)
    s->coord_defaults[JY_FRAME_Q] = s->coord_defaults[JY_FRAME_DIM + JY_FRAME_Q] = 1.0;
  if (kind == ACTUATOR) {
    s->nterminals = 1;
    s->terminals[0] = (jyTerminalSpec){"coord", 1, 1, 0};
  } else {
    s->nterminals = 2;
    s->terminals[0] = (jyTerminalSpec){"a", nc / 2, 1, 0};
    s->terminals[1] = (jyTerminalSpec){"b", nc / 2, 1, nc / 2};
  }
  if (m.mode != MODE_EFFORT) {
    s->nrows = 1;
    s->row_names[0] = "drive";
    s->row_kinds[0] = m.mode == MODE_POSITION ? JY_ROW_POSITION : JY_ROW_VELOCITY;
  }
  int rotary = kind == PIN2 || kind == HINGE3;
  s->noutputs = 4;
  s->output_names[0] = rotary ? "angle" : kind == ACTUATOR ? "position" : "displacement";
  s->output_names[1] = rotary ? "rate" : "speed";
  s->output_names[2] = rotary ? "torque" : "force";
  s->output_names[3] = "power";
  if (kind == HINGE3) s->angle_outputs = 1u;                   /* an atan2: reported continuous */
  s->flags = JY_PART_CONSTANT_MASS;                            /* massless copies */
  if (m.mode != MODE_EFFORT) s->flags |= JY_PART_CONSERVATIVE; /* no Q at all */
  s->instance_size = sizeof(Motor);
  return 0;
}

static int init(const jyPartInstance *self, void *data, char *error, size_t error_len) {
  return motor_setup(kind_of(self->type), self->params, data, error, error_len);
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  const Motor *m = self->data;
  int nt = m->kind == ACTUATOR ? 1 : 2, d = self->ncoords / nt;
  if (k < 0 || k >= nt)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has %s)", k,
                        nt == 1 ? "coord" : "a and b");
  jy_point_terminal(d, k * d, self->ncoords, state->q, value, jac);
  return 0;
}

/* ---- the driven coordinate s(q): value, g = ds/dq, rate g v, curvature v^T s_qq v ------- */

/* The hyper-dual reference of spatial_s_closed below (tests/engine/t_joint_rows.c).
 * The hinge angle from a's normal s1 to b's normal tb about the axis: atan2(s2a . tb,
 * s1a . tb), both products scale alike with |q_a|^2 |q_b|^2, so the angle is that of the
 * rotations even off the unit sphere. The prismatic displacement: R(q_a) u . (P_b - P_a). */
static void spatial_s(const void *ctx, const jyHyper *q, jyHyper *out) {
  const Motor *m = ctx;
  const jyHyper *qa = q + JY_FRAME_Q, *qb = q + JY_FRAME_DIM + JY_FRAME_Q;
  jyHyper x[3], a[3], b[3];
  if (m->kind == HINGE3) {
    jyHyper s1[3], s2[3], tb[3];
    for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->s1[i]);
    jy_hq_rotate(s1, qa, x);
    for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->s2[i]);
    jy_hq_rotate(s2, qa, x);
    for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->tb[i]);
    jy_hq_rotate(tb, qb, x);
    out[0] = jy_hd_atan2(jy_hd_dot3(s2, tb), jy_hd_dot3(s1, tb));
    return;
  }
  jyHyper n[3], d[3];
  for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->ra[i]);
  jy_hq_rotate(a, qa, x);
  for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->rb[i]);
  jy_hq_rotate(b, qb, x);
  for (int i = 0; i < 3; i++) x[i] = jy_hd_const(m->u[i]);
  jy_hq_rotate(n, qa, x);
  for (int i = 0; i < 3; i++)
    d[i] = jy_hd_sub(jy_hd_add(q[JY_FRAME_DIM + i], b[i]), jy_hd_add(q[i], a[i]));
  out[0] = jy_hd_dot3(n, d);
}

/* spatial_s in closed form (spatial.h): s, g = ds/dq (14), rate g v, curvature v^T s_qq v. */
static void spatial_s_closed(const Motor *m, const double *q, const double *v, double *s, double *g,
                             double *rate, double *curv) {
  jyPairVec a, b, n;
  if (m->kind == HINGE3) {
    /* s = atan2(y, x): s' = (x y' - y x') / r^2 and, along v, s'' = (x y'' - y x'') / r^2 -
     * 2 (x y' - y x') (x x' + y y') / r^4, with r^2 = x^2 + y^2. */
    double x, y, gx[JY_PAIR_NC], gy[JY_PAIR_NC], x1, y1, x2, y2;
    jy_pair_rotated(&b, q, v, 1, m->tb);
    jy_pair_rotated(&a, q, v, 0, m->s1);
    jy_pair_dot(&a, &b, &x, gx, 1, &x1, &x2);
    jy_pair_rotated(&a, q, v, 0, m->s2);
    jy_pair_dot(&a, &b, &y, gy, 1, &y1, &y2);
    double r2 = x * x + y * y, w = x * y1 - y * x1;
    *s = atan2(y, x);
    for (int k = 0; k < JY_PAIR_NC; k++) g[k] = (x * gy[k] - y * gx[k]) / r2;
    *rate = w / r2;
    *curv = (x * y2 - y * x2) / r2 - 2.0 * w * (x * x1 + y * y1) / (r2 * r2);
    return;
  }
  jy_pair_point(&a, q, v, 0, m->ra);
  jy_pair_point(&b, q, v, 1, m->rb);
  jy_pair_sub(&b, &b, &a);
  jy_pair_rotated(&n, q, v, 0, m->u);
  jy_pair_dot(&n, &b, s, g, 1, rate, curv);
}

int jy_motor3d_coord(const jyPartInstance *self, const double *q, const double *v, int ad,
                     double *s, double *g, double *rate, double *curv) {
  const Motor *m = self->data;
  if (m->kind != HINGE3 && m->kind != PRISMATIC3) return 1;
  if (ad)
    jy_spatial_eval(spatial_s, m, JY_PAIR_NC, 1, q, v, s, g, rate, curv);
  else
    spatial_s_closed(m, q, v, s, g, rate, curv);
  return 0;
}

typedef struct Coord {
  double s, rate, curv;
  double g[2 * JY_FRAME_DIM];
} Coord;

static void coord_eval(const jyPartInstance *self, const jyPartState *state, Coord *c) {
  const Motor *m = self->data;
  const double *q = state->q, *v = state->v;
  int nc = self->ncoords;
  memset(c, 0, sizeof *c);
  switch (m->kind) {
  case PIN2:
    c->g[nc / 2 - 1] = -1.0;
    c->g[nc - 1] = 1.0;
    c->s = q[nc - 1] - q[nc / 2 - 1];
    c->rate = v[nc - 1] - v[nc / 2 - 1];
    break;
  case ACTUATOR:
    c->g[0] = 1.0;
    c->s = q[0];
    c->rate = v[0];
    break;
  case SLIDER2: {
    /* s = u . d, u = (cos psi, sin psi), psi = theta_a + angle, d = p_b - p_a:
     * s' = u . d' + (n . d) w_a, s'' = g q'' + 2 (n . d') w_a - (u . d) w_a^2. */
    double psi = q[2] + self->params[P_GEOM], u[2] = {cos(psi), sin(psi)}, n[2] = {-u[1], u[0]};
    double d[2] = {q[3] - q[0], q[4] - q[1]}, dd[2] = {v[3] - v[0], v[4] - v[1]}, wa = v[2];
    double ud = u[0] * d[0] + u[1] * d[1], nd = n[0] * d[0] + n[1] * d[1];
    double udd = u[0] * dd[0] + u[1] * dd[1], ndd = n[0] * dd[0] + n[1] * dd[1];
    c->g[0] = -u[0], c->g[1] = -u[1], c->g[2] = nd, c->g[3] = u[0], c->g[4] = u[1];
    c->s = ud;
    c->rate = udd + nd * wa;
    c->curv = 2.0 * ndd * wa - ud * wa * wa;
    break;
  }
  case HINGE3:
  case PRISMATIC3:
    spatial_s_closed(m, q, v, &c->s, c->g, &c->rate, &c->curv);
    break;
  }
}

/* The reference at t: out[0..2] = r, r', r'' (mode 0), w, w' (mode 1) or f (mode 2). */
static int reference(const jyPartInstance *self, const jyPartState *state, double out[3]) {
  const Motor *m = self->data;
  const double *p = self->params;
  double u[3] = {0, 0, 0};
  if (m->input >= 0) {
    if (m->input >= state->ninputs || !state->inputs)
      return jy_part_fail(state->error, state->error_len,
                          "parameter input = %d, but the model has %d input%s: give an index "
                          "below that (jy_system_find_input) or -1 for none",
                          m->input, state->ninputs, state->ninputs == 1 ? "" : "s");
    u[0] = state->inputs[m->input];
    u[1] = state->input_rates ? state->input_rates[m->input] : 0.0;
    u[2] = state->input_accels ? state->input_accels[m->input] : 0.0;
  }
  double k = p[P_GAIN];
  switch (m->mode) {
  case MODE_POSITION:
    out[0] = p[P_X0] + p[P_SPEED] * state->t + k * u[0];
    out[1] = p[P_SPEED] + k * u[1];
    out[2] = k * u[2];
    break;
  case MODE_VELOCITY:
    out[0] = p[P_SPEED] + k * u[0];
    out[1] = k * u[1];
    out[2] = 0.0;
    break;
  default:
    out[0] = p[P_EFFORT] + k * u[0];
    out[1] = out[2] = 0.0;
    break;
  }
  return 0;
}

static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  const Motor *m = self->data;
  if (m->mode == MODE_EFFORT) return 0;
  double r[3] = {0.0, 0.0, 0.0}; /* set by reference(); gcc -O3 cannot see it */
  if (reference(self, state, r)) return 1;
  Coord c;
  coord_eval(self, state, &c);
  for (int j = 0; j < self->ncoords; j++) A[j] = c.g[j];
  if (m->mode == MODE_POSITION) {
    /* phi = s - r: phi'' = g q'' + curv - r'' */
    rhs[0] = r[2] - c.curv;
    if (residual) {
      double e = c.s - r[0];
      /* the hinge angle is an atan2: the residual is the nearest branch's */
      residual[0] = m->kind == HINGE3 ? remainder(e, 2.0 * acos(-1.0)) : e;
    }
    if (rate) rate[0] = c.rate - r[1];
  } else {
    /* psi = g v - w: psi' = g q'' + curv - w' */
    rhs[0] = r[1] - c.curv;
    if (residual) residual[0] = c.rate - r[0];
  }
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  const Motor *m = self->data;
  if (m->mode != MODE_EFFORT) return 0;
  double r[3] = {0.0, 0.0, 0.0}; /* set by reference(); gcc -O3 cannot see it */
  if (reference(self, state, r)) return 1;
  Coord c;
  coord_eval(self, state, &c);
  for (int j = 0; j < self->ncoords; j++) Q[j] = r[0] * c.g[j];
  return 0;
}

/* s, s', the drive force along s (the row's multiplier, or the applied effort) and its
 * power. */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  const Motor *m = self->data;
  Coord c;
  coord_eval(self, state, &c);
  double f;
  if (m->mode == MODE_EFFORT) {
    double r[3] = {0.0, 0.0, 0.0};
    if (reference(self, state, r)) return 1;
    f = r[0];
  } else {
    f = row_forces ? row_forces[0] : 0.0;
  }
  out[0] = c.s;
  out[1] = c.rate;
  out[2] = f;
  out[3] = f * c.rate;
  return 0;
}

static int pin_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(PIN2, p, s, e, n);
}
static int slider_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(SLIDER2, p, s, e, n);
}
static int hinge_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(HINGE3, p, s, e, n);
}
static int prismatic_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e,
                           size_t n) {
  (void)t;
  return shape_kind(PRISMATIC3, p, s, e, n);
}
static int actuator_shape(const jyPartType *t, const double *p, jyPartShape *s, char *e, size_t n) {
  (void)t;
  return shape_kind(ACTUATOR, p, s, e, n);
}

#define MOTOR_TYPE(var, tname, tdoc, table, shape_fn) \
  static const jyPartType var = {                     \
    .version = JY_PART_PROTOCOL_VERSION,              \
    .name = tname,                                    \
    .doc = tdoc,                                      \
    .params = table,                                  \
    .nparams = (int)(sizeof table / sizeof table[0]), \
    .shape = shape_fn,                                \
    .init = init,                                     \
    .terminal = terminal,                             \
    .force = force,                                   \
    .constraints = constraints,                       \
    .outputs = outputs,                               \
  }

MOTOR_TYPE(pin_type, "pin_motor2d",
           "planar motor: drives theta_b - theta_a of two frames (or angles) in position, "
           "velocity or torque",
           pin_params, pin_shape);
MOTOR_TYPE(slider_type, "slider_motor2d",
           "planar linear motor: drives b's displacement along an axis of frame a in position, "
           "velocity or force",
           slider_params, slider_shape);
MOTOR_TYPE(hinge_type, "hinge_motor3d",
           "spatial motor: drives the rotation of frame b about a hinge3d axis of frame a in "
           "position, velocity or torque",
           hinge_params, hinge_shape);
MOTOR_TYPE(prismatic_type, "prismatic_motor3d",
           "spatial linear motor: drives the displacement along a prismatic3d axis of frame a "
           "in position, velocity or force",
           prismatic_params, prismatic_shape);
MOTOR_TYPE(actuator_type, "actuator",
           "a drive on one coordinate terminal: generalized force from an input (or held "
           "position or velocity)",
           actuator_params, actuator_shape);

static Kind kind_of(const jyPartType *type) {
  const char *n = type->name;
  return strcmp(n, "pin_motor2d") == 0    ? PIN2
    : strcmp(n, "slider_motor2d") == 0    ? SLIDER2
    : strcmp(n, "hinge_motor3d") == 0     ? HINGE3
    : strcmp(n, "prismatic_motor3d") == 0 ? PRISMATIC3
                                          : ACTUATOR;
}

const jyPartType *jy_part_pin_motor2d(void) { return &pin_type; }
const jyPartType *jy_part_slider_motor2d(void) { return &slider_type; }
const jyPartType *jy_part_hinge_motor3d(void) { return &hinge_type; }
const jyPartType *jy_part_prismatic_motor3d(void) { return &prismatic_type; }
const jyPartType *jy_part_actuator(void) { return &actuator_type; }

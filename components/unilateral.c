/* components/unilateral.c — one-sided constraints, parts with modes (part.h jyPartHybrid):
 *   floor    a point kept on one side of a line (2-D) or plane (3-D), n . p >= d;
 *   surface  the same line or plane fixed in a body (body axes: n . R^T (p - x) >= d);
 *   rope     two points at most L apart, |b - a| <= L;
 *   contact  two points at least D apart, |b - a| >= D.
 * Each has one position row phi = 0 (floor: n . p - d; rope and contact: |b - a| - L or D),
 * active in the closed mode (1) only, and one guard: while open, the signed gap s phi (s = +1
 * for floor and contact, -1 for a rope), falling through zero on contact; while closed, the
 * signed row force s lambda (pushing, or pulling for a rope), falling through zero when the
 * constraint would start to pull. On contact (approaching: a crossing found while the ends
 * separate is rounding, and nothing happens) the engine applies an impact with restitution
 * e: when the separation speed e |rate| is at least the slowest bounce the run resolves, the
 * contact bounces (stays open), else it closes with a plastic impact, so a slow bounce ends
 * rather than chattering. The slowest bounce is v_close or, when larger, the speed whose
 * bounce rises BOUNCE_RESOLVED times the run's resolution of the gap (atol + rtol |q|
 * through the row) against the acceleration into the contact: a lower bounce is below what
 * the integrator resolves, and its next crossing may come too late or not at all (a ball at
 * rtol 1e-8 once fell through the floor). The gap guard's dead band grows with that
 * resolution too, and an open contact found past it at an event instant (a restart, a
 * projection, an action), and not on its way out, closes: it never goes on on the wrong
 * side.
 *
 * A floor or surface bounded to a segment or rectangle (x_min .. z_max) is one face: a third
 * guard, the foot's margin inside the bounds, opens a closed contact that slides off; a
 * crossing beside the bounds is no impact but the mode `below`, left when the point comes
 * back up past the plane.
 *
 * A floor with Coulomb friction (mu > 0) slides while closed (the law -mu |N| along the
 * sliding direction) and sticks as a 2-D guide does (components/guide.c): stick rows, the
 * velocity rows t . v = 0 (one tangent in 2-D, two in 3-D), active in the mode `stick`, and a
 * second guard (the sliding velocity while sliding, along the direction a 3-D slide
 * remembers; mu_s |N| - |F_t| while sticking; 1 while open). */
#include <math.h>
#include <stdio.h>

#include "parts.h"
#include "spatial.h"

/* A floor with friction closes into JY_SS_STICK, _FORWARD or _BACKWARD (parts.h) in 2-D,
 * into a slide mode (MODE_SLIDE_AT and up) or MODE_STICK in 3-D. MODE_BELOW: a bounded floor's point is
 * on the far side of its plane (beside it, or under it): the surface is one-sided, so
 * nothing happens there until the point comes back up past the plane. */
enum { MODE_OPEN, MODE_CLOSED, MODE_STICK = JY_SS_STICK, MODE_BELOW = 5 };
/* A 3-D slide remembers the direction it started in, to 2 pi / SLIDE_BINS, as its mode
 * MODE_SLIDE_AT + bin: its friction guard is the sliding velocity along that direction,
 * which falls through zero exactly where the slide stops (a straight slide) or where its
 * direction has turned by a right angle (then it slides on with a new direction). */
enum { MODE_SLIDE_AT = 16, SLIDE_BINS = 1 << 24 };
#define TURN 6.283185307179586         /* 2 pi */
enum { P_DIM, P_NX, P_NY, P_NZ, P_D }; /* floor and surface */
enum { F_MU = 5, F_MU_S, F_BOUNDS };   /* floor */
enum { S_BOUNDS = 5 };                 /* surface */
enum { NBOUNDS = 6 };                  /* x_min, x_max, y_min, y_max, z_min, z_max */

#define NORMAL_PARAMS(where)                                                                       \
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions (2 or 3)"},                      \
    {"nx", 0, JY_PARAM_REAL, "1", "x component of the normal n, pointing to the free side" where}, \
    {"ny", 1, JY_PARAM_REAL, "1", "y component of the normal n"},                                  \
    {"nz", 0, JY_PARAM_REAL, "1", "z component of the normal n (3-D)"}, {                          \
    "d", 0, JY_PARAM_REAL, "m", "offset: the point stays where n . pos >= d" where                 \
  }
#define BOUND_PARAMS(where)                                                           \
  {"x_min", -INFINITY, JY_PARAM_BOUND, "m",                                           \
   "the surface ends where the foot of the point on it has x < x_min" where},         \
    {"x_max", INFINITY, JY_PARAM_BOUND, "m", "... or x > x_max (math.huge: no end)"}, \
    {"y_min", -INFINITY, JY_PARAM_BOUND, "m", "... or y < y_min"},                    \
    {"y_max", INFINITY, JY_PARAM_BOUND, "m", "... or y > y_max"},                     \
    {"z_min", -INFINITY, JY_PARAM_BOUND, "m", "... or z < z_min (3-D)"}, {            \
    "z_max", INFINITY, JY_PARAM_BOUND, "m", "... or z > z_max (3-D)"                  \
  }
#define IMPACT_PARAMS(what)                                                                        \
  {"e", 1, JY_PARAM_NONNEGATIVE, "1", "coefficient of restitution, 0 (plastic) to 1 (elastic)"}, { \
    "v_close", 1e-6, JY_PARAM_NONNEGATIVE, "m/s",                                                  \
      "a " what " slower than this (or than the run resolves) closes the contact (no chatter)"     \
  }

static const jyParamSpec floor_params[] = {
  NORMAL_PARAMS(""),
  {"mu", 0, JY_PARAM_NONNEGATIVE, "1", "Coulomb friction coefficient while in contact"},
  {"mu_s", -1, JY_PARAM_REAL, "1", "static friction coefficient, >= mu (-1: equal to mu)"},
  BOUND_PARAMS(""),
  IMPACT_PARAMS("bounce"),
};

static const jyParamSpec surface_params[] = {
  NORMAL_PARAMS(" (body axes)"),
  BOUND_PARAMS(" (body axes)"),
  IMPACT_PARAMS("bounce"),
};

static const jyParamSpec rope_params[] = {
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"L", 1, JY_PARAM_POSITIVE, "m", "length: the ends stay at most L apart"},
  {"e", 0, JY_PARAM_NONNEGATIVE, "1", "coefficient of restitution when the rope jerks taut"},
  {"v_close", 1e-6, JY_PARAM_NONNEGATIVE, "m/s",
   "a rebound slower than this keeps the rope taut (no chatter)"},
};

static const jyParamSpec contact_params[] = {
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"D", 1, JY_PARAM_POSITIVE, "m", "contact distance: the ends stay at least D apart"},
  IMPACT_PARAMS("bounce"),
};

static int is_floor(const jyPartInstance *self);
static int is_surface(const jyPartInstance *self);
static int is_rope(const jyPartInstance *self);
static int is_plane(const jyPartInstance *self) { return is_floor(self) || is_surface(self); }

/* Restitution and v_close are the last two parameters of every type here. */
static double restitution(const jyPartInstance *self) {
  return self->params[self->type->nparams - 2];
}
static double v_close(const jyPartInstance *self) { return self->params[self->type->nparams - 1]; }

static const double *bounds_of(const jyPartInstance *self) {
  return self->params + (is_floor(self) ? F_BOUNDS : S_BOUNDS);
}

/* Some of the NBOUNDS bounds b is finite. */
static int any_finite(const double *b) {
  for (int i = 0; i < NBOUNDS; i++)
    if (isfinite(b[i])) return 1;
  return 0;
}

/* A floor or surface with a finite bound: it has the edge guard and the mode MODE_BELOW. */
static int has_bounds(const jyPartInstance *self) {
  return is_plane(self) && any_finite(bounds_of(self));
}

/* phi and its rate (floor: n . p - d with n as given; surface: the same in body axes; a
 * distance: |b - a| - L), the side sign s, the size of the row's gradient (|n|, or 1) and,
 * on a bounded plane, how far inside its bounds the foot of the point is. */
typedef struct Gap {
  double phi, rate, sign, scale;
  double A[JY_FRAME_DIM + 3]; /* the row over the coordinates */
  double rhs;                 /* its acceleration right-hand side */
  double edge;                /* least margin of the foot inside the bounds (m; +inf: none) */
  int degenerate;             /* two ends at one point: no direction */
} Gap;

/* The least margin of the foot x - (phi / |n|^2) n inside the bounds, along every axis
 * (negative outside; +inf when unbounded). */
static double edge_margin(const double *n, int dim, double phi, const double *x,
                          const double *bounds) {
  double nn = 0, m = INFINITY;
  for (int i = 0; i < dim; i++) nn += n[i] * n[i];
  for (int i = 0; i < dim; i++) {
    double foot = x[i] - phi / nn * n[i];
    m = fmin(m, fmin(foot - bounds[2 * i], bounds[2 * i + 1] - foot));
  }
  return m;
}

/* A surface's point in body axes: R(q)^T (p - x), its coordinates being the body's frame
 * (x, y, theta in 2-D; x, y, z, q0..q3 in 3-D) and then the point p. */
static int surface_frame_dim(int dim) { return dim == 2 ? 3 : JY_FRAME_DIM; }

static void surface_local(int dim, const jyHyper *q, jyHyper *local) {
  int nf = surface_frame_dim(dim);
  jyHyper rel[3];
  for (int i = 0; i < dim; i++) rel[i] = jy_hd_sub(q[nf + i], q[i]);
  if (dim == 2) {
    jyHyper c = jy_hd_cos(q[2]), s = jy_hd_sin(q[2]);
    local[0] = jy_hd_add(jy_hd_mul(c, rel[0]), jy_hd_mul(s, rel[1]));
    local[1] = jy_hd_sub(jy_hd_mul(c, rel[1]), jy_hd_mul(s, rel[0]));
    return;
  }
  jyHyper conj[4];
  jy_hq_conj(conj, q + JY_FRAME_Q);
  jy_hq_rotate(local, conj, rel);
}

static void surface_phi(const void *ctx, const jyHyper *q, jyHyper *out) {
  const double *p = ctx;
  int dim = jy_part_dim(p);
  jyHyper local[3];
  surface_local(dim, q, local);
  out[0] = jy_hd_const(-p[P_D]);
  for (int i = 0; i < dim; i++) out[0] = jy_hd_add(out[0], jy_hd_scale(local[i], p[P_NX + i]));
}

static void measure_plane(const jyPartInstance *self, const jyPartState *state, Gap *g) {
  int dim = jy_part_dim(self->params);
  const double *n = self->params + P_NX;
  double nn = 0, x[3] = {0, 0, 0};
  for (int i = 0; i < dim; i++) nn += n[i] * n[i];
  g->sign = 1;
  g->scale = sqrt(nn);
  if (is_floor(self)) {
    double np = 0, nv = 0;
    for (int i = 0; i < dim; i++) {
      g->A[i] = n[i];
      np += n[i] * state->q[i];
      nv += n[i] * state->v[i];
      x[i] = state->q[i];
    }
    g->phi = np - self->params[P_D];
    g->rate = nv;
  } else {
    double curv;
    jy_spatial_eval(surface_phi, self->params, self->ncoords, 1, state->q, state->v, &g->phi, g->A,
                    &g->rate, &curv);
    g->rhs = -curv;
    if (has_bounds(self)) { /* the point in body axes, where the bounds are */
      jyHyper qh[JY_FRAME_DIM + 3], local[3];
      for (int i = 0; i < self->ncoords; i++) qh[i] = jy_hd_const(state->q[i]);
      surface_local(dim, qh, local);
      for (int i = 0; i < dim; i++) x[i] = local[i].v;
    }
  }
  g->edge = has_bounds(self) ? edge_margin(n, dim, g->phi, x, bounds_of(self)) : INFINITY;
}

static void measure(const jyPartInstance *self, const jyPartState *state, Gap *g) {
  int dim = jy_part_dim(self->params);
  for (int i = 0; i < JY_FRAME_DIM + 3; i++) g->A[i] = 0;
  g->rhs = 0;
  g->degenerate = 0;
  g->edge = INFINITY;
  if (is_plane(self)) {
    measure_plane(self, state, g);
    return;
  }
  jyEnds e;
  jy_ends_eval(&e, dim, state->q, state->v);
  g->phi = e.len - self->params[1];
  g->rate = e.len_rate;
  g->sign = is_rope(self) ? -1 : 1;
  g->scale = 1;
  g->degenerate = dim > 1 && e.len == 0.0;
  for (int i = 0; i < dim; i++) {
    g->A[i] = -e.u[i];
    g->A[dim + i] = e.u[i];
  }
  if (dim > 1 && !g->degenerate) {
    double rr = 0.0;
    for (int i = 0; i < dim; i++) rr += e.rate[i] * e.rate[i];
    g->rhs = -(rr - e.len_rate * e.len_rate) / e.len;
  }
}

/* A floor with friction (mu > 0): it has the stick rows (one in 2-D, two in 3-D) and the
 * friction guard. */
static int has_friction(const jyPartInstance *self) { return is_floor(self) && self->nrows > 1; }

/* The floor's unit tangents (2-D: t = (-ny, nx) / |n|; 3-D: two completing a right-handed
 * basis with n) and the sliding velocity along them, vt; returns how many there are. */
static int floor_tangents(const jyPartInstance *self, const double *v, double t[2][3],
                          double vt[2]) {
  const double *n = self->params + P_NX;
  int dim = jy_part_dim(self->params);
  if (dim == 2) {
    double len = hypot(n[0], n[1]);
    t[0][0] = -n[1] / len;
    t[0][1] = n[0] / len;
  } else {
    double u[3];
    jy_spatial_basis(n, u, t[0], t[1]);
  }
  for (int k = 0; k < dim - 1; k++) {
    vt[k] = 0;
    for (int i = 0; i < dim; i++) vt[k] += t[k][i] * v[i];
  }
  return dim - 1;
}

/* The normal force's size, |lambda| |n| (N). */
static double normal_force(const jyPartInstance *self, const double *row_forces) {
  const double *n = self->params + P_NX;
  return fabs(row_forces[0]) * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/* The size of the stick rows' force, |F_t| (N). */
static double stick_force(const jyPartInstance *self, const double *row_forces) {
  return self->nrows > 2 ? hypot(row_forces[1], row_forces[2]) : fabs(row_forces[1]);
}

/* mu_s |N| - |F_t| (N): how far the static friction is from its limit. */
static double stick_margin(const jyPartInstance *self, const double *row_forces) {
  const double *p = self->params;
  double mu_s = p[F_MU_S] < 0 ? p[F_MU] : p[F_MU_S];
  return mu_s * normal_force(self, row_forces) - stick_force(self, row_forces);
}

/* The tangential speed below which a 3-D slide counts as stopped: BOUNCE_RESOLVED times
 * the run's resolution of a velocity near rest (its velocity atol, 10 atol, and rtol of the
 * speed), so that the integrator's noise in the two tangential components cannot keep a
 * slide that has ended going (0 outside a simulation). */
#define BOUNCE_RESOLVED 10.0
static double stop_speed(const jyPartState *state) {
  double speed = 0;
  for (int i = 0; i < 3; i++) speed += state->v[i] * state->v[i];
  return BOUNCE_RESOLVED * (10 * state->atol + state->rtol * sqrt(speed));
}

static int is_slide3(int mode) { return mode >= MODE_SLIDE_AT; }

/* The 3-D slide mode along the tangential vector w (coefficients of the tangents). */
static int slide_mode(const double w[2]) {
  double turns = atan2(w[1], w[0]) / TURN;
  long bin = lround(turns * SLIDE_BINS);
  return MODE_SLIDE_AT + (int)(((bin % SLIDE_BINS) + SLIDE_BINS) % SLIDE_BINS);
}

/* The direction a 3-D slide mode remembers. */
static void slide_reference(int mode, double ref[2]) {
  double angle = TURN * (double)(mode - MODE_SLIDE_AT) / SLIDE_BINS;
  ref[0] = cos(angle);
  ref[1] = sin(angle);
}

/* The direction of sliding in the tangent plane (3-D), as coefficients of the tangents:
 * along the sliding velocity, or below the stop speed (a slip starting from rest, a slide
 * about to stop) the direction the mode remembers, which the stop is located along. */
static void slide_direction(const jyPartInstance *self, const jyPartState *state, double t[2][3],
                            double dir[2]) {
  double vt[2];
  floor_tangents(self, state->v, t, vt);
  double sv = hypot(vt[0], vt[1]);
  if (sv > stop_speed(state) && sv > 0) {
    dir[0] = vt[0] / sv;
    dir[1] = vt[1] / sv;
  } else {
    slide_reference(state->mode, dir);
  }
}

/* The sliding floor's Coulomb force -mu |N| along the sliding direction (from rest: against
 * the tangential acceleration), only while it slides. */
static int nonideal_law(const jyPartInstance *self, const jyPartState *state,
                        const double *row_forces, const double *acc, double *force) {
  if (!has_friction(self) || state->mode == MODE_OPEN || state->mode == MODE_BELOW ||
      state->mode == MODE_STICK)
    return 0;
  double size = self->params[F_MU] * normal_force(self, row_forces), t[2][3], dir[2];
  if (jy_part_dim(self->params) == 2) {
    double vt[2];
    floor_tangents(self, state->v, t, vt);
    double d = jy_ss_direction(state->mode, vt[0], t[0][0] * acc[0] + t[0][1] * acc[1]);
    for (int i = 0; i < 2; i++) force[i] = -size * (d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0) * t[0][i];
    return 0;
  }
  if (!is_slide3(state->mode)) return 0;
  slide_direction(self, state, t, dir);
  for (int i = 0; i < 3; i++) force[i] = -size * (dir[0] * t[0][i] + dir[1] * t[1][i]);
  return 0;
}

static int check_restitution(const double *p, int nparams, char *error, size_t error_len) {
  double e = p[nparams - 2];
  if (e > 1)
    return jy_part_fail(error, error_len,
                        "restitution e = %g must be in [0, 1] (0 plastic, 1 elastic)", e);
  return 0;
}

/* The normal is not zero; each bound leaves a positive extent, and bounds an axis the plane
 * extends along. */
static int check_plane(const double *p, const double *bounds, char *error, size_t error_len) {
  static const char axes[] = "xyz";
  int dim = jy_part_dim(p), zero = 1;
  for (int i = 0; i < dim; i++) zero &= p[P_NX + i] == 0.0;
  if (zero)
    return jy_part_fail(error, error_len, "the normal (nx, ny%s) is zero: set a non-zero component",
                        dim > 2 ? ", nz" : "");
  for (int i = 0; i < 3; i++) {
    double lo = bounds[2 * i], hi = bounds[2 * i + 1];
    if (!isfinite(lo) && !isfinite(hi) && lo < hi) continue;
    if (i >= dim)
      return jy_part_fail(error, error_len,
                          "%c_min and %c_max bound a 3-D surface; this one is "
                          "2-D (dim = 2)",
                          axes[i], axes[i]);
    if (!(hi > lo))
      return jy_part_fail(error, error_len,
                          "%c_max = %g is not above %c_min = %g: a bounded surface needs a "
                          "positive extent along %c",
                          axes[i], hi, axes[i], lo, axes[i]);
    int along = 0;
    for (int j = 0; j < dim; j++) along |= j != i && p[P_NX + j] != 0.0;
    if (!along)
      return jy_part_fail(error, error_len,
                          "%c_min/%c_max bound the surface along %c, but its normal is along %c: "
                          "it does not extend along %c; bound it along the other axes",
                          axes[i], axes[i], axes[i], axes[i], axes[i]);
  }
  return 0;
}

static const jyPartHybrid hybrid;

/* A floor: its line or plane. A rope: a line between its ends. */
static int floor_visual(const jyPartInstance *self, const jyPartState *state,
                        const double *row_forces, jyVisual *out) {
  int dim = jy_part_dim(self->params);
  jy_visual_ground(&out[0], dim, self->params + P_NX, self->params[P_D]);
  /* the contact force on the point: A^T lambda, A = n (the contact row, row 0) */
  jy_visual_point(&out[1], JY_VISUAL_ARROW, dim, state->q);
  for (int i = 0; i < dim && row_forces; i++) out[1].b[i] = self->params[P_NX + i] * row_forces[0];
  return 0;
}

static int rope_visual(const jyPartInstance *self, const jyPartState *state,
                       const double *row_forces, jyVisual *out) {
  (void)row_forces;
  jy_visual_ends(out, JY_VISUAL_ROPE, jy_part_dim(self->params), state->q);
  return 0;
}

static int floor_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                       size_t error_len) {
  int dim = jy_part_dim(p);
  if (dim < 2)
    return jy_part_fail(error, error_len, "a floor needs dim = 2 or 3 (a line or a plane)");
  if (check_plane(p, p + F_BOUNDS, error, error_len)) return 1;
  if (check_restitution(p, type->nparams, error, error_len)) return 1;
  if (jy_ss_check_coefficients(p[F_MU], p[F_MU_S], error, error_len)) return 1;
  s->ncoords = dim;
  for (int i = 0; i < dim; i++) s->coord_names[i] = jy_names_xyz[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", dim, 1, 0};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE; /* massless */
  return 0;
}

static int surface_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                         size_t error_len) {
  static const char *const point_names[3] = {"px", "py", "pz"};
  static const char *const frame2d_names[3] = {"x", "y", "theta"};
  int dim = jy_part_dim(p);
  if (dim < 2)
    return jy_part_fail(error, error_len, "a surface needs dim = 2 or 3 (on a body2d or body3d)");
  if (check_plane(p, p + S_BOUNDS, error, error_len)) return 1;
  if (check_restitution(p, type->nparams, error, error_len)) return 1;
  int nf = surface_frame_dim(dim);
  s->ncoords = nf + dim;
  for (int i = 0; i < nf; i++) s->coord_names[i] = dim == 2 ? frame2d_names[i] : jy_names_frame[i];
  for (int i = 0; i < dim; i++) s->coord_names[nf + i] = point_names[i];
  if (dim == 3) s->coord_defaults[JY_FRAME_Q] = 1.0;
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"body", nf, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"pos", dim, 1, nf};
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE; /* massless */
  return 0;
}

static int distance_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                          size_t error_len) {
  if (check_restitution(p, type->nparams, error, error_len)) return 1;
  jy_ends_shape(s, jy_part_dim(p), p[1]);
  s->flags |= JY_PART_CONSERVATIVE;
  return 0;
}

/* What the shapes share: the row, the outputs, the modes. */
static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  int floor = type->params == floor_params, surface = type->params == surface_params;
  int rc = floor ? floor_shape(type, p, s, error, error_len)
    : surface    ? surface_shape(type, p, s, error, error_len)
                 : distance_shape(type, p, s, error, error_len);
  if (rc) return rc;
  int rope = type->params == rope_params;
  s->nrows = 1;
  s->row_names[0] = floor || surface ? "contact" : rope ? "length" : "distance";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 2;
  s->output_names[0] = "gap";
  s->output_names[1] = rope ? "tension" : "normal_force";
  s->hybrid = &hybrid;
  s->nguards = 1;
  if (floor && !(p[F_MU] > 0)) s->flags |= JY_PART_NO_LAW;
  if (floor || rope) {
    s->nvisuals = floor ? 2 : 1;
    s->visual = floor ? floor_visual : rope_visual;
  }
  if (floor && p[F_MU] > 0) {
    static const char *const stick_names[2] = {"stick1", "stick2"};
    int dim = jy_part_dim(p);
    s->nrows = dim;
    for (int k = 1; k < dim; k++) {
      s->row_names[k] = dim == 2 ? "stick" : stick_names[k - 1];
      s->row_kinds[k] = JY_ROW_VELOCITY;
    }
    s->noutputs = 3;
    s->output_names[2] = "friction_force";
    s->nguards = 2;
  }
  if ((floor || surface) && any_finite(p + (floor ? F_BOUNDS : S_BOUNDS)))
    s->nguards++; /* the edge guard */
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  if (!is_plane(self)) return jy_ends_terminal(self, state, k, value, jac, vel_bias, acc_bias);
  int dim = jy_part_dim(self->params), nf = is_floor(self) ? 0 : surface_frame_dim(dim);
  if (k == 0 && nf > 0)
    jy_point_terminal(nf, 0, self->ncoords, state->q, value, jac);
  else if (k == (nf > 0))
    jy_point_terminal(dim, nf, self->ncoords, state->q, value, jac);
  else
    return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  return 0;
}

static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  Gap g;
  measure(self, state, &g);
  if (g.degenerate && state->mode != MODE_OPEN)
    return jy_part_fail(state->error, state->error_len,
                        "the ends coincide, so the direction of the constraint is undefined");
  int nr = self->nrows;
  for (int j = 0; j < self->ncoords; j++) A[j * nr] = g.A[j];
  rhs[0] = g.rhs;
  if (residual) residual[0] = g.phi;
  if (rate) rate[0] = g.rate;
  if (has_friction(self)) { /* the stick rows t . v = 0: A = t, b = 0 (a flat floor) */
    double t[2][3], vt[2];
    int m = floor_tangents(self, state->v, t, vt);
    for (int k = 0; k < m; k++) {
      for (int j = 0; j < self->ncoords; j++) A[(1 + k) + j * nr] = t[k][j];
      rhs[1 + k] = 0;
      if (residual) residual[1 + k] = vt[k];
    }
  }
  return 0;
}

static int is_closed(int mode) { return mode != MODE_OPEN && mode != MODE_BELOW; }

/* The gap (m, >= 0 on the allowed side) and the force the row applies (>= 0 while it holds:
 * a floor or contact pushing, a rope pulling). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  Gap g;
  measure(self, state, &g);
  out[0] = g.sign * g.phi / g.scale;
  out[1] = g.sign * row_forces[0] * g.scale;
  if (has_friction(self))
    out[2] = state->mode == MODE_STICK ? stick_force(self, row_forces)
      : is_closed(state->mode)         ? self->params[F_MU] * normal_force(self, row_forces)
                                       : 0.0;
  return 0;
}

/* The mode a contact closes into: with friction, sliding the way it moves (or sticking). */
static int closed_mode(const jyPartInstance *self, const jyPartState *state) {
  if (!has_friction(self)) return MODE_CLOSED;
  double t[2][3], vt[2];
  if (floor_tangents(self, state->v, t, vt) == 1) return jy_ss_mode_of_velocity(vt[0]);
  return hypot(vt[0], vt[1]) > stop_speed(state) ? slide_mode(vt) : MODE_STICK;
}

static unsigned long long active_rows(const jyPartInstance *self, int mode) {
  if (mode == MODE_STICK) return (1ULL << self->nrows) - 1;
  return is_closed(mode) ? 1ULL : 0ULL;
}

/* Dead bands of the guards. A guard that stays exactly zero (two pendulum balls hanging
 * touching: gap 0 and force 0 for ever) makes the integrator's root finding fail ("root
 * found at and very near t") as soon as another event fires, and rounding makes it cross
 * back and forth. So a contact counts as reached at a penetration of GAP_BAND (relative to
 * the constraint's length scale), and releases when it pulls by more than FORCE_BAND. */
#define GAP_BAND 1e-12
#define FORCE_BAND 1e-10 /* N (N m for an angle): far below any force a model reports */
/* At an event instant, in dead bands: an open contact further past its surface than this
 * is an error (a parameter or a jump put the body there: closing it would teleport the
 * body out by the projection); a closed one whose surface moved away by more than this
 * opens (a lowered floor: the body falls rather than being pulled down with it). */
#define PAST_ALLOWED 1000.0
#define OPENED_BANDS 20.0
/* A point below a bounded plane comes back to its free side this many bands above it: well
 * clear of a second plane at the same place facing the other way (a table's underside). */
#define BELOW_BANDS 4.0

/* How far the run resolves phi at this state: atol + rtol |q_j| on each coordinate the row
 * reads, through its gradient (0 outside a simulation). */
static double gap_resolution(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  double r = 0;
  for (int i = 0; i < self->ncoords; i++)
    r += fabs(g->A[i]) * (state->atol + state->rtol * fabs(state->q[i]));
  return r;
}

/* The length scale of phi: |d| + |n| for a plane, the length for a distance. */
static double length_scale(const jyPartInstance *self, const Gap *g) {
  return is_plane(self) ? fabs(self->params[P_D]) + g->scale : self->params[1];
}

/* The gap guard's dead band: GAP_BAND of the length scale, or half the run's resolution of
 * the gap when that is larger (the integrator's own noise must not make crossings). */
static double gap_band(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  return fmax(GAP_BAND * length_scale(self, g), 0.5 * gap_resolution(self, state, g));
}

/* Closed when touching (within 1e-9 of the scale of phi), not separating and on the
 * surface; on a bounded plane, below it when past its plane beside it, or far past it. */
static int initial_mode(const jyPartInstance *self, const jyPartState *state, int *mode) {
  Gap g;
  measure(self, state, &g);
  double side = g.sign * g.phi, band = gap_band(self, state, &g);
  if (has_bounds(self) && side < -band && (g.edge < 0 || side < -PAST_ALLOWED * band))
    *mode = MODE_BELOW;
  else if (side <= 1e-9 * length_scale(self, &g) && g.sign * g.rate <= 0 && g.edge >= 0)
    *mode = closed_mode(self, state);
  else
    *mode = MODE_OPEN;
  return 0;
}

/* The slowest bounce (separation speed, m/s) the run integrates as one: v_close, or the
 * speed that rises BOUNCE_RESOLVED resolutions against the acceleration into the contact. */
static double slowest_bounce(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  if (!state->acc) return v_close(self);
  double phi_acc = -g->rhs; /* phi'' = A acc - rhs */
  for (int i = 0; i < self->ncoords; i++) phi_acc += g->A[i] * state->acc[i];
  double inward = -g->sign * phi_acc / g->scale; /* m/s^2 toward the contact */
  double height = BOUNCE_RESOLVED * gap_resolution(self, state, g) / g->scale;
  return inward > 0 ? fmax(v_close(self), sqrt(2 * inward * height)) : v_close(self);
}

/* Guards: 0 the gap (open), the row force (closed) or the way back up (below); 1 the
 * friction (sliding velocity, or the static margin); last, on a bounded plane, the foot's
 * margin inside the bounds while closed. */
static int guards(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  const double *acc, double *out) {
  (void)acc;
  Gap g;
  measure(self, state, &g);
  double band = gap_band(self, state, &g), side = g.sign * g.phi;
  out[0] = state->mode == MODE_BELOW ? side - BELOW_BANDS * band
    : is_closed(state->mode)         ? g.sign * row_forces[0] + FORCE_BAND
                                     : side + band;
  int k = 1;
  if (has_friction(self)) {
    double t[2][3], vt[2];
    int m = floor_tangents(self, state->v, t, vt);
    if (!is_closed(state->mode))
      out[k] = 1.0; /* nothing slides */
    else if (m == 1)
      out[k] = jy_ss_guard(state->mode, vt[0], stick_margin(self, row_forces));
    else if (state->mode == MODE_STICK) /* 3-D, past the force band: admissible agrees */
      out[k] = stick_margin(self, row_forces) + FORCE_BAND;
    else { /* 3-D: the sliding velocity along the direction the slide remembers */
      double ref[2];
      slide_reference(state->mode, ref);
      out[k] = vt[0] * ref[0] + vt[1] * ref[1];
    }
    k++;
  }
  if (has_bounds(self)) out[k] = is_closed(state->mode) ? g.edge + band : 1.0;
  return 0;
}

static int friction_transition(const jyPartInstance *self, const jyPartState *state,
                               const double *row_forces, int direction, int *mode,
                               double *restitution_out) {
  if (!is_closed(state->mode)) return 0;
  if (self->nrows == 2) {
    jy_ss_transition(state->mode, direction, row_forces[1], mode, &restitution_out[1]);
    return 0;
  }
  if (direction > 0) return 0; /* a slide speeding up, a stick getting further from slipping */
  double t[2][3], vt[2];
  floor_tangents(self, state->v, t, vt);
  if (state->mode == MODE_STICK) { /* static friction spent: slips against the force held */
    *mode = slide_mode((double[2]){-row_forces[1], -row_forces[2]});
  } else if (hypot(vt[0], vt[1]) > stop_speed(state)) {
    *mode = slide_mode(vt); /* turned by a right angle: slides on along its new direction */
  } else {
    *mode = MODE_STICK; /* the slide stopped: what is left of its speed is taken out */
    restitution_out[1] = restitution_out[2] = 0.0;
  }
  return 0;
}

static int transition(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, int guard, int direction, int *mode,
                      double *restitution_out) {
  if (guard == 1 && has_friction(self))
    return friction_transition(self, state, row_forces, direction, mode, restitution_out);
  if (guard > 0) { /* the edge: the foot left the bounds, and the point goes off the plane */
    if (is_closed(state->mode) && direction < 0) *mode = MODE_OPEN;
    return 0;
  }
  if (state->mode == MODE_BELOW) { /* back up past the plane: free again */
    if (direction > 0) *mode = MODE_OPEN;
    return 0;
  }
  if (direction > 0) return 0; /* a gap opening or a force growing: nothing happens */
  if (is_closed(state->mode)) {
    *mode = MODE_OPEN; /* it would pull: released */
    return 0;
  }
  Gap g;
  measure(self, state, &g);
  if (g.edge < 0) { /* past the plane beside the bounded surface: on its far side */
    *mode = MODE_BELOW;
    return 0;
  }
  double e = restitution(self), approach = -g.sign * g.rate / g.scale;
  if (!(approach > 0)) return 0; /* separating: the crossing is the integrator's rounding */
  if (e * approach >= slowest_bounce(self, state, &g) && e > 0) {
    restitution_out[0] = e; /* a bounce: stays open */
  } else {
    restitution_out[0] = 0.0; /* plastic, or too slow to bounce: closes */
    *mode = closed_mode(self, state);
  }
  return 0;
}

/* Stick and slide hold? 3-D: a stick slips (against the force it holds) once the static
 * friction is spent by more than the force band its guard crosses at; a slide found at an
 * event instant below the stop speed and not accelerating along its direction (its body held
 * by another contact that stuck, or friction winning) sticks. */
static void stick_admissible(const jyPartInstance *self, const jyPartState *state,
                             const double *row_forces, const double *acc, int *mode) {
  if (self->nrows == 2) {
    jy_ss_admissible(state->mode, stick_margin(self, row_forces), row_forces[1], mode);
    return;
  }
  if (state->mode == MODE_STICK) {
    if (stick_margin(self, row_forces) < -0.5 * FORCE_BAND)
      *mode = slide_mode((double[2]){-row_forces[1], -row_forces[2]});
    return;
  }
  double t[2][3], vt[2], ref[2], along = 0;
  floor_tangents(self, state->v, t, vt);
  slide_reference(state->mode, ref);
  for (int i = 0; i < 3 && acc; i++) along += (ref[0] * t[0][i] + ref[1] * t[1][i]) * acc[i];
  if (acc && hypot(vt[0], vt[1]) < stop_speed(state) && along <= 0) *mode = MODE_STICK;
}

static int admissible(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, const double *acc, int *mode) {
  Gap g;
  measure(self, state, &g);
  double band = gap_band(self, state, &g), side = g.sign * g.phi;
  double past = 2 * band + BOUNCE_RESOLVED * gap_resolution(self, state, &g);
  if (state->mode == MODE_BELOW) { /* the plane moved below the point: free again */
    if (side > BELOW_BANDS * band) *mode = MODE_OPEN;
    return 0;
  }
  if (g.edge < 0) { /* beside a bounded plane: nothing holds it; past the plane, below it */
    *mode = side < -past ? MODE_BELOW : MODE_OPEN;
    return 0;
  }
  if (-side > PAST_ALLOWED * band) {
    snprintf(state->error, state->error_len,
             "the ends are %.3g m past the contact surface, more than the %.3g m a run "
             "corrects (a parameter change moved the surface into the body, an action moved "
             "the body into it, or it starts there): move the body out of it first",
             -side / g.scale, PAST_ALLOWED * band / g.scale);
    return 1;
  }
  /* An open contact found past its band (by more than the interpolant's own error) and not
   * on its way out: a crossing the integrator did not see (a restart, a projection). One
   * that separates (just bounced off, located a little past the band) comes out itself. */
  if (state->mode == MODE_OPEN && side + past < 0 && g.sign * g.rate <= 0)
    *mode = closed_mode(self, state);
  else if (is_closed(state->mode) && side > OPENED_BANDS * band)
    *mode = MODE_OPEN; /* the surface moved away (a parameter changed): the body falls */
  else if (is_closed(state->mode) && g.sign * row_forces[0] < -FORCE_BAND)
    *mode = MODE_OPEN;
  else if (has_friction(self))
    stick_admissible(self, state, row_forces, acc, mode);
  return 0;
}

static const char *mode_name(const jyPartInstance *self, int mode) {
  if (is_rope(self)) return mode == MODE_CLOSED ? "taut" : "slack";
  if (mode == MODE_STICK) return "stick";
  if (mode == MODE_BELOW) return "below";
  return mode == MODE_OPEN ? "free" : has_friction(self) ? "slide" : "contact";
}

/* A contact's two ends may pass right through each other within one step, |b - a| - D
 * positive at both of its ends: the step is kept to what moves them, at their relative
 * speed, by the gap and a tenth of D (a crossing then shows at the step's end). A point
 * below a bounded plane and rising may likewise come up past it and fall back within one
 * step (a ball thrown up past a table's edge, landing on it): kept to its distance to the
 * plane and a tenth of the length scale at its speed. An unbounded plane's and a rope's
 * gaps have one sign on each side: no limit. */
#define PASS_FRACTION 0.1
static double max_step(const jyPartInstance *self, const jyPartState *state) {
  if (is_plane(self)) {
    if (state->mode != MODE_BELOW) return 0;
    Gap g;
    measure(self, state, &g);
    double rising = g.rate / g.scale, below = -g.phi / g.scale;
    return rising > 0 ? (fmax(below, 0.0) + PASS_FRACTION * length_scale(self, &g)) / rising : 0;
  }
  if (is_rope(self) || state->mode != MODE_OPEN) return 0;
  int dim = jy_part_dim(self->params);
  jyEnds e;
  jy_ends_eval(&e, dim, state->q, state->v);
  double speed = 0;
  for (int i = 0; i < dim; i++) speed += e.rate[i] * e.rate[i];
  speed = sqrt(speed);
  double D = self->params[1];
  return speed > 0 ? (fmax(e.len - D, 0.0) + PASS_FRACTION * D) / speed : 0;
}

static const jyPartHybrid hybrid = {
  .active_rows = active_rows,
  .initial_mode = initial_mode,
  .guards = guards,
  .transition = transition,
  .admissible = admissible,
  .mode_name = mode_name,
  .max_step = max_step,
};

static const jyPartType floor_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "floor",
  .doc = "a point pos kept where n . pos >= d (a line or plane, or a bounded segment or "
         "rectangle of it), bouncing with restitution e, with Coulomb friction mu",
  .params = floor_params,
  .nparams = (int)(sizeof floor_params / sizeof floor_params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
  .nonideal_law = nonideal_law,
};

static const jyPartType surface_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "surface",
  .doc = "a line (2-D) or plane (3-D), or a bounded segment or rectangle of it, fixed in the "
         "body whose frame is glued to body: the point pos kept on its free side",
  .params = surface_params,
  .nparams = (int)(sizeof surface_params / sizeof surface_params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
};

static const jyPartType rope_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "rope",
  .doc = "a massless rope: terminals a and b at most L apart, jerking taut with restitution e",
  .params = rope_params,
  .nparams = (int)(sizeof rope_params / sizeof rope_params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
};

static const jyPartType contact_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "contact",
  .doc = "terminals a and b kept at least D apart (two balls touching), restitution e",
  .params = contact_params,
  .nparams = (int)(sizeof contact_params / sizeof contact_params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
};

static int is_floor(const jyPartInstance *self) { return self->type->params == floor_params; }
static int is_surface(const jyPartInstance *self) { return self->type->params == surface_params; }
static int is_rope(const jyPartInstance *self) { return self->type->params == rope_params; }

const jyPartType *jy_part_floor(void) { return &floor_type; }
const jyPartType *jy_part_surface(void) { return &surface_type; }
const jyPartType *jy_part_rope(void) { return &rope_type; }
const jyPartType *jy_part_contact(void) { return &contact_type; }

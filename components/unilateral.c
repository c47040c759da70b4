/* components/unilateral.c — one-sided constraints, parts with modes (part.h jyPartHybrid):
 *   floor    a point kept on one side of a line (2-D) or plane (3-D), n . p >= d;
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
 * A 2-D floor with Coulomb friction (mu > 0) slides while closed (the law -mu |N| along the
 * sliding direction) and sticks as a 2-D guide does (components/guide.c): a second row, the
 * velocity row t . v = 0, active in the mode `stick`, and a second guard (the sliding
 * velocity while sliding, mu_s |N| - |F_t| while sticking, 1 while open). */
#include <math.h>
#include <stdio.h>

#include "parts.h"

/* A floor with friction closes into JY_SS_STICK, _FORWARD or _BACKWARD (parts.h) */
enum { MODE_OPEN, MODE_CLOSED, MODE_STICK = JY_SS_STICK };
enum { F_D = 4, F_MU, F_MU_S };

static const jyParamSpec floor_params[] = {
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions (2 or 3)"},
  {"nx", 0, JY_PARAM_REAL, "1", "x component of the normal n, pointing to the free side"},
  {"ny", 1, JY_PARAM_REAL, "1", "y component of the normal n"},
  {"nz", 0, JY_PARAM_REAL, "1", "z component of the normal n (3-D)"},
  {"d", 0, JY_PARAM_REAL, "m", "offset: the point stays where n . pos >= d"},
  {"mu", 0, JY_PARAM_NONNEGATIVE, "1", "Coulomb friction coefficient while in contact (2-D)"},
  {"mu_s", -1, JY_PARAM_REAL, "1", "static friction coefficient, >= mu (-1: equal to mu)"},
  {"e", 1, JY_PARAM_NONNEGATIVE, "1", "coefficient of restitution, 0 (plastic) to 1 (elastic)"},
  {"v_close", 1e-6, JY_PARAM_NONNEGATIVE, "m/s",
   "a bounce slower than this closes the contact (no chatter)"},
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
  {"e", 1, JY_PARAM_NONNEGATIVE, "1", "coefficient of restitution, 0 (plastic) to 1 (elastic)"},
  {"v_close", 1e-6, JY_PARAM_NONNEGATIVE, "m/s",
   "a bounce slower than this closes the contact (no chatter)"},
};

static int is_floor(const jyPartInstance *self);
static int is_rope(const jyPartInstance *self);

/* Restitution and v_close are the last two parameters of every type here. */
static double restitution(const jyPartInstance *self) {
  return self->params[self->type->nparams - 2];
}
static double v_close(const jyPartInstance *self) { return self->params[self->type->nparams - 1]; }

/* phi and its rate (floor: n . p - d with n as given; a distance: |b - a| - L), the side
 * sign s and the size of the row's gradient (|n|, or 1). Fails when the ends coincide. */
typedef struct Gap {
  double phi, rate, sign, scale;
  double A[6];    /* the row over the coordinates */
  double rhs;     /* its acceleration right-hand side */
  int degenerate; /* two ends at one point: no direction */
} Gap;

static void measure(const jyPartInstance *self, const jyPartState *state, Gap *g) {
  int dim = jy_part_dim(self->params);
  for (int i = 0; i < 6; i++) g->A[i] = 0;
  g->rhs = 0;
  g->degenerate = 0;
  if (is_floor(self)) {
    const double *n = self->params + 1;
    double np = 0, nv = 0, nn = 0;
    for (int i = 0; i < dim; i++) {
      g->A[i] = n[i];
      np += n[i] * state->q[i];
      nv += n[i] * state->v[i];
      nn += n[i] * n[i];
    }
    g->phi = np - self->params[4];
    g->rate = nv;
    g->sign = 1;
    g->scale = sqrt(nn);
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

/* A floor with friction (2-D, mu > 0): it has the stick row and the second guard. */
static int has_friction(const jyPartInstance *self) { return self->nrows == 2; }

/* The floor's unit tangent t = (-ny, nx) / |n|, the sliding velocity t . v, and |n|. */
static double floor_sliding(const jyPartInstance *self, const double *v, double t[2]) {
  const double *n = self->params + 1;
  double len = hypot(n[0], n[1]);
  t[0] = -n[1] / len;
  t[1] = n[0] / len;
  return t[0] * v[0] + t[1] * v[1];
}

/* mu_s |N| - |F_t| (N): how far the static friction is from its limit. */
static double stick_margin(const jyPartInstance *self, const double *row_forces) {
  const double *p = self->params, *n = p + 1;
  double mu_s = p[F_MU_S] < 0 ? p[F_MU] : p[F_MU_S];
  return mu_s * fabs(row_forces[0]) * hypot(n[0], n[1]) - fabs(row_forces[1]);
}

/* The sliding floor's Coulomb force -mu |N| along the sliding direction (from rest: against
 * the tangential acceleration), only while it slides. */
static int nonideal_law(const jyPartInstance *self, const jyPartState *state,
                        const double *row_forces, const double *acc, double *force) {
  if (!has_friction(self) || state->mode == MODE_OPEN) return 0;
  double t[2], vt = floor_sliding(self, state->v, t);
  double dir = jy_ss_direction(state->mode, vt, t[0] * acc[0] + t[1] * acc[1]);
  if (dir == 0.0) return 0;
  const double *n = self->params + 1;
  double size = self->params[F_MU] * fabs(row_forces[0]) * hypot(n[0], n[1]);
  for (int i = 0; i < 2; i++) force[i] = -size * (dir > 0 ? 1.0 : -1.0) * t[i];
  return 0;
}

static int check_restitution(const double *p, int nparams, char *error, size_t error_len) {
  double e = p[nparams - 2];
  if (e > 1)
    return jy_part_fail(error, error_len,
                        "restitution e = %g must be in [0, 1] (0 plastic, 1 elastic)", e);
  return 0;
}

static const jyPartHybrid hybrid;

static int floor_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                       size_t error_len) {
  int dim = jy_part_dim(p), zero = 1;
  if (dim < 2)
    return jy_part_fail(error, error_len, "a floor needs dim = 2 or 3 (a line or a plane)");
  for (int i = 0; i < dim; i++) zero &= p[1 + i] == 0.0;
  if (zero)
    return jy_part_fail(error, error_len, "the normal (nx, ny%s) is zero: set a non-zero component",
                        dim > 2 ? ", nz" : "");
  if (check_restitution(p, type->nparams, error, error_len)) return 1;
  if (p[F_MU] > 0 && dim != 2)
    return jy_part_fail(error, error_len,
                        "friction on a floor (mu = %g) is modelled in 2-D only (dim = 2)", p[F_MU]);
  if (jy_ss_check_coefficients(p[F_MU], p[F_MU_S], error, error_len)) return 1;
  s->ncoords = dim;
  for (int i = 0; i < dim; i++) s->coord_names[i] = jy_names_xyz[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", dim, 1, 0};
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

/* What both shapes share: the row, the outputs, the modes. */
static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  int rc = type->params == floor_params ? floor_shape(type, p, s, error, error_len)
                                        : distance_shape(type, p, s, error, error_len);
  if (rc) return rc;
  int rope = type->params == rope_params;
  s->nrows = 1;
  s->row_names[0] = type->params == floor_params ? "contact" : rope ? "length" : "distance";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 2;
  s->output_names[0] = "gap";
  s->output_names[1] = rope ? "tension" : "normal_force";
  s->hybrid = &hybrid;
  s->nguards = 1;
  if (type->params == floor_params) {
    if (!(p[F_MU] > 0))
      s->flags |= JY_PART_NO_LAW;
    else {
      s->nrows = 2;
      s->row_names[1] = "stick";
      s->row_kinds[1] = JY_ROW_VELOCITY;
      s->noutputs = 3;
      s->output_names[2] = "friction_force";
      s->nguards = 2;
    }
  }
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  if (!is_floor(self)) return jy_ends_terminal(self, state, k, value, jac, vel_bias, acc_bias);
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(self->ncoords, 0, self->ncoords, state->q, value, jac);
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
  if (has_friction(self)) { /* the stick row t . v = 0: A = t, b = 0 (a straight floor) */
    double t[2], vt = floor_sliding(self, state->v, t);
    A[1] = t[0];
    A[1 + nr] = t[1];
    if (residual) residual[1] = vt;
  }
  return 0;
}

/* The gap (m, >= 0 on the allowed side) and the force the row applies (>= 0 while it holds:
 * a floor or contact pushing, a rope pulling). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  Gap g;
  measure(self, state, &g);
  out[0] = g.sign * g.phi / g.scale;
  out[1] = g.sign * row_forces[0] * g.scale;
  if (has_friction(self))
    out[2] = state->mode == MODE_STICK ? fabs(row_forces[1])
      : state->mode != MODE_OPEN       ? self->params[F_MU] * fabs(row_forces[0]) * g.scale
                                       : 0.0;
  return 0;
}

/* The mode a contact closes into: with friction, sliding the way it moves (or sticking). */
static int closed_mode(const jyPartInstance *self, const jyPartState *state) {
  double t[2];
  return has_friction(self) ? jy_ss_mode_of_velocity(floor_sliding(self, state->v, t))
                            : MODE_CLOSED;
}

static unsigned long long active_rows(const jyPartInstance *self, int mode) {
  (void)self;
  return mode == MODE_STICK ? 3ULL : mode == MODE_OPEN ? 0ULL : 1ULL;
}

/* Closed when touching (within 1e-9 of the scale of phi) and not separating. */
static int initial_mode(const jyPartInstance *self, const jyPartState *state, int *mode) {
  Gap g;
  measure(self, state, &g);
  double ref = is_floor(self) ? fabs(self->params[4]) + g.scale : self->params[1];
  *mode =
    g.sign * g.phi <= 1e-9 * ref && g.sign * g.rate <= 0 ? closed_mode(self, state) : MODE_OPEN;
  return 0;
}

/* Dead bands of the guards. A guard that stays exactly zero (two pendulum balls hanging
 * touching: gap 0 and force 0 for ever) makes the integrator's root finding fail ("root
 * found at and very near t") as soon as another event fires, and rounding makes it cross
 * back and forth. So a contact counts as reached at a penetration of GAP_BAND (relative to
 * the constraint's length scale), and releases when it pulls by more than FORCE_BAND. */
#define GAP_BAND 1e-12
#define FORCE_BAND 1e-10 /* N (N m for an angle): far below any force a model reports */
/* A bounce must rise this many resolutions of the gap to be integrated as one. */
#define BOUNCE_RESOLVED 10.0
/* At an event instant, in dead bands: an open contact further past its surface than this
 * is an error (a parameter or a jump put the body there: closing it would teleport the
 * body out by the projection); a closed one whose surface moved away by more than this
 * opens (a lowered floor: the body falls rather than being pulled down with it). */
#define PAST_ALLOWED 1000.0
#define OPENED_BANDS 20.0

/* How far the run resolves phi at this state: atol + rtol |q_j| on each coordinate the row
 * reads, through its gradient (0 outside a simulation). */
static double gap_resolution(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  int dim = jy_part_dim(self->params), n = is_floor(self) ? dim : 2 * dim;
  double r = 0;
  for (int i = 0; i < n; i++) r += fabs(g->A[i]) * (state->atol + state->rtol * fabs(state->q[i]));
  return r;
}

/* The gap guard's dead band: GAP_BAND of the length scale, or half the run's resolution of
 * the gap when that is larger (the integrator's own noise must not make crossings). */
static double gap_band(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  double ref = is_floor(self) ? fabs(self->params[4]) + g->scale : self->params[1];
  return fmax(GAP_BAND * ref, 0.5 * gap_resolution(self, state, g));
}

/* The slowest bounce (separation speed, m/s) the run integrates as one: v_close, or the
 * speed that rises BOUNCE_RESOLVED resolutions against the acceleration into the contact. */
static double slowest_bounce(const jyPartInstance *self, const jyPartState *state, const Gap *g) {
  if (!state->acc) return v_close(self);
  int dim = jy_part_dim(self->params), n = is_floor(self) ? dim : 2 * dim;
  double phi_acc = -g->rhs; /* phi'' = A acc - rhs */
  for (int i = 0; i < n; i++) phi_acc += g->A[i] * state->acc[i];
  double inward = -g->sign * phi_acc / g->scale; /* m/s^2 toward the contact */
  double height = BOUNCE_RESOLVED * gap_resolution(self, state, g) / g->scale;
  return inward > 0 ? fmax(v_close(self), sqrt(2 * inward * height)) : v_close(self);
}

static int guards(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  const double *acc, double *out) {
  (void)acc;
  Gap g;
  measure(self, state, &g);
  out[0] = state->mode != MODE_OPEN ? g.sign * row_forces[0] + FORCE_BAND
                                    : g.sign * g.phi + gap_band(self, state, &g);
  if (has_friction(self)) {
    double t[2];
    out[1] = state->mode == MODE_OPEN
      ? 1.0 /* nothing slides */
      : jy_ss_guard(state->mode, floor_sliding(self, state->v, t), stick_margin(self, row_forces));
  }
  return 0;
}

static int transition(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, int guard, int direction, int *mode,
                      double *restitution_out) {
  (void)row_forces;
  if (guard == 1) { /* friction: the sliding velocity through zero, or static friction spent */
    if (state->mode != MODE_OPEN)
      jy_ss_transition(state->mode, direction, row_forces[1], mode, &restitution_out[1]);
    return 0;
  }
  if (direction > 0) return 0; /* a gap opening or a force growing: nothing happens */
  if (state->mode != MODE_OPEN) {
    *mode = MODE_OPEN; /* it would pull: released */
    return 0;
  }
  Gap g;
  measure(self, state, &g);
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

static int admissible(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, const double *acc, int *mode) {
  (void)acc;
  Gap g;
  measure(self, state, &g);
  double band = gap_band(self, state, &g), side = g.sign * g.phi;
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
  if (state->mode == MODE_OPEN &&
      side + 2 * band + BOUNCE_RESOLVED * gap_resolution(self, state, &g) < 0 &&
      g.sign * g.rate <= 0)
    *mode = closed_mode(self, state);
  else if (state->mode != MODE_OPEN && side > OPENED_BANDS * band)
    *mode = MODE_OPEN; /* the surface moved away (a parameter changed): the body falls */
  else if (state->mode != MODE_OPEN && g.sign * row_forces[0] < -FORCE_BAND)
    *mode = MODE_OPEN;
  else if (has_friction(self))
    jy_ss_admissible(state->mode, stick_margin(self, row_forces), row_forces[1], mode);
  return 0;
}

static const char *mode_name(const jyPartInstance *self, int mode) {
  if (is_rope(self)) return mode == MODE_CLOSED ? "taut" : "slack";
  if (mode == MODE_STICK) return "stick";
  return mode == MODE_OPEN ? "free" : has_friction(self) ? "slide" : "contact";
}

/* A contact's two ends may pass right through each other within one step, |b - a| - D
 * positive at both of its ends: the step is kept to what moves them, at their relative
 * speed, by the gap and a tenth of D (a crossing then shows at the step's end). A floor's
 * and a rope's gaps have one sign on each side: no limit. */
#define PASS_FRACTION 0.1
static double max_step(const jyPartInstance *self, const jyPartState *state) {
  if (is_floor(self) || is_rope(self) || state->mode != MODE_OPEN) return 0;
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
  .doc = "a point pos kept where n . pos >= d, bouncing with restitution e",
  .params = floor_params,
  .nparams = (int)(sizeof floor_params / sizeof floor_params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .outputs = outputs,
  .nonideal_law = nonideal_law,
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
static int is_rope(const jyPartInstance *self) { return self->type->params == rope_params; }

const jyPartType *jy_part_floor(void) { return &floor_type; }
const jyPartType *jy_part_rope(void) { return &rope_type; }
const jyPartType *jy_part_contact(void) { return &contact_type; }

/* components/guide.c — a point held on a line (2-D), a plane (3-D) or a point (1-D),
 * n . p = d, optionally with a constant non-ideal constraint force (Udwadia-Kalaba-Fan 2005,
 * section 4, uses c = (1, 2)) and with sliding friction: viscous, -c v_t, and Coulomb,
 * -mu |N| v_t / |v_t| with N the guide's own ideal (normal) force.
 *
 * Stick-slip (2-D with mu > 0): the guide is a part with modes (part.h jyPartHybrid). It
 * slides (mode 0) with the Coulomb law until the sliding velocity t . v crosses zero; it then
 * sticks (mode 1): a second row, the velocity row t . v = 0, holds it, and its force F_t is
 * the static friction. It slips again when |F_t| would exceed mu_s |N| (the guard
 * mu_s |N| - |F_t| falls through zero), or at once when sticking needs more than that. */
#include <math.h>

#include "parts.h"

enum { P_DIM, P_NX, P_D = P_NX + 3, P_CX, P_MU = P_CX + 3, P_VISCOUS, P_MU_S };
enum { MODE_SLIDE = 0, MODE_STICK = JY_SS_STICK }; /* and JY_SS_FORWARD, JY_SS_BACKWARD */

static const jyParamSpec params[] = {
  {"dim", 2, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"nx", 0, JY_PARAM_REAL, "1", "x component of the normal n (any length)"},
  {"ny", 1, JY_PARAM_REAL, "1", "y component of the normal n (2-D and 3-D)"},
  {"nz", 0, JY_PARAM_REAL, "1", "z component of the normal n (3-D)"},
  {"d", 0, JY_PARAM_REAL, "m", "offset: the point stays where n . p = d"},
  {"cx", 0, JY_PARAM_REAL, "N", "x component of the constant non-ideal constraint force"},
  {"cy", 0, JY_PARAM_REAL, "N", "y component of the constant non-ideal constraint force"},
  {"cz", 0, JY_PARAM_REAL, "N", "z component of the constant non-ideal constraint force"},
  {"mu", 0, JY_PARAM_NONNEGATIVE, "1", "Coulomb sliding friction coefficient (force mu |N|)"},
  {"c", 0, JY_PARAM_NONNEGATIVE, "N s/m", "viscous sliding friction (force c |v_t|)"},
  {"mu_s", -1, JY_PARAM_REAL, "1",
   "static friction coefficient, >= mu (-1: equal to mu); 2-D: the point sticks"},
};

static const jyPartHybrid stick_slip;

/* The static coefficient: mu_s, or mu when it is left at -1. */
static double static_mu(const double *p) { return p[P_MU_S] < 0 ? p[P_MU] : p[P_MU_S]; }

/* Sticking is modelled in 2-D with Coulomb friction (a 1-D guide does not move; in 3-D the
 * sliding velocity is a vector whose size touches zero without crossing it). */
static int sticks(const double *p) { return jy_part_dim(p) == 2 && p[P_MU] > 0.0; }

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  int dim = jy_part_dim(p);
  int zero = 1;
  for (int i = 0; i < dim; i++) zero &= p[P_NX + i] == 0.0;
  if (zero)
    return jy_part_fail(error, error_len,
                        "the normal (nx%s%s) is zero in %d-D: set a non-zero component",
                        dim > 1 ? ", ny" : "", dim > 2 ? ", nz" : "", dim);
  if (jy_ss_check_coefficients(p[P_MU], p[P_MU_S], error, error_len)) return 1;
  s->ncoords = dim;
  for (int i = 0; i < dim; i++) s->coord_names[i] = jy_names_xyz[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", dim, 1, 0};
  s->nrows = 1;
  s->row_names[0] = "surface";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 3;
  s->output_names[0] = "normal_force";
  s->output_names[1] = "friction_force";
  s->output_names[2] = "friction_power";
  /* massless: M = 0; conservative: friction is a non-ideal force, not part of Q */
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  if (p[P_MU] == 0.0) s->flags |= JY_PART_NO_LAW; /* only Coulomb friction needs the normal force */
  if (sticks(p)) {
    s->nrows = 2;
    s->row_names[1] = "stick";
    s->row_kinds[1] = JY_ROW_VELOCITY;
    s->hybrid = &stick_slip;
    s->nguards = 1;
  }
  return 0;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  (void)acc_bias;
  if (k != 0) return jy_part_fail(state->error, state->error_len, "no terminal %d", k);
  jy_point_terminal(self->ncoords, 0, self->ncoords, state->q, value, jac);
  return 0;
}

/* A flat surface: A = n^T, and b = 0 because A does not change along the motion. */
static int constraints(const jyPartInstance *self, const jyPartState *state, double *A, double *rhs,
                       double *residual, double *rate) {
  (void)rhs;
  const double *n = self->params + P_NX;
  double np = 0.0, nv = 0.0;
  for (int i = 0; i < self->ncoords; i++) {
    A[i * self->nrows] = n[i];
    np += n[i] * state->q[i];
    nv += n[i] * state->v[i];
  }
  if (residual) residual[0] = np - self->params[P_D];
  if (rate) rate[0] = nv;
  if (self->nrows == 2) { /* the stick row t . v = 0, t = (-ny, nx) / |n|: A = t, b = 0 */
    double len = hypot(n[0], n[1]), t[2] = {-n[1] / len, n[0] / len};
    A[1] = t[0];
    A[1 + 2] = t[1];
    if (residual) residual[1] = t[0] * state->v[0] + t[1] * state->v[1];
  }
  return 0;
}

static void friction(const jyPartInstance *self, const jyPartState *state, double lambda,
                     const double *acc, int coulomb_only, double *force);

/* The constant force c and viscous friction; Coulomb friction is the law below. */
static int nonideal(const jyPartInstance *self, const jyPartState *state, double *C) {
  friction(self, state, 0.0, NULL, 0, C);
  for (int i = 0; i < self->ncoords; i++) C[i] += self->params[P_CX + i];
  return 0;
}

/* Sliding friction on the point: -c v_t - mu |N| t_hat, where v_t is the velocity along
 * the surface and |N| = |lambda| |n| the size of the guide's ideal force. The sliding
 * direction t_hat is v_t / |v_t|; from rest (|v_t| below 1e-12 m/s) it is the direction of
 * the tangential acceleration of the previous iterate, so a block released on an incline
 * slides with kinetic friction from its first instant. Sticking is not modelled: a point
 * at rest whose tangential acceleration vanishes feels no friction. */
static void friction(const jyPartInstance *self, const jyPartState *state, double lambda,
                     const double *acc, int coulomb_only, double *force) {
  int dim = self->ncoords;
  const double *n = self->params + P_NX;
  double nn = 0.0, nv = 0.0, na = 0.0;
  for (int i = 0; i < dim; i++) {
    nn += n[i] * n[i];
    nv += n[i] * state->v[i];
    na += n[i] * (acc ? acc[i] : 0.0);
  }
  double vt[3] = {0}, at[3] = {0}, vt2 = 0.0, at2 = 0.0;
  for (int i = 0; i < dim; i++) {
    vt[i] = state->v[i] - nv / nn * n[i];
    at[i] = (acc ? acc[i] : 0.0) - na / nn * n[i];
    vt2 += vt[i] * vt[i];
    at2 += at[i] * at[i];
  }
  double coulomb = self->params[P_MU] * fabs(lambda) * sqrt(nn);
  const double *dir = sqrt(vt2) > 1e-12 ? vt : at;
  double len = sqrt(sqrt(vt2) > 1e-12 ? vt2 : at2);
  double along[3] = {0}; /* sliding in a simulation: the mode's direction, fixed */
  if (state->mode == JY_SS_FORWARD || state->mode == JY_SS_BACKWARD) {
    double s = jy_ss_direction(state->mode, 0, 0), t = hypot(n[0], n[1]);
    along[0] = -s * n[1] / t;
    along[1] = s * n[0] / t;
    dir = along;
    len = 1.0;
  }
  for (int i = 0; i < dim; i++) {
    force[i] = coulomb_only ? 0.0 : -self->params[P_VISCOUS] * vt[i];
    if (len > 0) force[i] -= coulomb * dir[i] / len;
  }
}

static int nonideal_law(const jyPartInstance *self, const jyPartState *state,
                        const double *row_forces, const double *acc, double *force) {
  if (state->mode == MODE_STICK) return 0; /* the stick row holds it */
  friction(self, state, row_forces[0], acc, 1, force);
  return 0;
}

/* The ideal force on the point is n lambda: its signed size along the unit normal; then the
 * size of the friction force and the power it delivers (<= 0). */
static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  const double *n = self->params + P_NX;
  double nn = 0.0;
  for (int i = 0; i < self->ncoords; i++) nn += n[i] * n[i];
  out[0] = row_forces[0] * sqrt(nn);
  double f[3] = {0}, size = 0.0, power = 0.0;
  if (state->mode == MODE_STICK) { /* the stick row's force: static friction, no power */
    out[1] = fabs(row_forces[1]);
    out[2] = 0.0;
    return 0;
  }
  friction(self, state, row_forces[0], NULL, 0, f);
  for (int i = 0; i < self->ncoords; i++) {
    size += f[i] * f[i];
    power += f[i] * state->v[i];
  }
  out[1] = sqrt(size);
  out[2] = power;
  return 0;
}

/* Stick-slip, 2-D. The tangent t = (-ny, nx) / |n|; the stick row's force F_t is along t. */
static double sliding_velocity(const jyPartInstance *self, const jyPartState *state) {
  const double *n = self->params + P_NX;
  double len = hypot(n[0], n[1]);
  return (-n[1] * state->v[0] + n[0] * state->v[1]) / len;
}

/* How far the static friction is from its limit: mu_s |N| - |F_t| (N). */
static double stick_margin(const jyPartInstance *self, const double *row_forces) {
  const double *n = self->params + P_NX;
  return static_mu(self->params) * fabs(row_forces[0]) * hypot(n[0], n[1]) - fabs(row_forces[1]);
}

static unsigned long long active_rows(const jyPartInstance *self, int mode) {
  (void)self;
  return mode == MODE_STICK ? 3ULL : 1ULL;
}

static int initial_mode(const jyPartInstance *self, const jyPartState *state, int *mode) {
  *mode = jy_ss_mode_of_velocity(sliding_velocity(self, state));
  return 0;
}

static int guards(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  const double *acc, double *g) {
  (void)acc;
  g[0] = jy_ss_guard(state->mode, sliding_velocity(self, state), stick_margin(self, row_forces));
  return 0;
}

/* Sliding velocity through zero: stick (a plastic reset of the stick row takes away the
 * located crossing's residual velocity, of the tolerance's size); the static friction
 * reaching its limit: slide. */
static int transition(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, int guard, int direction, int *mode,
                      double *restitution) {
  (void)self, (void)guard;
  jy_ss_transition(state->mode, direction, row_forces[1], mode, &restitution[1]);
  return 0;
}

static int admissible(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, const double *acc, int *mode) {
  (void)acc;
  jy_ss_admissible(state->mode, stick_margin(self, row_forces), row_forces[1], mode);
  return 0;
}

static const char *mode_name(const jyPartInstance *self, int mode) {
  (void)self;
  return mode == MODE_STICK ? "stick" : "slide";
}

static const jyPartHybrid stick_slip = {
  .active_rows = active_rows,
  .initial_mode = initial_mode,
  .guards = guards,
  .transition = transition,
  .admissible = admissible,
  .mode_name = mode_name,
};

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "guide",
  .doc = "a point pos held where n . pos = d (line in 2-D, plane in 3-D), with optional force c",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .constraints = constraints,
  .nonideal = nonideal,
  .outputs = outputs,
  .nonideal_law = nonideal_law,
};

const jyPartType *jy_part_guide(void) { return &type; }

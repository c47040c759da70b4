/* tests/engine/t_components.c — conformance of every registered part type to the part
 * protocol (joinery/part.h), through the conformance library (joinery/conformance.h),
 * plus closed-form spot checks of the built-in parts.
 *
 * The library compares, for each type, each allowed dimension, default and random
 * parameters and seeded random states (q, v, t, gravity), analytic derivatives with
 * central finite differences: terminal J, p_t and gamma; constraint A, b and rate; Q
 * against Lagrange's equations of the part's own energy; M symmetric PSD, T = 1/2 v^T M v;
 * no function writes past its outputs. Here every check must pass for every built-in
 * (advisory ones included), and the suite must catch deliberately broken parts: each
 * mutant below breaks one promise and the matching check has to fail. Two test types
 * cover what no built-in has: a velocity (nonholonomic) row and time-dependent
 * (rheonomic) terminals and rows. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/conformance.h"
#include "joinery/joinery.h"
#include "tap.h"

enum { MAXN = JY_PART_MAX_COORDS, MAXP = 32 };
#define PI 3.14159265358979323846
#define END ((const char *)NULL) /* ends part_named's list */
#define SEED 20240601u

/* ---- one instance, for the spot checks ----------------------------------------------- */

typedef struct Part {
  const jyPartType *type;
  double params[MAXP];
  jyPartShape shape;
  jyPartInstance inst;
  void *data;
  double gravity[3];
  char error[256];
  int nc, nr;
} Part;

static int param_index(const jyPartType *type, const char *name) {
  for (int i = 0; i < type->nparams; i++)
    if (strcmp(type->params[i].name, name) == 0) return i;
  return -1;
}

/* Builds an instance as the engine would: shape (into a zero-filled struct), then init.
 * Defaults, with named overrides ("k", 2.0, ..., END). Non-zero (message in p->error) when
 * the type rejects the parameters. */
static int part_named(Part *p, const jyEnv *env, const char *type_name, ...) {
  const jyPartType *type = jy_env_find_type(env, type_name);
  memset(p, 0, sizeof *p);
  if (!type) return 1;
  p->type = type;
  for (int i = 0; i < type->nparams; i++) p->params[i] = type->params[i].default_value;
  va_list ap;
  va_start(ap, type_name);
  for (const char *name; (name = va_arg(ap, const char *));) {
    double value = va_arg(ap, double);
    int i = param_index(type, name);
    if (i < 0) {
      va_end(ap);
      return 1;
    }
    p->params[i] = value;
  }
  va_end(ap);
  if (type->shape(type, p->params, &p->shape, p->error, sizeof p->error) != 0) return 1;
  p->nc = p->shape.ncoords;
  p->nr = p->shape.nrows;
  p->inst = (jyPartInstance){type, "under_test", p->params, NULL, p->nc, p->nr};
  if (p->shape.instance_size > 0) {
    p->data = calloc(1, p->shape.instance_size);
    if (type->init && type->init(&p->inst, p->data, p->error, sizeof p->error) != 0) return 1;
    p->inst.data = p->data;
  }
  return 0;
}

static void part_free(Part *p) {
  free(p->data);
  p->data = NULL;
}

static jyPartState state_at(Part *p, const double *q, const double *v, double t) {
  p->error[0] = '\0';
  return (jyPartState){q,    v, t,    p->gravity, p->error, sizeof p->error, 0, NULL, 0, 0,
                       NULL, 0, NULL, NULL,       NULL};
}

static void zero(double *x, int n) {
  if (x)
    for (int i = 0; i < n; i++) x[i] = 0.0;
}

/* Calls with zero-filled outputs, as the engine makes them; a failure is reported. */
static int said(Part *p, const char *what, int rc) {
  if (rc) diag("%s: %s failed: %s", p->type->name, what, p->error);
  return rc;
}

static int call_terminal(Part *p, int k, const double *q, const double *v, double t, double *value,
                         double *jac, double *vel_bias, double *acc_bias) {
  int dim = p->shape.terminals[k].dim;
  zero(value, dim), zero(jac, dim * p->nc), zero(vel_bias, dim), zero(acc_bias, dim);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "terminal", p->type->terminal(&p->inst, &s, k, value, jac, vel_bias, acc_bias));
}

static int call_mass(Part *p, const double *q, const double *v, double t, double *M) {
  zero(M, p->nc * p->nc);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "mass", p->type->mass ? p->type->mass(&p->inst, &s, M) : 0);
}

static int call_force(Part *p, const double *q, const double *v, double t, double *Q) {
  zero(Q, p->nc);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "force", p->type->force ? p->type->force(&p->inst, &s, Q) : 0);
}

static int call_nonideal(Part *p, const double *q, const double *v, double t, double *C) {
  zero(C, p->nc);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "nonideal", p->type->nonideal ? p->type->nonideal(&p->inst, &s, C) : 0);
}

static int call_constraints(Part *p, const double *q, const double *v, double t, double *A,
                            double *rhs, double *residual, double *rate) {
  zero(A, p->nr * p->nc), zero(rhs, p->nr), zero(residual, p->nr), zero(rate, p->nr);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "constraints", p->type->constraints(&p->inst, &s, A, rhs, residual, rate));
}

static int call_energy(Part *p, const double *q, const double *v, double t, double *kinetic,
                       double *potential) {
  *kinetic = *potential = 0.0;
  jyPartState s = state_at(p, q, v, t);
  return said(p, "energy", p->type->energy(&p->inst, &s, kinetic, potential));
}

static int call_outputs(Part *p, const double *q, const double *v, double t,
                        const double *row_forces, double *out) {
  zero(out, p->shape.noutputs);
  jyPartState s = state_at(p, q, v, t);
  return said(p, "outputs", p->type->outputs(&p->inst, &s, row_forces, out));
}

static double maxabs(const double *a, int n) {
  double m = 0.0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

/* ---- the conformance suite over every registered type ------------------------------- */

/* Built-ins whose Q is exactly Lagrange's equations of their energy: each must carry
 * JY_PART_CONSERVATIVE in its shape flags, which has the suite check Q against the energy
 * (a type that lost the flag would lose that check silently). */
static const char *const conservative[] = {"ground",   "mass", "spring", "spring_mass",
                                           "pendulum", "rod",  "guide"};

static int listed_conservative(const char *name) {
  for (size_t i = 0; i < sizeof conservative / sizeof conservative[0]; i++)
    if (strcmp(name, conservative[i]) == 0) return 1;
  return 0;
}

static void diag_log(const char *log) {
  char line[512];
  for (const char *s = log; *s;) {
    size_t len = strcspn(s, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
    diag("  %s", line);
    s += len + (s[len] == '\n');
  }
}

/* FD checks whose worst error the summary reports. */
static const jyCheck fd_checks[] = {JY_CHECK_TERMINAL_JAC,      JY_CHECK_TERMINAL_VEL_BIAS,
                                    JY_CHECK_TERMINAL_ACC_BIAS, JY_CHECK_CONSTRAINT_A,
                                    JY_CHECK_CONSTRAINT_B,      JY_CHECK_CONSTRAINT_RATE,
                                    JY_CHECK_LAGRANGE};

/* Built-ins that drive: a constant torque in space axes (torque3d) has no potential and
 * does positive work, so the advisory rest_force and passive checks note it, rightly. */
static int listed_active(const char *name) { return strcmp(name, "torque3d") == 0; }

/* Every check with something to check passes, advisory ones too (built-ins are passive,
 * except the drivers listed above, whose advisory notes are reported but expected). */
static void conform_type(const jyEnv *env, const jyPartType *type) {
  jyConformanceDef def = jy_default_conformance_def();
  def.seed = SEED;
  if (listed_conservative(type->name)) {
    Part p;
    ok(part_named(&p, env, type->name, END) == 0 && (p.shape.flags & JY_PART_CONSERVATIVE),
       "%s: Q is Lagrange's equations of its energy, and its shape flags say so "
       "(JY_PART_CONSERVATIVE)",
       type->name);
    part_free(&p);
  }
  jyConformanceReport *r = malloc(sizeof *r);
  if (!ok(r != NULL, "%s: memory for the report", type->name)) return;
  jyStatus st = jy_check_part_type_def(env, type, NULL, 0, &def, r);
  ok(st == JY_OK && r->passed && r->instances > 0,
     "%s conforms to the part protocol (%d instances, %d rejected, %d states each)", type->name,
     r->instances, r->rejected, r->states);
  for (int i = 0; i < JY_CHECK_COUNT; i++) {
    const jyCheckResult *c = &r->checks[i];
    if (c->count == 0) continue;
    ok(c->failed == 0 || (c->advisory && listed_active(type->name)),
       "%s: %s: %s (worst %.2g, tol %.2g, %d comparisons)%s", type->name, c->name, c->what,
       c->worst, c->tol, c->count, c->failed ? " (advisory: a driver)" : "");
  }
  double worst = 0.0;
  for (size_t i = 0; i < sizeof fd_checks / sizeof fd_checks[0]; i++)
    if (r->checks[fd_checks[i]].count > 0 && fd_checks[i] != JY_CHECK_CONSTRAINT_B)
      worst = fmax(worst, r->checks[fd_checks[i]].worst);
  diag("%s: worst relative FD error %.3g (first differences), %.3g (b: second differences)",
       type->name, worst, r->checks[JY_CHECK_CONSTRAINT_B].worst);
  if (!r->passed) diag_log(r->log);
  free(r);
}

/* ---- two test types: a velocity row, and time-dependent terminals and rows ----------- */

static int fail_msg(const jyPartState *s, const char *msg) {
  snprintf(s->error, s->error_len, "%s", msg);
  return 1;
}

static const jyParamSpec sled_params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
  {"I", 0.5, JY_PARAM_POSITIVE, "kg m^2", "moment of inertia about the blade"},
};

/* A knife edge (Chaplygin sled without offset): (x, y, th), no sideways slip,
 * psi = -sin th x' + cos th y' = 0: A = psi_v, b = -psi_q v = th' (cos th x' + sin th y'). */
static int sled_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                      size_t error_len) {
  (void)type, (void)p, (void)error, (void)error_len;
  static const char *const names[3] = {"x", "y", "th"};
  s->ncoords = 3;
  for (int i = 0; i < 3; i++) s->coord_names[i] = names[i];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", 2, 1, 0};
  s->nrows = 1;
  s->row_names[0] = "no_slip";
  s->row_kinds[0] = JY_ROW_VELOCITY;
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

static int sled_terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                         double *jac, double *vel_bias, double *acc_bias) {
  (void)self, (void)vel_bias, (void)acc_bias;
  if (k != 0) return fail_msg(state, "no such terminal");
  value[0] = state->q[0], value[1] = state->q[1];
  if (jac) jac[0] = jac[3] = 1.0;
  return 0;
}

static int sled_mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  (void)state;
  M[0] = M[4] = self->params[0];
  M[8] = self->params[1];
  return 0;
}

static int sled_constraints(const jyPartInstance *self, const jyPartState *state, double *A,
                            double *b, double *residual, double *rate) {
  (void)self, (void)rate;
  const double *q = state->q, *v = state->v;
  double s = sin(q[2]), c = cos(q[2]);
  A[0] = -s, A[1] = c;
  b[0] = v[2] * (c * v[0] + s * v[1]);
  if (residual) residual[0] = -s * v[0] + c * v[1];
  return 0;
}

static const jyPartType sled_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "test_sled",
  .doc = "a knife edge that cannot slip sideways (a velocity row)",
  .params = sled_params,
  .nparams = 2,
  .shape = sled_shape,
  .terminal = sled_terminal,
  .mass = sled_mass,
  .constraints = sled_constraints,
};

static const jyParamSpec ring_params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass of the bead"},
  {"r", 1, JY_PARAM_POSITIVE, "m", "mean radius of the ring"},
  {"a", 0.5, JY_PARAM_NONNEGATIVE, "m", "amplitude of the ring's breathing"},
};

/* A bead of mass m on a ring whose radius breathes, R(t) = r + a sin t, under gravity:
 * phi = x^2 + y^2 - R^2 (rheonomic). Terminal "pos" is the bead seen from a frame moving
 * along x as sin t (p = q + (sin t, 0)): p_t = (cos t, 0), gamma = (-sin t, 0). */
static int ring_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                      size_t error_len) {
  (void)type, (void)error, (void)error_len;
  s->ncoords = 2;
  s->coord_names[0] = "x", s->coord_names[1] = "y";
  s->coord_defaults[0] = p[1];
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", 2, 0, 0};
  s->nrows = 1;
  s->row_names[0] = "on_ring";
  s->row_kinds[0] = JY_ROW_POSITION;
  s->noutputs = 1;
  s->output_names[0] = "radius";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

static int ring_terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                         double *jac, double *vel_bias, double *acc_bias) {
  (void)self;
  if (k != 0) return fail_msg(state, "no such terminal");
  value[0] = state->q[0] + sin(state->t), value[1] = state->q[1];
  if (jac) jac[0] = jac[3] = 1.0;
  if (vel_bias) vel_bias[0] = cos(state->t);
  if (acc_bias) acc_bias[0] = -sin(state->t);
  return 0;
}

static int ring_mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  (void)state;
  M[0] = M[3] = self->params[0];
  return 0;
}

static int ring_force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  Q[0] = self->params[0] * state->gravity[0], Q[1] = self->params[0] * state->gravity[1];
  return 0;
}

static int ring_energy(const jyPartInstance *self, const jyPartState *state, double *T, double *V) {
  const double *q = state->q, *v = state->v, *g = state->gravity, m = self->params[0];
  *T = 0.5 * m * (v[0] * v[0] + v[1] * v[1]);
  *V = -m * (g[0] * q[0] + g[1] * q[1]);
  return 0;
}

static int ring_constraints(const jyPartInstance *self, const jyPartState *state, double *A,
                            double *b, double *residual, double *rate) {
  const double *q = state->q, *v = state->v, *p = self->params, t = state->t;
  double R = p[1] + p[2] * sin(t), R1 = p[2] * cos(t), R2 = -p[2] * sin(t);
  A[0] = 2 * q[0], A[1] = 2 * q[1];
  b[0] = -(2 * (v[0] * v[0] + v[1] * v[1]) - 2 * (R1 * R1 + R * R2));
  if (residual) residual[0] = q[0] * q[0] + q[1] * q[1] - R * R;
  if (rate) rate[0] = 2 * (q[0] * v[0] + q[1] * v[1]) - 2 * R * R1;
  return 0;
}

static int ring_outputs(const jyPartInstance *self, const jyPartState *state,
                        const double *row_forces, double *out) {
  (void)row_forces;
  out[0] = self->params[1] + self->params[2] * sin(state->t);
  return 0;
}

static const jyPartType ring_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "test_ring",
  .doc = "a bead on a breathing ring, seen from a moving frame (time-dependent)",
  .params = ring_params,
  .nparams = 3,
  .shape = ring_shape,
  .terminal = ring_terminal,
  .mass = ring_mass,
  .force = ring_force,
  .constraints = ring_constraints,
  .energy = ring_energy,
  .outputs = ring_outputs,
};

/* ---- mutants: a correct type with one promise broken --------------------------------- */

typedef enum Mutation {
  MUT_NONE,       /* the wrapper itself: must pass */
  MUT_JAC,        /* a terminal Jacobian entry off by 1e-3 */
  MUT_GAMMA,      /* gamma scaled by 1.01 */
  MUT_TIME,       /* the terminal moves with t, but says p_t = 0 */
  MUT_A,          /* A off by 1e-2 */
  MUT_B,          /* b of the wrong sign */
  MUT_RATE,       /* rate off by 0.1 */
  MUT_ASYM,       /* M not symmetric */
  MUT_NEGATIVE,   /* M indefinite */
  MUT_CONST_MASS, /* flagged constant, but M depends on q */
  MUT_KINETIC,    /* T != 1/2 v^T M v */
  MUT_FORCE,      /* a conservative Q scaled by 1.01 */
  MUT_ACTIVE,     /* a damper that pushes: advisory "passive" notes it */
  MUT_OVERRUN,    /* force writes one past its outputs */
  MUT_NAN,        /* an output is NaN */
  MUT_FAILS,      /* force fails at some states */
  MUT_REJECT,     /* shape refuses without a message */
  MUT_BLOCK,      /* a terminal claims to be a coordinate block and is not */
  MUT_NULLOPT,    /* the value changes when the Jacobian is not asked for */
  MUT_UNIT,       /* a parameter without a unit */
  MUT_STALE,      /* a terminal value kept in the scratch, keyed by q[0] alone */
} Mutation;

typedef struct Mutant {
  jyPartType type;
  const jyPartType *base;
  Mutation how;
  jyParamSpec params[MAXP];
} Mutant;

static const Mutant *mutant_of(const jyPartType *type) { return type->type_data; }

/* MUT_STALE's scratch: terminal 0's value, reused whenever q[0] is the same. */
typedef struct StaleValue {
  double q0, value[JY_TERMINAL_MAX_DIM];
  int valid;
} StaleValue;

static int mut_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                     size_t error_len) {
  const Mutant *m = mutant_of(type);
  if (m->how == MUT_REJECT) return 1;
  int rc = m->base->shape(m->base, p, s, error, error_len);
  if (m->how == MUT_CONST_MASS) s->flags |= JY_PART_CONSTANT_MASS;
  if (m->how == MUT_BLOCK)
    for (int k = 0; k < s->nterminals; k++) s->terminals[k].is_coord_block = 1;
  if (m->how == MUT_STALE) s->scratch_size = sizeof(StaleValue); /* a base without scratch */
  return rc;
}

static int mut_terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                        double *jac, double *vel_bias, double *acc_bias) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->terminal(self, state, k, value, jac, vel_bias, acc_bias);
  if (m->how == MUT_JAC && jac) jac[0] += 1e-3;
  if (m->how == MUT_GAMMA && acc_bias) acc_bias[0] = 1.01 * acc_bias[0] + 1e-3;
  if (m->how == MUT_TIME) value[0] += sin(state->t);
  if (m->how == MUT_NULLOPT && !jac) value[0] += 1e-9;
  StaleValue *kept = state->scratch;
  if (m->how == MUT_STALE && kept && k == 0) { /* test_ring's terminal 0 has dim 2 */
    if (kept->valid && kept->q0 == state->q[0])
      value[0] = kept->value[0], value[1] = kept->value[1];
    else
      kept->q0 = state->q[0], kept->value[0] = value[0], kept->value[1] = value[1], kept->valid = 1;
  }
  return rc;
}

static int mut_mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->mass ? m->base->mass(self, state, M) : 0;
  int n = self->ncoords;
  if (m->how == MUT_ASYM) M[1] += 0.5;
  if (m->how == MUT_NEGATIVE) M[0] = -1.0;
  if (m->how == MUT_CONST_MASS) M[0] += 0.1 * state->q[n - 1] * state->q[n - 1];
  return rc;
}

static int mut_force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->force ? m->base->force(self, state, Q) : 0;
  for (int i = 0; i < self->ncoords; i++) {
    if (m->how == MUT_FORCE) Q[i] *= 1.01;
    if (m->how == MUT_ACTIVE) Q[i] = -Q[i];
  }
  if (m->how == MUT_OVERRUN) Q[self->ncoords] = 1.0;
  if (m->how == MUT_FAILS && state->q[0] > 0.5) return fail_msg(state, "q[0] > 0.5");
  return rc;
}

static int mut_constraints(const jyPartInstance *self, const jyPartState *state, double *A,
                           double *b, double *residual, double *rate) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->constraints(self, state, A, b, residual, rate);
  if (m->how == MUT_A) A[0] += 1e-2;
  if (m->how == MUT_B) b[0] = -b[0];
  if (m->how == MUT_RATE && rate) rate[0] += 0.1;
  return rc;
}

static int mut_energy(const jyPartInstance *self, const jyPartState *state, double *T, double *V) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->energy(self, state, T, V);
  if (m->how == MUT_KINETIC) *T *= 1.1;
  return rc;
}

static int mut_outputs(const jyPartInstance *self, const jyPartState *state,
                       const double *row_forces, double *out) {
  const Mutant *m = mutant_of(self->type);
  int rc = m->base->outputs(self, state, row_forces, out);
  if (m->how == MUT_NAN) out[0] = NAN;
  return rc;
}

static void mutant_make(Mutant *m, const jyPartType *base, Mutation how) {
  memset(m, 0, sizeof *m);
  m->base = base;
  m->how = how;
  m->type = *base;
  m->type.type_data = m;
  m->type.release = NULL;
  m->type.shape = mut_shape;
  if (base->terminal) m->type.terminal = mut_terminal;
  if (base->mass || how == MUT_ASYM || how == MUT_NEGATIVE || how == MUT_CONST_MASS)
    m->type.mass = mut_mass;
  if (base->force || how == MUT_OVERRUN || how == MUT_FAILS) m->type.force = mut_force;
  if (base->constraints) m->type.constraints = mut_constraints;
  if (base->energy) m->type.energy = mut_energy;
  if (base->outputs) m->type.outputs = mut_outputs;
  memcpy(m->params, base->params, sizeof(jyParamSpec) * (size_t)base->nparams);
  m->type.params = m->params;
  if (how == MUT_UNIT) m->params[base->nparams - 1].unit = "";
}

/* The mutant of `base` broken by `how` must fail check `want` (for an advisory check: be
 * noted there); MUT_NONE must conform. */
static void catches(const jyEnv *env, const char *base, Mutation how, jyCheck want,
                    const char *what) {
  Mutant m;
  const jyPartType *type = strcmp(base, "test_sled") == 0 ? &sled_type
    : strcmp(base, "test_ring") == 0                      ? &ring_type
                                                          : jy_env_find_type(env, base);
  if (!type) {
    ok(0, "%s exists", base);
    return;
  }
  mutant_make(&m, type, how);
  jyConformanceDef def = jy_default_conformance_def(); /* conservative as the base's flags say */
  def.seed = SEED;
  jyConformanceReport *r = malloc(sizeof *r);
  if (!r) return;
  jyStatus st = jy_check_part_type_def(env, &m.type, NULL, 0, &def, r);
  if (how == MUT_NONE) {
    ok(st == JY_OK && r->passed, "%s through a faithful wrapper still conforms", base);
    if (!r->passed) diag_log(r->log);
  } else {
    const jyCheckResult *c = &r->checks[want];
    ok(st == JY_OK && c->failed > 0 && r->passed == c->advisory,
       "the suite catches %s (%s): %s fails %d of %d (worst %.3g)", base, what, c->name, c->failed,
       c->count, c->worst);
    if (c->failed == 0) diag_log(r->log);
  }
  free(r);
}

static void test_the_suite(const jyEnv *env) {
  jyConformanceReport *r = malloc(sizeof *r);
  if (!r) return;
  jyStatus st = jy_check_part_type(env, &sled_type, NULL, 0, SEED, r);
  ok(st == JY_OK && r->passed && r->checks[JY_CHECK_CONSTRAINT_B].count > 0 &&
       r->checks[JY_CHECK_LAGRANGE].count > 0,
     "test_sled (a velocity row) conforms: b worst %.3g, A worst %.3g",
     r->checks[JY_CHECK_CONSTRAINT_B].worst, r->checks[JY_CHECK_CONSTRAINT_A].worst);
  if (!r->passed) diag_log(r->log);
  st = jy_check_part_type(env, &ring_type, NULL, 0, SEED, r);
  ok(st == JY_OK && r->passed && r->checks[JY_CHECK_TERMINAL_VEL_BIAS].count > 0,
     "test_ring (time-dependent terminal and row) conforms: p_t worst %.3g, gamma worst "
     "%.3g, b worst %.3g, rate worst %.3g",
     r->checks[JY_CHECK_TERMINAL_VEL_BIAS].worst, r->checks[JY_CHECK_TERMINAL_ACC_BIAS].worst,
     r->checks[JY_CHECK_CONSTRAINT_B].worst, r->checks[JY_CHECK_CONSTRAINT_RATE].worst);
  if (!r->passed) diag_log(r->log);

  /* Same seed, same report; the settings are honoured; bad settings are refused. */
  jyConformanceReport *r2 = malloc(sizeof *r2);
  if (r2) {
    jy_check_part_type(env, jy_env_find_type(env, "pendulum"), NULL, 0, 7, r);
    jy_check_part_type(env, jy_env_find_type(env, "pendulum"), NULL, 0, 7, r2);
    ok(memcmp(r->checks, r2->checks, sizeof r->checks) == 0 && strcmp(r->log, r2->log) == 0,
       "the same seed gives the same report");
    const jyCheckResult *kept = &r->checks[JY_CHECK_SCRATCH];
    ok(r->passed && kept->count > 0 && kept->failed == 0,
       "pendulum's kept bob answers as a fresh one: %d comparisons, %d differ", kept->count,
       kept->failed);
    free(r2);
  }
  const jyPartType *spring = jy_env_find_type(env, "spring");
  jyParamSetting dim2[] = {{"dim", 2}, {"k", 3}};
  st = jy_check_part_type(env, spring, dim2, 2, 1, r);
  ok(st == JY_OK && r->instances == 2 && strstr(r->log, "spring (defaults) [dim=2, k=3,"),
     "fixed settings: spring with dim = 2, k = 3 only (%d instances)", r->instances);
  jyParamSetting bad_name[] = {{"kk", 3}}, bad_value[] = {{"k", -1}};
  st = jy_check_part_type(env, spring, bad_name, 1, 1, r);
  ok(st == JY_ERR_UNKNOWN_NAME && strstr(r->log, "'kk'"),
     "an unknown parameter is refused: "
     "%.*s",
     (int)strcspn(r->log, "\n"), r->log);
  st = jy_check_part_type(env, spring, bad_value, 1, 1, r);
  ok(st == JY_ERR_PARAM && strstr(r->log, "k = -1"),
     "a value outside the domain is refused: "
     "%.*s",
     (int)strcspn(r->log, "\n"), r->log);
  ok(jy_check_part_type(env, NULL, NULL, 0, 1, r) == JY_ERR_INVALID &&
       jy_check_part_type(env, &sled_type, NULL, 0, 1, NULL) == JY_ERR_INVALID,
     "NULL type or report: JY_ERR_INVALID");
  free(r);

  catches(env, "pendulum", MUT_NONE, JY_CHECK_SCHEMA, "");
  catches(env, "rod", MUT_NONE, JY_CHECK_SCHEMA, "");
  catches(env, "pendulum", MUT_JAC, JY_CHECK_TERMINAL_JAC, "J off by 1e-3");
  catches(env, "pendulum", MUT_GAMMA, JY_CHECK_TERMINAL_ACC_BIAS, "gamma 1% off");
  catches(env, "mass", MUT_TIME, JY_CHECK_TERMINAL_VEL_BIAS, "p_t missing");
  catches(env, "test_ring", MUT_TIME, JY_CHECK_TERMINAL_VEL_BIAS, "p_t wrong");
  catches(env, "rod", MUT_A, JY_CHECK_CONSTRAINT_A, "A off by 1e-2");
  catches(env, "rod", MUT_B, JY_CHECK_CONSTRAINT_B, "b of the wrong sign");
  catches(env, "test_sled", MUT_B, JY_CHECK_CONSTRAINT_B, "velocity row, b of the wrong sign");
  catches(env, "test_sled", MUT_A, JY_CHECK_CONSTRAINT_A, "velocity row, A off");
  catches(env, "test_ring", MUT_B, JY_CHECK_CONSTRAINT_B, "rheonomic row, b of the wrong sign");
  catches(env, "guide", MUT_RATE, JY_CHECK_CONSTRAINT_RATE, "rate off by 0.1");
  catches(env, "mass", MUT_ASYM, JY_CHECK_MASS_SYMMETRIC, "M not symmetric");
  catches(env, "mass", MUT_NEGATIVE, JY_CHECK_MASS_PSD, "M indefinite");
  catches(env, "pendulum", MUT_CONST_MASS, JY_CHECK_MASS_CONSTANT, "flagged constant M varies");
  catches(env, "mass", MUT_KINETIC, JY_CHECK_KINETIC, "T 10% off");
  catches(env, "spring", MUT_FORCE, JY_CHECK_LAGRANGE, "Q 1% off");
  catches(env, "pendulum", MUT_FORCE, JY_CHECK_LAGRANGE, "Q 1% off, with M(q)");
  catches(env, "damper", MUT_ACTIVE, JY_CHECK_PASSIVE, "a damper that pushes");
  catches(env, "spring", MUT_OVERRUN, JY_CHECK_BOUNDS, "a write past Q");
  catches(env, "spring", MUT_NAN, JY_CHECK_FINITE, "a NaN output");
  catches(env, "mass", MUT_FAILS, JY_CHECK_CALLS, "force fails for q[0] > 0.5");
  catches(env, "mass", MUT_REJECT, JY_CHECK_SHAPE, "shape refuses without a message");
  catches(env, "pendulum", MUT_BLOCK, JY_CHECK_COORD_BLOCK, "bob claims to be a coordinate");
  catches(env, "pendulum", MUT_NULLOPT, JY_CHECK_OPTIONAL, "value depends on jac == NULL");
  catches(env, "spring", MUT_UNIT, JY_CHECK_SCHEMA, "a parameter without a unit");
  catches(env, "test_ring", MUT_STALE, JY_CHECK_SCRATCH, "a kept value keyed by q[0] alone");
}

/* ---- closed-form spot checks of the built-in parts ---------------------------------- */

static int names_are(const char *const *got, int n, const char *want) {
  char buf[256] = "";
  for (int i = 0; i < n; i++) {
    strcat(buf, got[i]);
    if (i + 1 < n) strcat(buf, ",");
  }
  int good = strcmp(buf, want) == 0;
  if (!good) diag("names: got '%s', want '%s'", buf, want);
  return good;
}

static int terminal_names_are(const jyPartShape *s, const char *want) {
  const char *names[JY_PART_MAX_TERMINALS];
  for (int i = 0; i < s->nterminals; i++) names[i] = s->terminals[i].name;
  return names_are(names, s->nterminals, want);
}

static void spot_names(const jyEnv *env) {
  static const struct {
    const char *type, *coords, *terminals, *rows, *outputs;
  } want[] = {
    {"ground", "", "pos", "", ""},
    {"mass", "x,y,z", "pos", "", ""},
    {"spring", "ax,ay,az,bx,by,bz", "a,b", "", "tension,length"},
    {"damper", "ax,ay,az,bx,by,bz", "a,b", "", "force"},
    {"rod", "ax,ay,az,bx,by,bz", "a,b", "length", "tension"},
    {"spring_mass", "xi,x", "base,tip", "", "tension"},
    {"pendulum", "px,py,theta", "pivot,bob", "", ""},
    {"guide", "x,y", "pos", "surface", "normal_force,friction_force,friction_power"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    Part p;
    int built = part_named(&p, env, want[i].type, END) == 0;
    ok(built && names_are(p.shape.coord_names, p.nc, want[i].coords) &&
         terminal_names_are(&p.shape, want[i].terminals) &&
         names_are(p.shape.row_names, p.nr, want[i].rows) &&
         names_are(p.shape.output_names, p.shape.noutputs, want[i].outputs),
       "%s (defaults): coordinates %s, terminals %s, rows '%s', outputs '%s'", want[i].type,
       want[i].coords, want[i].terminals, want[i].rows, want[i].outputs);
    part_free(&p);
  }
}

static void spot_ground_mass(const jyEnv *env) {
  Part p;
  double value[3], q[3] = {0.5, -0.25, 2}, v[3] = {1, 2, 3}, M[9], Q[3], T, V;
  part_named(&p, env, "ground", "dim", 2.0, "x", 1.0, "y", 2.0, "z", 3.0, END);
  call_terminal(&p, 0, q, v, 0, value, NULL, NULL, NULL);
  ok(value[0] == 1 && value[1] == 2 && p.shape.terminals[0].dim == 2,
     "ground dim 2 at (1, 2, 3): pos = (1, 2)");
  part_free(&p);

  part_named(&p, env, "mass", "m", 2.0, END);
  p.gravity[0] = 0, p.gravity[1] = 0, p.gravity[2] = -9.81;
  call_mass(&p, q, v, 0, M);
  call_force(&p, q, v, 0, Q);
  call_energy(&p, q, v, 0, &T, &V);
  ok(M[0] == 2 && M[4] == 2 && M[8] == 2 && M[1] == 0, "mass m = 2: M = 2 I");
  ok(Q[0] == 0 && Q[2] == 2 * -9.81, "mass m = 2: Q = m g points down");
  is_near(T, 0.5 * 2 * 14, 1e-14, "mass: T = 1/2 m |v|^2");
  is_near(V, 2 * 9.81 * 2, 1e-13, "mass: V = m g h rises with height");
  part_free(&p);
}

static void spot_spring(const jyEnv *env) {
  Part p;
  double q[6] = {0, 0, 0, 3, 0, 0}, v[6] = {0}, Q[6], out[2];
  part_named(&p, env, "spring", "k", 2.0, "L", 1.0, END);
  ok(p.shape.coord_defaults[3] == 1.0, "spring: b.x defaults to L");
  call_force(&p, q, v, 0, Q);
  call_outputs(&p, q, v, 0, NULL, out);
  is_near(Q[3], -4.0, 1e-14, "spring stretched to 3 (k 2, L 1): Q_b = -k (len - L) u pulls b back");
  is_near(Q[0], 4.0, 1e-14, "spring stretched: Q_a = +k (len - L) u pulls a toward b");
  ok(out[0] == 4.0 && out[1] == 3.0, "spring stretched: tension 4, length 3");
  q[3] = 0.5;
  call_force(&p, q, v, 0, Q);
  is_near(Q[3], 1.0, 1e-14, "spring compressed to 0.5: pushes b away from a");
  part_free(&p);

  part_named(&p, env, "spring", "dim", 1.0, "k", 1.0, "L", 1.0, END);
  double q1[2] = {0, -2}, Q1[2];
  call_force(&p, q1, v, 0, Q1);
  ok(Q1[0] == -3.0 && Q1[1] == 3.0,
     "spring dim 1 with b - a = -2 (L 1): signed length, Q = (-3, 3)");
  part_free(&p);

  part_named(&p, env, "spring", "dim", 2.0, "L", 1.0, END);
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v, 0);
  int rc = p.type->force(&p.inst, &s, Q);
  ok(rc != 0 && p.error[0], "spring 2-D with coincident ends and L > 0 fails: %s", p.error);
  part_free(&p);
  part_named(&p, env, "spring", "dim", 2.0, "L", 0.0, END);
  ok(call_force(&p, qc, v, 0, Q) == 0 && maxabs(Q, 4) == 0,
     "spring 2-D with coincident ends and L = 0: force k d = 0");
  part_free(&p);
}

static void spot_damper(const jyEnv *env) {
  Part p;
  double q[4] = {0, 0, 1, 0}, v[4] = {0, 0, 2, 5}, Q[4], out[1];
  part_named(&p, env, "damper", "dim", 2.0, "c", 3.0, END);
  ok(p.shape.coord_defaults[2] == 1.0, "damper: b.x defaults to 1");
  call_force(&p, q, v, 0, Q);
  call_outputs(&p, q, v, 0, NULL, out);
  ok(Q[0] == 6 && Q[1] == 0 && Q[2] == -6 && Q[3] == 0,
     "damper lengthening at 2 m/s (c 3): Q_b = -6 u resists, the sideways speed is ignored");
  ok(out[0] == 6, "damper: force output = c len' = 6");
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v, 0);
  ok(p.type->force(&p.inst, &s, Q) != 0 && p.error[0], "damper with coincident ends fails: %s",
     p.error);
  part_free(&p);
}

static void spot_rod(const jyEnv *env) {
  Part p;
  double q[6] = {0, 0, 0, 2, 0, 0}, v[6] = {0}, A[6], b[1], res[1], rate[1], out[1];
  part_named(&p, env, "rod", "L", 1.5, END);
  ok(p.shape.coord_defaults[3] == 1.5, "rod: b.x defaults to L");
  call_constraints(&p, q, v, 0, A, b, res, rate);
  ok(A[0] == -1 && A[3] == 1 && A[1] == 0 && A[4] == 0, "rod along +x: A = [-u, u], u = (1, 0, 0)");
  is_near(res[0], 0.5, 1e-15, "rod: residual = len - L");
  part_free(&p);

  /* A bob of mass m hangs from a grounded rod: the rod must pull b up with m g, and that is a
   * positive tension. Solve u lambda = (0, m g) for lambda from the part's own A. */
  part_named(&p, env, "rod", "dim", 2.0, "L", 1.0, END);
  double q2[4] = {0, 0, 0, -1}, v2[4] = {0, 0, 1, 0}, A2[4], mg = 2 * 9.81;
  call_constraints(&p, q2, v2, 0, A2, b, NULL, NULL);
  double lambda = (A2[2] * 0 + A2[3] * mg) / (A2[2] * A2[2] + A2[3] * A2[3]);
  call_outputs(&p, q2, v2, 0, &lambda, out);
  is_near(out[0], mg, 1e-12, "rod holding a hanging mass: tension = +m g");
  is_near(b[0], -1.0, 1e-15, "rod swinging at 1 m/s (len 1): b = -|d'|^2 / len (centripetal)");
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v2, 0);
  ok(p.type->constraints(&p.inst, &s, A2, b, NULL, NULL) != 0 && p.error[0],
     "rod with coincident ends fails: %s", p.error);
  part_free(&p);
}

static void spot_spring_mass(const jyEnv *env) {
  Part p;
  double q[2] = {0.5, 0.25}, v[2] = {1, 2}, M[4], Q[2], tip[1], base[1], out[1], T, V;
  part_named(&p, env, "spring_mass", "m", 2.0, "k", 4.0, "X", 3.0, END);
  p.gravity[0] = -9.81;
  call_mass(&p, q, v, 0, M);
  call_force(&p, q, v, 0, Q);
  call_terminal(&p, 0, q, v, 0, base, NULL, NULL, NULL);
  call_terminal(&p, 1, q, v, 0, tip, NULL, NULL, NULL);
  call_outputs(&p, q, v, 0, NULL, out);
  call_energy(&p, q, v, 0, &T, &V);
  ok(M[0] == 2 && M[1] == 2 && M[2] == 2 && M[3] == 2, "spring_mass: M = m [[1, 1], [1, 1]]");
  is_near(Q[0], 2 * -9.81, 1e-13, "spring_mass: Q_xi = m g0");
  is_near(Q[1], 2 * -9.81 - 4 * 0.25, 1e-13, "spring_mass: Q_x = m g0 - k x");
  ok(base[0] == 0.5 && tip[0] == 0.5 + 3 + 0.25, "spring_mass: base = xi, tip = xi + X + x");
  ok(out[0] == 1.0, "spring_mass: tension = k x");
  is_near(T, 0.5 * 2 * 9, 1e-14, "spring_mass: T = 1/2 m (xi' + x')^2");
  part_free(&p);
}

static void spot_pendulum(const jyEnv *env) {
  Part p;
  double q[3] = {0.5, 2, PI / 2}, v[3] = {0}, bob[2], M[9], Q[3], g = 9.81;
  part_named(&p, env, "pendulum", "m", 2.0, "l", 1.5, END);
  p.gravity[1] = -g;
  call_terminal(&p, 1, q, v, 0, bob, NULL, NULL, NULL);
  is_near(bob[0], 0.5 + 1.5, 1e-15, "pendulum at theta = pi/2: bob x = px + l");
  is_near(bob[1], 2, 1e-15, "pendulum at theta = pi/2: bob y = py");
  call_force(&p, q, v, 0, Q);
  is_near(Q[2], -2 * g * 1.5, 1e-13, "pendulum at theta = pi/2: gravity torque -m g l restores");
  q[2] = 0;
  call_terminal(&p, 1, q, v, 0, bob, NULL, NULL, NULL);
  ok(bob[0] == 0.5 && bob[1] == 2 - 1.5, "pendulum at theta = 0: bob hangs below the pivot");
  call_mass(&p, q, v, 0, M);
  ok(M[0] == 2 && M[4] == 2 && M[6] == 2 * 1.5 && M[7] == 0 && fabs(M[8] - 2 * 2.25) < 1e-15,
     "pendulum at theta = 0: M = m [[1, 0, l], [0, 1, 0], [l, 0, l^2]]");
  part_free(&p);
}

static void spot_guide(const jyEnv *env) {
  Part p;
  /* Udwadia-Kalaba-Fan 2005, section 4: the line k x1 - x2 = 0 (k = 2) with c = (1, 2). */
  part_named(&p, env, "guide", "nx", 2.0, "ny", -1.0, "cx", 1.0, "cy", 2.0, END);
  double q[2] = {1, 2}, v[2] = {1, 2}, A[2], b[1], res[1], rate[1], C[2], out[3], lambda = 1;
  call_constraints(&p, q, v, 0, A, b, res, rate);
  call_nonideal(&p, q, v, 0, C);
  ok(A[0] == 2 && A[1] == -1 && b[0] == 0 && res[0] == 0 && rate[0] == 0,
     "guide (UKF 2005 example): A = (k, -1), b = 0, on the line");
  ok(C[0] == 1 && C[1] == 2, "guide: non-ideal force C = (1, 2)");
  part_free(&p);
  part_named(&p, env, "guide", "nx", 3.0, "ny", 4.0, "d", 1.0, END);
  call_outputs(&p, q, v, 0, &lambda, out);
  call_constraints(&p, q, v, 0, A, b, res, NULL);
  is_near(out[0], 5.0, 1e-15, "guide n = (3, 4), lambda = 1: normal_force = lambda |n| = 5");
  is_near(res[0], 3 + 8 - 1, 1e-15, "guide: residual = n . p - d");
  part_free(&p);
  /* Friction on a floor (n = (0, 1)) under a normal force of 10 N (lambda = 10): Coulomb
   * mu |N| = 5 N against the sliding direction, viscous c v_t = 0.2 N. */
  part_named(&p, env, "guide", "mu", 0.5, "c", 0.1, END);
  ok(!(p.shape.flags & JY_PART_NO_LAW), "guide with mu > 0 has an active non-ideal law");
  double slide[2] = {2, 0}, rest[2] = {0, 0}, pushed[2] = {-3, 7}, law[2] = {0, 0};
  double ten = 10;
  jyPartState s = state_at(&p, q, slide, 0);
  p.type->nonideal_law(&p.inst, &s, &ten, NULL, law);
  call_nonideal(&p, q, slide, 0, C);
  ok(law[0] == -5 && law[1] == 0 && fabs(C[0] + 0.2) < 1e-15 && C[1] == 0,
     "guide sliding at (2, 0): Coulomb (-5, 0), viscous (-0.2, 0) (got (%g, %g), (%g, %g))", law[0],
     law[1], C[0], C[1]);
  s = state_at(&p, q, rest, 0);
  law[0] = law[1] = 0;
  p.type->nonideal_law(&p.inst, &s, &ten, pushed, law);
  ok(law[0] == 5 && law[1] == 0,
     "guide at rest pushed towards -x: Coulomb friction (5, 0) opposes the tangential "
     "acceleration (got (%g, %g))",
     law[0], law[1]);
  part_free(&p);
  part_named(&p, env, "guide", END);
  ok(p.shape.flags & JY_PART_NO_LAW, "guide with mu = 0 says its law is inactive");
  part_free(&p);
  ok(part_named(&p, env, "guide", "ny", 0.0, END) != 0 && strstr(p.error, "normal"),
     "guide with a zero normal is rejected: %s", p.error);
  part_free(&p);
}

int main(void) {
  jyEnv *env = jy_env_create(NULL);
  ok(env && jy_components_register(env) == JY_OK, "the built-in parts register");
  if (!env) return done();
  static const char *const builtins[] = {"ground", "mass",        "spring",   "damper",
                                         "rod",    "spring_mass", "pendulum", "guide"};
  int found = 0;
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    found += jy_env_find_type(env, builtins[i]) != NULL;
  ok(found == 8 && jy_env_num_types(env) >= 8,
     "the 8 foundation types are among the %d registered built-ins", jy_env_num_types(env));
  ok(jy_components_register(env) != JY_OK, "registering them twice is refused");

  for (int i = 0; i < jy_env_num_types(env); i++) conform_type(env, jy_env_type(env, i));
  test_the_suite(env);

  spot_names(env);
  spot_ground_mass(env);
  spot_spring(env);
  spot_damper(env);
  spot_rod(env);
  spot_spring_mass(env);
  spot_pendulum(env);
  spot_guide(env);

  jy_env_destroy(env);
  plan(tap_count);
  return done();
}

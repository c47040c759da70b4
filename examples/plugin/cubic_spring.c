/* examples/plugin/cubic_spring.c — a part written in C outside joinery, loaded at run time.
 *
 * A massless nonlinear spring between two ends a and b: its tension is
 * f = k1 s + k3 s^3 with the stretch s = |b - a| - L, so V = 1/2 k1 s^2 + 1/4 k3 s^4.
 * With a mass on one end it is the Duffing oscillator m x'' + k1 x + k3 x^3 = 0.
 *
 * Build (meson does it: examples/plugin/meson.build):
 *   cc -shared -fPIC -I<joinery>/engine/include cubic_spring.c -o cubic_spring.so -ljoinery
 * Use from a model script (examples/plugin_model.lua):
 *   joinery.load_plugin("build/examples/plugin/cubic_spring.so")
 *   sys:add("cubic_spring", "s", { dim = 1, k1 = 10, k3 = 200, L = 1, a = wall.pos, ... })
 *
 * It uses only the public headers: joinery/part.h documents what each function fills.
 */
#include <math.h>
#include <stdio.h>

#include <joinery/plugin.h>

enum { P_DIM, P_K1, P_K3, P_L }; /* schema order */

static const jyParamSpec params[] = {
  {"dim", 3, JY_PARAM_DIMENSION, "1", "number of space dimensions"},
  {"k1", 1, JY_PARAM_NONNEGATIVE, "N/m", "linear stiffness"},
  {"k3", 0, JY_PARAM_NONNEGATIVE, "N/m^3", "cubic stiffness (hardening)"},
  {"L", 1, JY_PARAM_NONNEGATIVE, "m", "rest length"},
};

static const char *const names_a[3] = {"ax", "ay", "az"};
static const char *const names_b[3] = {"bx", "by", "bz"};

static int fail(const jyPartState *state, const char *msg) {
  snprintf(state->error, state->error_len, "%s", msg);
  return 1;
}

/* Coordinates q = (a, b), each dim long; both ends are terminals and plain coordinate
 * blocks, massless (M = 0, so the engine may assemble it once: constant). */
static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)error, (void)error_len;
  int dim = (int)p[P_DIM];
  s->ncoords = 2 * dim;
  for (int i = 0; i < dim; i++) {
    s->coord_names[i] = names_a[i];
    s->coord_names[dim + i] = names_b[i];
  }
  s->coord_defaults[dim] = p[P_L]; /* b starts at rest length along x */
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"a", dim, 1, 0};
  s->terminals[1] = (jyTerminalSpec){"b", dim, 1, dim};
  s->noutputs = 2;
  s->output_names[0] = "tension";
  s->output_names[1] = "length";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0;
}

/* value = q[k dim ..], J = [0 I 0]; no time dependence, so both biases stay 0. */
static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias, (void)acc_bias;
  int dim = self->ncoords / 2;
  if (k != 0 && k != 1) return fail(state, "no such terminal (it has a and b)");
  for (int i = 0; i < dim; i++) {
    value[i] = state->q[k * dim + i];
    if (jac) jac[i + (k * dim + i) * dim] = 1.0;
  }
  return 0;
}

/* d = b - a, its length (signed in 1-D, so the force stays smooth through zero) and the
 * unit vector u = d / len. */
typedef struct Geometry {
  double d[3], len, u[3];
} Geometry;

static void geometry(Geometry *g, int dim, const double *q) {
  double sq = 0.0;
  for (int i = 0; i < dim; i++) {
    g->d[i] = q[dim + i] - q[i];
    sq += g->d[i] * g->d[i];
  }
  g->len = dim == 1 ? g->d[0] : sqrt(sq);
  for (int i = 0; i < dim; i++) g->u[i] = dim == 1 ? 1.0 : g->len > 0 ? g->d[i] / g->len : 0.0;
}

static double tension(const double *p, double stretch) {
  return p[P_K1] * stretch + p[P_K3] * stretch * stretch * stretch;
}

/* Q_a = +f u pulls a toward b, Q_b = -f u pulls b toward a (f > 0: stretched). */
static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  const double *p = self->params;
  int dim = (int)p[P_DIM];
  Geometry g;
  geometry(&g, dim, state->q);
  if (dim > 1 && p[P_L] == 0.0) {
    /* f u = (k1 + k3 len^2) d: smooth even where the ends meet. */
    double c = p[P_K1] + p[P_K3] * g.len * g.len;
    for (int i = 0; i < dim; i++) Q[i] = c * g.d[i], Q[dim + i] = -c * g.d[i];
    return 0;
  }
  if (dim > 1 && g.len == 0.0)
    return fail(state, "the ends coincide, so the direction of the spring force is undefined");
  double f = tension(p, g.len - p[P_L]);
  for (int i = 0; i < dim; i++) Q[i] = f * g.u[i], Q[dim + i] = -f * g.u[i];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  const double *p = self->params;
  Geometry g;
  geometry(&g, (int)p[P_DIM], state->q);
  double s = g.len - p[P_L];
  *kinetic = 0.0;
  *potential = 0.5 * p[P_K1] * s * s + 0.25 * p[P_K3] * s * s * s * s;
  return 0;
}

static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  const double *p = self->params;
  Geometry g;
  geometry(&g, (int)p[P_DIM], state->q);
  out[0] = tension(p, g.len - p[P_L]);
  out[1] = g.len;
  return 0;
}

static const jyPartType cubic_spring = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "cubic_spring",
  .doc = "a massless hardening spring, tension k1 s + k3 s^3 at stretch s, between a and b",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

JY_PLUGIN_ENTRY(env, error, error_len) {
  return jy_plugin_register(env, &cubic_spring, error, error_len);
}

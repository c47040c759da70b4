/* tests/plugins/protocol1.c — a plugin as one built against part protocol version 1 (before
 * jyPartShape.angle_outputs) is: its type says version 1, it exports no
 * jy_plugin_protocol_version, and its entry point is what version 1's JY_PLUGIN_ENTRY
 * expanded to (refusing any host that does not say 1). It must still load, and its
 * outputs must read as no angles (reported as the part computes them, not unwrapped).
 *
 * The part: a 1-D harmonic oscillator m x'' = -k x whose output "phase" is
 * atan2(-v / w, x), w = sqrt(k / m): w t wrapped into (-pi, pi] for x = cos(w t). */
#include <math.h>
#include <stdio.h>

#include <joinery/part.h>

#include "joinery/joinery.h"

enum { P_M, P_K };

static const jyParamSpec params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
  {"k", 4, JY_PARAM_POSITIVE, "N/m", "stiffness to the origin"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)p, (void)error, (void)error_len;
  s->ncoords = 1;
  s->coord_names[0] = "x";
  s->coord_defaults[0] = 1;
  s->noutputs = 1;
  s->output_names[0] = "phase";
  s->flags = JY_PART_CONSTANT_MASS | JY_PART_CONSERVATIVE;
  return 0; /* a version 1 shape knows no angle_outputs */
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *m) {
  (void)state;
  m[0] = self->params[P_M];
  return 0;
}

static int force(const jyPartInstance *self, const jyPartState *state, double *f) {
  f[0] = -self->params[P_K] * state->q[0];
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  *kinetic = 0.5 * self->params[P_M] * state->v[0] * state->v[0];
  *potential = 0.5 * self->params[P_K] * state->q[0] * state->q[0];
  return 0;
}

static int outputs(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                   double *out) {
  (void)row_forces;
  double w = sqrt(self->params[P_K] / self->params[P_M]);
  out[0] = atan2(-state->v[0] / w, state->q[0]);
  return 0;
}

static const jyPartType protocol1_oscillator = {
  .version = 1,
  .name = "protocol1_oscillator",
  .doc = "a harmonic oscillator from a plugin built for part protocol version 1",
  .params = params,
  .nparams = 2,
  .shape = shape,
  .mass = mass,
  .force = force,
  .energy = energy,
  .outputs = outputs,
};

/* Version 1's JY_PLUGIN_ENTRY, expanded. */
int jy_plugin_init(jyEnv *env, unsigned host_protocol_version, char *error, size_t error_len);
__attribute__((visibility("default"))) int
jy_plugin_init(jyEnv *env, unsigned host_protocol_version, char *error, size_t error_len) {
  if (host_protocol_version != 1) {
    snprintf(error, error_len,
             "the plugin was built for part protocol version 1; this "
             "joinery speaks version %u: rebuild the plugin against this joinery's headers",
             host_protocol_version);
    return 1;
  }
  jyStatus status = jy_env_register(env, &protocol1_oscillator);
  if (status == JY_OK) return 0;
  snprintf(error, error_len, "%s", jy_env_error(env));
  return 1;
}

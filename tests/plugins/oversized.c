/* tests/plugins/oversized.c — a careless plugin: its shape claims as many coordinates as its
 * parameter n says, beyond the protocol's JY_PART_MAX_COORDS when n is large (it names only
 * the ones the shape has room for). Every door that asks for a shape (sys:add, eval_part,
 * check_part) must refuse n = 65 with the limit, not index past the shape's arrays. */
#include <joinery/plugin.h>

static const jyParamSpec params[] = {
  {"n", 1, JY_PARAM_NONNEGATIVE, "1", "how many coordinates the shape claims"},
};

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)error, (void)error_len;
  s->ncoords = (int)p[0];
  for (int j = 0; j < s->ncoords && j < JY_PART_MAX_COORDS; j++) s->coord_names[j] = "c";
  return 0;
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *m) {
  (void)state;
  for (int j = 0; j < self->ncoords; j++) m[j + j * self->ncoords] = 1;
  return 0;
}

static const jyPartType oversized = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "oversized",
  .doc = "a test part whose shape may exceed the protocol's limits",
  .params = params,
  .nparams = 1,
  .shape = shape,
  .mass = mass,
};

JY_PLUGIN_ENTRY(env, error, error_len) {
  return jy_plugin_register(env, &oversized, error, error_len);
}

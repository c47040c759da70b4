/* tests/engine/t_env_register.c — jy_env_register refuses a part type whose parameters a
 * script could not set: a parameter named init, vel or guess (sys:add reads those as
 * initial-value tables), one listed twice, one named like a terminal (a number would set
 * it, a terminal would glue: one table cannot say both), a nameless one, too many. Each
 * refusal is JY_ERR_INVALID with a message naming the type and the parameter; a well-formed
 * type registers. Before this, a C plugin's parameter named guess registered and sys:add
 * then refused every setting of it ("guess must be a table"). */
#include <string.h>

#include "joinery/joinery.h"
#include "joinery/part.h"
#include "tap.h"

static int one_terminal_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                              size_t error_len) {
  (void)type, (void)p, (void)error, (void)error_len;
  s->ncoords = 1;
  s->coord_names[0] = "x";
  s->nterminals = 1;
  s->terminals[0].name = "end";
  s->terminals[0].dim = 1;
  return 0;
}

static jyPartType type_with(const char *name, const jyParamSpec *params, int nparams) {
  return (jyPartType){.version = JY_PART_PROTOCOL_VERSION,
                      .name = name,
                      .params = params,
                      .nparams = nparams,
                      .shape = one_terminal_shape};
}

static void refused(jyEnv *env, const jyPartType *type, const char *words, const char *what) {
  jyStatus st = jy_env_register(env, type);
  const char *msg = jy_env_error(env);
  ok(st == JY_ERR_INVALID && strstr(msg, type->name) && strstr(msg, words), "%s: refused", what);
  diag("%s", msg);
}

int main(void) {
  plan(7);
  jyEnv *env = jy_env_create(NULL);
  const jyParamSpec guess[] = {{"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
                               {"guess", 0, JY_PARAM_REAL, "1", "a clash"}};
  jyPartType t = type_with("with_guess", guess, 2);
  refused(env, &t, "'guess' cannot be a parameter name", "a parameter named guess");
  const jyParamSpec init[] = {{"init", 0, JY_PARAM_REAL, "1", "a clash"}};
  t = type_with("with_init", init, 1);
  refused(env, &t, "'init' cannot be a parameter name", "a parameter named init");
  const jyParamSpec twice[] = {{"k", 1, JY_PARAM_REAL, "1", "a"},
                               {"k", 2, JY_PARAM_REAL, "1", "b"}};
  t = type_with("with_twice", twice, 2);
  refused(env, &t, "parameter 'k' is listed twice", "a parameter listed twice");
  const jyParamSpec terminal[] = {{"end", 0, JY_PARAM_REAL, "1", "a clash"}};
  t = type_with("with_terminal", terminal, 1);
  refused(env, &t, "'end' names both a parameter and a terminal", "a parameter named end");
  const jyParamSpec nameless[] = {{NULL, 0, JY_PARAM_REAL, "1", "no name"}};
  t = type_with("with_nameless", nameless, 1);
  refused(env, &t, "parameter 1 has no name", "a nameless parameter");
  t = type_with("with_too_many", guess, JY_MAX_PARAMS + 1);
  refused(env, &t, "parameters; 0 to", "more than JY_MAX_PARAMS parameters");
  const jyParamSpec good[] = {{"m", 1, JY_PARAM_POSITIVE, "kg", "mass"},
                              {"velocity", 0, JY_PARAM_REAL, "m/s", "not reserved"}};
  t = type_with("well_formed", good, 2);
  ok(jy_env_register(env, &t) == JY_OK && jy_env_find_type(env, "well_formed"),
     "a type whose parameter names are all settable registers: %s", jy_env_error(env));
  jy_env_destroy(env);
  return done();
}

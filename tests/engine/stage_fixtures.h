/* tests/engine/stage_fixtures.h — what the stage tests (t_system_build, t_model_compile,
 * t_dyn_assemble, t_int_project, t_io_csv) share: an environment with the built-in parts,
 * short ways to add parts and glue, and a check that a message names what it must. Include
 * it once per test program, after tap.h. */
#ifndef JY_TESTS_STAGE_FIXTURES_H
#define JY_TESTS_STAGE_FIXTURES_H

#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

/* "pendulum_rows": the built-in pendulum without JY_PART_FOLLOWS_GLUE, so that a glue on
 * its pivot keeps its rows and M stays singular, for the tests of that path. The stock
 * type is the same in every environment, so one copy serves them all. */
static jyPartType stage_pendulum_rows; /* registered by pointer: it outlives environments */
static int (*stage_stock_pendulum_shape)(const jyPartType *, const double *, jyPartShape *, char *,
                                         size_t);
static int stage_pendulum_rows_shape(const jyPartType *type, const double *p, jyPartShape *s,
                                     char *error, size_t error_len) {
  int st = stage_stock_pendulum_shape(type, p, s, error, error_len);
  s->flags &= ~JY_PART_FOLLOWS_GLUE;
  return st;
}

/* An environment with every built-in part registered, and "pendulum_rows" (NULL after a
 * diag). */
static inline jyEnv *stage_env(void) {
  jyEnv *env = jy_env_create(NULL);
  if (env && jy_components_register(env) == JY_OK) {
    const jyPartType *stock = jy_env_find_type(env, "pendulum");
    stage_pendulum_rows = *stock;
    stage_pendulum_rows.name = "pendulum_rows";
    stage_stock_pendulum_shape = stock->shape;
    stage_pendulum_rows.shape = stage_pendulum_rows_shape;
    if (jy_env_register(env, &stage_pendulum_rows) == JY_OK) return env;
  }
  if (env) {
    diag("registering the components failed: %s", jy_env_error(env));
    jy_env_destroy(env);
  }
  return NULL;
}

/* Adds a part, saying why when it fails: PART(sys, "mass", "bob", {"dim", 2}, {"m", 1}). */
static inline jyPartId stage_add(jySystem *sys, const char *type, const char *name,
                                 const jyParamSetting *settings, int count) {
  jyPartId id = jy_system_add_part(sys, type, name, settings, count);
  if (id.index < 0) diag("adding %s '%s' failed: %s", type, name, jy_system_error(sys));
  return id;
}
/* The settings list and its count, as jy_system_add_part takes them. */
#define SETTINGS(...)              \
  (jyParamSetting[]){__VA_ARGS__}, \
    (int)(sizeof((jyParamSetting[]){__VA_ARGS__}) / sizeof(jyParamSetting))
#define PART(sys, type, name, ...) stage_add((sys), (type), (name), SETTINGS(__VA_ARGS__))

/* Glues terminal ta of part a to terminal tb of part b under `name`. */
static inline jyStatus stage_glue(jySystem *sys, jyPartId a, const char *ta, jyPartId b,
                                  const char *tb, const char *name) {
  jyStatus st =
    jy_system_glue(sys, jy_system_terminal(sys, a, ta), jy_system_terminal(sys, b, tb), name);
  if (st != JY_OK) diag("glue '%s' failed: %s", name ? name : "?", jy_system_error(sys));
  return st;
}

/* A rod "rod" of length L between the "pos" terminals of parts a and b (glues "a", "b"). */
static inline jyPartId stage_rod_between(jySystem *sys, jyPartId a, jyPartId b, int dim,
                                         double length) {
  jyPartId rod = PART(sys, "rod", "rod", {"dim", dim}, {"L", length});
  stage_glue(sys, rod, "a", a, "pos", "a");
  stage_glue(sys, rod, "b", b, "pos", "b");
  return rod;
}

/* The stage tests' pendulum: a 2-D point mass "bob" of 2 kg on a rod of length 1 from a
 * ground "pivot" at the origin, with bob.x set to x (y left to the compiler). */
static inline jySystem *stage_mass_on_rod(jyEnv *env, double x) {
  jySystem *sys = jy_system_create(env);
  jyPartId pivot = PART(sys, "ground", "pivot", {"dim", 2});
  jyPartId bob = PART(sys, "mass", "bob", {"dim", 2}, {"m", 2});
  stage_rod_between(sys, pivot, bob, 2, 1);
  jy_system_set_coord(sys, bob, "x", x);
  return sys;
}

/* Compiles with glue elimination on or off; NULL (after a diag) on failure. */
/* eliminate: 1 glue elimination, 0 none; STAGE_NO_TREE added: without the tree recursion
 * (M formed through G even where the links form a tree); STAGE_STORE added: solves in the
 * sparse store at any size (sparse_min_coords 1). */
enum { STAGE_NO_TREE = 2, STAGE_STORE = 4 };
static inline jyModel *stage_compile(jySystem *sys, int eliminate) {
  jySolverDef def = jy_default_solver_def();
  def.eliminate_glue = eliminate & 1;
  def.tree_recursion = !(eliminate & STAGE_NO_TREE);
  if (eliminate & STAGE_STORE) def.sparse_min_coords = 1;
  jyModel *model = NULL;
  jyStatus st = jy_model_compile(sys, &def, &model);
  if (st != JY_OK) diag("compile failed (%s): %s", jy_status_text(st), jy_system_error(sys));
  return model;
}

/* Compiles sys and destroys it (a model must not need its system), then makes an evaluator
 * of the model: NULL when either failed (*md may still need freeing: stage_free). */
static inline jyEval *stage_eval(jySystem *sys, int eliminate, jyModel **md) {
  *md = stage_compile(sys, eliminate);
  jy_system_destroy(sys);
  return *md ? jy_eval_create(*md) : NULL;
}

static inline void stage_free(jyEval *e, jyModel *md) {
  jy_eval_destroy(e);
  jy_model_destroy(md);
}

/* ok() that a message contains every one of the NULL-terminated fragments. */
static inline int says(const char *message, const char *const *fragments, const char *what) {
  int all = message != NULL;
  for (int i = 0; all && fragments[i]; i++) all = strstr(message, fragments[i]) != NULL;
  ok(all, "%s", what);
  if (!all) diag("message: %s", message ? message : "(null)");
  return all;
}
#define SAYS(message, what, ...) says((message), (const char *const[]){__VA_ARGS__, NULL}, (what))

/* The index of a model coordinate by name, with a diag when it is missing. */
static inline int stage_coord(const jyModel *model, const char *name) {
  int k = jy_model_find_coord(model, name);
  if (k < 0) diag("model has no coordinate '%s'", name);
  return k;
}

#endif

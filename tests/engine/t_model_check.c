/* The model doctor through the public C API (jy_model_check, jy_system_check): a Cartesian
 * pendulum (2 coordinates, 1 row, 1 degree of freedom, sound), the same with a redundant
 * second rod (a row named with its part), and a lone mass (a part not connected). */
#include <math.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

/* A pivot, a bob at (1, 0) and a rod between them; a second rod when twice, a lone mass when
 * lone. */
static jySystem *pendulum(jyEnv *env, int twice, int lone) {
  jySystem *sys = jy_system_create(env);
  jyPartId pivot = jy_system_add_part(sys, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId bob =
    jy_system_add_part(sys, "mass", "bob", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jy_system_set_coord(sys, bob, "x", 1);
  jy_system_set_coord(sys, bob, "y", 0);
  for (int k = 0; k < 1 + twice; k++) {
    jyPartId rod = jy_system_add_part(sys, "rod", k ? "rod2" : "rod",
                                      (jyParamSetting[]){{"dim", 2}, {"L", 1}}, 2);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "a"), jy_system_terminal(sys, pivot, "pos"),
                   NULL);
    jy_system_glue(sys, jy_system_terminal(sys, rod, "b"), jy_system_terminal(sys, bob, "pos"),
                   NULL);
  }
  if (lone) jy_system_add_part(sys, "mass", "lone", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  return sys;
}

static jyModel *compiled(jySystem *sys) {
  jyModel *model = NULL;
  jyStatus st = jy_model_compile(sys, NULL, &model);
  if (st != JY_OK) diag("compile: %s", jy_system_error(sys));
  return model;
}

int main(void) {
  plan(12);
  jyEnv *env = jy_env_create(NULL);
  jy_components_register(env);

  jySystem *sys = pendulum(env, 0, 0);
  jyModel *model = compiled(sys);
  jyModelCheck c;
  ok(model && jy_model_check(model, &c) == JY_OK, "pendulum: checked");
  ok(c.coords == 2 && c.rows == 1 && c.rank == 1 && c.dof == 1,
     "pendulum: 2 coordinates, 1 row, rank 1, 1 degree of freedom (%d %d %d %d)", c.coords, c.rows,
     c.rank, c.dof);
  ok(c.findings == 0, "pendulum: sound (%d findings)", c.findings);
  ok(fabs(c.sigma - 1) < 1e-12 && c.nsingular_coords >= 1 &&
       strcmp(c.singular_coords[0].name, "bob.x") == 0,
     "pendulum: smallest singular value 1, along bob.x (%g)", c.sigma);
  jy_model_check_free(model, &c);
  jy_model_destroy(model);
  jy_system_destroy(sys);

  sys = pendulum(env, 1, 0);
  model = compiled(sys);
  ok(model && jy_model_check(model, &c) == JY_OK, "two rods: checked");
  ok(c.rows == 2 && c.rank == 1 && c.dof == 1, "two rods: 2 rows of rank 1, 1 degree of freedom");
  ok(c.nredundant == 1 && c.redundant[0].part && strncmp(c.redundant[0].part, "rod", 3) == 0,
     "two rods: one redundant row, of a rod (%s)", c.nredundant ? c.redundant[0].name : "none");
  ok(c.findings == 1, "two rods: one finding");
  jy_model_check_free(model, &c);
  jy_model_destroy(model);
  jy_system_destroy(sys);

  sys = pendulum(env, 0, 1);
  ok(jy_system_check(sys, &c) == JY_OK && c.nisolated == 1 &&
       strcmp(c.isolated[0].name, "lone") == 0 && c.nunglued == 0,
     "lone mass: jy_system_check names it, no unglued terminal");
  jy_system_check_free(sys, &c);
  model = compiled(sys);
  ok(model && jy_model_check(model, &c) == JY_OK, "lone mass: checked");
  ok(c.nisolated == 1 && strcmp(c.isolated[0].name, "lone") == 0 && c.dof == 3,
     "lone mass: the part not connected, 3 degrees of freedom");
  ok(c.findings == 1, "lone mass: one finding");
  jy_model_check_free(model, &c);
  jy_model_destroy(model);
  jy_system_destroy(sys);
  jy_env_destroy(env);
  return done();
}

/* tests/engine/t_spatial_role.c — part protocol 8's spatial role (joinery/part.h,
 * jySpatialRole) is checked when a part is added: a role whose layout the shape does not
 * have (coordinates, rows, terminals, parameters) or an unknown role is refused with the
 * reason; a type of protocol 7 that fills the field anyway is read as having none. */
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

static const jyParamSpec params[] = {
  {"case", 0, JY_PARAM_NONNEGATIVE, "1", "which layout the shape claims (see shape)"},
  {"p1", 0, JY_PARAM_REAL, "1", "a body's m"},
  {"p2", 1, JY_PARAM_REAL, "1", "its Ixx"},
  {"p3", 1, JY_PARAM_REAL, "1", "its Iyy"},
  {"p4", 1, JY_PARAM_REAL, "1", "its Izz"},
  {"p5", 0, JY_PARAM_REAL, "1", "its Ixy"},
  {"p6", 0, JY_PARAM_REAL, "1", "its Ixz"},
  {"p7", 0, JY_PARAM_REAL, "1", "its Iyz"},
};

/* One coordinate x with unit mass on a line, claiming a role it does not have the layout
 * of: 0 a body (seven coordinates) with its parameters from p1, 1 a body with its
 * parameters from p2 (past the end), 2 role 99, 3 none. */
static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)error, (void)error_len;
  s->ncoords = 1;
  s->coord_names[0] = "x";
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", 1, 1, 0};
  s->flags = JY_PART_CONSTANT_MASS;
  int c = (int)p[0];
  s->spatial = c == 2 ? (jySpatialRole)99 : c == 3 ? JY_SPATIAL_NONE : JY_SPATIAL_BODY;
  s->spatial_param = c == 1 ? 2 : 1;
  return 0;
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *m) {
  (void)self, (void)state;
  m[0] = 1;
  return 0;
}

static const jyPartType claim = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "claim",
  .doc = "a unit mass on a line claiming a spatial role",
  .params = params,
  .nparams = 8,
  .shape = shape,
  .mass = mass,
};

int main(void) {
  plan(5);
  jyPartType old = claim; /* the same, declared for protocol 7: its role is not read */
  old.version = 7;
  old.name = "old_claim";
  jyEnv *env = jy_env_create(NULL);
  if (!env || jy_env_register(env, &claim) != JY_OK || jy_env_register(env, &old) != JY_OK) {
    ok(0, "an environment with the test types");
    return done();
  }
  jySystem *sys = jy_system_create(env);
  jyParamSetting body = {"case", 0}, past = {"case", 1}, unknown = {"case", 2}, none = {"case", 3};
  jyPartId id = jy_system_add_part(sys, "claim", "a", &body, 1);
  ok(id.index < 0 && strstr(jy_system_error(sys), "coordinate count its spatial role") &&
       strstr(jy_system_error(sys), "jySpatialRole"),
     "a body role on one coordinate is refused: %s", jy_system_error(sys));
  id = jy_system_add_part(sys, "claim", "b", &past, 1);
  ok(id.index < 0 && strstr(jy_system_error(sys), "too few parameters"),
     "a role whose parameters run past the type's is refused: %s", jy_system_error(sys));
  id = jy_system_add_part(sys, "claim", "c", &unknown, 1);
  ok(id.index < 0 && strstr(jy_system_error(sys), "unknown spatial role"),
     "an unknown role is refused: %s", jy_system_error(sys));
  id = jy_system_add_part(sys, "claim", "d", &none, 1);
  ok(id.index >= 0, "no role: added (%s)", jy_system_error(sys));
  id = jy_system_add_part(sys, "old_claim", "e", &body, 1);
  ok(id.index >= 0, "a protocol 7 type's role is not read: added (%s)", jy_system_error(sys));
  jy_system_destroy(sys);
  jy_env_destroy(env);
  return done();
}

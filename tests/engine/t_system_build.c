/* tests/engine/t_system_build.c — the builder stage alone (engine/src/system_build.c), read
 * through internal.h without compiling a model:
 *   - a part keeps its validated parameters (defaults filled in), an owned copy of its name,
 *     the shape's default coordinates, and which initial values the script set, guessed or
 *     left alone;
 *   - parts with equal shapes share one (the system's pool), parts whose shapes differ in a
 *     default do not, and a shape stays where it is while parts are added;
 *   - terminals and coordinate terminals are found by name; glue records both ends and the
 *     dimension, and is named "glue<k>" when unnamed;
 *   - every bad input (unknown type, parameter or coordinate, a value out of its domain, a
 *     bad name, a shape the part cannot make or the protocol cannot hold, mismatched glue)
 *     returns its status with a message naming the part, parameter or terminal, and leaves
 *     the system as it was.
 * Nothing here is numerical: every comparison is exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "stage_fixtures.h"
#include "tap.h"

/* A part type that fails in the ways the builder must catch, chosen by its "mode"
 * parameter: 0 a well-formed 1-coordinate part, 1 a shape that refuses (with a reason),
 * 2 more coordinates than the protocol allows, 3 an angle flag beyond its outputs, 4 a
 * terminal declared a block of coordinates the part does not have. */
static const jyParamSpec odd_params[] = {
  {"mode", 0, JY_PARAM_NONNEGATIVE, "1", "which failure"},
};

static int odd_shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                     size_t error_len) {
  (void)type;
  s->ncoords = 1;
  s->coord_names[0] = "u";
  s->coord_defaults[0] = 0.25;
  if (p[0] == 1) {
    snprintf(error, error_len, "mode 1 makes no part");
    return 1;
  }
  if (p[0] == 2) s->ncoords = JY_PART_MAX_COORDS + 1;
  if (p[0] == 3) {
    s->noutputs = 1;
    s->output_names[0] = "angle";
    s->angle_outputs = 1u << 3;
  }
  if (p[0] == 4) {
    s->nterminals = 1;
    s->terminals[0] = (jyTerminalSpec){"end", 2, 1, 0}; /* u and a second that is not there */
  }
  return 0;
}

static const jyPartType odd_type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "odd",
  .doc = "a test part that fails on request",
  .params = odd_params,
  .nparams = 1,
  .shape = odd_shape,
};

static int unused_channel(void *ud, const jyModel *model, const double *row, double *value,
                          char *error, size_t error_len) {
  (void)ud, (void)model, (void)row, (void)error, (void)error_len;
  *value = 0;
  return 0;
}

/* A part keeps validated parameters, owned names, its shape's defaults and the initial
 * values with how they were given. */
static void check_parts(jySystem *sys) {
  char name[16] = "bob";
  jyPartId bob = PART(sys, "mass", name, {"dim", 2}, {"m", 3});
  name[0] = 'X'; /* the system must hold its own copy */
  jyPartId spring = PART(sys, "spring", "spring", {"dim", 2}, {"k", 10}, {"L", 0.7});
  ok(bob.index == 0 && spring.index == 1 && jy_system_num_parts(sys) == 2,
     "two parts numbered in order");
  ok(strcmp(jy_system_part_name(sys, bob), "bob") == 0 &&
       jy_system_find_part(sys, "bob").index == 0,
     "the part's name is the system's own copy, found by name");
  const jySysPart *pb = &sys->parts[bob.index], *ps = &sys->parts[spring.index];
  ok(pb->params[0] == 2 && pb->params[1] == 3, "mass parameters as set (dim 2, m 3)");
  ok(ps->params[0] == 2 && ps->params[1] == 10 && ps->params[2] == 0.7,
     "spring parameters as set (dim 2, k 10, L 0.7)");
  jyPartId plain = jy_system_add_part(sys, "mass", "plain", NULL, 0);
  ok(plain.index == 2 && sys->parts[2].params[0] == 3 && sys->parts[2].params[1] == 1,
     "an unset parameter takes the schema's default (mass: dim 3, m 1)");
  const jyPartShape *shape = jy_system_part_shape(sys, spring);
  ok(shape && shape->ncoords == 4 && strcmp(shape->coord_names[2], "bx") == 0 &&
       shape->nterminals == 2 && strcmp(shape->terminals[1].name, "b") == 0,
     "the spring's shape: coordinates ax ay bx by, terminals a and b");
  ok(ps->q0[0] == 0 && ps->q0[1] == 0 && ps->q0[2] == 0.7 && ps->q0[3] == 0,
     "initial coordinates start at the shape's defaults (b.x = L = 0.7)");

  ok(jy_system_set_coord(sys, bob, "x", 1.5) == JY_OK &&
       jy_system_guess_coord(sys, bob, "y", -2) == JY_OK &&
       jy_system_set_velocity(sys, bob, "y", 0.5) == JY_OK,
     "set, guessed and velocity values accepted");
  ok(pb->q0[0] == 1.5 && pb->q_set[0] == 1, "a set value is held (q_set)");
  ok(pb->q0[1] == -2 && pb->q_set[1] == 0, "a guessed value is a start, not held");
  ok(pb->v0[1] == 0.5 && pb->v_set[1] == 1 && pb->v_set[0] == 0 && pb->v0[0] == 0,
     "a velocity set on y only");
}

/* 200 parts of three distinct shapes: the pool holds three, each part points to its own. */
static void check_shared_shapes(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId first = PART(sys, "mass", "m0", {"dim", 2}, {"m", 1});
  const jyPartShape *mass = jy_system_part_shape(sys, first);
  int shared = mass != NULL;
  const jyPartShape *rod[2] = {NULL, NULL}; /* L = 1 and L = 2: b.x defaults differ */
  char name[32];
  for (int i = 1; i < 100 && shared; i++) {
    snprintf(name, sizeof name, "m%d", i);
    shared = jy_system_part_shape(sys, PART(sys, "mass", name, {"dim", 2}, {"m", 1})) == mass;
    snprintf(name, sizeof name, "r%d", i);
    const jyPartShape *s = jy_system_part_shape(sys, PART(sys, "rod", name, {"L", 1 + i % 2}));
    if (!rod[i % 2]) rod[i % 2] = s;
    shared = shared && s == rod[i % 2];
  }
  int split = rod[0] && rod[1] && rod[0] != rod[1] && rod[0] != mass &&
    rod[0]->coord_defaults[3] == 1 && rod[1]->coord_defaults[3] == 2;
  ok(shared && jy_system_num_parts(sys) == 199 && sys->shapes.count == 3,
     "199 parts, 3 distinct shapes held once: equal shapes are one");
  ok(split, "rods of different L keep their own shapes (b.x defaults 1 and 2)");
  ok(mass == jy_system_part_shape(sys, first) && strcmp(mass->coord_names[1], "y") == 0,
     "a part's shape stays in place while the system grows");
  jy_system_destroy(sys);
}

/* Terminals by name, coordinate terminals after the real ones, glue ends and names. */
static void check_glue(jySystem *sys) {
  jyPartId bob = jy_system_find_part(sys, "bob"), spring = jy_system_find_part(sys, "spring");
  jyTerminalId pos = jy_system_terminal(sys, bob, "pos");
  jyTerminalId y = jy_system_coord_terminal(sys, bob, "y");
  ok(pos.part == 0 && pos.terminal == 0, "terminal bob.pos is terminal 0 of part 0");
  ok(y.part == 0 && y.terminal == 2,
     "coordinate terminal bob.y follows the 1 real terminal "
     "(index 1 + 1)");
  ok(jy_system_terminal(sys, bob, "tip").terminal < 0 &&
       jy_system_coord_terminal(sys, bob, "w").terminal < 0,
     "an unknown terminal or coordinate gives an invalid id");
  ok(jy_system_glue(sys, jy_system_terminal(sys, spring, "b"), pos, NULL) == JY_OK,
     "glue spring.b to bob.pos, unnamed");
  jyPartId rail = PART(sys, "ground", "rail", {"dim", 1}, {"x", -1});
  ok(jy_system_glue(sys, y, jy_system_terminal(sys, rail, "pos"), "height") == JY_OK,
     "glue the coordinate bob.y to a 1-D ground");
  ok(sys->nglues == 2, "two glues recorded");
  const jySysGlue *g1 = &sys->glues[0], *g2 = &sys->glues[1];
  ok(strcmp(g1->name, "glue1") == 0 && g1->dim == 2 && g1->a.part == spring.index &&
       g1->a.terminal == 1 && g1->b.part == bob.index && g1->b.terminal == 0,
     "glue1: auto-named, 2-D, from spring.b (terminal 1) to bob.pos");
  ok(strcmp(g2->name, "height") == 0 && g2->dim == 1 && g2->a.terminal == 2,
     "height: 1-D, from the coordinate terminal bob.y");
  ok(jy_system_num_glues(sys) == 2 && strcmp(jy_system_glue_name(sys, 0), "glue1") == 0 &&
       strcmp(jy_system_glue_name(sys, 1), "height") == 0 && !jy_system_glue_name(sys, 2) &&
       !jy_system_glue_name(sys, -1) && !jy_system_glue_name(NULL, 0),
     "the glues' names by index, the auto-named one's as chosen; NULL outside");
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  ok(sys->gravity[0] == 0 && sys->gravity[1] == -9.81 && sys->gravity[2] == 0,
     "gravity stored as given");
  ok(jy_system_add_channel(sys, "zero", unused_channel, NULL) == JY_OK && sys->nchannels == 1 &&
       strcmp(sys->channels[0].name, "zero") == 0,
     "a user channel recorded by name");
}

/* Adding a part fails with a message naming the type, part and parameter; nothing added. */
static void check_bad_parts(jySystem *sys) {
  int before = sys->nparts;
  ok(jy_system_add_part(sys, "mas", "m2", NULL, 0).index < 0, "unknown type refused");
  SAYS(jy_system_error(sys), "... naming it and the nearest type", "'mas'", "did you mean 'mass'?");
  jy_system_add_part(sys, "mass", "a.b", NULL, 0);
  SAYS(jy_system_error(sys), "a name with '.' refused, naming the type and the name",
       "part of type 'mass'", "name 'a.b'");
  jy_system_add_part(sys, "mass", "bob", NULL, 0);
  SAYS(jy_system_error(sys), "a second part 'bob' refused", "'bob' exists already");
  jy_system_add_part(sys, "mass", "m2", SETTINGS({"dim", 2}, {"mm", 1}));
  SAYS(jy_system_error(sys), "an unknown parameter named with the nearest one", "part 'm2' (mass)",
       "unknown parameter 'mm'", "did you mean 'm'?");
  jy_system_add_part(sys, "mass", "m2", SETTINGS({"m", -1}));
  SAYS(jy_system_error(sys), "a negative mass refused with its unit and domain", "part 'm2' (mass)",
       "m = -1 kg", "must be > 0");
  jy_system_add_part(sys, "mass", "m2", SETTINGS({"dim", 4}));
  SAYS(jy_system_error(sys), "dim = 4 refused", "dim = 4", "must be 1, 2 or 3");
  jy_system_add_part(sys, "ground", "g2", SETTINGS({"x", NAN}));
  SAYS(jy_system_error(sys), "a NaN position refused", "part 'g2' (ground)", "x = nan",
       "must be a finite number");
  jy_system_add_part(sys, "odd", "o1", SETTINGS({"mode", 1}));
  SAYS(jy_system_error(sys), "a shape that refuses: its reason, with the part", "part 'o1' (odd)",
       "mode 1 makes no part");
  jy_system_add_part(sys, "odd", "o2", SETTINGS({"mode", 2}));
  SAYS(jy_system_error(sys), "too many coordinates: the protocol's limits", "part 'o2' (odd)",
       "coordinates exceed the part protocol's limits");
  jy_system_add_part(sys, "odd", "o3", SETTINGS({"mode", 3}));
  SAYS(jy_system_error(sys), "an angle flag beyond the outputs: the protocol's limits",
       "part 'o3' (odd)", "limits");
  jy_system_add_part(sys, "odd", "o5", SETTINGS({"mode", 4}));
  SAYS(jy_system_error(sys), "a coordinate-block terminal beyond the coordinates",
       "part 'o5' (odd)", "terminal 0 ('end')", "coordinates 0 .. 1",
       "the part's coordinates are 0 .. 0");
  ok(jy_system_add_part(NULL, "mass", "m2", NULL, 0).index < 0, "no system: invalid id");
  ok(sys->nparts == before && jy_system_find_part(sys, "m2").index < 0, "no failed part was added");
  jyPartId fine = jy_system_add_part(sys, "odd", "o4", SETTINGS({"mode", 0}));
  ok(fine.index == before && sys->parts[fine.index].q0[0] == 0.25,
     "the test type itself is well formed (default u = 0.25)");
}

/* Initial values and glue fail with a message naming the part, coordinate or terminals. */
static void check_bad_values_and_glue(jySystem *sys) {
  jyPartId bob = jy_system_find_part(sys, "bob"), rail = jy_system_find_part(sys, "rail");
  ok(jy_system_set_coord(sys, bob, "z", 1) == JY_ERR_UNKNOWN_NAME, "a 2-D mass has no z");
  SAYS(jy_system_error(sys), "... naming the part, type and coordinate", "part 'bob' (mass)",
       "no coordinate 'z'");
  ok(jy_system_set_velocity(sys, bob, "x", INFINITY) == JY_ERR_PARAM &&
       sys->parts[bob.index].v_set[0] == 0,
     "an infinite velocity refused and not recorded");
  SAYS(jy_system_error(sys), "... naming it", "part 'bob'", "initial velocity of 'x'", "finite");
  ok(jy_system_set_coord(sys, (jyPartId){42}, "x", 1) == JY_ERR_INVALID, "no part 42");
  SAYS(jy_system_error(sys), "... saying so", "no part with index 42");

  int before = sys->nglues;
  jyTerminalId pos = jy_system_terminal(sys, bob, "pos"),
               rail_pos = jy_system_terminal(sys, rail, "pos");
  ok(jy_system_glue(sys, pos, rail_pos, "bad") == JY_ERR_DIMENSION, "2-D to 1-D refused");
  SAYS(jy_system_error(sys), "... naming both terminals and their dimensions", "bob.pos (2-D)",
       "rail.pos (1-D)");
  ok(jy_system_glue(sys, pos, pos, "self") == JY_ERR_INVALID, "a terminal glued to itself");
  SAYS(jy_system_error(sys), "... naming it", "bob.pos is glued to itself");
  ok(jy_system_glue(sys, jy_system_coord_terminal(sys, bob, "x"), rail_pos, "height") ==
       JY_ERR_INVALID,
     "a second glue 'height' refused");
  SAYS(jy_system_error(sys), "... naming it", "glue named 'height' exists already");
  ok(jy_system_glue(sys, jy_system_coord_terminal(sys, bob, "x"), rail_pos, "a,b") ==
       JY_ERR_INVALID,
     "a glue name with ',' refused (it would break the CSV header)");
  ok(jy_system_glue(sys, (jyTerminalId){0, 9}, rail_pos, "far") == JY_ERR_INVALID,
     "a terminal index beyond the part's refused");
  SAYS(jy_system_error(sys), "... as no such terminal", "no such terminal");
  ok(sys->nglues == before, "no failed glue was added");
  ok(jy_system_add_channel(sys, "nothing", NULL, NULL) == JY_ERR_INVALID &&
       jy_system_add_channel(sys, "zero", unused_channel, NULL) == JY_ERR_INVALID &&
       sys->nchannels == 1,
     "a channel without a function or with a taken name refused");
  SAYS(jy_system_error(sys), "... naming the channel", "channel named 'zero' exists already");
}

/* jy_system_set_angular_velocity: recorded on a body3d (the compile turns it into quaternion
 * rates; tests/lua/t_body3d_omega.lua), refused with the part named otherwise. */
static void check_angular_velocity(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId b = jy_system_add_part(sys, "body3d", "spinner", NULL, 0);
  jyPartId m = jy_system_add_part(sys, "mass", "puck", SETTINGS({"dim", 3}));
  const double w[3] = {1, 2, 3}, bad[3] = {1, NAN, 3};
  const jySysPart *p = &sys->parts[b.index];
  ok(p->omega_axes == -1, "a body3d starts with no angular velocity");
  ok(jy_system_set_angular_velocity(sys, b, w, JY_OMEGA_BODY) == JY_OK &&
       p->omega_axes == JY_OMEGA_BODY && p->omega[2] == 3 && p->v_set[3] == 0,
     "omega in body axes recorded, no quaternion rate set");
  ok(jy_system_set_angular_velocity(sys, b, w, JY_OMEGA_SPACE) == JY_ERR_PARAM &&
       p->omega_axes == JY_OMEGA_BODY,
     "the other axes as well refused");
  SAYS(jy_system_error(sys), "... naming the part and both", "part 'spinner' (body3d)",
       "both omega", "omega_body");
  ok(jy_system_set_velocity(sys, b, "q2", 1) == JY_ERR_PARAM && p->v_set[5] == 0,
     "a quaternion rate after omega refused");
  SAYS(jy_system_error(sys), "... naming it", "part 'spinner'", "'q2' (a quaternion rate)");
  ok(jy_system_set_velocity(sys, b, "x", 1) == JY_OK, "a translation velocity with omega is fine");
  ok(jy_system_set_angular_velocity(sys, b, bad, JY_OMEGA_BODY) == JY_ERR_PARAM && p->omega[1] == 2,
     "a NaN component refused, the value kept");
  SAYS(jy_system_error(sys), "... naming it", "part 'spinner'", "component 2 is nan");
  ok(jy_system_set_angular_velocity(sys, m, w, JY_OMEGA_SPACE) == JY_ERR_PARAM,
     "omega on a mass refused");
  SAYS(jy_system_error(sys), "... naming the part", "part 'puck' (mass)", "no orientation");
  jyPartId c = jy_system_add_part(sys, "body3d", "other", NULL, 0);
  ok(jy_system_set_velocity(sys, c, "q0", 1) == JY_OK &&
       jy_system_set_angular_velocity(sys, c, w, JY_OMEGA_SPACE) == JY_ERR_PARAM,
     "omega after a quaternion rate refused");
  SAYS(jy_system_error(sys), "... naming both", "part 'other'", "'q0' (a quaternion rate)");
  jy_system_destroy(sys);
}

/* A type with more parameters than the door takes (it never reaches a shape). */
static jyParamSpec many_params[JY_MAX_PARAMS + 1];

/* The parameter door on its own: defaults, settings, domains, and the words of its errors;
 * a setting that names a terminal or coordinate is called that, not an unknown parameter. */
static void check_params_fill(jyEnv *env) {
  const jyPartType *mass = jy_env_find_type(env, "mass");
  double p[JY_MAX_PARAMS] = {0};
  char why[512];
  ok(jy_params_fill(mass, NULL, NULL, 0, p, why, sizeof why) == JY_OK && p[0] == 3 && p[1] == 1 &&
       why[0] == '\0',
     "no settings: the schema's defaults (mass: dim 3, m 1), no message");
  ok(jy_params_fill(mass, "b", SETTINGS({"m", 2.5}, {"dim", 2}), p, why, sizeof why) == JY_OK &&
       p[0] == 2 && p[1] == 2.5,
     "settings override the defaults, in schema order");
  ok(jy_params_fill(mass, NULL, SETTINGS({"dim", 7}), p, why, sizeof why) == JY_ERR_PARAM,
     "dim = 7: JY_ERR_PARAM");
  SAYS(why, "... without a part name, naming the type", "part type 'mass': parameter dim = 7",
       "must be 1, 2 or 3");
  ok(jy_params_fill(mass, "b", SETTINGS({"m", -INFINITY}), p, why, sizeof why) == JY_ERR_PARAM,
     "m = -inf: JY_ERR_PARAM");
  SAYS(why, "... naming the part, type and unit", "part 'b' (mass): parameter m = -inf kg",
       "must be > 0");
  ok(jy_params_fill(mass, "b", SETTINGS({"pos", 3}), p, why, sizeof why) == JY_ERR_UNKNOWN_NAME,
     "a terminal's name: JY_ERR_UNKNOWN_NAME");
  SAYS(why, "... called a terminal", "part 'b' (mass): 'pos' is a terminal of mass");
  jy_params_fill(mass, "b", SETTINGS({"y", 3}), p, why, sizeof why);
  SAYS(why, "a coordinate's name is called a coordinate", "'y' is a coordinate of mass", "init");
  jy_params_fill(mass, "b", SETTINGS({"dimm", 3}), p, why, sizeof why);
  SAYS(why, "an unknown name with the nearest one", "unknown parameter 'dimm'",
       "did you mean 'dim'?");
  ok(jy_params_fill(mass, "b", SETTINGS({NULL, 3}), p, why, sizeof why) == JY_ERR_UNKNOWN_NAME,
     "a setting without a name is refused, not dereferenced");
  ok(jy_params_fill(NULL, "b", NULL, 0, p, why, sizeof why) == JY_ERR_INVALID,
     "no type: JY_ERR_INVALID");
  for (int i = 0; i <= JY_MAX_PARAMS; i++)
    many_params[i] = (jyParamSpec){"x", 0, JY_PARAM_REAL, "1", "test"};
  jyPartType many = {.version = JY_PART_PROTOCOL_VERSION,
                     .name = "many",
                     .params = many_params,
                     .nparams = JY_MAX_PARAMS + 1,
                     .shape = odd_shape};
  ok(jy_params_fill(&many, NULL, NULL, 0, p, why, sizeof why) == JY_ERR_INVALID,
     "more than JY_MAX_PARAMS parameters: JY_ERR_INVALID, nothing written past params");
  ok(jy_param_check(&mass->params[1], 0.0, why, sizeof why) != 0 &&
       strcmp(why, "m = 0 kg must be > 0") == 0 &&
       jy_param_check(&mass->params[1], 1e-300, NULL, 0) == 0,
     "jy_param_check: m = 0 refused in the door's words, 1e-300 kg taken");
}

int main(void) {
  plan(72 + 13);
  jyEnv *env = stage_env();
  if (!env || jy_env_register(env, &odd_type) != JY_OK) {
    ok(0, "environment with the components and the test type");
    return done();
  }
  jySystem *sys = jy_system_create(env);
  check_parts(sys);
  check_glue(sys);
  check_bad_parts(sys);
  check_bad_values_and_glue(sys);
  check_params_fill(env);
  check_shared_shapes(env);
  check_angular_velocity(env);
  jy_system_destroy(sys);
  jy_env_destroy(env);
  return done();
}

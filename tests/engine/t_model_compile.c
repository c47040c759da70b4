/* tests/engine/t_model_compile.c — the compile stage alone (engine/src/model_compile.c and
 * the stages it runs: layout, glue elimination, the consistent initial state, dependent
 * rows), read through internal.h:
 *   - layout: a rod from a fixed pivot to a point mass numbers the coordinates part by part,
 *     the parts' own rows before the glue rows, and the channels in the documented order;
 *   - glue elimination: the rod's ends follow the pivot and the mass, leaving the mass's two
 *     coordinates and the rod's one row; a spring between a wall and a mass leaves one
 *     coordinate and no row, with the spring's force -k (x - L) on the mass unchanged;
 *   - initial state on a circle of radius 1: a held x = 0.6 and a guessed y = -0.5 give
 *     y = -0.8; a held vx = 0.8 gives vy = 0.6 (tangent); two held values off the circle
 *     move radially, the least change; each move is recorded as a jyMovedValue;
 *   - two equal rods: one dependent row, named in the report;
 *   - a triple rod pendulum: the model keeps each distinct shape once, its own copy;
 *   - bad input: contradicting glue, a massless coordinate no constraint holds, solver
 *     settings out of range, a user channel with a taken name, a part whose init fails.
 * Tolerances: the initial assembly stops at |phi| <= assembly_tol (1e-12) times the state's
 * scale (1 here); on the unit circle that moves a coordinate by at most 1e-12 / 0.6, so 1e-11
 * leaves a margin of 6 and is far below any wrong branch or step (>= 1e-2). Accelerations
 * come from the dense solve of a 1..6-coordinate problem of condition below 1e3: 1e-10
 * relative is 1e3 times its rounding. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "stage_fixtures.h"
#include "tap.h"

#define ASSEMBLY_TOL 1e-11 /* see the head comment */
#define SOLVE_TOL 1e-10    /* relative, see the head comment */

/* A rod of length 1 from a pivot at the origin to a 2-D point mass of 2 kg; x and y start
 * as given (held when `held_y`, else y is a guess), velocities (vx, 0) with vx held. */
static jySystem *rod_system(jyEnv *env, double x, double y, int held_y, double vx) {
  jySystem *sys = stage_mass_on_rod(env, x);
  jyPartId bob = jy_system_find_part(sys, "bob");
  if (held_y)
    jy_system_set_coord(sys, bob, "y", y);
  else
    jy_system_guess_coord(sys, bob, "y", y);
  jy_system_set_velocity(sys, bob, "x", vx);
  return sys;
}

/* The names of channels first .. first + count - 1 are exactly `want`. */
static int channels_are(const jyModel *md, int first, const char *const *want, int count) {
  for (int k = 0; k < count; k++) {
    const char *got = jy_model_channel_name(md, first + k);
    if (!got || strcmp(got, want[k]) != 0) {
      diag("channel %d: got '%s', want '%s'", first + k, got ? got : "(none)", want[k]);
      return 0;
    }
  }
  return 1;
}

/* Without elimination: pivot (no coordinates), bob x y, rod ax ay bx by; rows rod.length,
 * then a.x a.y b.x b.y; channels t, q, der(q), the 7 derived ones, glue forces, the rod's
 * row force and powers, its output. */
static void check_layout_kept(jyEnv *env) {
  jySystem *sys = rod_system(env, 0.6, -0.5, 0, 0.8);
  jyModel *md = stage_compile(sys, 0);
  jy_system_destroy(sys); /* the model must not need the system any more */
  if (!ok(md != NULL, "rod pendulum compiles without glue elimination")) return;
  const char *coords[] = {"bob.x", "bob.y", "rod.ax", "rod.ay", "rod.bx", "rod.by"};
  int names_ok = md->n == 6;
  for (int k = 0; k < 6 && names_ok; k++) names_ok = strcmp(md->coord_names[k], coords[k]) == 0;
  ok(names_ok, "6 coordinates, part by part: bob.x bob.y rod.ax rod.ay rod.bx rod.by");
  ok(md->parts[0].coord_offset == 0 && md->parts[1].coord_offset == 0 &&
       md->parts[2].coord_offset == 2,
     "coordinate offsets: pivot 0 (none of its own), bob 0, rod 2");
  const char *rows[] = {"rod.length", "a.x", "a.y", "b.x", "b.y"};
  int rows_ok = md->m == 5;
  for (int k = 0; k < 5 && rows_ok; k++)
    rows_ok = strcmp(jy_model_row_name(md, k), rows[k]) == 0 && md->row_kinds[k] == JY_ROW_POSITION;
  ok(rows_ok, "5 position rows, the rod's own first: rod.length a.x a.y b.x b.y");
  ok(md->parts[2].row_offset == 0 && md->row_part[0] == 2 && md->row_part[1] == -1 &&
       md->glues[0].row_offset == 1 && md->glues[1].row_offset == 3,
     "row offsets: rod 0 (owned by part 2), glue a 1, glue b 3 (no owning part)");
  ok(md->nlinks == 0 && md->glues[0].link < 0 && md->glues[1].link < 0, "no glue eliminated");
  const char *tail[] = {
    "energy",      "kinetic",          "potential",       "residual.pos",       "residual.vel",
    "power.ideal", "power.nonideal",   "force.a.x",       "force.a.y",          "force.b.x",
    "force.b.y",   "force.rod.length", "power.rod.ideal", "power.rod.nonideal", "rod.tension"};
  ok(md->nchannels == 1 + 12 + 15 && channels_are(md, 0, (const char *[]){"t", "bob.x"}, 2) &&
       channels_are(md, 7, (const char *[]){"der(bob.x)"}, 1) && md->ch_derived == 13 &&
       channels_are(md, 13, tail, 15),
     "28 channels: t, 6 coordinates, 6 velocities, then energy .. rod.tension in order");
  ok(md->glues[0].force_channel == 20 && md->parts[2].row_force_channel == 24 &&
       md->parts[2].power_channel == 25 && md->parts[2].output_channel == 27,
     "channel offsets: force.a 20, force.rod.length 24, power.rod 25, rod.tension 27");
  jy_model_destroy(md);
}

/* With elimination the rod's four end coordinates follow the pivot and the mass. */
static void check_layout_eliminated(jyEnv *env) {
  jySystem *sys = rod_system(env, 0.6, -0.5, 0, 0.8);
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  if (!ok(md != NULL, "rod pendulum compiles with glue elimination")) return;
  ok(md->n == 2 && md->m == 1 && strcmp(md->coord_names[1], "bob.y") == 0 &&
       strcmp(md->row_names[0], "rod.length") == 0,
     "2 coordinates (bob.x, bob.y) and 1 row (rod.length) remain");
  ok(md->nlinks == 2 && md->glues[0].row_offset == -1 && md->glues[1].row_offset == -1,
     "both glues eliminated: no glue rows");
  const jyModelPart *rod = &md->parts[2];
  int mapped = rod->nlinks == 2;
  for (int j = 0; j < 4 && mapped; j++) mapped = rod->coord_map[j] < 0;
  ok(mapped, "every rod coordinate maps to a link (coord_map < 0)");
  const jyModelLink *la = &md->links[-1 - rod->coord_map[0]];
  const jyModelLink *lb = &md->links[-1 - rod->coord_map[2]];
  ok(la->part == 2 && la->offset == 0 && la->dim == 2 && la->source == 0 && lb->offset == 2 &&
       lb->source == 1 && lb->terminal == 0,
     "rod.a (offset 0) follows pivot.pos, rod.b (offset 2) follows bob.pos");
  ok(md->nlocal == 6 && md->nchannels == 1 + 12 + 15,
     "6 local coordinate names kept, each a q and a der(q) channel; 28 channels (glue forces "
     "still reported)");
  SAYS(jy_model_report(md), "the report says what was eliminated",
       "glue elimination: 2 glues and 4 terminal coordinates substituted away");
  jy_model_destroy(md);
}

static const jyMovedValue *moved_of(const jyModel *md, int coord, int velocity) {
  for (int i = 0; i < jy_model_num_moved(md); i++) {
    const jyMovedValue *mv = jy_model_moved(md, i);
    if (mv->coord == coord && mv->velocity == velocity) return mv;
  }
  return NULL;
}

/* On the unit circle: the held x stays, the guessed y goes to the branch it starts on; the
 * velocity becomes tangent. The same with and without elimination. */
static void check_initial_state(jyEnv *env, int eliminate) {
  jySystem *sys = rod_system(env, 0.6, -0.5, 0, 0.8);
  jyModel *md = stage_compile(sys, eliminate);
  jy_system_destroy(sys);
  if (!ok(md != NULL, "compiled (elimination %d)", eliminate)) return;
  int x = stage_coord(md, "bob.x"), y = stage_coord(md, "bob.y");
  const double *q = jy_model_initial_q(md), *v = jy_model_initial_v(md);
  ok(q[x] == 0.6 && v[x] == 0.8, "held x = 0.6 and vx = 0.8 unchanged (elimination %d)", eliminate);
  is_near(q[y], -0.8, ASSEMBLY_TOL, "guessed y = -0.5 moves to -0.8 on the circle");
  is_near(v[y], 0.6, ASSEMBLY_TOL, "vy = 0.6 makes the velocity tangent: 0.6 vx - 0.8 vy = 0");
  const jyMovedValue *my = moved_of(md, y, 0), *mvy = moved_of(md, y, 1);
  ok(my && !my->set && my->from == -0.5 && fabs(my->to - q[y]) == 0 && mvy && !mvy->set &&
       mvy->from == 0 && moved_of(md, x, 0) == NULL,
     "moved: y (unset, from -0.5) and vy (unset, from 0); the held x did not move");
  if (!eliminate) {
    int bx = stage_coord(md, "rod.bx"), by = stage_coord(md, "rod.by");
    const jyMovedValue *mb = moved_of(md, bx, 0);
    ok(q[bx] == q[x] && fabs(q[by] - q[y]) <= ASSEMBLY_TOL && mb && mb->follows_glue,
       "the rod's end b moved onto the mass, flagged as following its glue");
  }
  jy_model_destroy(md);
}

/* Both coordinates held off the circle (radius 0.6 sqrt 2): they move as little as the rod
 * allows, radially, to (1, 1) / sqrt 2, and are reported as set values that moved. */
static void check_held_values_move_least(jyEnv *env) {
  jySystem *sys = rod_system(env, 0.6, 0.6, 1, 0);
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  if (!ok(md != NULL, "held x = y = 0.6 compiles")) return;
  const double *q = jy_model_initial_q(md);
  is_near(q[0], sqrt(0.5), ASSEMBLY_TOL, "x moves radially to 1/sqrt 2");
  is_near(q[1], sqrt(0.5), ASSEMBLY_TOL, "y moves radially to 1/sqrt 2");
  const jyMovedValue *mv = moved_of(md, 0, 0);
  ok(jy_model_num_moved(md) == 2 && mv && mv->set && mv->from == 0.6,
     "both values recorded as set values that moved");
  SAYS(jy_model_report(md), "the report names the moved set value", "initial value bob.x",
       "[set by the script]");
  jy_model_destroy(md);
}

/* wall -- spring (k 100, L 1) -- mass (2 kg, x 1.3), on a line: elimination leaves x alone;
 * both models give x'' = -k (x - L) / m = -15. */
static void check_spring_elimination(jyEnv *env) {
  for (int eliminate = 1; eliminate >= 0; eliminate--) {
    jySystem *sys = jy_system_create(env);
    jyPartId wall = PART(sys, "ground", "wall", {"dim", 1});
    jyPartId spring = PART(sys, "spring", "spring", {"dim", 1}, {"k", 100}, {"L", 1});
    jyPartId mass = PART(sys, "mass", "m", {"dim", 1}, {"m", 2});
    stage_glue(sys, spring, "a", wall, "pos", "left");
    stage_glue(sys, spring, "b", mass, "pos", "right");
    jy_system_set_coord(sys, mass, "x", 1.3);
    jyModel *md = stage_compile(sys, eliminate);
    jy_system_destroy(sys);
    if (!ok(md != NULL, "spring chain compiles (elimination %d)", eliminate)) continue;
    ok(eliminate ? md->n == 1 && md->m == 0 : md->n == 3 && md->m == 2,
       "elimination %d: %d coordinates, %d rows (want %s)", eliminate, md->n, md->m,
       eliminate ? "1 and 0" : "3 and 2");
    double acc[3] = {0};
    jyEval *e = jy_eval_create(md);
    int x = stage_coord(md, "m.x");
    jyStatus st = e && x >= 0 ? jy_eval_acceleration(e, md->q0, md->v0, 0, acc) : JY_ERR_NOMEM;
    ok(st == JY_OK, "acceleration evaluated");
    is_near(x >= 0 ? acc[x] : NAN, -15, 15 * SOLVE_TOL, "m.x'' = -k (x - L) / m = -15");
    jy_eval_destroy(e);
    jy_model_destroy(md);
  }
}

/* Two rods of the same length between the same points: one row depends on the other. */
static void check_dependent_rows(jyEnv *env) {
  jySystem *sys = rod_system(env, 0.6, -0.8, 1, 0);
  jyPartId pivot = jy_system_find_part(sys, "pivot"), bob = jy_system_find_part(sys, "bob");
  jyPartId rod2 = PART(sys, "rod", "rod2", {"dim", 2}, {"L", 1});
  stage_glue(sys, rod2, "a", pivot, "pos", "a2");
  stage_glue(sys, rod2, "b", bob, "pos", "b2");
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  if (!ok(md != NULL, "two equal rods compile")) return;
  ok(md->m == 2 && md->ndependent == 1 && md->dependent_rows &&
       md->dependent_rows[0] + md->dependent_rows[1] == 1,
     "2 rows, 1 of them dependent");
  SAYS(jy_model_report(md), "the report names the redundancy",
       "redundant constraints: rank 1 of 2 rows; dependent rows: rod");
  jy_model_destroy(md);
}

/* A triple rod pendulum: pivot, then bob<i> (2 kg) and rod<i> (L = 1) per link. The model
 * holds three shapes, its own (the system is gone), and each part points to its kind's. */
static void check_shared_shapes(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId prev = PART(sys, "ground", "pivot", {"dim", 2});
  char name[16], end[16];
  for (int i = 1; i <= 3; i++) {
    snprintf(name, sizeof name, "bob%d", i);
    jyPartId bob = PART(sys, "mass", name, {"dim", 2}, {"m", 2});
    jy_system_set_coord(sys, bob, "x", i);
    snprintf(name, sizeof name, "rod%d", i);
    jyPartId rod = PART(sys, "rod", name, {"dim", 2}, {"L", 1});
    snprintf(end, sizeof end, "a%d", i);
    stage_glue(sys, rod, "a", prev, "pos", end);
    snprintf(end, sizeof end, "b%d", i);
    stage_glue(sys, rod, "b", bob, "pos", end);
    prev = bob;
  }
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  if (!ok(md != NULL, "triple rod pendulum compiles")) return;
  const jyModelPart *p = md->parts;
  ok(md->nparts == 7 && md->shapes.count == 3 && p[1].shape == p[3].shape &&
       p[3].shape == p[5].shape && p[2].shape == p[6].shape && p[1].shape != p[2].shape,
     "7 parts, 3 shapes: the bobs share one, the rods another");
  ok(strcmp(p[5].shape->coord_names[1], "y") == 0 &&
       strcmp(p[6].shape->terminals[1].name, "b") == 0 &&
       strcmp(p[6].shape->row_names[0], "length") == 0 &&
       strcmp(p[6].shape->output_names[0], "tension") == 0 && p[6].shape->coord_defaults[2] == 1,
     "the model's shapes keep their names and defaults without the system");
  jy_model_destroy(md);
}

/* A compile that must fail: its status and the message fragments. */
static void expect_failure(jySystem *sys, const jySolverDef *def, jyStatus want, const char *what,
                           const char *const *fragments) {
  jyModel *md = (jyModel *)1;
  jyStatus st = jy_model_compile(sys, def, &md);
  ok(st == want && md == NULL, "%s: %s", what, jy_status_text(want));
  if (st != want) diag("got %s: %s", jy_status_text(st), jy_system_error(sys));
  says(jy_system_error(sys), fragments, "... the message names it");
}
#define EXPECT_FAILURE(sys, def, want, what, ...) \
  expect_failure((sys), (def), (want), (what), (const char *const[]){__VA_ARGS__, NULL})

static int failing_init(const jyPartInstance *self, void *data, char *error, size_t len) {
  (void)self, (void)data;
  snprintf(error, len, "no table for this size");
  return 1;
}

/* A 1-D mass between walls at 0 and 1; a spring with a free end; settings out of range. */
static void check_bad_input(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId left = PART(sys, "ground", "left", {"dim", 1});
  jyPartId right = PART(sys, "ground", "right", {"dim", 1}, {"x", 1});
  jyPartId mass = PART(sys, "mass", "m", {"dim", 1});
  stage_glue(sys, mass, "pos", left, "pos", "to_left");
  stage_glue(sys, mass, "pos", right, "pos", "to_right");
  EXPECT_FAILURE(sys, NULL, JY_ERR_INCONSISTENT, "a mass glued to 0 and to 1",
                 "no configuration satisfies these rows at t = 0", "to_left", "to_right");
  jy_system_destroy(sys);

  sys = jy_system_create(env);
  jyPartId wall = PART(sys, "ground", "wall", {"dim", 1});
  jyPartId spring = PART(sys, "spring", "loose", {"dim", 1}, {"L", 1});
  stage_glue(sys, spring, "a", wall, "pos", "fixed");
  EXPECT_FAILURE(sys, NULL, JY_ERR_NOT_UNIQUE, "a spring end held by nothing",
                 "acceleration not unique", "loose.bx");
  jySolverDef def = jy_default_solver_def();
  def.rank_rcond = 2;
  EXPECT_FAILURE(sys, &def, JY_ERR_INVALID, "rank_rcond = 2", "rank_rcond = 2", "between 0 and 1");
  def = jy_default_solver_def();
  def.consistency_tol = 0;
  EXPECT_FAILURE(sys, &def, JY_ERR_INVALID, "consistency_tol = 0", "consistency_tol = 0",
                 "a positive number");
  def = jy_default_solver_def();
  def.dependent_rcond = def.rank_rcond / 10;
  EXPECT_FAILURE(sys, &def, JY_ERR_INVALID, "dependent_rcond below rank_rcond", "dependent_rcond",
                 "at least rank_rcond");
  def = jy_default_solver_def();
  def.sparse_min_coords = -1;
  EXPECT_FAILURE(sys, &def, JY_ERR_INVALID, "sparse_min_coords = -1", "sparse_min_coords = -1");
  jy_system_destroy(sys);
  ok(jy_model_compile(NULL, NULL, NULL) == JY_ERR_INVALID, "no system: invalid argument");
}

static int zero_channel(void *ud, const jyModel *model, const double *row, double *value,
                        char *error, size_t error_len) {
  (void)ud, (void)model, (void)row, (void)error, (void)error_len;
  *value = 0;
  return 0;
}

int main(void) {
  plan(62);
  jyEnv *env = stage_env();
  /* A ground whose init fails (the environment keeps the pointer: it lives in main). */
  jyPartType failing = {.version = JY_PART_PROTOCOL_VERSION,
                        .name = "needs_init",
                        .doc = "a test part whose init fails"};
  const jyPartType *ground = env ? jy_env_find_type(env, "ground") : NULL;
  if (ground) {
    failing.params = ground->params;
    failing.nparams = ground->nparams;
    failing.shape = ground->shape;
    failing.terminal = ground->terminal;
    failing.init = failing_init;
  }
  if (!ground || jy_env_register(env, &failing) != JY_OK) {
    ok(0, "environment with the components and the test type");
    return done();
  }
  check_layout_kept(env);
  check_layout_eliminated(env);
  check_initial_state(env, 0);
  check_initial_state(env, 1);
  check_held_values_move_least(env);
  check_spring_elimination(env);
  check_dependent_rows(env);
  check_bad_input(env);
  check_shared_shapes(env);

  jySystem *sys = rod_system(env, 0.6, -0.8, 1, 0);
  jy_system_add_channel(sys, "energy", zero_channel, NULL);
  EXPECT_FAILURE(sys, NULL, JY_ERR_INVALID, "a user channel named 'energy'",
                 "channel 'energy' has the name of a channel the model has already");
  jy_system_destroy(sys);
  sys = jy_system_create(env);
  PART(sys, "needs_init", "table", {"dim", 2});
  EXPECT_FAILURE(sys, NULL, JY_ERR_PART, "a part whose init fails",
                 "part 'table' (needs_init), init: no table for this size");
  jy_system_destroy(sys);
  jy_env_destroy(env);
  return done();
}

/* tests/engine/t_hybrid.c — the evaluator's side of parts with modes (engine/src/eval.c
 * jy_eval_impulse, eval_modes.c), against closed forms:
 *   1. the impulse solve: two masses (1 and 3 kg) on a line meeting at a contact, e = 1
 *      (velocities exchanged as the elastic formulas say) and e = 0 (the common velocity of
 *      the momentum), impulse m2 dv2; the same with the contact row given twice (a redundant
 *      row: the same velocities, the impulse shared);
 *   2. a pendulum bob hitting a wall (a floor with a horizontal normal) at angle th, e = 0.5:
 *      omega' = -e omega, the wall's impulse m l (1 + e) omega / cos th; with glue elimination
 *      and without (M singular: the massless pivot and floor coordinates);
 *   3. inactive rows: a ball on a floor falls freely while the contact is open and rests
 *      (acceleration 0, row force m g) while closed, on the dense and the sparse path alike
 *      (agreeing to 1e-10); an inactive row's force is 0;
 *   4. jy_eval_set_param: a spring's k doubled doubles the acceleration of its mass, for that
 *      evaluator only; a value outside the domain or changing the shape is refused, named;
 *   5. bad parameters: restitution above 1, mu_s below mu, each named;
 *   6. simulations (sim_hybrid.c) against closed forms: a ball dropped from 1 m on a floor
 *      with e = 0.8 (impact times t1 (1 + 2 e (1 - e^k) / (1 - e))), a block on a spring
 *      k = 100 on a guide with mu = 0.3 (turning points 0.5 - 2 k mu g / k at k pi / 10 s,
 *      sticking at the eighth), a block landing on a floor with mu = 0.3 and stopping at
 *      t_land + v0 / (mu g); parts with modes refused under Natsiavas-Paraskevopoulos.
 * Tolerance: cases 1-5 are one linear solve of O(1) numbers whose closed form is exact, so the
 * answers agree to rounding (~1e-15); 1e-12 leaves a margin of 1e3. Case 6 integrates at
 * the defaults (rtol 1e-11, atol 1e-13): events are located to ~1e-11 s and positions to
 * ~2e-9 m (measured); 1e-9 s and 1e-7 m leave margins of 30 to 100 under any method. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "stage_fixtures.h"
#include "tap.h"

#define TOL 1e-12 /* see the head comment */

/* Compiles with elimination on or off and the sparse path from `sparse_min` coordinates (0:
 * dense), then an evaluator: NULL after a diag. */
static jyEval *compile_eval(jySystem *sys, int eliminate, int sparse_min, jyModel **md) {
  jySolverDef def = jy_default_solver_def();
  def.eliminate_glue = eliminate;
  def.sparse_min_coords = sparse_min;
  *md = NULL;
  jyStatus st = jy_model_compile(sys, &def, md);
  if (st != JY_OK) diag("compile failed (%s): %s", jy_status_text(st), jy_system_error(sys));
  jy_system_destroy(sys);
  return *md ? jy_eval_create(*md) : NULL;
}

/* The restitution array (m entries, NaN: no impact) with e on rows [first, first + count). */
static void restitution_on(double *r, int m, int first, int count, double e) {
  for (int i = 0; i < m; i++) r[i] = i >= first && i < first + count ? e : NAN;
}

/* 1. Two masses on a line, x1 = 0 and x2 = 0.5 with a contact of D = 0.5 (touching). */
static void check_two_masses(jyEnv *env, double e, int twice) {
  jySystem *sys = jy_system_create(env);
  jyPartId m1 = PART(sys, "mass", "m1", {"dim", 1}, {"m", 1});
  jyPartId m2 = PART(sys, "mass", "m2", {"dim", 1}, {"m", 3});
  for (int k = 0; k <= twice; k++) {
    jyPartId c = PART(sys, "contact", k ? "c2" : "c1", {"dim", 1}, {"D", 0.5}, {"e", e});
    stage_glue(sys, c, "a", m1, "pos", k ? "c2a" : "c1a");
    stage_glue(sys, c, "b", m2, "pos", k ? "c2b" : "c1b");
  }
  jy_system_set_coord(sys, m2, "x", 0.5);
  jyModel *md;
  jyEval *ev = compile_eval(sys, 1, 0, &md);
  if (!ok(ev && md->n == 2 && md->m == 1 + twice, "two masses, %d contact row(s)", 1 + twice)) {
    stage_free(ev, md);
    return;
  }
  double q[2] = {0, 0.5}, v[2] = {2, -1}, dv[2], r[2], impulse[2] = {0, 0};
  restitution_on(r, md->m, 0, md->m, e);
  jyStatus st = jy_eval_impulse(ev, q, v, 0, r, dv, impulse);
  double v1 = e == 1 ? (-2.0 * 2 + 2 * 3 * -1) / 4 : (2.0 - 3) / 4;
  double v2 = e == 1 ? (2.0 * -1 + 2 * 1 * 2) / 4 : v1;
  ok(st == JY_OK, "impulse solve (e = %g%s) %s", e, twice ? ", row twice" : "", jy_eval_error(ev));
  is_near(v[0] + dv[0], v1, TOL,
          e == 1 ? "e = 1: v1' = ((m1 - m2) v1 + 2 m2 v2) / (m1 + m2)"
                 : "e = 0: v1' = the momentum's common velocity");
  is_near(v[1] + dv[1], v2, TOL,
          e == 1 ? "e = 1: v2' = ((m2 - m1) v2 + 2 m1 v1) / (m1 + m2)"
                 : "e = 0: v2' = the momentum's common velocity");
  is_near(impulse[0] + impulse[1], 3 * (v2 + 1), TOL,
          twice ? "the impulse of the two rows together is m2 dv2" : "the impulse is m2 dv2");
  ok(ev->modes && ev->modes[2] == 0 && ev->inactive[0], "the open contact stays open after it");
  stage_free(ev, md);
}

/* 2. A pendulum part (m = 2, l = 1.5) from a ground, its bob against a wall x <= sin th0. */
static void check_pendulum_wall(jyEnv *env, int eliminate) {
  const double m = 2, l = 1.5, th = 0.3, w = 2, e = 0.5;
  jySystem *sys = jy_system_create(env);
  jyPartId ground = PART(sys, "ground", "pivot", {"dim", 2});
  jyPartId pend = PART(sys, "pendulum", "pend", {"m", m}, {"l", l});
  jyPartId wall = PART(sys, "floor", "wall", {"nx", -1}, {"ny", 0}, {"d", -l * sin(th)}, {"e", e});
  stage_glue(sys, pend, "pivot", ground, "pos", "hang");
  stage_glue(sys, wall, "pos", pend, "bob", "touch");
  jy_system_set_coord(sys, pend, "theta", th);
  jyModel *md;
  jyEval *ev = compile_eval(sys, eliminate, 0, &md);
  if (!ok(ev != NULL, "pendulum and wall compiled (elimination %s)", eliminate ? "on" : "off")) {
    stage_free(ev, md);
    return;
  }
  int n = md->n, jt = stage_coord(md, "pend.theta");
  double q[16], v[16] = {0}, dv[16], r[16], impulse[16];
  memcpy(q, md->q0, sizeof(double) * (size_t)n);
  v[jt] = w;
  if (!eliminate) { /* the wall's own point moves with the bob */
    v[stage_coord(md, "wall.x")] = l * w * cos(th);
    v[stage_coord(md, "wall.y")] = l * w * sin(th);
  }
  int row = -1;
  for (int i = 0; i < md->m; i++)
    if (strcmp(md->row_names[i], "wall.contact") == 0) row = i;
  restitution_on(r, md->m, row, 1, e);
  jyStatus st = jy_eval_impulse(ev, q, v, 0, r, dv, impulse);
  ok(st == JY_OK && row >= 0, "impulse solve, %d coordinates (M %s): %s", n,
     eliminate ? "regular" : "singular", jy_eval_error(ev));
  is_near(v[jt] + dv[jt], -e * w, TOL, "omega' = -e omega");
  is_near(impulse[row], m * l * (1 + e) * w / cos(th), TOL,
          "the wall's impulse m l (1 + e) omega / cos th");
  stage_free(ev, md);
}

/* 3. A 2-D ball (m = 2) on a floor y >= 0, resting at y = 0: open, then closed. */
static void ball_accelerations(jyEnv *env, int sparse_min, double acc[2][2], double force[2]) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId ball = PART(sys, "mass", "ball", {"dim", 2}, {"m", 2});
  jyPartId fl = PART(sys, "floor", "floor", {"e", 0});
  stage_glue(sys, fl, "pos", ball, "pos", "touch");
  jyModel *md;
  jyEval *ev = compile_eval(sys, 0, sparse_min, &md);
  if (!ok(ev && md->n == 4, "ball on floor compiled (%s path)", sparse_min ? "sparse" : "dense")) {
    stage_free(ev, md);
    return;
  }
  double q[4] = {0, 0, 0, 0}, v[4] = {0};
  for (int closed = 0; closed <= 1; closed++) {
    int modes[2] = {0, closed};
    double a[4];
    jyStatus st = jy_eval_set_modes(ev, modes);
    if (st == JY_OK) st = jy_assemble(ev, q, v, 0, 0x1f | JY_ASM_SPARSE_ONLY);
    if (st == JY_OK) st = jy_eval_acceleration_and_multipliers(ev, q, v, 0, a);
    ok(st == JY_OK && ev->store_solves == (sparse_min > 0), "%s, %s path: solved",
       closed ? "closed" : "open", sparse_min ? "sparse" : "dense");
    acc[closed][0] = a[0];
    acc[closed][1] = a[1];
    force[closed] = ev->multipliers[0]; /* the floor's row comes first */
  }
  stage_free(ev, md);
}

static void check_inactive_rows(jyEnv *env) {
  double dense[2][2], sparse[2][2], fd[2], fs[2];
  ball_accelerations(env, 0, dense, fd);
  ball_accelerations(env, 1, sparse, fs);
  is_near(dense[0][1], -9.81, TOL, "open: the ball falls freely (dense)");
  is_near(dense[1][1], 0, TOL, "closed: the ball rests (dense)");
  is_near(fd[0], 0, 0, "open: the inactive row's force is 0");
  is_near(fd[1], 2 * 9.81, TOL, "closed: the floor carries m g");
  double worst = 0;
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 2; k++) worst = fmax(worst, fabs(dense[c][k] - sparse[c][k]));
  worst = fmax(worst, fmax(fabs(fd[0] - fs[0]), fabs(fd[1] - fs[1])));
  ok(worst <= 1e-10, "dense and sparse paths agree with the row inactive and active (%.2g)", worst);
}

/* 4. A 1-D mass (m = 2) on a spring (k = 50) to a ground, stretched by 0.1. */
static void check_set_param(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId g = PART(sys, "ground", "wall", {"dim", 1});
  jyPartId b = PART(sys, "mass", "block", {"dim", 1}, {"m", 2});
  jyPartId s = PART(sys, "spring", "spring", {"dim", 1}, {"k", 50}, {"L", 0});
  stage_glue(sys, s, "a", g, "pos", "sa");
  stage_glue(sys, s, "b", b, "pos", "sb");
  jyModel *md;
  jyEval *ev = compile_eval(sys, 1, 0, &md);
  jyEval *other = md ? jy_eval_create(md) : NULL;
  if (!ok(ev && other && md->n == 1, "spring and mass compiled")) {
    jy_eval_destroy(other);
    stage_free(ev, md);
    return;
  }
  int part = 2, k = jy_param_index(md->parts[part].inst.type, "k");
  double q[1] = {0.1}, v[1] = {0}, a = 0, a_other = 0;
  jyStatus st = jy_eval_set_param(ev, part, k, 100);
  ok(st == JY_OK, "set_param spring.k = 100: %s", jy_eval_error(ev));
  jy_eval_acceleration(ev, q, v, 0, &a);
  jy_eval_acceleration(other, q, v, 0, &a_other);
  is_near(a, -100 * 0.1 / 2, TOL, "the acceleration follows the new k: -k x / m = -5");
  is_near(a_other, -50 * 0.1 / 2, TOL, "another evaluator of the model keeps k = 50");
  st = jy_eval_set_param(ev, part, k, -1);
  ok(st == JY_ERR_PARAM, "k = -1 refused (%s)", jy_status_text(st));
  SAYS(jy_eval_error(ev), "the message names the part and the parameter's domain", "spring",
       "k = -1", "must be >= 0");
  int dim = jy_param_index(md->parts[part].inst.type, "dim");
  st = jy_eval_set_param(ev, part, dim, 2);
  ok(st == JY_ERR_PARAM, "dim = 2 refused: it changes the shape");
  SAYS(jy_eval_error(ev), "the message says the shape would change", "dim", "shape");
  jy_eval_acceleration(ev, q, v, 0, &a);
  is_near(a, -5, TOL, "a refused value leaves k = 100 in place");
  jy_eval_destroy(other);
  stage_free(ev, md);
}

/* 5. Parameter errors the parts name. */
static void check_bad_params(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId bad = PART(sys, "floor", "fl", {"e", 1.5});
  (void)bad;
  SAYS(jy_system_error(sys), "restitution 1.5 refused, named", "fl", "e = 1.5", "[0, 1]");
  jyParamSetting settings[] = {{"mu", 0.3}, {"mu_s", 0.2}};
  jyPartId g = jy_system_add_part(sys, "guide", "slide", settings, 2);
  ok(g.index < 0, "mu_s < mu refused");
  SAYS(jy_system_error(sys), "the message names both coefficients", "mu_s = 0.2", "mu = 0.3");
  jyParamSetting rope[] = {{"e", -0.1}};
  ok(jy_system_add_part(sys, "rope", "r", rope, 1).index < 0, "rope e = -0.1 refused");
  SAYS(jy_system_error(sys), "the message names the domain", "e = -0.1", ">= 0");
  jy_system_destroy(sys);
}

/* The rows a simulation writes: the times and one column of the rows that repeat a time (an
 * event's row before and after), up to 128, and the last row. */
typedef struct Rows {
  int column, count;
  double t[128], value[128], prev_t, last[64];
} Rows;

static int collect(void *ud, const double *row, int nchannels) {
  Rows *r = ud;
  if (row[0] == r->prev_t && r->count < 128) {
    r->t[r->count] = row[0];
    r->value[r->count++] = row[r->column];
  }
  r->prev_t = row[0];
  memcpy(r->last, row, sizeof(double) * (size_t)(nchannels < 64 ? nchannels : 64));
  return 0;
}

/* Runs the system to t_end with the default settings, the rows into r (column by name). */
static jyStatus run(jySystem *sys, double t_end, const char *column, Rows *r, jyModel **md,
                    jyFormulation formulation, char *error, size_t len) {
  *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  memset(r, 0, sizeof *r);
  r->prev_t = NAN;
  if (!*md) return JY_ERR_INVALID;
  r->column = jy_model_find_channel(*md, column);
  jySimDef def = jy_default_sim_def();
  def.t_end = t_end;
  def.formulation = formulation;
  def.columns = "*"; /* every channel: the rows are indexed as the model's channels */
  jyStatus st;
  jySim *sim = jy_sim_create(*md, &def, &st);
  if (sim && st == JY_OK) st = jy_sim_run(sim, collect, r);
  snprintf(error, len, "%s", sim ? jy_sim_error(sim) : "");
  jy_sim_destroy(sim);
  return st;
}

static void check_bouncing_ball(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId ball = PART(sys, "mass", "ball", {"dim", 2}, {"m", 1});
  jyPartId fl = PART(sys, "floor", "floor", {"e", 0.8});
  stage_glue(sys, fl, "pos", ball, "pos", "touch");
  jy_system_set_coord(sys, ball, "y", 1);
  Rows r;
  jyModel *md;
  char why[JY_ERROR_LEN];
  jyStatus st = run(sys, 6, "impulse.floor", &r, &md, JY_FORMULATION_UK, why, sizeof why);
  ok(st == JY_OK, "bouncing ball: ran to t_end %s", why);
  double g = 9.81, e = 0.8, t = sqrt(2 / g), v = sqrt(2 * g), worst = 0;
  int k = 0;
  for (int i = 0; i < r.count && k < 5; i++) {
    if (r.value[i] == 0) continue; /* the rows before */
    worst = fmax(worst, fabs(r.t[i] - t));
    is_near(r.value[i], (1 + e) * v, 1e-7, "the impulse (1 + e) m v of each impact");
    v *= e, t += 2 * v / g, k++;
  }
  ok(k == 5 && worst <= 1e-9, "five impact times on the closed form (worst %.2g s)", worst);
  int y = stage_coord(md, "ball.y");
  ok(y >= 0 && fabs(r.last[1 + y]) <= 1e-12 && fabs(r.last[1 + md->n + y]) <= 1e-12,
     "at rest on the floor at t_end (the contact closed after the bounces)");
  jy_model_destroy(md);
  sys = jy_system_create(env);
  ball = PART(sys, "mass", "ball", {"dim", 2}, {"m", 1});
  fl = PART(sys, "floor", "floor", {"e", 0.8});
  stage_glue(sys, fl, "pos", ball, "pos", "touch");
  st = run(sys, 1, "t", &r, &md, JY_FORMULATION_NP, why, sizeof why);
  ok(st != JY_OK, "refused under Natsiavas-Paraskevopoulos");
  SAYS(why, "the message names the part and the formulation", "'floor'", "Udwadia-Kalaba");
  jy_model_destroy(md);
}

static void check_stick_slip(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId wall = PART(sys, "ground", "wall", {"dim", 2});
  jyPartId block = PART(sys, "mass", "block", {"dim", 2}, {"m", 1});
  jyPartId spring = PART(sys, "spring", "spring", {"dim", 2}, {"k", 100}, {"L", 0});
  jyPartId guide = PART(sys, "guide", "level", {"mu", 0.3});
  stage_glue(sys, spring, "a", wall, "pos", "sa");
  stage_glue(sys, spring, "b", block, "pos", "sb");
  stage_glue(sys, guide, "pos", block, "pos", "on");
  jy_system_set_coord(sys, block, "x", 0.5);
  Rows r;
  jyModel *md;
  char why[JY_ERROR_LEN];
  jyStatus st = run(sys, 5, "block.x", &r, &md, JY_FORMULATION_UK, why, sizeof why);
  ok(st == JY_OK, "stick-slip: ran to t_end %s", why);
  double step = 2 * 0.3 * 9.81 / 100, wt = 0, wx = 0;
  for (int k = 1; k <= r.count; k++) {
    wt = fmax(wt, fabs(r.t[k - 1] - k * 3.14159265358979323846 / 10));
    wx = fmax(wx, fabs(r.value[k - 1] - (k % 2 ? -1 : 1) * (0.5 - k * step)));
  }
  ok(r.count == 8 && wt <= 1e-9 && wx <= 1e-7,
     "eight turning points on the closed form (%d; worst %.2g s, %.2g m)", r.count, wt, wx);
  int x = stage_coord(md, "block.x");
  is_near(r.last[1 + x], 0.5 - 8 * step, 1e-7, "it sticks at the eighth and stays to t_end");
  is_near(r.last[1 + md->n + x], 0, 1e-12, "at rest at t_end");
  jy_model_destroy(md);
}

static void check_floor_friction(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId block = PART(sys, "mass", "block", {"dim", 2}, {"m", 1});
  jyPartId fl = PART(sys, "floor", "floor", {"e", 0}, {"mu", 0.3});
  stage_glue(sys, fl, "pos", block, "pos", "on");
  jy_system_set_coord(sys, block, "y", 0.2);
  jy_system_set_velocity(sys, block, "x", 1);
  Rows r;
  jyModel *md;
  char why[JY_ERROR_LEN];
  jyStatus st = run(sys, 1, "block.x", &r, &md, JY_FORMULATION_UK, why, sizeof why);
  ok(st == JY_OK && r.count == 2, "floor with friction: lands, slides, sticks (%d events) %s",
     r.count, why);
  double land = sqrt(0.4 / 9.81), stop = land + 1 / (0.3 * 9.81);
  is_near(r.t[0], land, 1e-9, "lands at sqrt(2 h / g)");
  is_near(r.t[1], stop, 1e-9, "stops at t_land + v0 / (mu g)");
  is_near(r.value[1], land + 1 / (2 * 0.3 * 9.81), 1e-7, "where v0 t_land + v0^2 / (2 mu g)");
  jy_model_destroy(md);
}

/* A block launched at 2 m/s up a 30 degree incline (mu = 0.2, mu_s = 0.4 < tan 30): it stops
 * at v0 / (g (sin a + mu cos a)) and slides back at once (the slip's residual velocity of
 * rounding size must not be taken for the end of the new slide). */
static void check_incline_slip(jyEnv *env) {
  const double a = 3.14159265358979323846 / 6, g = 9.81, v0 = 2;
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -g, 0});
  jyPartId block = PART(sys, "mass", "block", {"dim", 2}, {"m", 1});
  jyPartId guide =
    PART(sys, "guide", "incline", {"nx", -sin(a)}, {"ny", cos(a)}, {"mu", 0.2}, {"mu_s", 0.4});
  stage_glue(sys, guide, "pos", block, "pos", "on");
  jy_system_set_velocity(sys, block, "x", v0 * cos(a));
  jy_system_set_velocity(sys, block, "y", v0 * sin(a));
  Rows r;
  jyModel *md;
  char why[JY_ERROR_LEN];
  jyStatus st = run(sys, 1, "block.x", &r, &md, JY_FORMULATION_UK, why, sizeof why);
  double up = g * (sin(a) + 0.2 * cos(a)), down = g * (sin(a) - 0.2 * cos(a));
  double ts = v0 / up, s_max = v0 * v0 / (2 * up), dt = 1 - ts;
  ok(st == JY_OK && r.count == 1, "incline: one event (stops, slips back) %s", why);
  is_near(r.t[0], ts, 1e-9, "stops at v0 / (g (sin a + mu cos a))");
  int x = stage_coord(md, "block.x");
  is_near(r.last[1 + x], (s_max - 0.5 * down * dt * dt) * cos(a), 1e-7,
          "slides back with g (sin a - mu cos a) to t_end");
  jy_model_destroy(md);
}

int main(void) {
  jyEnv *env = stage_env();
  if (!env) return 1;
  check_two_masses(env, 1, 0);
  check_two_masses(env, 0, 0);
  check_two_masses(env, 0, 1);
  check_two_masses(env, 1, 1);
  check_pendulum_wall(env, 1);
  check_pendulum_wall(env, 0);
  check_inactive_rows(env);
  check_set_param(env);
  check_bad_params(env);
  check_bouncing_ball(env);
  check_stick_slip(env);
  check_floor_friction(env);
  check_incline_slip(env);
  jy_env_destroy(env);
  printf("1..%d\n", tap_count);
  return done();
}

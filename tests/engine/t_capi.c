/* The C API without Lua: the SICM spring chain built and run through the public headers
 * alone, checked against the exact modal solution of the seed's (1.211)-(1.212). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

enum { M1, K1, X1, M2, K2, X2 };
static const double P[] = {1.0, 100.0, 1.0, 2.0, 50.0, 1.0};
static const double LEFT_X0 = 0.1;

/* (m1 + m2) x1'' + m2 x2'' + k1 x1 = 0 and m2 (x1'' + x2'') + k2 x2 = 0: two normal modes
 * of K phi = w^2 M phi with M = [[m1+m2, m2], [m2, m2]], K = diag(k1, k2). */
static void exact(double t, double *x1, double *x2) {
  double m1 = P[M1], m2 = P[M2], k1 = P[K1], k2 = P[K2];
  double a = m1 * m2, b = -(k1 * m2 + k2 * (m1 + m2)), c = k1 * k2;
  double disc = sqrt(b * b - 4 * a * c);
  double s[2] = {(-b - disc) / (2 * a), (-b + disc) / (2 * a)}; /* w^2 */
  double shape[2];                                              /* phi = (1, shape) */
  for (int i = 0; i < 2; i++) shape[i] = (k1 - s[i] * (m1 + m2)) / (s[i] * m2);
  /* x(0) = c0 (1, shape0) + c1 (1, shape1) = (LEFT_X0, 0), at rest */
  double c1 = -LEFT_X0 * shape[0] / (shape[1] - shape[0]), c0 = LEFT_X0 - c1;
  double w0 = sqrt(s[0]), w1 = sqrt(s[1]);
  *x1 = c0 * cos(w0 * t) + c1 * cos(w1 * t);
  *x2 = c0 * shape[0] * cos(w0 * t) + c1 * shape[1] * cos(w1 * t);
}

typedef struct check {
  int ix1, ix2, rows;
  double worst;
} check;

static int compare_row(void *ud, const double *row, int nchannels) {
  check *c = ud;
  (void)nchannels;
  double x1, x2;
  exact(row[0], &x1, &x2);
  double err = fmax(fabs(row[c->ix1] - x1), fabs(row[c->ix2] - x2));
  if (err > c->worst) c->worst = err;
  c->rows++;
  return 0;
}

/* jy_pick_names's callback: the indices in the order picked. */
typedef struct picks {
  int n, k[8];
} picks;

static int note_pick(void *ud, int k) {
  picks *p = ud;
  if (p->n < 8) p->k[p->n] = k;
  p->n++;
  return 0;
}

/* Globs over a list of names (what run --columns and plot --y share). */
static void test_pick_names(void) {
  const char *const names[] = {"t", "p1.theta", "p2.theta", "energy"};
  picks p = {0};
  int n = jy_pick_names(" p?.theta , energy,t", names, 4, note_pick, &p, NULL);
  ok(n == 3 && p.n == 4 && p.k[0] == 1 && p.k[1] == 2 && p.k[2] == 3 && p.k[3] == 0,
     "3 patterns pick p1.theta, p2.theta, energy, t in pattern order (%d patterns)", n);
  jyNameMiss miss = {NULL, 0, -2};
  p.n = 0;
  n = jy_pick_names("energy,p*.thta", names, 4, note_pick, &p, &miss);
  ok(n == -1 && miss.len == 7 && strncmp(miss.pattern, "p*.thta", 7) == 0 && miss.nearest == 1,
     "a pattern matching nothing: -1, the pattern and the nearest name (%d)", miss.nearest);
  p.n = 0;
  ok(jy_pick_names(" , ", names, 4, note_pick, &p, NULL) == 0 && p.n == 0,
     "blank patterns: none, nothing picked");
}

int main(void) {
  plan(15);
  test_pick_names();
  jyEnv *env = jy_env_create(NULL);
  ok(env && jy_components_register(env) == JY_OK, "environment with the built-in parts");
  jySystem *sys = jy_system_create(env);

  jyPartId ground = jy_system_add_part(sys, "ground", "wall", (jyParamSetting[]){{"dim", 1}}, 1);
  jyPartId left = jy_system_add_part(
    sys, "spring_mass", "left", (jyParamSetting[]){{"m", P[M1]}, {"k", P[K1]}, {"X", P[X1]}}, 3);
  jyPartId right = jy_system_add_part(
    sys, "spring_mass", "right", (jyParamSetting[]){{"m", P[M2]}, {"k", P[K2]}, {"X", P[X2]}}, 3);
  ok(ground.index >= 0 && left.index >= 0 && right.index >= 0, "three parts added: %s",
     jy_system_error(sys));
  jy_system_set_coord(sys, left, "x", LEFT_X0);
  jy_system_set_coord(sys, right, "x", 0.0);
  jyStatus g1 = jy_system_glue(sys, jy_system_terminal(sys, left, "base"),
                               jy_system_terminal(sys, ground, "pos"), "wall");
  jyStatus g2 = jy_system_glue(sys, jy_system_terminal(sys, right, "base"),
                               jy_system_terminal(sys, left, "tip"), "joint");
  ok(g1 == JY_OK && g2 == JY_OK, "glued left.base to the wall and right.base to left.tip");

  jyModel *model = NULL;
  jyStatus st = jy_model_compile(sys, NULL, &model);
  ok(st == JY_OK, "model compiles: %s", jy_system_error(sys));
  jy_system_destroy(sys); /* the model must not need its system any more */
  if (!model) return done() || 1;
  ok(jy_model_num_coords(model) == 4 && jy_model_num_rows(model) == 2,
     "4 coordinates (xi, x per part) and 2 glue rows");
  /* right.xi must have been assembled to left.xi + X1 + left.x = 1.1 */
  int ixi = jy_model_find_coord(model, "right.xi");
  is_near(jy_model_initial_q(model)[ixi], P[X1] + LEFT_X0, 1e-12,
          "initial assembly puts right.xi at left.tip");

  jySimDef def = jy_default_sim_def();
  def.rtol = 1e-10;
  def.atol = 1e-12;
  def.t_end = 10;
  def.dt_out = 0.01;
  jySim *sim = jy_sim_create(model, &def, &st);
  check c = {jy_model_find_channel(model, "left.x"), jy_model_find_channel(model, "right.x"), 0, 0};
  st = st == JY_OK ? jy_sim_run(sim, compare_row, &c) : st;
  ok(st == JY_OK && c.rows == 1001, "ran 10 s with 1001 output rows: %s", jy_sim_error(sim));
  /* The bound: 1e-7 m at rtol 1e-10, atol 1e-12 (global error of CVODE over ~16
   * periods of the fast mode stays a few hundred times atol). */
  ok(c.worst < 1e-7, "left.x and right.x within 1e-7 m of the modal solution");
  diag("worst deviation from the exact solution: %.3g m over %d rows", c.worst, c.rows);
  jySimStats stats = jy_sim_stats(sim);
  diag("steps %ld, rhs evaluations %ld", stats.steps, stats.rhs_evals);

  /* A second simulation of the same model gives the same answer (no shared state). */
  jySim *again = jy_sim_create(model, &def, &st);
  check c2 = c;
  c2.rows = 0;
  c2.worst = 0;
  st = jy_sim_run(again, compare_row, &c2);
  ok(st == JY_OK && c2.worst == c.worst, "a second simulation of one model repeats the first");
  jy_sim_destroy(again);

  /* The output selection (jySimDef.columns) and decimation (every) from C. */
  jySimDef sel = def;
  char patterns[] = "right.x, left.?";
  sel.columns = patterns;
  sel.every = 100;
  jySim *chosen = jy_sim_create(model, &sel, &st);
  patterns[0] = '\0'; /* read by jy_sim_create only */
  int ncols = jy_sim_num_columns(chosen);
  ok(st == JY_OK && ncols == 3 && jy_sim_column(chosen, 0) == 0 &&
       jy_sim_column(chosen, 1) == c.ix2 && jy_sim_column(chosen, 2) == c.ix1,
     "columns 'right.x, left.?': t, right.x, left.x (%d columns)", ncols);
  check c3 = {2, 1, 0, 0};
  st = st == JY_OK ? jy_sim_run(chosen, compare_row, &c3) : st;
  ok(st == JY_OK && c3.rows == 11 && c3.worst <= c.worst,
     "every = 100: 11 of the 1001 rows, the selected columns where the row puts them");
  jy_sim_destroy(chosen);
  sel.columns = "left.*,nothing?here";
  chosen = jy_sim_create(model, &sel, &st);
  ok(st == JY_ERR_INVALID &&
       strstr(jy_sim_error(chosen), "'nothing?here' matches no output channel"),
     "a pattern matching nothing: %s", jy_sim_error(chosen));
  jy_sim_destroy(chosen);
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(env);
  return done();
}

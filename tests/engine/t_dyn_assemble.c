/* tests/engine/t_dyn_assemble.c — the assembly stage alone (engine/src/dyn_assemble.c:
 * jy_assemble, jy_residual_norms), its global M, Q, A, b, residuals and rates against
 * hand-written values at states off the constraint manifold:
 *   1. two point masses and a spring between them, glue kept: M = diag(m1, m1, m2, m2, 0...),
 *      Q = weights and the spring's +-k (len - L) u on its ends, glue rows [I, -I], b = 0;
 *   2. a pendulum part (M = m J^T J, singular, Q = m J^T (g - gamma)) hung from a ground by
 *      rows, with a rod and a spring whose ends are eliminated onto its bob: the mapped path,
 *      where the rod's row becomes u^T J with b = b_rod - u . gamma and the spring's force
 *      J^T (-f u); only what is asked is filled; the norms of the residuals; no allocation;
 *   3. two pendulums whose pivots follow in a chain: M and Q of Lagrange's double pendulum;
 *   4. a part function that fails, or returns a value that is not finite: JY_ERR_PART naming
 *      the part, its type, the function and the time.
 * Tolerance: the engine and these formulas compute the same values in another order;
 * entries are at most ~100 in size, so 1e-12 absolute is tens of ulps: room for the order,
 * far below any wrong term (the smallest term checked is ~0.1). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "count_malloc.h"
#include "internal.h"
#include "stage_fixtures.h"
#include "tap.h"

#define ENTRY_TOL 1e-12 /* see the head comment */

/* The largest |got - want| over count values (column-major blocks compare the same way). */
static double max_diff(const double *got, const double *want, int count) {
  double worst = 0;
  for (int i = 0; i < count; i++) worst = fmax(worst, fabs(got[i] - want[i]));
  return worst;
}

static void expect_block(const double *got, const double *want, int count, const char *what) {
  is_near(max_diff(got, want, count), 0, ENTRY_TOL, what);
}

static const double gravity[3] = {0, -9.81, 0};

/* 1. m1 (1.5 kg) -- spring (k 40, L 0.5) -- m2 (0.5 kg), in the plane, glue kept. */
static void check_spring_and_masses(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, gravity);
  jyPartId m1 = PART(sys, "mass", "m1", {"dim", 2}, {"m", 1.5});
  jyPartId m2 = PART(sys, "mass", "m2", {"dim", 2}, {"m", 0.5});
  jyPartId spring = PART(sys, "spring", "spring", {"dim", 2}, {"k", 40}, {"L", 0.5});
  stage_glue(sys, spring, "a", m1, "pos", "a");
  stage_glue(sys, spring, "b", m2, "pos", "b");
  jy_system_set_coord(sys, m2, "x", 0.6);
  jy_system_set_coord(sys, m2, "y", 0.8);
  jyModel *md;
  jyEval *e = stage_eval(sys, 0, &md);
  if (!ok(e && md->n == 8 && md->m == 4, "masses and spring: 8 coordinates, 4 glue rows")) {
    stage_free(e, md);
    return;
  }
  /* m1 x y, m2 x y, spring ax ay bx by: every end off its mass */
  const double q[8] = {0.1, -0.2, 0.7, 0.9, 0.05, -0.1, 0.8, 1.0};
  const double v[8] = {0.3, -0.4, 0.2, 0.1, -0.5, 0.6, 0.7, -0.8};
  jyStatus st = jy_assemble(e, q, v, 0.25,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                              JY_ASM_RESIDUALS);
  ok(st == JY_OK, "assembled");
  double mass[64] = {0}, force[8] = {0}, jac[32] = {0}, rhs[4] = {0}, res[4], rate[4];
  mass[0 + 0 * 8] = mass[1 + 1 * 8] = 1.5;
  mass[2 + 2 * 8] = mass[3 + 3 * 8] = 0.5;
  double dx = q[6] - q[4], dy = q[7] - q[5], len = hypot(dx, dy), f = 40 * (len - 0.5);
  double fu[2] = {f * dx / len, f * dy / len}; /* the tension pulls end a toward b */
  const double want_force[8] = {0, 1.5 * -9.81, 0, 0.5 * -9.81, fu[0], fu[1], -fu[0], -fu[1]};
  memcpy(force, want_force, sizeof force);
  for (int c = 0; c < 2; c++) { /* glue a: spring.a - m1.pos; glue b: spring.b - m2.pos */
    jac[c + (4 + c) * 4] = 1, jac[c + c * 4] = -1;
    jac[2 + c + (6 + c) * 4] = 1, jac[2 + c + (2 + c) * 4] = -1;
    res[c] = q[4 + c] - q[c], res[2 + c] = q[6 + c] - q[2 + c];
    rate[c] = v[4 + c] - v[c], rate[2 + c] = v[6 + c] - v[2 + c];
  }
  expect_block(e->mass, mass, 64, "M = diag(1.5, 1.5, 0.5, 0.5, 0, 0, 0, 0)");
  ok(e->mass_diagonal, "... and the assembly knows it is diagonal");
  expect_block(e->force, force, 8, "Q: weights on the masses, +-k (len - L) u on the ends");
  double zero[8] = {0};
  expect_block(e->nonideal, zero, 8, "C = 0 (ideal parts only)");
  expect_block(e->jac, jac, 32, "A: glue rows [I on the spring's end, -I on the mass]");
  expect_block(e->rhs, rhs, 4, "b = 0 (terminals linear in q)");
  expect_block(e->residual, res, 4, "residuals: end minus mass position");
  expect_block(e->rate, rate, 4, "rates: end minus mass velocity");
  double pos, vel;
  jy_residual_norms(e, &pos, &vel);
  is_near(pos, sqrt(res[0] * res[0] + res[1] * res[1] + res[2] * res[2] + res[3] * res[3]),
          ENTRY_TOL, "position residual norm: |residuals| over position rows");
  is_near(vel, sqrt(rate[0] * rate[0] + rate[1] * rate[1] + rate[2] * rate[2] + rate[3] * rate[3]),
          ENTRY_TOL, "velocity residual norm: |rates| of position rows");

  /* Only what is asked: a constraints-only assembly leaves M and Q as they were. */
  e->mass[1] = 42, e->force[0] = 43;
  st = jy_assemble(e, q, v, 0.25, JY_ASM_CONSTRAINTS);
  ok(st == JY_OK && e->mass[1] == 42 && e->force[0] == 43 && max_diff(e->jac, jac, 32) == 0,
     "JY_ASM_CONSTRAINTS fills A and b only");
  long before = process_allocations;
  for (int k = 0; k < 100; k++) jy_assemble(e, q, v, 0.25, JY_ASM_MASS | JY_ASM_FORCE);
  ok(!WRAP_MALLOC || process_allocations == before,
     "100 assemblies allocate nothing (%ld malloc calls%s)", process_allocations - before,
     WRAP_MALLOC ? "" : "; not counted under ASan");
  stage_free(e, md);
}

/* The pendulum's bob at (px, py, theta) and its Jacobian (2 x 3) and bias gamma = J' v. */
typedef struct bob_kin {
  double pos[2], jac[6], gamma[2], vel[2];
} bob_kin;
static bob_kin bob_at(const double *q, const double *v, double l) {
  double s = sin(q[2]), c = cos(q[2]), w = v[2];
  bob_kin b = {{q[0] + l * s, q[1] - l * c},
               {1, 0, 0, 1, l * c, l * s},
               {-l * s * w * w, l * c * w * w},
               {0, 0}};
  for (int j = 0; j < 3; j++) {
    b.vel[0] += b.jac[0 + 2 * j] * v[j];
    b.vel[1] += b.jac[1 + 2 * j] * v[j];
  }
  return b;
}

/* A pendulum (m 2, l 1.5) on a ground at the origin; a rod (L 1.2) from a ground at (1, 0)
 * and a spring (k 30, L 0.8) from a ground at (-1, 0), both ends eliminated onto the bob. */
static jyModel *pendulum_model(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, gravity);
  jyPartId g0 = PART(sys, "ground", "g0", {"dim", 2});
  jyPartId g1 = PART(sys, "ground", "g1", {"dim", 2}, {"x", 1});
  jyPartId g2 = PART(sys, "ground", "g2", {"dim", 2}, {"x", -1});
  jyPartId p = PART(sys, "pendulum_rows", "p", {"m", 2}, {"l", 1.5});
  jyPartId rod = PART(sys, "rod", "rod", {"dim", 2}, {"L", 1.2});
  jyPartId spring = PART(sys, "spring", "spring", {"dim", 2}, {"k", 30}, {"L", 0.8});
  stage_glue(sys, p, "pivot", g0, "pos", "pivot");
  stage_glue(sys, rod, "a", g1, "pos", "rod.a");
  stage_glue(sys, rod, "b", p, "bob", "rod.b");
  stage_glue(sys, spring, "a", g2, "pos", "spring.a");
  stage_glue(sys, spring, "b", p, "bob", "spring.b");
  jy_system_guess_coord(sys, p, "theta", 0.4);
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  return md;
}

/* 2. The mapped path: M and Q of a configuration-dependent singular mass, a rod row and a
 * spring force carried through the bob's Jacobian and bias. */
static void check_pendulum_mapped(jyEnv *env) {
  jyModel *md = pendulum_model(env);
  jyEval *e = md ? jy_eval_create(md) : NULL;
  if (!ok(e && md->n == 3 && md->m == 3 && md->nlinks == 4,
          "pendulum with eliminated rod and spring: 3 coordinates, rows rod.length + pivot")) {
    stage_free(e, md);
    return;
  }
  const double q[3] = {0.1, 0.2, 0.3}, v[3] = {-0.3, 0.4, 2.0}, m = 2, l = 1.5;
  jyStatus st = jy_assemble(e, q, v, 1.5,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                              JY_ASM_RESIDUALS);
  ok(st == JY_OK, "assembled");
  bob_kin b = bob_at(q, v, l);
  double mass[9], force[3], jac[9] = {0}, rhs[3] = {0}, res[3], rate[3];
  /* spring from (-1, 0) to the bob: force -f u on the bob */
  double sd[2] = {b.pos[0] + 1, b.pos[1]}, slen = hypot(sd[0], sd[1]), f = 30 * (slen - 0.8);
  double on_bob[2] = {m * (gravity[0] - b.gamma[0]) - f * sd[0] / slen,
                      m * (gravity[1] - b.gamma[1]) - f * sd[1] / slen};
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < 3; i++)
      mass[i + 3 * j] = m * (b.jac[2 * i] * b.jac[2 * j] + b.jac[1 + 2 * i] * b.jac[1 + 2 * j]);
    force[j] = b.jac[2 * j] * on_bob[0] + b.jac[1 + 2 * j] * on_bob[1];
  }
  /* rod from (1, 0) to the bob: row u^T J, b = -(|d'|^2 - (u . d')^2) / len - u . gamma */
  double d[2] = {b.pos[0] - 1, b.pos[1]}, len = hypot(d[0], d[1]);
  double u[2] = {d[0] / len, d[1] / len}, ud = u[0] * b.vel[0] + u[1] * b.vel[1];
  double vv = b.vel[0] * b.vel[0] + b.vel[1] * b.vel[1];
  for (int j = 0; j < 3; j++) jac[0 + 3 * j] = u[0] * b.jac[2 * j] + u[1] * b.jac[1 + 2 * j];
  rhs[0] = -(vv - ud * ud) / len - (u[0] * b.gamma[0] + u[1] * b.gamma[1]);
  res[0] = len - 1.2, rate[0] = ud;
  /* glue pivot: p.pivot - g0.pos */
  jac[1 + 3 * 0] = jac[2 + 3 * 1] = 1;
  res[1] = q[0], res[2] = q[1], rate[1] = v[0], rate[2] = v[1];
  expect_block(e->mass, mass, 9, "M = m J^T J (singular: the pivot carries no mass)");
  ok(!e->mass_diagonal, "... not diagonal");
  expect_block(e->force, force, 3, "Q = J^T (m (g - gamma) - f u): weight, bias and spring");
  expect_block(e->jac, jac, 9, "A: rod row u^T J through the bob, pivot rows [I 0]");
  expect_block(e->rhs, rhs, 3, "b: the rod's -(|d'|^2 - (u.d')^2)/len less u . gamma; 0");
  expect_block(e->residual, res, 3, "residuals: len - L, then the pivot's offset");
  expect_block(e->rate, rate, 3, "rates: u . d', then the pivot's velocity");
  stage_free(e, md);
}

/* 3. A chain: two stock pendulums, p2 hung from p1's bob, p1 from a ground. Both pivots
 * follow (p2's through p1's), so the model is the two angles with no rows, and G^T M G and
 * G^T (Q - M g) must be Lagrange's double pendulum:
 *   M = [(m1 + m2) l1^2, m2 l1 l2 c; m2 l1 l2 c, m2 l2^2], c = cos(th1 - th2),
 *   Q = [-(m1 + m2) g l1 sin th1 - m2 l1 l2 s w2^2, -m2 g l2 sin th2 + m2 l1 l2 s w1^2].
 * The links form a tree: by default the tree recursion solves it without forming M, and its
 * acceleration must be M^-1 Q. */
static jySystem *double_pendulum(jyEnv *env, double m1, double l1, double m2, double l2) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, gravity);
  jyPartId ground = PART(sys, "ground", "g", {"dim", 2});
  jyPartId p1 = PART(sys, "pendulum", "p1", {"m", m1}, {"l", l1});
  jyPartId p2 = PART(sys, "pendulum", "p2", {"m", m2}, {"l", l2});
  stage_glue(sys, p1, "pivot", ground, "pos", "pivot1");
  stage_glue(sys, p2, "pivot", p1, "bob", "pivot2");
  return sys;
}

static void check_pendulum_chain(jyEnv *env) {
  const double m1 = 1.5, l1 = 0.8, m2 = 0.7, l2 = 1.3, g = -gravity[1];
  const double q[2] = {0.3, -0.5}, v[2] = {0.7, -1.1};
  double c = cos(q[0] - q[1]), s = sin(q[0] - q[1]);
  double mass[4] = {(m1 + m2) * l1 * l1, m2 * l1 * l2 * c, m2 * l1 * l2 * c, m2 * l2 * l2};
  double force[2] = {-(m1 + m2) * g * l1 * sin(q[0]) - m2 * l1 * l2 * s * v[1] * v[1],
                     -m2 * g * l2 * sin(q[1]) + m2 * l1 * l2 * s * v[0] * v[0]};
  jyModel *md;
  jyEval *e = stage_eval(double_pendulum(env, m1, l1, m2, l2), 1 | STAGE_NO_TREE, &md);
  if (ok(e && md->n == 2 && md->m == 0 && md->nlinks == 2 && md->chain_depth == 2 && !md->tree,
         "two pendulums in a chain, tree_recursion off: 2 coordinates, no rows, 2 links 2 "
         "deep")) {
    ok(jy_assemble(e, q, v, 0, JY_ASM_MASS | JY_ASM_FORCE) == JY_OK && e->mass, "assembled");
    expect_block(e->mass, mass, 4, "M = G^T M_loc G: the double pendulum's");
    expect_block(e->force, force, 2, "Q = G^T (Q_loc - M_loc g): gravity and the velocity terms");
  }
  stage_free(e, md);
  e = stage_eval(double_pendulum(env, m1, l1, m2, l2), 1, &md);
  if (ok(e && md->n == 2 && md->m == 0 && md->tree, "... by default a tree model")) {
    double acc[2], det = mass[0] * mass[3] - mass[1] * mass[2];
    double want[2] = {(mass[3] * force[0] - mass[1] * force[1]) / det,
                      (mass[0] * force[1] - mass[2] * force[0]) / det};
    ok(jy_eval_acceleration(e, q, v, 0, acc) == JY_OK, "the recursion's acceleration");
    /* a 2 x 2 solve, condition ~10 here: rounding far below 1e-13 of the size */
    expect_block(acc, want, 2, "... M^-1 Q, Lagrange's");
    ok(jy_assemble(e, q, v, 0, JY_ASM_MASS) == JY_ERR_INVALID,
       "... an assembly of M on a tree model is refused (it keeps no G), not silently empty");
  }
  stage_free(e, md);
}

/* A 1-D mass whose force fails beyond x = 5 and is not finite below x = -5. */
static int flaky_force(const jyPartInstance *self, const jyPartState *s, double *force) {
  (void)self;
  if (s->q[0] > 5) {
    snprintf(s->error, s->error_len, "x = %g is too far", s->q[0]);
    return 1;
  }
  force[0] = s->q[0] < -5 ? NAN : -s->q[0];
  return 0;
}

/* 4. Part failures through the assembly: JY_ERR_PART, the part, type, function and time. */
static void check_part_failures(jyEnv *env) {
  const jyPartType *mass = jy_env_find_type(env, "mass");
  static jyPartType flaky; /* registered by pointer: it must outlive the environment */
  flaky = *mass;
  flaky.name = "flaky";
  flaky.force = flaky_force;
  flaky.energy = NULL;
  if (!ok(jy_env_register(env, &flaky) == JY_OK, "a flaky 1-D mass registered")) return;
  jySystem *sys = jy_system_create(env);
  PART(sys, "flaky", "fl", {"dim", 1});
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  if (!ok(e != NULL, "it compiles at x = 0")) {
    stage_free(e, md);
    return;
  }
  double q = 6, v = 0;
  ok(jy_assemble(e, &q, &v, 0.5, JY_ASM_FORCE) == JY_ERR_PART, "a failing force: JY_ERR_PART");
  SAYS(e->error, "... naming part, type, function, its reason and the time",
       "part 'fl' (flaky), force: x = 6 is too far at t = 0.5");
  q = -6;
  ok(jy_assemble(e, &q, &v, 0.75, JY_ASM_FORCE) == JY_ERR_PART, "a NaN force: JY_ERR_PART");
  SAYS(e->error, "... naming part, type, function and the time",
       "part 'fl' (flaky), force: returned a value that is not finite at t = 0.75");
  q = -6;
  ok(jy_assemble(e, &q, &v, 0.75, JY_ASM_MASS) == JY_OK && e->mass[0] == 1,
     "the mass alone does not call the force");
  stage_free(e, md);
}

int main(void) {
  plan(38);
  jyEnv *env = stage_env();
  if (!env) {
    ok(0, "environment with the components");
    return done();
  }
  check_spring_and_masses(env);
  check_pendulum_mapped(env);
  check_pendulum_chain(env);
  check_part_failures(env);
  jy_env_destroy(env);
  return done();
}

/* tests/engine/t_int_project.c — the projection stage alone (engine/src/int_project.c:
 * jy_project_state, jy_project_error): a state off the constraint manifold comes back onto
 * it with the least kinetic-energy (M-weighted) change, in closed form:
 *   1. two masses (1 and 3 kg) on a line held 1 m apart by a rod: a stretch d is shared
 *      3:1 so the centre of mass stays; the velocities take the momentum's common value;
 *      an error estimate loses exactly its component across the manifold;
 *   2. a mass on a rod of length 1 from the origin: the nearest point on the circle,
 *      q / |q|, and the tangential part of the velocity;
 *   3. a pendulum part (singular M) whose pivot drifted off its ground: the pivot goes back
 *      and the arm turns by (px cos th + py sin th) / l, so the bob moves least;
 *   4. no rows: nothing to do; a rod whose ends coincide: the part failure, named;
 *   5. JY_PROJ_KEEP_CLOSE (an explicit method's step end): on the circle, a q whose
 *      correction is within eps in every weighted coordinate stays bit for bit and the
 *      velocity loses its radial part at that q; one beyond eps is projected as in 2; the
 *      same close q without the flag is projected;
 *   6. the step-end estimate (jy_project_estimate) in the sparse store, after a right-hand
 *      side at that state: the velocity correction is the radial part of v, -(u . v) u,
 *      with q close to the circle (both corrections from one solve) and farther (the rates
 *      at the corrected q: the same u).
 * Tolerance: every case converges in one step to a point the closed form gives exactly (the
 * rows are linear, or the step is radial on a circle), so the answers agree to rounding of
 * O(1) numbers, ~1e-15; 1e-12 leaves a margin of 1e3 and is far below the 1e-2 moves
 * checked. The weights (1e10) and eps (1) ask for corrections below 1e-10. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "stage_fixtures.h"
#include "tap.h"

#define PROJ_TOL 1e-12 /* see the head comment */

static double weights[8] = {1e10, 1e10, 1e10, 1e10, 1e10, 1e10, 1e10, 1e10};

/* 1. m1 = 1 kg and m2 = 3 kg on a line, a rod of length 1 between them (ends eliminated:
 * coordinates x1, x2 and the row x2 - x1 - 1 = 0). */
static void check_two_masses(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId m1 = PART(sys, "mass", "m1", {"dim", 1}, {"m", 1});
  jyPartId m2 = PART(sys, "mass", "m2", {"dim", 1}, {"m", 3});
  stage_rod_between(sys, m1, m2, 1, 1);
  jy_system_set_coord(sys, m2, "x", 1);
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  if (!ok(e && md->n == 2 && md->m == 1, "two masses and a rod: 2 coordinates, 1 row")) {
    stage_free(e, md);
    return;
  }
  double q[2] = {0.1, 1.3}, v[2] = {0.5, -0.3}; /* stretched by d = 0.2 */
  int iterations = -1;
  jyStatus st = jy_project_state(e, 0, q, v, weights, 1, 0, &iterations);
  ok(st == JY_OK && iterations >= 1, "projected (%d Gauss-Newton steps)", iterations);
  is_near(q[0], 0.1 + 0.2 * 3 / 4, PROJ_TOL, "x1 moves by d m2 / (m1 + m2) = 0.15");
  is_near(q[1], 1.3 - 0.2 * 1 / 4, PROJ_TOL, "x2 moves by -d m1 / (m1 + m2) = -0.05");
  is_near(v[0], (0.5 - 3 * 0.3) / 4, PROJ_TOL, "v1 = the common velocity of the momentum");
  is_near(v[1], (0.5 - 3 * 0.3) / 4, PROJ_TOL, "v2 = the same");
  /* err -= argmin dx^T M dx subject to J dx = J err, J = (-1, 1): what stays is the
   * momentum-weighted mean in both components. */
  double err_q[2] = {1, 0}, err_v[2] = {0, 2};
  st = jy_project_error(e, err_q, err_v);
  ok(st == JY_OK && fabs(err_q[0] - 0.25) <= PROJ_TOL && fabs(err_q[1] - 0.25) <= PROJ_TOL &&
       fabs(err_v[0] - 1.5) <= PROJ_TOL && fabs(err_v[1] - 1.5) <= PROJ_TOL,
     "error estimates keep their M-weighted mean: (1, 0) -> (0.25, 0.25), (0, 2) -> (1.5, 1.5)");
  stage_free(e, md);
}

/* 2. The circle: the nearest point and the tangential velocity; 4. a rod of length 0. */
static void check_circle(jyEnv *env) {
  jySystem *sys = stage_mass_on_rod(env, 1); /* a 2-D mass of 2 kg, a rod of length 1 */
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  if (!ok(e && md->n == 2 && md->m == 1, "mass on a rod: 2 coordinates, 1 row")) {
    stage_free(e, md);
    return;
  }
  double q[2] = {1.2, -0.9}, v[2] = {1, 1}; /* radius 1.5 */
  int iterations = -1;
  jyStatus st = jy_project_state(e, 0, q, v, weights, 1, 0, &iterations);
  ok(st == JY_OK && iterations >= 1, "projected (%d Gauss-Newton steps)", iterations);
  is_near(q[0], 0.8, PROJ_TOL, "x onto the circle: q / |q| = (0.8, -0.6)");
  is_near(q[1], -0.6, PROJ_TOL, "y onto the circle");
  /* u = (0.8, -0.6), u . v = 0.2: v - 0.2 u = (0.84, 1.12) */
  is_near(v[0], 0.84, PROJ_TOL, "vx: the radial part of (1, 1) removed");
  is_near(v[1], 1.12, PROJ_TOL, "vy: the radial part of (1, 1) removed");
  double err_q[2] = {0.8, -0.6}, err_v[2] = {0.6, 0.8}; /* radial, and tangential */
  st = jy_project_error(e, err_q, err_v);
  ok(st == JY_OK && hypot(err_q[0], err_q[1]) <= PROJ_TOL &&
       hypot(err_v[0] - 0.6, err_v[1] - 0.8) <= PROJ_TOL,
     "a radial error estimate vanishes, a tangential one stays");
  double at_pivot[2] = {0, 0}, still[2] = {0, 0};
  st = jy_project_state(e, 2.5, at_pivot, still, weights, 1, 0, &iterations);
  ok(st == JY_ERR_PART, "a state with the rod's ends together: JY_ERR_PART");
  SAYS(e->error, "... naming the rod, its function, why and when", "part 'rod' (rod)",
       "constraints", "the ends coincide", "t = 2.5");
  stage_free(e, md);
}

/* 3. A pendulum (m 2, l 1.5) whose pivot is glued to a ground at the origin: its M = m J^T J
 * is singular; the projection still moves the bob least. */
static void check_pendulum(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jyPartId ground = PART(sys, "ground", "ground", {"dim", 2});
  jyPartId p = PART(sys, "pendulum_rows", "p", {"m", 2}, {"l", 1.5});
  stage_glue(sys, p, "pivot", ground, "pos", "pivot");
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  if (!ok(e && md->n == 3 && md->m == 2, "pendulum part: 3 coordinates, 2 pivot rows")) {
    stage_free(e, md);
    return;
  }
  const double l = 1.5, px = 0.05, py = -0.03, th = 0.7, vpx = 0.2, vpy = 0.1, w = 1.3;
  double q[3] = {px, py, th}, v[3] = {vpx, vpy, w};
  int iterations = -1;
  jyStatus st = jy_project_state(e, 0, q, v, weights, 1, 0, &iterations);
  ok(st == JY_OK, "projected (%d Gauss-Newton steps)", iterations);
  ok(fabs(q[0]) <= PROJ_TOL && fabs(q[1]) <= PROJ_TOL, "the pivot is back on the ground");
  double th1 = th + (px * cos(th) + py * sin(th)) / l;
  is_near(q[2], th1, PROJ_TOL, "theta turns by (px cos th + py sin th) / l: the bob moves least");
  ok(fabs(v[0]) <= PROJ_TOL && fabs(v[1]) <= PROJ_TOL, "the pivot's velocity is removed");
  is_near(v[2], w + (vpx * cos(th1) + vpy * sin(th1)) / l, PROJ_TOL,
          "omega keeps the bob's velocity as far as the pivot allows");
  stage_free(e, md);
}

/* 4. A free mass: no rows, nothing moves. */
static void check_no_rows(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  PART(sys, "mass", "free", {"dim", 2});
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  double q[2] = {0.3, 0.4}, v[2] = {1, 2}, err_q[2] = {1, 1}, err_v[2] = {2, 2};
  int iterations = -1;
  ok(e && jy_project_state(e, 0, q, v, weights, 1, 0, &iterations) == JY_OK && iterations == 0 &&
       q[0] == 0.3 && q[1] == 0.4 && v[0] == 1 && v[1] == 2,
     "no rows: the state is left as it is, in 0 steps");
  ok(e && jy_project_error(e, err_q, err_v) == JY_OK && err_q[0] == 1 && err_v[1] == 2,
     "no rows: the error estimate is left as it is");
  stage_free(e, md);
}

/* 5. On the circle (weights 1e10, eps 1): radius 1 + 5e-11 asks a correction of 5e-11, 0.5
 * weighted: kept; 1 + 5e-10 asks 5 weighted: projected. */
static void check_keep_close(jyEnv *env) {
  jySystem *sys = stage_mass_on_rod(env, 1);
  jyModel *md;
  jyEval *e = stage_eval(sys, 1, &md);
  if (!ok(e && md->n == 2 && md->m == 1, "mass on a rod: 2 coordinates, 1 row")) {
    stage_free(e, md);
    return;
  }
  const double r_close = 1 + 5e-11, r_far = 1 + 5e-10;
  double q[2] = {0.8 * r_close, -0.6 * r_close}, v[2] = {1, 1};
  int iterations = -1;
  jyStatus st = jy_project_state(e, 0, q, v, weights, 1, JY_PROJ_KEEP_CLOSE, &iterations);
  ok(st == JY_OK && iterations == 0 && q[0] == 0.8 * r_close && q[1] == -0.6 * r_close,
     "keep close: a correction of 0.5 weighted leaves q as it is (%d steps)", iterations);
  /* the radial part of v at q itself: (1, 1) - 0.2 (0.8, -0.6) to 1e-12 */
  is_near(v[0], 0.84, PROJ_TOL, "... and v loses its radial part there: vx");
  is_near(v[1], 1.12, PROJ_TOL, "... vy");
  double far[2] = {0.8 * r_far, -0.6 * r_far}, v_far[2] = {1, 1};
  st = jy_project_state(e, 0, far, v_far, weights, 1, JY_PROJ_KEEP_CLOSE, &iterations);
  ok(st == JY_OK && iterations >= 1 && fabs(far[0] - 0.8) <= PROJ_TOL &&
       fabs(far[1] + 0.6) <= PROJ_TOL,
     "keep close: a correction of 5 weighted is made: q onto the circle (%d steps)", iterations);
  double plain[2] = {0.8 * r_close, -0.6 * r_close}, v_plain[2] = {1, 1};
  st = jy_project_state(e, 0, plain, v_plain, weights, 1, 0, &iterations);
  /* PROJ_TOL (1e-12) against the 4e-11 the close q is off by: moved, not kept */
  ok(st == JY_OK && iterations >= 1 && fabs(plain[0] - 0.8) <= PROJ_TOL &&
       fabs(plain[1] + 0.6) <= PROJ_TOL,
     "without the flag the close q is projected too (%d steps)", iterations);
  stage_free(e, md);
}

/* 6. See the head comment: the mass on a rod, its store path on. */
static void check_estimate(jyEnv *env) {
  jyModel *md;
  jyEval *e = stage_eval(stage_mass_on_rod(env, 1), 1 | STAGE_STORE, &md);
  if (!ok(e && e->store_solves && e->sparse, "mass on a rod, solved in the store")) {
    stage_free(e, md);
    return;
  }
  const double radius[2] = {1 + 5e-11, 1 + 5e-10}; /* corrections 0.5 and 5 weighted */
  for (int k = 0; k < 2; k++) {
    double q[2] = {0.8 * radius[k], -0.6 * radius[k]}, v[2] = {1, 1}, acc[2], q_work[2], dv[2];
    jyStatus st = jy_eval_acceleration(e, q, v, 0, acc);
    if (st == JY_OK) st = jy_assemble(e, q, v, 0, JY_ASM_RESIDUALS);
    if (st == JY_OK) st = jy_project_estimate(e, 0, q, v, weights, q_work, dv);
    /* u . v = 0.2, u = (0.8, -0.6) */
    ok(st == JY_OK && fabs(dv[0] + 0.16) <= PROJ_TOL && fabs(dv[1] - 0.12) <= PROJ_TOL,
       "estimate %s the circle: dv = -(u . v) u = (-0.16, 0.12) (got %.17g, %.17g)",
       k == 0 ? "close to" : "farther from", dv[0], dv[1]);
  }
  stage_free(e, md);
}

int main(void) {
  plan(33);
  jyEnv *env = stage_env();
  if (!env) {
    ok(0, "environment with the components");
    return done();
  }
  check_two_masses(env);
  check_circle(env);
  check_pendulum(env);
  check_no_rows(env);
  check_keep_close(env);
  check_estimate(env);
  jy_env_destroy(env);
  return done();
}

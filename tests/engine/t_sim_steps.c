/* tests/engine/t_sim_steps.c — the steppers' budget of steps between two outputs
 * (engine/src/sim.c: jy_sim_steps_spent) alone, on a simulation record with max_steps = 2000
 * (so the early checks start at 100 steps, a twentieth of it):
 *   - max_steps taken: spent, saying so, whatever the steps' length;
 *   - under 100 steps, or t_out reached: never spent (an integrator's first steps are its
 *     smallest), even with steps that have not moved t;
 *   - 100 steps that have not moved t: spent, saying they are zero at t_from;
 *   - steps whose average leaves more than 1000 max_steps of them to t_out: spent, with the
 *     average and the count; 999 max_steps of them: not yet;
 *   - the flag given is the one recorded.
 * Every comparison is exact (the decision is arithmetic on the numbers given). */
#include <string.h>

#include "sim.h"
#include "tap.h"

enum { MAX_STEPS = 2000 };

static int spent(jySim *sim, long steps, double t_from, double t_now, double t_out) {
  sim->solver_flag[0] = sim->solver_message[0] = '\0';
  return jy_sim_steps_spent(sim, "TEST_FLAG", steps, t_from, t_now, t_out);
}

int main(void) {
  static jySim sim; /* zero: only def.max_steps and the message buffers are used */
  sim.def.max_steps = MAX_STEPS;
  plan(10);

  ok(spent(&sim, MAX_STEPS, 0.0, 0.5, 1.0) && strcmp(sim.solver_flag, "TEST_FLAG") == 0 &&
       strstr(sim.solver_message, "more than max_steps = 2000 steps between two outputs"),
     "max_steps taken: spent, with the flag and the reason (%s)", sim.solver_message);
  ok(!spent(&sim, 99, 0.0, 0.0, 1.0) && sim.solver_flag[0] == '\0',
     "99 steps that have not moved t: not yet judged");
  ok(!spent(&sim, 500, 0.0, 1.0, 1.0), "t_out reached: never spent before max_steps");
  ok(spent(&sim, 100, 0.25, 0.25, 1.0) &&
       strstr(sim.solver_message, "100 steps since t = 0.25 have not moved t") &&
       strstr(sim.solver_message, "the steps are zero at this t"),
     "100 steps that have not moved t: spent (%s)", sim.solver_message);
  ok(spent(&sim, 150, 0.0, 0.0, 2.0) && strstr(sim.solver_message, "150 steps since t = 0 "),
     "150 zero steps from t = 0: spent, counting them");
  /* 100 steps over 1e-10 s: 1e-12 s each; 1 s left is 1e12 of them, 5e8 max_steps */
  ok(spent(&sim, 100, 0.0, 1e-10, 1.0) && strstr(sim.solver_message, "average 1e-12 s") &&
       strstr(sim.solver_message, "more than max_steps = 2000 allows by far"),
     "steps of 1e-12 s with 1 s to go: spent (%s)", sim.solver_message);
  /* exactly at the margin: way / step = 1000 max_steps is not more than it */
  double step = 1.0 / 1024, way = 1000.0 * MAX_STEPS * step;
  ok(!spent(&sim, 100, 0.0, 100 * step, 100 * step + way),
     "what is left exactly 1000 max_steps of the average step: not spent");
  ok(spent(&sim, 100, 0.0, 100 * step, 100 * step + 2 * way),
     "what is left 2000 max_steps of the average step: spent");
  ok(!spent(&sim, 100, 0.0, 100 * step, 100 * step + 0.999 * way),
     "999 max_steps of them left: not spent (the steps may still grow)");
  sim.def.max_steps = 100000; /* the default: the checks start at a twentieth, 5000 */
  ok(!spent(&sim, 4999, 0.0, 0.0, 1.0) && spent(&sim, 5000, 0.0, 0.0, 1.0),
     "at the default max_steps the checks wait for 5000 steps");
  return done();
}

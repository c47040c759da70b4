/* examples/embed/pendulum_host.c — a C host that closes a loop on a joinery model.
 *
 * The compound pendulum of examples/compound_pendulum.lua (a uniform rod, 1 kg, 1 m, pinned
 * at one end, starting level with the pivot) with an actuator on its angle whose torque is
 * the model input "u". The host samples the state at 100 Hz and sets u by a PD law,
 * u = -KP (theta - REF) - KD omega, through jy_sim_set_input: each new value takes effect
 * exactly at the sample (the integrator restarts there), so the work the actuator does is
 * sum u_k (theta_k+1 - theta_k) exactly, and the energy balance closes to the tolerance.
 *
 *   build/examples/embed/pendulum_host [method]     (method: auto, bdf, adams, erk)
 *
 * prints "t theta u" every 0.1 s, then the final theta (%.17g) and the energy balance. The
 * same loop as a Lua controller (sys:controller) gives the same numbers bit for bit
 * (tests/lua/t_embed_host.lua). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"

static const double KP = 40, KD = 4, REF = -1, DT = 0.01, T_END = 2;

static jyModel *build(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -9.81, 0});
  jyPartId rod =
    jy_system_add_part(sys, "body2d", "rod", (jyParamSetting[]){{"m", 1}, {"J", 1.0 / 12}}, 2);
  jyPartId pivot = jy_system_add_part(sys, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
  jyPartId top =
    jy_system_add_part(sys, "marker2d", "rod_top", (jyParamSetting[]){{"rx", -0.5}}, 1);
  jy_system_set_coord(sys, rod, "x", 0.5);
  jy_system_set_coord(sys, rod, "y", 0);
  jy_system_set_coord(sys, rod, "theta", 0);
  jy_system_glue(sys, jy_system_terminal(sys, top, "body"), jy_system_terminal(sys, rod, "frame"),
                 NULL);
  jy_system_glue(sys, jy_system_terminal(sys, top, "pos"), jy_system_terminal(sys, pivot, "pos"),
                 "hinge");
  /* the input and the actuator that applies it as a torque on rod.theta (mode 2: effort) */
  int u = jy_system_add_input(sys, "u", 0, "N m");
  jyPartId motor =
    jy_system_add_part(sys, "actuator", "motor", (jyParamSetting[]){{"mode", 2}, {"input", u}}, 2);
  jy_system_glue(sys, jy_system_terminal(sys, motor, "coord"),
                 jy_system_coord_terminal(sys, rod, "theta"), NULL);
  jyModel *model = NULL;
  if (jy_model_compile(sys, NULL, &model) != JY_OK) fprintf(stderr, "%s\n", jy_system_error(sys));
  jy_system_destroy(sys);
  return model;
}

static double energy(jySim *sim, const jyModel *model, double *row) {
  jy_sim_channels(sim, row);
  return row[jy_model_find_channel(model, "energy")];
}

int main(int argc, char **argv) {
  jySimDef def = jy_default_sim_def();
  def.t_end = T_END;
  const char *method = argc > 1 ? argv[1] : "auto";
  const char *names[] = {"adams", "bdf", "erk", "auto"};
  const jyMethod methods[] = {JY_METHOD_ADAMS, JY_METHOD_BDF, JY_METHOD_ERK, JY_METHOD_AUTO};
  for (int i = 0; i < 4; i++)
    if (strcmp(method, names[i]) == 0) def.method = methods[i];

  jyEnv *env = jy_env_create(NULL);
  jy_components_register(env);
  jyModel *model = build(env);
  if (!model) return 1;
  jyStatus st;
  jySim *sim = jy_sim_create(model, &def, &st);
  double *row = calloc((size_t)jy_model_num_channels(model), sizeof *row);
  int j = jy_model_find_coord(model, "rod.theta");

  double e0 = energy(sim, model, row), work = 0;
  double theta = jy_sim_q(sim)[j];
  double u = -KP * (theta - REF) - KD * jy_sim_v(sim)[j];
  st = jy_sim_set_input(sim, "u", u);
  printf("%6s %12s %12s\n", "t", "theta", "u");
  int samples = (int)lround(T_END / DT);
  for (int k = 1; k <= samples && st == JY_OK; k++) {
    st = jy_sim_advance(sim, k * DT); /* t_start + k DT */
    if (st != JY_OK) break;
    double theta_k = jy_sim_q(sim)[j], omega_k = jy_sim_v(sim)[j];
    work += u * (theta_k - theta); /* u was held over the sample */
    theta = theta_k;
    u = -KP * (theta - REF) - KD * omega_k;
    st = jy_sim_set_input_index(sim, 0, u);
    if (k % 10 == 0) printf("%6.2f %12.8f %12.8f\n", k * DT, theta, u);
  }
  if (st != JY_OK) {
    fprintf(stderr, "pendulum_host: %s\n", jy_sim_error(sim));
  } else {
    double de = energy(sim, model, row) - e0;
    jySimStats stats = jy_sim_stats(sim);
    printf("method %s: %ld steps, %ld right-hand sides\n", method, stats.steps, stats.rhs_evals);
    printf("theta(T) = %.17g\n", theta);
    printf("E(T) - E(0) = %.12g J, sum u dtheta = %.12g J, balance %.3g J\n", de, work, de - work);
  }
  free(row);
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(env);
  return st == JY_OK ? 0 : 1;
}

/* examples/embed/cart_pole_host.c — a C host catching a cart-pole by LQR.
 *
 * The cart-pole of examples/cart_pole_lqr.lua, built through the C API: a cart of 1 kg (a
 * mass on a level rail), a uniform pole of 0.5 kg and 1 m pinned at its lower end to it,
 * starting 0.3 rad from upright; an actuator pushes the cart with the model input "u" (N).
 * The host linearizes the model about upright (jy_model_linearize), solves the LQR problem
 * (jy_lqr, Q = diag(10, 10, 1, 1), R = 0.1) and closes the loop at 100 Hz: it advances to
 * each sample, reads the state and sets u = -K (x - x_up) by jy_sim_set_input_index. Each
 * new value takes effect exactly at the sample (the integrator restarts there).
 *
 *   build/examples/embed/cart_pole_host [method]     (method: auto, bdf, adams, erk)
 *
 * prints the gains, "t cart.x theta-pi/2 u" every 0.5 s, then the steps and the final state
 * (%.17g). The same loop as a Lua controller (examples/cart_pole_lqr.lua) gives the same
 * gains and the same final state bit for bit (tests/lua/t_cart_pole_host.lua). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"

#define PI 3.14159265358979323846

static const double M = 1, m = 0.5, l = 1, g = 9.81, THETA0 = 0.3, DT = 0.01, T_END = 5;

/* The model, part by part and glue by glue as the Lua script builds it. */
static jyModel *build(jyEnv *env) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){0, -g, 0});
  jyPartId cart =
    jy_system_add_part(sys, "mass", "cart", (jyParamSetting[]){{"dim", 2}, {"m", M}}, 2);
  jy_system_set_coord(sys, cart, "x", 0);
  jy_system_set_coord(sys, cart, "y", 0);
  jyPartId rail = jy_system_add_part(
    sys, "guide", "rail", (jyParamSetting[]){{"dim", 2}, {"nx", 0}, {"ny", 1}, {"d", 0}}, 4);
  jy_system_glue(sys, jy_system_terminal(sys, rail, "pos"), jy_system_terminal(sys, cart, "pos"),
                 "rail.pos");
  double th = PI / 2 + THETA0;
  jyPartId pole = jy_system_add_part(sys, "body2d", "pole",
                                     (jyParamSetting[]){{"m", m}, {"J", m * l * l / 12}}, 2);
  jy_system_set_coord(sys, pole, "x", l / 2 * cos(th));
  jy_system_set_coord(sys, pole, "y", l / 2 * sin(th));
  jy_system_set_coord(sys, pole, "theta", th);
  jyPartId base = jy_system_add_part(sys, "marker2d", "pole_base",
                                     (jyParamSetting[]){{"rx", -l / 2}, {"ry", 0}}, 2);
  jy_system_glue(sys, jy_system_terminal(sys, base, "body"), jy_system_terminal(sys, pole, "frame"),
                 "pole_base.body");
  jy_system_glue(sys, jy_system_terminal(sys, base, "pos"), jy_system_terminal(sys, cart, "pos"),
                 "pivot");
  int u = jy_system_add_input(sys, "u", 0, "N");
  jyPartId push =
    jy_system_add_part(sys, "actuator", "push",
                       (jyParamSetting[]){{"mode", 2}, {"gain", 1}, {"force", 0}, {"input", u}}, 4);
  jy_system_glue(sys, jy_system_terminal(sys, push, "coord"),
                 jy_system_coord_terminal(sys, cart, "x"), "push.coord");
  jyModel *model = NULL;
  if (jy_model_compile(sys, NULL, &model) != JY_OK) fprintf(stderr, "%s\n", jy_system_error(sys));
  jy_system_destroy(sys);
  return model;
}

/* The upright equilibrium: q over the model's coordinates (v = 0). */
static void upright(const jyModel *model, double *q) {
  for (int i = 0; i < jy_model_num_coords(model); i++) {
    const char *name = jy_model_coord_name(model, i);
    q[i] = strcmp(name, "pole.y") == 0 ? l / 2 : strcmp(name, "pole.theta") == 0 ? PI / 2 : 0;
  }
}

/* K (1 x nx) and the states' coordinates and offsets from jy_model_linearize about upright
 * and jy_lqr. Returns the number of states, 0 on an error (printed). */
static int gains(const jyModel *model, double *K, int *coord, int *is_rate, double *offset) {
  int n = jy_model_num_coords(model), nx = 0;
  double *q = calloc((size_t)n, sizeof *q), *v = calloc((size_t)n, sizeof *v);
  jyEval *eval = jy_eval_create(model);
  jyLinearization *lin = NULL;
  jyLinearizeDef def = jy_default_linearize_def();
  int input = jy_model_find_input(model, "u");
  double u0 = 0;
  upright(model, q);
  def.q = q;
  def.v = v;
  def.inputs = &input;
  def.u = &u0;
  def.ninputs = 1;
  jyStatus st = eval ? jy_model_linearize(eval, &def, &lin) : JY_ERR_NOMEM;
  if (st != JY_OK) {
    fprintf(stderr, "cart_pole_host: linearize: %s\n",
            eval ? jy_eval_error(eval) : jy_status_text(st));
  } else if (lin->nx != 4 || lin->nu != 1) {
    fprintf(stderr, "cart_pole_host: %d states and %d inputs, not 4 and 1\n", lin->nx, lin->nu);
  } else {
    const double Q[16] = {10, 0, 0, 0, 0, 10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, R[1] = {0.1};
    double P[16];
    char error[300];
    if (jy_lqr(4, 1, lin->A, lin->B, Q, R, K, P, error, sizeof error) != JY_OK) {
      fprintf(stderr, "cart_pole_host: %s\n", error);
    } else {
      nx = lin->nx;
      for (int j = 0; j < nx; j++) {
        coord[j] = lin->state_coord[j];
        is_rate[j] = j >= lin->npos;
        offset[j] = is_rate[j] ? 0 : q[coord[j]];
      }
    }
  }
  jy_linearization_destroy(lin);
  jy_eval_destroy(eval);
  free(q);
  free(v);
  return nx;
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
  if (!model) {
    jy_env_destroy(env);
    return 1;
  }
  double K[4], offset[4];
  int coord[4], is_rate[4];
  if (gains(model, K, coord, is_rate, offset) != 4) {
    jy_model_destroy(model);
    jy_env_destroy(env);
    return 1;
  }
  printf("K = %.17g %.17g %.17g %.17g\n", K[0], K[1], K[2], K[3]);

  jyStatus st;
  jySim *sim = jy_sim_create(model, &def, &st);
  if (!sim) {
    fprintf(stderr, "cart_pole_host: %s\n", jy_status_text(st));
    jy_model_destroy(model);
    jy_env_destroy(env);
    return 1;
  }
  int input = jy_model_find_input(model, "u");
  int jx = jy_model_find_coord(model, "cart.x"), jt = jy_model_find_coord(model, "pole.theta");
  printf("%6s %14s %14s %14s\n", "t", "cart.x", "theta-pi/2", "u");
  int samples = (int)lround(T_END / DT);
  for (int k = 0; k <= samples && st == JY_OK; k++) {
    if (k > 0) st = jy_sim_advance(sim, k * DT); /* t_start + k DT */
    if (st != JY_OK) break;
    /* u = -K (x - x_up), term by term in the order of the states, as the Lua controller */
    const double *q = jy_sim_q(sim), *v = jy_sim_v(sim);
    double u = 0;
    for (int j = 0; j < 4; j++)
      u = u - K[j] * ((is_rate[j] ? v[coord[j]] : q[coord[j]]) - offset[j]);
    st = jy_sim_set_input_index(sim, input, u);
    if (k % 50 == 0) printf("%6.2f %14.8f %14.8f %14.8f\n", k * DT, q[jx], q[jt] - PI / 2, u);
  }
  if (st != JY_OK) {
    fprintf(stderr, "cart_pole_host: %s\n", jy_sim_error(sim));
  } else {
    jySimStats stats = jy_sim_stats(sim);
    printf("method %s: %ld steps, %ld right-hand sides\n", method, stats.steps, stats.rhs_evals);
    int n = jy_model_num_coords(model);
    printf("q(T) =");
    for (int i = 0; i < n; i++) printf(" %.17g", jy_sim_q(sim)[i]);
    printf("\nv(T) =");
    for (int i = 0; i < n; i++) printf(" %.17g", jy_sim_v(sim)[i]);
    printf("\n");
  }
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(env);
  return st == JY_OK ? 0 : 1;
}

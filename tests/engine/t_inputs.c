/* Model inputs from a C host (issue 42): the compound pendulum (a uniform rod, body2d,
 * m = 1 kg, L = 1 m, pinned at one end, starting level with the pivot) driven by an
 * `actuator` (effort mode) on rod.theta whose torque is the held input "u".
 *
 * A PD law sampled at 100 Hz closed (a) by a host loop, jy_sim_advance(t_k) then
 * jy_sim_set_input_index, and (b) by the same law registered as a controller
 * (jy_system_add_controller): the final states bit for bit equal, the steps equal, under
 * every method. The sampled loop's energy balance E(T) - E(0) = sum u_k (theta_k+1 -
 * theta_k) (each u_k held over its sample exactly: the integrator restarts at every change),
 * the channel input.u, a time table (a step in torque on a free wheel) and a C signal with a
 * breakpoint (a ramp from t = 1) against their closed forms, and the bad input: each a status
 * and a message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

static const double G = 9.81, M = 1, L = 1;
static const double DT = 0.01, T_END = 2;      /* 100 Hz for 2 s: 200 samples */
static const double KP = 40, KD = 4, REF = -1; /* theta -> -1 rad */

typedef struct World {
  jyEnv *env;
  jySystem *sys;
  jyPartId rod;
} World;

static void add_part(World *w, jyPartId *id, const char *type, const char *name,
                     const jyParamSetting *p, int np) {
  *id = jy_system_add_part(w->sys, type, name, p, np);
  if (id->index < 0) diag("add %s: %s", name, jy_system_error(w->sys));
}

static void glue(World *w, jyTerminalId a, jyTerminalId b) {
  if (jy_system_glue(w->sys, a, b, NULL) != JY_OK) diag("glue: %s", jy_system_error(w->sys));
}

/* The rod, free (a wheel: no pin, no gravity) or pinned at (-L/2, 0) of its body axes
 * under gravity (the compound pendulum); an actuator on its theta driven by input "u". */
static World build(int pinned) {
  World w = {jy_env_create(NULL), NULL, {-1}};
  jy_components_register(w.env);
  w.sys = jy_system_create(w.env);
  if (pinned) jy_system_set_gravity(w.sys, (double[3]){0, -G, 0});
  add_part(&w, &w.rod, "body2d", "rod", (jyParamSetting[]){{"m", M}, {"J", M * L * L / 12}}, 2);
  jy_system_set_coord(w.sys, w.rod, "x", pinned ? L / 2 : 0);
  jy_system_set_coord(w.sys, w.rod, "y", 0);
  jy_system_set_coord(w.sys, w.rod, "theta", 0);
  if (pinned) {
    jyPartId pivot, top;
    add_part(&w, &pivot, "ground", "pivot", (jyParamSetting[]){{"dim", 2}}, 1);
    add_part(&w, &top, "marker2d", "rod_top", (jyParamSetting[]){{"rx", -L / 2}, {"ry", 0}}, 2);
    glue(&w, jy_system_terminal(w.sys, top, "body"), jy_system_terminal(w.sys, w.rod, "frame"));
    glue(&w, jy_system_terminal(w.sys, top, "pos"), jy_system_terminal(w.sys, pivot, "pos"));
  }
  if (jy_system_add_input(w.sys, "u", 0, "N m") != 0) diag("input: %s", jy_system_error(w.sys));
  jyPartId motor;
  add_part(&w, &motor, "actuator", "motor",
           (jyParamSetting[]){{"mode", 2}, {"input", 0}, {"gain", 1}}, 3);
  glue(&w, jy_system_terminal(w.sys, motor, "coord"),
       jy_system_coord_terminal(w.sys, w.rod, "theta"));
  return w;
}

static jyModel *compile(World *w) {
  jyModel *model = NULL;
  if (jy_model_compile(w->sys, NULL, &model) != JY_OK)
    diag("compile failed: %s", jy_system_error(w->sys));
  jy_system_destroy(w->sys);
  w->sys = NULL;
  return model;
}

static jySim *start(const jyModel *model, jyMethod method, double t_end) {
  jySimDef def = jy_default_sim_def();
  def.method = method;
  def.t_end = t_end;
  jyStatus st;
  jySim *sim = jy_sim_create(model, &def, &st);
  if (st != JY_OK) diag("sim: %s", jy_sim_error(sim));
  return sim;
}

/* The law: u = -KP (theta - REF) - KD omega. */
static double law(double theta, double omega) { return -KP * (theta - REF) - KD * omega; }

/* ---- (b) the controller ---- */

typedef struct Ctl {
  int itheta, calls;
} Ctl;

static int pd(void *ud, jyEventCall *call, char *error, size_t len) {
  Ctl *c = ud;
  c->calls++;
  double u = law(jy_event_q(call)[c->itheta], jy_event_v(call)[c->itheta]);
  if (jy_event_set_input(call, 0, u) != JY_OK) {
    snprintf(error, len, "%s", jy_event_error(call));
    return 1;
  }
  return 0;
}

/* One closed-loop run: by the host (ctl NULL) or by the controller. Returns the final
 * state's q and v in q_out, v_out (n each), the stats, and (host only) the energy balance:
 * *work = sum u_k dtheta_k, *de = E(T) - E(0), *u_last, *u_channel = input.u at T. */
typedef struct Run {
  double q[16], v[16];
  jySimStats stats;
  double work, de, u_last, u_channel, e0;
  jyStatus st;
  int n, calls, itheta;
} Run;

static double channel(jySim *sim, const jyModel *model, const char *name) {
  int nch = jy_model_num_channels(model), k = jy_model_find_channel(model, name);
  double *row = calloc((size_t)nch, sizeof *row);
  double x = NAN;
  if (k >= 0 && jy_sim_channels(sim, row) == JY_OK) x = row[k];
  free(row);
  return x;
}

static Run closed_loop(jyMethod method, int by_controller) {
  World w = build(1);
  Ctl ctl = {0, 0};
  if (by_controller && jy_system_add_controller(w.sys, "pd", DT, pd, &ctl) != JY_OK)
    diag("controller: %s", jy_system_error(w.sys));
  jyModel *model = compile(&w);
  Run r = {.st = JY_ERR_INVALID};
  if (!model) {
    jy_env_destroy(w.env);
    return r;
  }
  int j = jy_model_find_coord(model, "rod.theta");
  ctl.itheta = r.itheta = j;
  r.n = jy_model_num_coords(model);
  jySim *sim = start(model, method, T_END);
  jyStatus st = JY_OK;
  int steps = (int)lround(T_END / DT);
  r.e0 = channel(sim, model, "energy");
  double theta = jy_sim_q(sim)[j], u = 0;
  if (!by_controller) {
    u = law(jy_sim_q(sim)[j], jy_sim_v(sim)[j]);
    st = jy_sim_set_input_index(sim, 0, u);
  }
  for (int k = 1; k <= steps && st == JY_OK; k++) {
    double t_k = 0 + k * DT; /* t_start + k period, as the controller's samples */
    st = jy_sim_advance(sim, t_k);
    if (st != JY_OK) break;
    double theta_k = jy_sim_q(sim)[j];
    if (!by_controller) {
      r.work += u * (theta_k - theta);
      u = law(theta_k, jy_sim_v(sim)[j]);
      st = jy_sim_set_input_index(sim, 0, u);
    }
    theta = theta_k;
  }
  if (st != JY_OK)
    diag("closed loop (%s): %s", by_controller ? "controller" : "host", jy_sim_error(sim));
  r.st = st;
  r.de = channel(sim, model, "energy") - r.e0;
  r.u_last = u;
  r.u_channel = channel(sim, model, "input.u");
  if (by_controller) r.u_last = jy_sim_input(sim, 0);
  for (int i = 0; i < r.n && i < 16; i++) r.q[i] = jy_sim_q(sim)[i], r.v[i] = jy_sim_v(sim)[i];
  r.stats = jy_sim_stats(sim);
  r.calls = ctl.calls;
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w.env);
  return r;
}

/* The energy balance's tolerance: each sample restarts the integrator, so the errors of the
 * samples add: per sample rtol times the energy scale m g L / 2 plus the work scale
 * max |u| x 1 rad (u_0 = KP |REF| = 40 N m is the largest), times the number of samples. */
static double balance_allowed(double rtol) {
  return T_END / DT * rtol * (M * G * L / 2 + KP * fabs(REF) * 1.0);
}

static void host_and_controller(jyMethod method, const char *label) {
  Run h = closed_loop(method, 0), c = closed_loop(method, 1);
  ok(h.st == JY_OK && c.st == JY_OK, "%s: both loops ran to t = %g", label, T_END);
  int same = h.n == c.n && h.n > 0;
  for (int i = 0; same && i < h.n; i++) same = h.q[i] == c.q[i] && h.v[i] == c.v[i];
  ok(same, "%s: host loop and controller end in the same state bit for bit (theta %.17g, %.17g)",
     label, h.q[h.itheta], c.q[c.itheta]);
  ok(h.stats.steps == c.stats.steps && h.stats.rhs_evals == c.stats.rhs_evals,
     "%s: the same steps (%ld, %ld) and right-hand sides (%ld, %ld); controller calls %d", label,
     h.stats.steps, c.stats.steps, h.stats.rhs_evals, c.stats.rhs_evals, c.calls);
  double rtol = jy_default_sim_def().rtol, err = fabs(h.de - h.work);
  ok(err <= balance_allowed(rtol),
     "%s: energy balance E(T) - E(0) = %.12g, sum u dtheta = %.12g: off %.3g J = %.3g rtol m g L/2 "
     "(allowed %.3g J)",
     label, h.de, h.work, err, err / (rtol * M * G * L / 2), balance_allowed(rtol));
  ok(h.u_channel == h.u_last && c.u_channel == c.u_last && h.u_last == c.u_last,
     "%s: input.u is the last value set (%.17g)", label, h.u_last);
}

/* ---- time signals on a free wheel (J = 1/12 kg m^2, no gravity) ---- */

static const double J_WHEEL = 1.0 / 12;

static void table_step(void) {
  World w = build(0);
  const double tau = 0.5, t1 = 1, T = 3;
  jyStatus st =
    jy_system_input_table(w.sys, "u", JY_INTERP_CONSTANT, 2, (double[]){0, t1}, (double[]){0, tau});
  ok(st == JY_OK, "table: a piecewise-constant step of %g N m at t = %g (%s)", tau, t1,
     st == JY_OK ? "" : jy_system_error(w.sys));
  jyModel *model = compile(&w);
  int j = jy_model_find_coord(model, "rod.theta");
  jySim *sim = start(model, JY_METHOD_AUTO, T);
  st = jy_sim_advance(sim, t1);
  double before = jy_sim_q(sim)[j];
  if (st == JY_OK) st = jy_sim_advance(sim, T);
  double theta = jy_sim_q(sim)[j], omega = jy_sim_v(sim)[j];
  double want = tau / (2 * J_WHEEL) * (T - t1) * (T - t1), want_w = tau / J_WHEEL * (T - t1);
  ok(st == JY_OK && before == 0, "table: at rest until the step (theta(1) = %g)", before);
  /* a quadratic in t from the breakpoint on: the error is the integrator's rounding */
  is_near(theta, want, 1e-9 * want, "table: theta(3) = tau (T - 1)^2 / (2 J)");
  is_near(omega, want_w, 1e-9 * want_w, "table: omega(3) = tau (T - 1) / J");
  ok(jy_sim_input(sim, 0) == tau && channel(sim, model, "input.u") == tau,
     "table: jy_sim_input and input.u read the table (%g)", jy_sim_input(sim, 0));
  ok(jy_sim_set_input(sim, "u", 1) == JY_ERR_INVALID && strlen(jy_sim_error(sim)) > 0,
     "setting a table input is refused: %s", jy_sim_error(sim));
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w.env);
}

/* u = A (t - 1) for t >= 1, 0 before: a kink at t = 1, declared as a breakpoint. */
typedef struct Ramp {
  double a, t1;
  long calls;
} Ramp;

static int ramp(void *ud, double t, double out[3], char *error, size_t len) {
  (void)error, (void)len;
  Ramp *r = ud;
  r->calls++;
  out[0] = t < r->t1 ? 0 : r->a * (t - r->t1);
  out[1] = t < r->t1 ? 0 : r->a;
  out[2] = 0;
  return 0;
}

static void signal_ramp(void) {
  World w = build(0);
  Ramp rp = {0.3, 1, 0};
  const double T = 3;
  jyStatus st = jy_system_input_function(w.sys, "u", ramp, &rp, 1, (double[]){rp.t1});
  ok(st == JY_OK, "signal: a ramp from t = 1 with its breakpoint (%s)",
     st == JY_OK ? "" : jy_system_error(w.sys));
  jyModel *model = compile(&w);
  int j = jy_model_find_coord(model, "rod.theta");
  jySim *sim = start(model, JY_METHOD_BDF, T);
  st = jy_sim_advance(sim, T);
  double d = T - rp.t1, want = rp.a * d * d * d / (6 * J_WHEEL),
         want_w = rp.a * d * d / (2 * J_WHEEL);
  ok(st == JY_OK && rp.calls > 0, "signal: ran to t = 3 (%ld calls of the signal)", rp.calls);
  /* a cubic in t, integrated by BDF to rtol 1e-11: 1e-8 relative is 1000 rtol */
  is_near(jy_sim_q(sim)[j], want, 1e-8 * want, "signal: theta(3) = A (T - 1)^3 / (6 J)");
  is_near(jy_sim_v(sim)[j], want_w, 1e-8 * want_w, "signal: omega(3) = A (T - 1)^2 / (2 J)");
  is_near(channel(sim, model, "input.u"), rp.a * d, 1e-15, "signal: input.u = A (T - 1)");
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w.env);
}

/* ---- bad input ---- */

typedef struct Refused {
  jyStatus st;
  char msg[256];
} Refused;

static int sets_q(void *ud, jyEventCall *call, char *error, size_t len) {
  (void)error, (void)len;
  Refused *r = ud;
  r->st = jy_event_set_q(call, 0, 1.0);
  snprintf(r->msg, sizeof r->msg, "%s", jy_event_error(call));
  return 0;
}

static void bad_input(void) {
  /* the simulation's */
  World w = build(1);
  jyModel *model = compile(&w);
  jySim *sim = start(model, JY_METHOD_AUTO, 1);
  jyStatus st = jy_sim_set_input(sim, "uu", 1);
  ok(st == JY_ERR_INVALID && strstr(jy_sim_error(sim), "no input 'uu'") &&
       strstr(jy_sim_error(sim), "did you mean 'u'"),
     "an unknown input name, with the nearest: %s", jy_sim_error(sim));
  st = jy_sim_set_input(sim, "v", 1);
  ok(st == JY_ERR_INVALID && strstr(jy_sim_error(sim), "no input 'v'") &&
       strstr(jy_sim_error(sim), "u"),
     "a name far from every input lists them: %s", jy_sim_error(sim));
  st = jy_sim_set_input_index(sim, 0, NAN);
  ok(st == JY_ERR_INVALID && strstr(jy_sim_error(sim), "finite"), "a NaN value: %s",
     jy_sim_error(sim));
  st = jy_sim_set_input_index(sim, 0, INFINITY);
  ok(st == JY_ERR_INVALID && strlen(jy_sim_error(sim)) > 0, "an infinite value: %s",
     jy_sim_error(sim));
  st = jy_sim_set_input_index(sim, 3, 1);
  ok(st == JY_ERR_INVALID && strlen(jy_sim_error(sim)) > 0, "an index out of range: %s",
     jy_sim_error(sim));
  ok(jy_sim_input(sim, 0) == 0 && jy_sim_advance(sim, 0.5) == JY_OK,
     "the refused values left u = 0 and the run goes on");
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w.env);

  /* the system's */
  w = build(1);
  st = jy_system_input_table(w.sys, "u", JY_INTERP_LINEAR, 3, (double[]){0, 1, 1},
                             (double[]){0, 1, 2});
  ok(st == JY_ERR_INVALID && strstr(jy_system_error(w.sys), "must increase"),
     "a table not increasing in t: %s", jy_system_error(w.sys));
  st = jy_system_input_table(w.sys, "uu", JY_INTERP_LINEAR, 2, (double[]){0, 1}, (double[]){0, 1});
  ok(st == JY_ERR_INVALID && strstr(jy_system_error(w.sys), "did you mean 'u'"),
     "a table for an unknown input: %s", jy_system_error(w.sys));
  ok(jy_system_add_input(w.sys, "u", 0, NULL) < 0, "a repeated input name: %s",
     jy_system_error(w.sys));
  ok(jy_system_add_input(w.sys, "w", NAN, NULL) < 0, "a NaN initial value: %s",
     jy_system_error(w.sys));
  Ctl ctl = {0, 0};
  st = jy_system_add_controller(w.sys, "pd", NAN, pd, &ctl);
  ok(st == JY_ERR_INVALID && strstr(jy_system_error(w.sys), "period"),
     "a controller with a NaN period: %s", jy_system_error(w.sys));
  st = jy_system_add_controller(w.sys, "pd", -DT, pd, &ctl);
  ok(st == JY_ERR_INVALID && strstr(jy_system_error(w.sys), "period"),
     "a controller with a negative period: %s", jy_system_error(w.sys));
  Refused ref = {JY_OK, ""};
  st = jy_system_add_controller(w.sys, "jumper", DT, sets_q, &ref);
  ok(st == JY_OK, "a controller that will try jy_event_set_q is added");
  model = compile(&w);
  sim = start(model, JY_METHOD_AUTO, 0.05);
  st = jy_sim_advance(sim, 0.05);
  ok(st == JY_OK && ref.st == JY_ERR_INVALID && strstr(ref.msg, "sets inputs only"),
     "jy_event_set_q from a controller is refused (%d): %s", (int)ref.st, ref.msg);
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w.env);
}

int main(void) {
  plan(4 * 5 + 6 + 5 + 6 + 8);
  host_and_controller(JY_METHOD_AUTO, "auto");
  host_and_controller(JY_METHOD_BDF, "bdf");
  host_and_controller(JY_METHOD_ADAMS, "adams");
  host_and_controller(JY_METHOD_ERK, "erk");
  table_step();
  signal_ramp();
  bad_input();
  return done();
}

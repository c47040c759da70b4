/* User events through the C API (jy_system_add_event): a 2-D mass dropped from h = 1 m
 * (g = 9.81) onto y = 0, checked against the closed forms of free fall: the impact at
 * t1 = sqrt(2 h / g) with speed v1 = g t1, after a bounce with restitution e the next at
 * t1 + 2 e v1 / g. Rows before and after the event instant, stop, set_v, the order of
 * several events at one instant, direction filtering, every method, bad input, and a
 * model whose event never fires stepping exactly as without it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

static const double G = 9.81, H = 1.0, E = 0.8;

/* Tolerances. Root location: CVODE's root finding stops within ~100 unit roundoffs of t
 * and the state there carries the integration error (~rtol 1e-11 x 1 m), so the crossing
 * time is off by ~1e-11 m / 4.4 m/s; 1e-9 s is 100 times that. */
static const double TOL_T = 1e-9;
/* A state at a located crossing: y there is |v| TOL_T at worst. */
static const double TOL_Y = 1e-8;

typedef struct World {
  jyEnv *env;
  jySystem *sys;
  jyPartId ball;
} World;

static World drop(void) {
  World w = {jy_env_create(NULL), NULL, {-1}};
  jy_components_register(w.env);
  w.sys = jy_system_create(w.env);
  jy_system_set_gravity(w.sys, (double[3]){0, -G, 0});
  w.ball = jy_system_add_part(w.sys, "mass", "ball", (jyParamSetting[]){{"dim", 2}, {"m", 1}}, 2);
  jy_system_set_coord(w.sys, w.ball, "y", H);
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

/* ---- callbacks: ud is an Ev ---- */

/* A log of the actions that ran, in order, with what each saw. */
typedef struct Log {
  char order[16];
  int n;
  double vy_seen[16];
  double energy_seen;
} Log;

typedef struct Ev {
  double level; /* g = y - level */
  Log *log;     /* NULL: not logged */
  char tag;
  int fired;
} Ev;

static int height_above(void *ud, jyEventCall *call, double *value, char *error, size_t len) {
  (void)error, (void)len;
  const jyModel *m = jy_event_model(call);
  *value = jy_event_q(call)[jy_model_find_coord(m, "ball.y")] - ((const Ev *)ud)->level;
  return 0;
}

static void log_call(Ev *ev, jyEventCall *call) {
  ev->fired++;
  Log *log = ev->log;
  if (!log || log->n >= 15) return;
  int j = jy_model_find_coord(jy_event_model(call), "ball.y");
  log->vy_seen[log->n] = jy_event_v(call)[j];
  log->order[log->n++] = ev->tag;
  const double *row = NULL;
  if (ev->tag == 'a' && jy_event_channels(call, &row) == JY_OK)
    log->energy_seen = row[jy_model_find_channel(jy_event_model(call), "energy")];
}

static int bounce(void *ud, jyEventCall *call, char *error, size_t len) {
  log_call(ud, call);
  int j = jy_model_find_coord(jy_event_model(call), "ball.y");
  if (jy_event_set_v(call, j, -E * jy_event_v(call)[j]) != JY_OK) {
    snprintf(error, len, "%s", jy_event_error(call));
    return 1;
  }
  return 0;
}

static int record(void *ud, jyEventCall *call, char *error, size_t len) {
  (void)error, (void)len;
  log_call(ud, call);
  return 0;
}

/* ---- rows ---- */

typedef struct Rows {
  int iy, ivy, count;
  double t[4096], y[4096], vy[4096];
} Rows;

static int keep_row(void *ud, const double *row, int nchannels) {
  (void)nchannels;
  Rows *r = ud;
  if (r->count < 4096) {
    r->t[r->count] = row[0];
    r->y[r->count] = row[r->iy];
    r->vy[r->count] = row[r->ivy];
  }
  r->count++;
  return 0;
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

static Rows *new_rows(const jyModel *model) {
  Rows *r = calloc(1, sizeof *r);
  r->iy = jy_model_find_channel(model, "ball.y");
  r->ivy = jy_model_find_channel(model, "der(ball.y)");
  return r;
}

static void finish(World *w, jyModel *model, jySim *sim, Rows *r) {
  free(r);
  jy_sim_destroy(sim);
  jy_model_destroy(model);
  jy_env_destroy(w->env);
}

/* ---- the cases ---- */

static void stop_at_floor(jyMethod method, const char *label) {
  World w = drop();
  Ev floor_ev = {0, NULL, 'f', 0};
  jy_system_add_event(w.sys, "floor", height_above, JY_EVENT_DOWN, NULL, &floor_ev);
  jyModel *model = compile(&w);
  jySim *sim = start(model, method, 2);
  Rows *r = new_rows(model);
  jyStatus st = jy_sim_run(sim, keep_row, r);
  double t1 = sqrt(2 * H / G);
  ok(st == JY_OK && strcmp(jy_sim_stopped_by(sim), "floor") == 0,
     "%s: the run ends normally, stopped by 'floor' (%s)", label, jy_sim_error(sim));
  is_near(jy_sim_time(sim), t1, TOL_T, "the stop at the closed-form impact time sqrt(2h/g)");
  int last = r->count - 1;
  ok(last > 0 && r->t[last] == jy_sim_time(sim) && fabs(r->y[last]) < TOL_Y,
     "%s: the last row is at the event time, y = %.3g", label, r->y[last]);
  jySimStats stats = jy_sim_stats(sim);
  jyEventSummary e =
    jy_sim_num_event_kinds(sim) == 1 ? jy_sim_event_summary(sim, 0) : (jyEventSummary){"", 0, 0, 0};
  ok(stats.events == 1 && e.count == 1 && strcmp(e.name, "floor") == 0 && e.first_t == e.last_t &&
       e.first_t == jy_sim_time(sim),
     "%s: one firing counted and summarized (%ld; %ld guard evaluations, %ld steps, %ld rhs)",
     label, stats.events, stats.guard_evals, stats.steps, stats.rhs_evals);
  ok(jy_sim_advance(sim, 1.9) == JY_ERR_INVALID, "%s: a stopped run does not go on: %s", label,
     jy_sim_error(sim));
  finish(&w, model, sim, r);
}

/* Two bounces (e = 0.8) before t = 1.2; 'b' on the same guard runs after 'a' and sees its
 * velocity. */
static void bounces(void) {
  World w = drop();
  Log log = {0};
  Ev a = {0, &log, 'a', 0}, b = {0, &log, 'b', 0};
  jy_system_add_event(w.sys, "a", height_above, JY_EVENT_DOWN, bounce, &a);
  jy_system_add_event(w.sys, "b", height_above, JY_EVENT_DOWN, record, &b);
  jyModel *model = compile(&w);
  jySim *sim = start(model, JY_METHOD_BDF, 1.2);
  Rows *r = new_rows(model);
  jyStatus st = jy_sim_run(sim, keep_row, r);
  ok(st == JY_OK && !jy_sim_stopped_by(sim)[0], "bounce: ran to t_end: %s", jy_sim_error(sim));
  double t1 = sqrt(2 * H / G), v1 = G * t1, t2 = t1 + 2 * E * v1 / G;
  ok(strcmp(log.order, "abab") == 0, "two events at one instant run in the order added: %s",
     log.order);
  /* 'b' sees the velocity 'a' set: -E times the one 'a' saw (to rounding). */
  ok(fabs(log.vy_seen[1] + E * log.vy_seen[0]) < 1e-12 * v1,
     "the second action sees the first one's jump (%.12g after %.12g)", log.vy_seen[1],
     log.vy_seen[0]);
  /* m g h at the second impact minus the first one's loss, (1 - e^2) m g h: the row
   * computed within the call (tolerance: the integration error, ~1e-11 relative, x 100). */
  is_near(log.energy_seen, E * E * G * H, 1e-9,
          "jy_event_channels: energy at the second impact is e^2 m g h");
  /* The rows at the first impact: two rows at one time, before (falling) and after. */
  int k = 0;
  while (k + 1 < r->count && !(r->t[k] == r->t[k + 1])) k++;
  ok(k + 1 < r->count, "two rows at the first impact's time");
  is_near(r->t[k], t1, TOL_T, "the rows' time is the closed-form impact time");
  /* velocities: g TOL_T from the time, plus the integration error */
  is_near(r->vy[k], -v1, 1e-8, "row before: der(ball.y) = -sqrt(2 g h)");
  is_near(r->vy[k + 1], E * v1, 1e-8, "row after: der(ball.y) = e sqrt(2 g h)");
  jyEventSummary s = jy_sim_event_summary(sim, 0);
  ok(jy_sim_num_event_kinds(sim) == 2 && s.count == 2, "both impacts counted (%ld)", s.count);
  is_near(s.last_t, t2, TOL_T, "second impact at t1 + 2 e v1 / g");
  /* Between the impacts the ball is on y = e v1 (t - t1) - g (t - t1)^2 / 2 (the error
   * after a jump stays at the integration tolerance; 1e-8 m is its 1000-fold). */
  double worst = 0;
  for (int i = 0; i < r->count && i < 4096; i++)
    if (r->t[i] > t1 + 1e-6 && r->t[i] < t2 - 1e-6) {
      double u = r->t[i] - t1;
      worst = fmax(worst, fabs(r->y[i] - (E * v1 * u - 0.5 * G * u * u)));
    }
  ok(worst < 1e-8, "between the impacts on the closed-form parabola (worst %.3g m)", worst);
  finish(&w, model, sim, r);
}

/* y = 0.5 crossed falling at sqrt(2 (h - 0.5) / g), then rising and falling again after the
 * first bounce (apex e^2 h = 0.64): "up" fires once, "down" twice, "both" three times. */
static void directions(void) {
  World w = drop();
  Ev floor_ev = {0, NULL, 'f', 0}, rise = {0.5, NULL, 'r', 0}, fall = {0.5, NULL, 'd', 0},
     pass = {0.5, NULL, 'p', 0};
  jy_system_add_event(w.sys, "floor", height_above, JY_EVENT_DOWN, bounce, &floor_ev);
  jy_system_add_event(w.sys, "rise", height_above, JY_EVENT_UP, record, &rise);
  jy_system_add_event(w.sys, "fall", height_above, JY_EVENT_DOWN, record, &fall);
  jy_system_add_event(w.sys, "pass", height_above, JY_EVENT_BOTH, record, &pass);
  jyModel *model = compile(&w);
  jySim *sim = start(model, JY_METHOD_BDF, 1.15);
  jyStatus st = jy_sim_run(sim, NULL, NULL);
  ok(st == JY_OK && floor_ev.fired == 1 && rise.fired == 1 && fall.fired == 2 && pass.fired == 3,
     "direction: floor %d, up %d, down %d, both %d (want 1, 1, 2, 3): %s", floor_ev.fired,
     rise.fired, fall.fired, pass.fired, jy_sim_error(sim));
  /* the summary lists the kinds in the order they first fired: "fall" (with "pass") first */
  jyEventSummary first = jy_sim_event_summary(sim, 0);
  ok(strcmp(first.name, "fall") == 0, "the summary's first kind is 'fall': %s", first.name);
  is_near(first.first_t, sqrt(2 * (H - 0.5) / G), TOL_T,
          "the first fall through y = 0.5 at sqrt(2 (h - 0.5) / g)");
  finish(&w, model, sim, NULL);
}

/* An event that never fires costs guard evaluations, not steps: the same steps and
 * right-hand sides as the model without it. */
static int never(void *ud, jyEventCall *call, double *value, char *error, size_t len) {
  (void)ud, (void)error, (void)len;
  *value = 1 + jy_event_time(call);
  return 0;
}

static void no_cost(void) {
  World w1 = drop(), w2 = drop();
  jy_system_add_event(w2.sys, "never", never, JY_EVENT_BOTH, NULL, NULL);
  jyModel *m1 = compile(&w1), *m2 = compile(&w2);
  jySim *s1 = start(m1, JY_METHOD_BDF, 2), *s2 = start(m2, JY_METHOD_BDF, 2);
  jyStatus st1 = jy_sim_run(s1, NULL, NULL), st2 = jy_sim_run(s2, NULL, NULL);
  jySimStats a = jy_sim_stats(s1), b = jy_sim_stats(s2);
  ok(st1 == JY_OK && a.events == 0 && a.guard_evals == 0 && jy_sim_num_event_kinds(s1) == 0,
     "no events: stats.events = 0, no guard evaluations");
  ok(st2 == JY_OK && a.steps == b.steps && a.rhs_evals == b.rhs_evals && b.events == 0,
     "an event that never fires: %ld steps, %ld rhs (without: %ld, %ld), %ld guard evaluations",
     b.steps, b.rhs_evals, a.steps, a.rhs_evals, b.guard_evals);
  ok(jy_sim_q(s1)[1] == jy_sim_q(s2)[1], "and the same state at t_end");
  finish(&w1, m1, s1, NULL);
  finish(&w2, m2, s2, NULL);
}

/* ---- failures and bad input ---- */

static int fails_late(void *ud, jyEventCall *call, double *value, char *error, size_t len) {
  (void)ud;
  *value = 1;
  if (jy_event_time(call) < 0.25) return 0;
  snprintf(error, len, "boom");
  return 1;
}

static int nan_guard(void *ud, jyEventCall *call, double *value, char *error, size_t len) {
  (void)ud, (void)call, (void)error, (void)len;
  *value = NAN;
  return 0;
}

/* A `when` that tries to act: refused. */
static int acting_guard(void *ud, jyEventCall *call, double *value, char *error, size_t len) {
  if (jy_event_set_v(call, 0, 1.0) != JY_ERR_INVALID) {
    snprintf(error, len, "set_v from a when was allowed");
    return 1;
  }
  snprintf((char *)ud, 256, "%s", jy_event_error(call));
  *value = 1;
  return 0;
}

static char param_message[256];
static int set_unknown_param(void *ud, jyEventCall *call, char *error, size_t len) {
  (void)ud, (void)error, (void)len;
  jyStatus st = jy_event_set_param(call, "nobody", "m", 2);
  snprintf(param_message, sizeof param_message, "%d %s", (int)st, jy_event_error(call));
  return 0;
}

static void run_expect(jyEventWhenFn when, jyEventActionFn action, void *ud, jyStatus want,
                       const char *text, const char *label) {
  World w = drop();
  jy_system_add_event(w.sys, "x", when, JY_EVENT_BOTH, action, ud);
  jyModel *model = compile(&w);
  jySim *sim = start(model, JY_METHOD_BDF, 1);
  jyStatus st = jy_sim_run(sim, NULL, NULL);
  ok(st == want && strstr(jy_sim_error(sim), text), "%s: %s", label, jy_sim_error(sim));
  finish(&w, model, sim, NULL);
}

static void failures(void) {
  run_expect(fails_late, NULL, NULL, JY_ERR_PART, "event 'x': boom at t = ",
             "a failing when stops the run with the event's name and time");
  run_expect(nan_guard, NULL, NULL, JY_ERR_PART, "not a finite number", "a NaN g is an error");
  char msg[256] = "";
  run_expect(acting_guard, NULL, msg, JY_OK, "", "a when may not act");
  ok(strstr(msg, "not its `when`") != NULL, "setting from a when is refused: %s", msg);
  static Ev at_half = {0.5, NULL, 'h', 0};
  World w = drop();
  jy_system_add_event(w.sys, "x", height_above, JY_EVENT_BOTH, set_unknown_param, &at_half);
  jyModel *model = compile(&w);
  jySim *sim = start(model, JY_METHOD_BDF, 1);
  jy_sim_run(sim, NULL, NULL);
  finish(&w, model, sim, NULL);
  ok(strstr(param_message, "no part 'nobody'") != NULL, "set_param of an unknown part: %s",
     param_message);
}

static void bad_input(void) {
  World w = drop();
  Ev ev = {0, NULL, 'x', 0};
  struct {
    const char *name;
    jyEventWhenFn when;
    int direction;
    const char *text;
  } cases[] = {
    {"a.b", height_above, 0, "'.'"},
    {"", height_above, 0, "needs a name"},
    {"ok", NULL, 0, "needs a function"},
    {"ok", height_above, 5, "direction 5"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    jyStatus st = jy_system_add_event(w.sys, cases[k].name, cases[k].when,
                                      (jyEventDirection)cases[k].direction, NULL, &ev);
    ok(st == JY_ERR_INVALID && strstr(jy_system_error(w.sys), cases[k].text),
       "bad event refused: %s", jy_system_error(w.sys));
  }
  jy_system_add_event(w.sys, "dup", height_above, JY_EVENT_UP, NULL, &ev);
  ok(jy_system_add_event(w.sys, "dup", height_above, JY_EVENT_UP, NULL, &ev) == JY_ERR_INVALID,
     "a duplicate name refused: %s", jy_system_error(w.sys));
  jy_system_destroy(w.sys);
  jy_env_destroy(w.env);
}

int main(void) {
  plan(5 * 3 + 11 + 3 + 3 + 5 + 5);
  stop_at_floor(JY_METHOD_BDF, "bdf");
  stop_at_floor(JY_METHOD_ADAMS, "adams");
  stop_at_floor(JY_METHOD_ERK, "erk");
  bounces();
  directions();
  no_cost();
  failures();
  bad_input();
  return done();
}

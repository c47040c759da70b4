/* User events inside a simulation (sim_events.h, joinery.h: jy_system_add_event).
 *
 * The root function reads each event's g at the integrator's trial state through a
 * jyEventCall that points into that state; at a located crossing the actions run in the
 * order the events were added, on the state sim.c hands over, each jump (set_q, set_v)
 * projected back onto the constraints before the next action sees it. Nothing here
 * allocates after jy_events_setup. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_events.h"

typedef struct jyEventsRun {
  jyEventCall call;
  double *row;        /* nchannels: jy_event_channels */
  double *angle_save; /* nchannels + 1: the evaluator's angle continuity, kept across it */
  double *weights;    /* n: the projection after a jump */
  char message[512];  /* the callbacks' own error text */
} jyEventsRun;

jyStatus jy_events_setup(jySim *sim) {
  const jyModel *md = sim->model;
  if (md->nevents == 0 && md->ncontrollers == 0) return JY_OK;
  const jyAllocator *a = &md->alloc;
  jyEventsRun *run = jy_calloc(a, 1, sizeof *run);
  if (!run) return JY_ERR_NOMEM;
  sim->user_events = run;
  run->row = jy_calloc(a, (size_t)md->nchannels + 1, sizeof(double));
  run->angle_save = jy_calloc(a, (size_t)md->nchannels + 1, sizeof(double));
  run->weights = jy_calloc(a, (size_t)md->n + 1, sizeof(double));
  if (!run->row || !run->angle_save || !run->weights) return JY_ERR_NOMEM;
  return JY_OK;
}

void jy_events_destroy(jySim *sim) {
  jyEventsRun *run = sim->user_events;
  if (!run) return;
  const jyAllocator *a = &sim->model->alloc;
  jy_free(a, run->row);
  jy_free(a, run->angle_save);
  jy_free(a, run->weights);
  jy_free(a, run);
  sim->user_events = NULL;
}

int jy_events_count(const jySim *sim) { return sim->user_events ? sim->model->nevents : 0; }

void jy_events_directions(const jySim *sim, int *directions) {
  for (int k = 0; k < jy_events_count(sim); k++) directions[k] = sim->model->events[k].direction;
}

/* The call for event k at the state y (q, v its halves; N–P's multipliers skipped). */
static jyEventCall *begin_call(jySim *sim, int k, double t, double *y, int in_action) {
  jyEventsRun *run = sim->user_events;
  jyEventCall *c = &run->call;
  *c = (jyEventCall){.sim = sim,
                     .event = &sim->model->events[k],
                     .t = t,
                     .q = y,
                     .v = y + sim->nq,
                     .in_action = in_action};
  run->message[0] = '\0';
  return c;
}

/* A callback's failure stops the run: the event's name, its message, the time. */
static jyStatus event_failed(jySim *sim, const jyUserEvent *ev, const char *why, double t) {
  sim->failure = JY_ERR_PART;
  jy_set_error(sim->error, "event '%s': %s at t = %.9g", ev->name, why, t);
  return JY_ERR_PART;
}

int jy_events_guards(jySim *sim, double t, const double *y, double *g) {
  jyEventsRun *run = sim->user_events;
  for (int k = 0; k < jy_events_count(sim); k++) {
    /* The call's q and v are not const for actions; a `when` cannot write through them
     * (every setter refuses outside an action). */
    jyEventCall *c = begin_call(sim, k, t, (double *)y, 0);
    double value = NAN;
    if (c->event->when(c->event->ud, c, &value, run->message, sizeof run->message) != 0) {
      event_failed(sim, c->event, run->message[0] ? run->message : "its function failed", t);
      return -1;
    }
    if (!isfinite(value)) {
      char why[64];
      snprintf(why, sizeof why, "its function returned %g, not a finite number", value);
      event_failed(sim, c->event, why, t);
      return -1;
    }
    g[k] = value;
  }
  return 0;
}

jyStatus jy_sim_settle_state(jySim *sim, double t, double *y, double *weights, char *why,
                             size_t why_len) {
  const jyModel *md = sim->model;
  double *q = y, *v = y + sim->nq;
  for (int j = 0; j < md->n; j++) weights[j] = 1 / (sim->def.rtol * fabs(q[j]) + sim->def.atol);
  int iterations = 0;
  jyStatus st = jy_project_state(sim->eval, t, q, v, weights, 1e-3, 0, &iterations);
  if (st != JY_OK) {
    snprintf(why, why_len, "the state could not be put back on the constraints (%s)",
             st == JY_ERR_INCONSISTENT ? "the projection did not converge"
                                       : jy_eval_error(sim->eval));
    return st;
  }
  if (!sim->np) return JY_OK;
  st = jy_np_initial_multipliers(sim->np, q, v, t, y + md->n, y + sim->nq + md->n);
  if (st != JY_OK) snprintf(why, why_len, "%s", jy_np_error(sim->np));
  return st;
}

/* After a jump: the state back onto the constraints, the event named on failure. */
static jyStatus settle_jump(jySim *sim, const jyUserEvent *ev, double t, double *y) {
  jyEventsRun *run = sim->user_events;
  char why[JY_ERROR_LEN];
  if (jy_sim_settle_state(sim, t, y, run->weights, why, sizeof why) == JY_OK) return JY_OK;
  char said[JY_ERROR_LEN + 64];
  snprintf(said, sizeof said, "after its action, %s", why);
  return event_failed(sim, ev, said, t);
}

/* The run stops after this instant; the first event to say so is the one named. */
static void stop_by(jySim *sim, const jyUserEvent *ev, int *stop) {
  *stop = 1;
  if (!sim->stopped_by[0]) snprintf(sim->stopped_by, sizeof sim->stopped_by, "%s", ev->name);
}

/* Event k's action (NULL: stop) at (t, y). */
static jyStatus run_action(jySim *sim, int k, double t, double *y, int *changed, int *stop) {
  const jyUserEvent *ev = &sim->model->events[k];
  if (!ev->action) {
    stop_by(sim, ev, stop);
    return JY_OK;
  }
  jyEventsRun *run = sim->user_events;
  jyEventCall *c = begin_call(sim, k, t, y, 1);
  if (ev->action(ev->ud, c, run->message, sizeof run->message) != 0)
    return event_failed(sim, ev, run->message[0] ? run->message : "its action failed", t);
  if (c->stop) stop_by(sim, ev, stop);
  if (c->param_changed) *changed = 1;
  if (!c->moved) return JY_OK;
  *changed = 1;
  return settle_jump(sim, ev, t, y);
}

jyStatus jy_events_fire(jySim *sim, double t, double *y, const int *found, int *changed,
                        int *stop) {
  *changed = 0;
  *stop = 0;
  for (int k = 0; k < jy_events_count(sim); k++) {
    if (!found[k]) continue;
    jyStatus st = jy_sim_count_event(sim, sim->model->events[k].name, t);
    if (st == JY_OK) st = run_action(sim, k, t, y, changed, stop);
    if (st != JY_OK) return st;
  }
  return JY_OK;
}

/* ---- the call's accessors and actions (joinery.h) ---- */

double jy_event_time(const jyEventCall *call) { return call ? call->t : NAN; }
const double *jy_event_q(const jyEventCall *call) { return call ? call->q : NULL; }
const double *jy_event_v(const jyEventCall *call) { return call ? call->v : NULL; }
const jyModel *jy_event_model(const jyEventCall *call) {
  if (!call) return NULL;
  return call->sim ? call->sim->model : call->eval->model;
}
const char *jy_event_name(const jyEventCall *call) {
  if (!call) return "";
  return call->event ? call->event->name : call->controller->name;
}
const char *jy_event_error(const jyEventCall *call) { return call ? call->error : ""; }

static jyStatus call_refused(jyEventCall *call, const char *fmt, const char *what) {
  jy_set_error(call->error, fmt, what);
  return JY_ERR_INVALID;
}

jyStatus jy_event_channels(jyEventCall *call, const double **row) {
  if (!call || !row) return JY_ERR_INVALID;
  if (!call->sim) {
    jy_set_error(call->error,
                 "a continuous controller reads coordinates, velocities and inputs: "
                 "the other channels come from the solve it is part of");
    return JY_ERR_INVALID;
  }
  jyEventsRun *run = call->sim->user_events;
  if (!call->row_ready) {
    /* The simulation's evaluator reports angles continuous from its last output row: this
     * row is read from the same history but must not move it. */
    jyEval *e = call->sim->eval;
    size_t nch = (size_t)call->sim->model->nchannels;
    int reported = e->angles_reported;
    memcpy(run->angle_save, e->angle_prev, nch * sizeof(double));
    jyStatus st = jy_eval_channels(e, call->q, call->v, call->t, run->row);
    memcpy(e->angle_prev, run->angle_save, nch * sizeof(double));
    e->angles_reported = reported;
    if (st != JY_OK) {
      jy_set_error(call->error, "%s", jy_eval_error(e));
      return st;
    }
    call->row_ready = 1;
  }
  *row = run->row;
  return JY_OK;
}

/* Coordinate or velocity j of the state set to value (an action only). */
static const char *const CONTROLLER_SETS = "a controller sets inputs only (jy_event_set_input; "
                                           "in Lua s:set_input): a %s jump is an event's action";

static jyStatus set_state(jyEventCall *call, double *x, int j, double value, const char *what) {
  if (!call) return JY_ERR_INVALID;
  if (call->controller) return call_refused(call, CONTROLLER_SETS, what);
  if (!call->in_action)
    return call_refused(call, "setting a %s is for an event's action, not its `when` function",
                        what);
  int n = call->sim->model->n;
  if (j < 0 || j >= n) {
    jy_set_error(call->error, "%s index %d is outside 0 .. %d", what, j, n - 1);
    return JY_ERR_INVALID;
  }
  if (!isfinite(value)) {
    jy_set_error(call->error, "%s '%s' set to %g, not a finite number", what,
                 call->sim->model->coord_names[j], value);
    return JY_ERR_INVALID;
  }
  x[j] = value;
  call->moved = 1;
  call->row_ready = 0;
  return JY_OK;
}

jyStatus jy_event_set_q(jyEventCall *call, int j, double value) {
  return set_state(call, call ? call->q : NULL, j, value, "coordinate");
}

jyStatus jy_event_set_v(jyEventCall *call, int j, double value) {
  return set_state(call, call ? call->v : NULL, j, value, "velocity");
}

static int find_model_part(const jyModel *md, const char *name) {
  for (int i = 0; i < md->nparts; i++)
    if (strcmp(md->parts[i].inst.name, name) == 0) return i;
  return -1;
}

jyStatus jy_event_set_param(jyEventCall *call, const char *part, const char *param, double value) {
  if (!call || !part || !param) return JY_ERR_INVALID;
  if (!call->in_action)
    return call_refused(call, "%s is for an event's action, not its `when` function",
                        "setting a parameter");
  if (call->controller) return call_refused(call, CONTROLLER_SETS, "parameter");
  jySim *sim = call->sim;
  if (sim->np)
    return call_refused(call,
                        "setting a parameter is not supported under the %s formulation (its "
                        "multiplier coordinates are set up for the parameters the run began "
                        "with); use formulation = \"udwadia-kalaba\"",
                        "natsiavas-paraskevopoulos");
  int p = find_model_part(sim->model, part);
  if (p < 0) return call_refused(call, "no part '%s' in the model", part);
  const jyPartType *type = sim->model->parts[p].inst.type;
  int k = jy_param_index(type, param);
  if (k < 0) {
    jy_set_error(call->error, "part '%s' (%s) has no parameter '%s'", part, type->name, param);
    return JY_ERR_UNKNOWN_NAME;
  }
  jyStatus st = jy_eval_set_param(sim->eval, p, k, value);
  if (st != JY_OK) {
    jy_set_error(call->error, "%s", jy_eval_error(sim->eval));
    return st;
  }
  call->param_changed = 1;
  call->row_ready = 0;
  return JY_OK;
}

double jy_event_input(const jyEventCall *call, int k) {
  if (!call) return NAN;
  jyEval *e = call->sim ? call->sim->eval : call->eval;
  if (k < 0 || k >= e->model->ninputs || jy_eval_inputs_at(e, call->t) != JY_OK) return NAN;
  return e->input_now[k];
}

jyStatus jy_event_set_input(jyEventCall *call, int k, double value) {
  if (!call) return JY_ERR_INVALID;
  if (!call->in_action)
    return call_refused(call, "%s is for an event's action or a controller, not a `when` function",
                        "setting an input");
  if (!call->sim) return jy_eval_drive_input(call->eval, k, value, call->error, sizeof call->error);
  int changed = 0;
  jyStatus st = jy_sim_hold_input(call->sim, k, value, &changed);
  if (st != JY_OK) {
    jy_set_error(call->error, "%s", jy_eval_error(call->sim->eval));
    return st;
  }
  if (!changed) return JY_OK;
  call->param_changed = 1;
  call->row_ready = 0;
  return JY_OK;
}

jyStatus jy_sim_hold_input(jySim *sim, int k, double value, int *changed) {
  *changed = 0;
  jyEval *evals[3];
  int count = jy_sim_evals(sim, evals);
  for (int i = 0; i < count; i++) {
    /* checked by the first; the same index and value suit every evaluator */
    double before = k >= 0 && k < sim->model->ninputs ? evals[i]->input_held[k] : NAN;
    jyStatus st = jy_eval_set_input(evals[i], k, value);
    if (st != JY_OK) return st;
    *changed |= before != value;
  }
  return JY_OK;
}

jyStatus jy_controller_run(jySim *sim, int k, double t, double *y, int *changed) {
  jyEventsRun *run = sim->user_events;
  const jyController *ctl = &sim->model->controllers[k];
  jyEventCall *c = &run->call;
  *c =
    (jyEventCall){.sim = sim, .controller = ctl, .t = t, .q = y, .v = y + sim->nq, .in_action = 1};
  run->message[0] = '\0';
  if (ctl->fn(ctl->ud, c, run->message, sizeof run->message) != 0) {
    sim->failure = JY_ERR_PART;
    jy_set_error(sim->error, "controller '%s': %s at t = %.9g", ctl->name,
                 run->message[0] ? run->message : "its function failed", t);
    return JY_ERR_PART;
  }
  if (c->param_changed) *changed = 1;
  return JY_OK;
}

void jy_event_stop(jyEventCall *call) {
  if (call && call->in_action && call->event) call->stop = 1;
}

jyStatus jy_sim_count_event(jySim *sim, const char *name, double t) {
  const jyAllocator *a = &sim->model->alloc;
  sim->events++;
  for (int k = 0; k < sim->nevent_kinds; k++) {
    jyEventSummary *e = &sim->event_kinds[k];
    if (strcmp(e->name, name) != 0) continue;
    e->count++;
    e->last_t = t;
    return JY_OK;
  }
  if (sim->nevent_kinds == sim->event_kinds_cap) {
    int cap = sim->event_kinds_cap ? 2 * sim->event_kinds_cap : 8;
    jyEventSummary *grown = jy_calloc(a, (size_t)cap, sizeof *grown);
    if (!grown) return JY_ERR_NOMEM;
    if (sim->nevent_kinds > 0)
      memcpy(grown, sim->event_kinds, (size_t)sim->nevent_kinds * sizeof *grown);
    jy_free(a, sim->event_kinds);
    sim->event_kinds = grown;
    sim->event_kinds_cap = cap;
  }
  char *copy = jy_strdup(a, name);
  if (!copy) return JY_ERR_NOMEM;
  sim->event_kinds[sim->nevent_kinds++] = (jyEventSummary){copy, 1, t, t};
  return JY_OK;
}

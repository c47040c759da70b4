/* The simulation object: settings, state, the choice of stepper and the run through events,
 * output rows and counters (what the steppers call back into is in sim_step.c). Udwadia–Kalaba: y = [q; v],
 * y' = [v; q''(q, v, t)]. Natsiavas–Paraskevopoulos: y = [q; lambda; v; lambda'],
 * y' = [v; lambda'; q''; lambda''] (dyn_np.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "int_diagnose.h"
#include "settings.h"
#include "sim.h"
#include "sim_events.h"
#include "vector_ops.h"

#if SUNDIALS_VERSION_MAJOR >= 7
#define JY_SUN_COMM SUN_COMM_NULL
#else
#define JY_SUN_COMM NULL
#endif

/* Each method's stepper, from JY_METHODS. */
static const jyStepperOps *stepper_of(jyMethod method) {
#define STEPPER_(id, name, stepper, usage) \
  case id:                                 \
    return &jy_stepper_##stepper;
  switch (method) { JY_METHODS(STEPPER_) }
#undef STEPPER_
  return NULL;
}

/* The absolute tolerance of each state component: atol on the coordinates (and N–P's
 * multipliers), atol_velocity (default 10 atol) on their rates. */
static jyStatus setup_tolerances(jySim *sim) {
  sim->abstol = jy_sim_new_vector(sim);
  if (!sim->abstol) return JY_ERR_NOMEM;
  double *a = N_VGetArrayPointer(sim->abstol);
  double vel = sim->def.atol_velocity > 0 ? sim->def.atol_velocity : 10 * sim->def.atol;
  for (int j = 0; j < 2 * sim->nq; j++) a[j] = j < sim->nq ? sim->def.atol : vel;
  return JY_OK;
}

/* The largest step the integrators take: max_step, or (0) a tenth of the run's span, as
 * MATLAB's ode suite does, so that a signal of t a few steps long (a bump, a pulse) is not
 * stepped over by steps that grew on the smooth stretch before it; infinity: no limit. */
static double resolve_max_step(const jySimDef *d) {
  if (isinf(d->max_step)) return 0;
  return d->max_step > 0 ? d->max_step : 0.1 * (d->t_end - d->t_start);
}

static jyStatus check_def(jySim *sim, const jySimDef *d) {
  return jy_sim_def_bad(d, sim->error) ? JY_ERR_INVALID : JY_OK;
}

/* The integrated state from sim->q, v (and lambda, lambda'). */
static void pack_state(jySim *sim, double *y) {
  int n = sim->model->n, m = sim->model->m, nq = sim->nq;
  memcpy(y, sim->q, sizeof(double) * (size_t)n);
  memcpy(y + nq, sim->v, sizeof(double) * (size_t)n);
  if (sim->np) {
    memcpy(y + n, sim->lam, sizeof(double) * (size_t)m);
    memcpy(y + nq + n, sim->lamdot, sizeof(double) * (size_t)m);
  }
}

static void unpack_state(jySim *sim, const double *y) {
  int n = sim->model->n, m = sim->model->m, nq = sim->nq;
  memcpy(sim->q, y, sizeof(double) * (size_t)n);
  memcpy(sim->v, y + nq, sizeof(double) * (size_t)n);
  if (sim->np) {
    memcpy(sim->lam, y + n, sizeof(double) * (size_t)m);
    memcpy(sim->lamdot, y + nq + n, sizeof(double) * (size_t)m);
  }
}

/* N–P: lambda(0), lambda'(0) consistent with the constraint force at (q, v, t). */
static jyStatus initial_multipliers(jySim *sim) {
  if (!sim->np) return JY_OK;
  jyStatus st = jy_np_initial_multipliers(sim->np, sim->q, sim->v, sim->t, sim->lam, sim->lamdot);
  if (st != JY_OK)
    jy_set_error(sim->error, "initial multipliers of the N-P formulation: %s",
                 jy_np_error(sim->np));
  return st;
}

static jyStatus setup_formulation(jySim *sim) {
  const jyModel *model = sim->model;
  /* A tree model has no rows: N-P's equation is then M q'' = Q + C, Udwadia-Kalaba's, which
   * the tree recursion solves without the dense M that N-P's evaluator would form. */
  if (sim->def.formulation != JY_FORMULATION_NP || model->tree) return JY_OK;
  sim->np = jy_np_create(model);
  sim->lam = jy_calloc(&model->alloc, (size_t)model->m + 1, sizeof(double));
  sim->lamdot = jy_calloc(&model->alloc, (size_t)model->m + 1, sizeof(double));
  if (!sim->np || !sim->lam || !sim->lamdot) return JY_ERR_NOMEM;
  jyStatus st = jy_np_check_model(sim->np, model->q0, model->v0, sim->def.t_start);
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", jy_np_error(sim->np));
    return st;
  }
  sim->nq = model->n + model->m;
  return JY_OK;
}

/* Drift control: projection (UK with rows) needs scratch; Baumgarte is a rate in the
 * evaluator. N–P brings its own constraint recovery (eq. 76/78) and takes neither. */
static jyStatus setup_drift(jySim *sim) {
  const jyModel *model = sim->model;
  int n = model->n, n2 = 2 * sim->nq;
  sim->project = sim->def.drift == JY_DRIFT_PROJECTION && model->m > 0 && !sim->np;
  sim->eval->baumgarte_rate =
    !sim->np && sim->def.drift == JY_DRIFT_BAUMGARTE ? sim->def.baumgarte_rate : 0;
  if (!sim->project) return JY_OK;
  sim->proj_q = jy_calloc(&model->alloc, (size_t)n + 1, sizeof(double));
  sim->proj_v = jy_calloc(&model->alloc, (size_t)n + 1, sizeof(double));
  sim->proj_dv = jy_calloc(&model->alloc, (size_t)n + 1, sizeof(double));
  sim->proj_weights = N_VNew_Serial(n2 > 0 ? n2 : 1, sim->ctx);
  if (sim->proj_weights) jy_vector_use_engine_ops(sim->proj_weights);
  return sim->proj_q && sim->proj_v && sim->proj_dv && sim->proj_weights ? JY_OK : JY_ERR_NOMEM;
}

/* The next sample of controller k: t_start + sample[k] period, computed afresh each time
 * (no sum of periods drifts). */
static double sample_time(const jySim *sim, int k) {
  double period = sim->model->controllers[k].period;
  if (period == 0) return INFINITY; /* continuous: it runs inside every evaluation */
  return sim->def.t_start + (double)sim->sample[k] * period;
}

static void find_next_sample(jySim *sim) {
  sim->next_sample = INFINITY;
  for (int k = 0; k < sim->model->ncontrollers; k++)
    if (sample_time(sim, k) < sim->next_sample) sim->next_sample = sample_time(sim, k);
}

/* A signal function declared without breakpoints, sampled at SIGNAL_SCAN + 1 times over the
 * run: where it starts or stops changing (its value or rate) becomes a breakpoint, so that a
 * pulse on a flat road (a bump at 6.3 s of a 20 s run) restarts the integrator at its start
 * instead of being stepped over by steps of a tenth of the span. A pulse narrower than the
 * scan's spacing can still be missed: declare its breakpoints. Appends to sim->breaks (room
 * for SIGNAL_SCAN more a signal). */
enum { SIGNAL_SCAN = 4096 };
static jyStatus scan_signal(jySim *sim, const jyInputDef *in) {
  double t0 = sim->def.t_start, span = sim->def.t_end - sim->def.t_start;
  int was_active = -1;
  double prev[3] = {0, 0, 0};
  for (int i = 0; i <= SIGNAL_SCAN; i++) {
    double t = i == SIGNAL_SCAN ? sim->def.t_end : t0 + span * i / SIGNAL_SCAN, out[3] = {0, 0, 0};
    char why[200] = "";
    if (in->fn(in->ud, t, out, why, sizeof why) != 0 || !isfinite(out[0]) || !isfinite(out[1])) {
      jy_set_error(sim->error, "input '%s' at t = %.9g: %s", in->name, t,
                   why[0] ? why : "its function gave a value that is not finite");
      return JY_ERR_PART;
    }
    if (i > 0) { /* the interval before t: does the signal change in it? */
      int active = out[0] != prev[0] || out[1] != 0 || prev[1] != 0;
      double t_prev = t0 + span * (i - 1) / SIGNAL_SCAN;
      if (was_active >= 0 && active != was_active && t_prev > t0)
        sim->breaks[sim->nbreaks++] = t_prev;
      was_active = active;
    }
    memcpy(prev, out, sizeof prev);
  }
  return JY_OK;
}

/* The breakpoints the run stops at: the model's, and those its signal functions declared
 * without breakpoints show (scan_signal), sorted, each once. */
static jyStatus setup_breaks(jySim *sim) {
  const jyModel *md = sim->model;
  int scans = 0;
  for (int k = 0; k < md->ninputs; k++)
    scans += md->inputs[k].kind == JY_INPUT_FUNCTION && md->inputs[k].nbreaks == 0;
  size_t room = (size_t)md->nbreaks + (size_t)scans * SIGNAL_SCAN + 1;
  sim->breaks = jy_calloc(&md->alloc, room, sizeof(double));
  if (!sim->breaks) return JY_ERR_NOMEM;
  if (md->nbreaks) memcpy(sim->breaks, md->breaks, sizeof(double) * (size_t)md->nbreaks);
  sim->nbreaks = md->nbreaks;
  if (scans == 0 || !(sim->def.t_end > sim->def.t_start)) return JY_OK;
  sim->scan_h = (sim->def.t_end - sim->def.t_start) / SIGNAL_SCAN;
  for (int k = 0; k < md->ninputs; k++) {
    const jyInputDef *in = &md->inputs[k];
    if (in->kind != JY_INPUT_FUNCTION || in->nbreaks > 0) continue;
    jyStatus st = scan_signal(sim, in);
    if (st != JY_OK) return st;
  }
  sim->nbreaks = jy_sort_unique(sim->breaks, sim->nbreaks);
  return JY_OK;
}

static jyStatus setup_inputs(jySim *sim) {
  const jyModel *md = sim->model;
  if (md->ninputs > 0) {
    jyStatus st = setup_breaks(sim);
    if (st != JY_OK) return st;
  }
  jy_sim_find_segment(sim, sim->t);
  sim->next_sample = INFINITY;
  if (md->m > 0 && (md->ninputs > 0 || md->ncontrollers > 0)) {
    sim->settle_weights = jy_calloc(&md->alloc, (size_t)md->n + 1, sizeof(double));
    if (!sim->settle_weights) return JY_ERR_NOMEM;
  }
  if (md->ncontrollers == 0) return JY_OK;
  sim->sample = jy_calloc(&md->alloc, (size_t)md->ncontrollers, sizeof(long));
  if (!sim->sample) return JY_ERR_NOMEM;
  find_next_sample(sim);
  return JY_OK;
}

/* The guards of the parts with modes and of the user events, and the root finding's
 * scratch; nothing for a model without either (its run is the same as before events). */
static jyStatus setup_events(jySim *sim) {
  const jyAllocator *a = &sim->model->alloc;
  jyStatus st = jy_hybrid_setup(sim);
  if (st == JY_OK) st = jy_events_setup(sim);
  if (st != JY_OK) return st;
  sim->nguards_part = jy_hybrid_count(sim);
  sim->nguards_user = jy_events_count(sim);
  sim->nguards = sim->nguards_part + sim->nguards_user;
  if (sim->nguards == 0) return JY_OK;
  sim->guard_directions = jy_calloc(a, (size_t)sim->nguards, sizeof(int));
  sim->roots_found = jy_calloc(a, (size_t)sim->nguards, sizeof(int));
  sim->root_y = jy_sim_new_vector(sim);
  if (!sim->guard_directions || !sim->roots_found || !sim->root_y) return JY_ERR_NOMEM;
  /* the parts' guards are watched both ways: their transitions decide */
  jy_events_directions(sim, sim->guard_directions + sim->nguards_part);
  return JY_OK;
}

int jy_sim_num_event_kinds(const jySim *sim) { return sim ? sim->nevent_kinds : 0; }

jyEventSummary jy_sim_event_summary(const jySim *sim, int k) {
  if (!sim || k < 0 || k >= sim->nevent_kinds) return (jyEventSummary){"", 0, NAN, NAN};
  return sim->event_kinds[k];
}

const char *jy_sim_stopped_by(const jySim *sim) { return sim ? sim->stopped_by : ""; }

jySim *jy_sim_create(const jyModel *model, const jySimDef *def, jyStatus *status) {
  jyStatus dummy;
  if (!status) status = &dummy;
  *status = JY_ERR_INVALID;
  if (!model) return NULL;
  jySim *sim = jy_calloc(&model->alloc, 1, sizeof *sim);
  *status = JY_ERR_NOMEM;
  if (!sim) return NULL;
  sim->model = model;
  sim->def = def ? *def : jy_default_sim_def();
  sim->q = jy_calloc(&model->alloc, (size_t)model->n + 1, sizeof(double));
  sim->v = jy_calloc(&model->alloc, (size_t)model->n + 1, sizeof(double));
  sim->row = jy_calloc(&model->alloc, (size_t)model->nchannels, sizeof(double));
  sim->eval = jy_eval_create(model);
  sim->nq = model->n;
  if (!sim->q || !sim->v || !sim->row || !sim->eval) return sim;
  jy_eval_continue_angles(sim->eval);
  *status = check_def(sim, &sim->def);
  if (sim->def.atol == 0) /* the default (joinery.h): rtol / 100, at the default rtol its 1e-13 */
    sim->def.atol = sim->def.rtol == jy_default_sim_def().rtol ? 1e-13 : sim->def.rtol / 100;
  if (*status == JY_OK) *status = jy_sim_select_columns(sim);
  sim->def.columns = NULL; /* read here only */
  if (*status != JY_OK) return sim;
  sim->max_step = resolve_max_step(&sim->def);
  sim->eval->run_rtol = sim->def.rtol; /* parts with modes size their bands by them */
  sim->eval->run_atol = sim->def.atol;
  sim->stepper = stepper_of(sim->def.method);
  sim->method_now = sim->def.method;
  *status = setup_formulation(sim);
  if (*status != JY_OK) return sim;
  memcpy(sim->q, model->q0, sizeof(double) * (size_t)model->n);
  memcpy(sim->v, model->v0, sizeof(double) * (size_t)model->n);
  sim->t = sim->def.t_start;
  *status = initial_multipliers(sim);
  if (*status != JY_OK) return sim;
  int n2 = 2 * sim->nq;
  *status = JY_ERR_NOMEM;
  if (SUNContext_Create(JY_SUN_COMM, &sim->ctx) != 0) return sim;
  sim->y = N_VNew_Serial(n2 > 0 ? n2 : 1, sim->ctx);
  if (!sim->y) return sim;
  /* The integrators' vectors are clones of y and inherit its operations: the engine's
   * kernels (vector_ops.c), fused, so a linear combination of a step's stages is one pass
   * instead of a scale and a sum per stage. */
  jy_vector_use_engine_ops(sim->y);
  pack_state(sim, N_VGetArrayPointer(sim->y));
  *status = setup_tolerances(sim);
  if (*status == JY_OK) *status = setup_drift(sim);
  if (*status == JY_OK) *status = jy_sim_setup_friction_watch(sim);
  if (*status == JY_OK) *status = setup_events(sim);
  if (*status == JY_OK) *status = setup_inputs(sim);
  if (*status == JY_OK) *status = sim->stepper->setup(sim);
  if (*status != JY_OK && !sim->error[0])
    jy_set_error(sim->error, "could not set up the integrator (%s): %s", sim->stepper->name,
                 sim->solver_message);
  sim->ready = *status == JY_OK;
  return sim;
}

void jy_sim_destroy(jySim *sim) {
  if (!sim) return;
  if (sim->stepper) sim->stepper->destroy(sim);
  jy_hybrid_destroy(sim);
  jy_events_destroy(sim);
  if (sim->root_y) N_VDestroy(sim->root_y);
  if (sim->y) N_VDestroy(sim->y);
  if (sim->proj_weights) N_VDestroy(sim->proj_weights);
  if (sim->abstol) N_VDestroy(sim->abstol);
  if (sim->ctx) SUNContext_Free(&sim->ctx);
  const jyAllocator *a = &sim->model->alloc;
  jy_eval_destroy(sim->eval);
  jy_free(a, sim->cols);
  jy_free(a, sim->want);
  jy_free(a, sim->col_row);
  jy_np_destroy(sim->np);
  jy_free(a, sim->lam);
  jy_free(a, sim->lamdot);
  jy_free(a, sim->q);
  jy_free(a, sim->v);
  jy_free(a, sim->row);
  jy_free(a, sim->proj_q);
  jy_free(a, sim->proj_v);
  jy_free(a, sim->proj_dv);
  jy_free(a, sim->law_velocity);
  jy_free(a, sim->law_reversals);
  jy_free(a, sim->guard_directions);
  jy_free(a, sim->sample);
  jy_free(a, sim->settle_weights);
  jy_free(a, sim->breaks);
  jy_free(a, sim->roots_found);
  for (int k = 0; k < sim->nevent_kinds; k++) jy_free(a, (char *)sim->event_kinds[k].name);
  jy_free(a, sim->event_kinds);
  jy_free(a, sim);
}

const char *jy_sim_error(const jySim *sim) { return sim ? sim->error : ""; }
double jy_sim_time(const jySim *sim) { return sim ? sim->t : NAN; }
const double *jy_sim_q(const jySim *sim) { return sim ? sim->q : NULL; }
const double *jy_sim_v(const jySim *sim) { return sim ? sim->v : NULL; }

jyStatus jy_sim_set_state(jySim *sim, double t, const double *q, const double *v) {
  if (!sim || !sim->ready || !q || !v || !isfinite(t)) return JY_ERR_INVALID;
  int n = sim->model->n;
  memcpy(sim->q, q, sizeof(double) * (size_t)n);
  memcpy(sim->v, v, sizeof(double) * (size_t)n);
  sim->t = t;
  sim->failure = JY_OK;
  sim->root_pending = 0;
  sim->burst_count = 0;
  sim->stopped_by[0] = '\0';
  jy_eval_continue_angles(sim->eval); /* a new trajectory: angles continue from here */
  jy_sim_find_segment(sim, t);
  for (int k = 0; k < sim->model->ncontrollers; k++) { /* the first sample at or after t */
    if (sim->model->controllers[k].period == 0) continue;
    double ahead = floor((t - sim->def.t_start) / sim->model->controllers[k].period);
    sim->sample[k] = ahead > 1 ? (long)ahead - 1 : 0;
    while (sample_time(sim, k) < t) sim->sample[k]++;
  }
  if (sim->model->ncontrollers) find_next_sample(sim);
  jyStatus st = jy_hybrid_setup(sim); /* the parts' modes at the new state */
  if (st != JY_OK) return st;
  st = initial_multipliers(sim);
  if (st != JY_OK) return st;
  pack_state(sim, N_VGetArrayPointer(sim->y));
  return sim->stepper->restart(sim, t);
}

/* The integrator's reason for a failure, said in the model's terms (int_diagnose.c): where,
 * the state components with the largest weighted local error, the likely cause. Error
 * path: two vectors and the diagnosis' scratch are allocated here and freed. */
static jyStatus integrator_failure(jySim *sim) {
  double t = sim->t, h = NAN;
  sim->stepper->position(sim, &t, &h);
  N_Vector weights = jy_sim_new_vector(sim), errors = jy_sim_new_vector(sim);
  int have = weights && errors && sim->stepper->error_estimates(sim, weights, errors) == JY_OK;
  jyFailure why = {sim->solver_flag[0] ? sim->solver_flag : "?",
                   sim->solver_message,
                   sim->rhs_message,
                   sim->method_now != JY_METHOD_BDF,
                   sim->nq,
                   t,
                   h,
                   sim->def.rtol,
                   sim->def.atol,
                   N_VGetArrayPointer(sim->y),
                   have ? N_VGetArrayPointer(weights) : NULL,
                   have ? N_VGetArrayPointer(errors) : NULL};
  jy_diagnose_failure(sim->eval, &why, sim->error, sizeof sim->error);
  if (weights) N_VDestroy(weights);
  if (errors) N_VDestroy(errors);
  sim->failure = JY_ERR_INTEGRATOR;
  return sim->failure;
}

/* The interpolated state put on the manifold for reporting (the integrator keeps its
 * own); left as it is where the projection does not settle, and counted. */
static void project_for_report(jySim *sim, double t) {
  if (!sim->project) return;
  /* 1e-3 of the error weights: tighter than a step's 0.1, the report is read as exact. */
  /* Unguarded: the steps it interpolates between were checked; where the error control
   * sees no error (a fully prescribed motion) the interpolant may be far off, and this
   * projection is what makes the report exact. */
  int r = jy_sim_project_own_weights(sim, t, sim->y, 1e-3, 0u);
  if (r == 1) sim->projections_skipped++;
  if (r == 0) {
    const double *v = N_VGetArrayPointer(sim->y) + sim->nq;
    sim->kinetic_scale = fmax(sim->kinetic_scale, jy_eval_kinetic(sim->eval, v));
  }
}

/* The output row at the reported state to the sink (none: nothing to do). */
static jyStatus emit_row(jySim *sim, jyRowSink sink, void *ud) {
  if (!sink) return JY_OK;
  sim->last_row_t = sim->t;
  /* decimated: not computed, unless a selected angle output must follow it (sim_columns.c) */
  int skipped = sim->rows_seen++ % sim->def.every != 0;
  if (skipped && !sim->angle_rows) return JY_OK;
  sim->eval->keep_impulses = skipped; /* reported in the next row written */
  jyStatus st = jy_eval_channels_masked(sim->eval, sim->q, sim->v, sim->t, sim->row, sim->want);
  sim->eval->keep_impulses = 0;
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
    return st;
  }
  if (skipped) return JY_OK;
  for (int k = 0; k < sim->ncols; k++) sim->col_row[k] = sim->row[sim->cols[k]];
  if (sink(ud, sim->col_row, sim->ncols) == 0) return JY_OK;
  jy_set_error(sim->error, "%s at t = %.9g",
               sim->stop_reason[0] ? sim->stop_reason : "stopped by the output sink", sim->t);
  sim->stop_reason[0] = '\0';
  return JY_ERR_IO;
}

void jy_sim_set_stop_reason(jySim *sim, const char *why) {
  if (sim) snprintf(sim->stop_reason, sizeof sim->stop_reason, "%s", why ? why : "");
}

/* Crossings closer than this (relative to 1 + |t|) count as one instant: CVODE separates two
 * crossings by at least ~100 unit roundoffs of t, and real events (a bounce ended by v_close,
 * a cradle's impacts 2e-6 s apart) are orders of magnitude further apart. */
#define JY_EVENT_INSTANT 1e-12
/* Crossings handled at one instant before the run is stopped: a model's events that keep
 * firing there (a mode switch whose new guard crosses at once, an action re-arming its own
 * event) would otherwise advance t by rounding steps for ever. */
enum { MAX_EVENTS_AT_ONE_INSTANT = 100 };

/* Counts the crossing at t into the current burst; fails, naming the events that fired in it,
 * when the burst is too long. */
static jyStatus events_at_one_instant(jySim *sim, double t) {
  int same = sim->burst_count > 0 && t - sim->burst_t <= JY_EVENT_INSTANT * (1.0 + fabs(t));
  sim->burst_count = same ? sim->burst_count + 1 : 1;
  if (!same) sim->burst_start = t;
  sim->burst_t = t;
  if (sim->burst_count <= MAX_EVENTS_AT_ONE_INSTANT) return JY_OK;
  int used = snprintf(sim->error, sizeof sim->error,
                      "events keep firing at one instant: more than %d crossings between t = %.12g "
                      "and %.12g (the modes or the actions never settle); fired:",
                      MAX_EVENTS_AT_ONE_INSTANT, sim->burst_start, t);
  for (int k = 0; k < sim->nevent_kinds && used > 0 && (size_t)used < sizeof sim->error; k++)
    if (sim->event_kinds[k].last_t >= sim->burst_start)
      used += snprintf(sim->error + used, sizeof sim->error - (size_t)used, " '%s' (%ld x)",
                       sim->event_kinds[k].name, sim->event_kinds[k].count);
  return JY_ERR_CONVERGENCE;
}

/* Prefixes the error with the user events whose actions ran at this instant: what they
 * changed is what the parts' modes could not take. */
static void name_actions(jySim *sim) {
  char names[512] = "";
  size_t used = 0;
  for (int k = 0; k < sim->nguards_user && used < sizeof names; k++)
    if (sim->roots_found[sim->nguards_part + k])
      used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", used ? ", " : "",
                               sim->model->events[k].name);
  char why[sizeof sim->error];
  snprintf(why, sizeof why, "%s", sim->error);
  jy_set_error(sim->error, "after the action of event %s: %s", names, why);
}

/* The crossing the integrator located (sim->root_t): the state there is reported (a row
 * before), the parts' transitions and the user events' actions run in that order, the
 * integrator restarts from the state they leave (a row after, when it changed). */
static jyStatus fire_events(jySim *sim, jyRowSink sink, void *ud) {
  double t = sim->root_t;
  sim->root_pending = 0;
  if (events_at_one_instant(sim, t) != JY_OK) return sim->failure = JY_ERR_CONVERGENCE;
  N_VScale(1.0, sim->root_y, sim->y);
  project_for_report(sim, t);
  if (sim->failure != JY_OK) return sim->failure;
  unpack_state(sim, N_VGetArrayPointer(sim->y));
  sim->t = t;
  jyStatus st = emit_row(sim, sink, ud);
  if (st != JY_OK) return st;
  int parts_changed = 0, user_changed = 0, stop = 0;
  double *y = N_VGetArrayPointer(sim->y);
  st = jy_hybrid_fire(sim, t, y, sim->roots_found, &parts_changed);
  if (st == JY_OK)
    st = jy_events_fire(sim, t, y, sim->roots_found + sim->nguards_part, &user_changed, &stop);
  int resettled = 0; /* an action's parameter or jump may open or close a contact */
  if (st == JY_OK && user_changed && (st = jy_hybrid_settle(sim, t, y, &resettled)) != JY_OK)
    name_actions(sim);
  if (st != JY_OK) return sim->failure = st; /* a stop's name is in sim->stopped_by */
  if (!parts_changed && !user_changed) return JY_OK;
  st = sim->stepper->restart(sim, t);
  if (st != JY_OK) {
    jy_set_error(sim->error, "the integrator could not restart after the events at t = %.9g", t);
    return sim->failure = st;
  }
  unpack_state(sim, y);
  return emit_row(sim, sink, ud);
}

/* Integrates to t_out (at most the segment's end) through the crossings on the way (their
 * rows to the sink), or to the crossing whose event stops the run. */
static jyStatus advance_in_segment(jySim *sim, double t_out, jyRowSink sink, void *ud) {
  for (;;) {
    if (sim->root_pending && sim->root_t <= t_out) {
      jyStatus st = fire_events(sim, sink, ud);
      if (st != JY_OK || sim->stopped_by[0]) return st;
      continue;
    }
    sim->rhs_message[0] = '\0';
    sim->solver_message[0] = '\0';
    sim->solver_flag[0] = '\0';
    jyStatus st = sim->stepper->advance(sim, t_out, sim->y);
    if (sim->failure != JY_OK) return sim->failure; /* message already in sim->error */
    if (st == JY_ERR_NOMEM) {
      jy_set_error(sim->error, "out of memory in the integrator (%s, %s)", sim->stepper->name,
                   sim->solver_flag[0] ? sim->solver_flag : "setting up");
      return sim->failure = JY_ERR_NOMEM;
    }
    if (st != JY_OK) return integrator_failure(sim);
    if (!(sim->root_pending && sim->root_t <= t_out)) break;
  }
  project_for_report(sim, t_out);
  if (sim->failure != JY_OK) return sim->failure;
  unpack_state(sim, N_VGetArrayPointer(sim->y));
  sim->t = t_out;
  return JY_OK;
}

/* The integrator restarted at the reported state at sim->t, after an input changed or at a
 * breakpoint: the state put back onto the constraints as the new input or the signal's next
 * piece has them (a motor's prescribed velocity that kinks, a position that steps), the
 * parts' modes decided again with the new forces (a step in a push may start a block
 * sliding), N–P's multipliers made consistent, no step straddling it. */
static jyStatus restart_here(jySim *sim, const char *what) {
  double *y = N_VGetArrayPointer(sim->y);
  double t = sim->t;
  sim->root_pending = 0; /* a crossing located past t belongs to the old trajectory */
  int changed = 0;
  jyStatus st = JY_OK;
  if (sim->settle_weights) {
    char why[JY_ERROR_LEN];
    st = jy_sim_settle_state(sim, t, y, sim->settle_weights, why, sizeof why);
    if (st != JY_OK) {
      jy_set_error(sim->error, "after %s at t = %.9g: %s", what, t, why);
      return sim->failure = st;
    }
  }
  st = jy_hybrid_settle(sim, t, y, &changed);
  if (st == JY_OK && sim->np) {
    unpack_state(sim, y);
    st = initial_multipliers(sim);
    if (st == JY_OK) pack_state(sim, y);
  }
  if (st == JY_OK) {
    st = sim->stepper->restart(sim, t);
    if (st != JY_OK)
      jy_set_error(sim->error, "the integrator could not restart after %s at t = %.9g", what, t);
  }
  unpack_state(sim, y);
  if (st != JY_OK) sim->failure = st;
  return st;
}

/* The controllers due at sim->t run (in the order added) on the reported state; the
 * integrator restarts there when one changed an input. */
static jyStatus run_controllers(jySim *sim) {
  const jyModel *md = sim->model;
  int changed = 0;
  for (int k = 0; k < md->ncontrollers; k++) {
    if (sample_time(sim, k) > sim->t) continue; /* not due (or continuous) */
    jyStatus st = jy_controller_run(sim, k, sim->t, N_VGetArrayPointer(sim->y), &changed);
    if (st != JY_OK) return sim->failure = st;
    while (sample_time(sim, k) <= sim->t) sim->sample[k]++;
  }
  find_next_sample(sim);
  return changed ? restart_here(sim, "a controller's sample") : JY_OK;
}

/* Integrates to t_out: segment by segment between the inputs' breakpoints (restarting at
 * each), through the controllers' samples (each run where it falls, as a host's
 * jy_sim_advance then jy_sim_set_input would) and the crossings on the way. */
static jyStatus advance_through_events(jySim *sim, double t_out, jyRowSink sink, void *ud) {
  if (!sim || !sim->ready) return JY_ERR_INVALID;
  if (sim->failure != JY_OK) return sim->failure;
  if (sim->stopped_by[0]) {
    jy_set_error(sim->error, "the run was stopped by event '%s' at t = %.9g", sim->stopped_by,
                 sim->t);
    return JY_ERR_INVALID;
  }
  if (!(t_out >= sim->t)) {
    jy_set_error(sim->error, "cannot integrate back from t = %.9g to %.9g", sim->t, t_out);
    return JY_ERR_INVALID;
  }
  if (t_out > sim->def.t_end) {
    jy_set_error(sim->error, "cannot integrate past t_end = %.9g (asked for %.9g)", sim->def.t_end,
                 t_out);
    return JY_ERR_INVALID;
  }
  for (;;) {
    if (sim->next_sample <= sim->t) {
      jyStatus st = run_controllers(sim);
      if (st != JY_OK) return st;
    }
    if (t_out == sim->t) return JY_OK;
    double target = t_out;
    if (sim->seg_hi < target) target = sim->seg_hi;
    if (sim->next_sample < target) target = sim->next_sample;
    jyStatus st = advance_in_segment(sim, target, sink, ud);
    if (st != JY_OK || sim->stopped_by[0]) return st;
    if (sim->t >= sim->seg_hi) { /* a breakpoint: the next piece of the signals from here */
      jy_sim_find_segment(sim, sim->t);
      sim->restart_h0 = sim->scan_h;
      if (sim->restart_h0 > sim->seg_hi - sim->t) sim->restart_h0 = 0; /* the piece is shorter */
      sim->restart_at_breakpoint = 1;
      st = restart_here(sim, "an input's breakpoint");
      sim->restart_h0 = 0;
      sim->restart_at_breakpoint = 0;
      if (st != JY_OK) return st;
    }
  }
}

jyStatus jy_sim_advance(jySim *sim, double t_out) {
  return advance_through_events(sim, t_out, NULL, NULL);
}

jyStatus jy_sim_set_input_index(jySim *sim, int k, double value) {
  if (!sim || !sim->ready) return JY_ERR_INVALID;
  int changed = 0;
  jyStatus st = jy_sim_hold_input(sim, k, value, &changed);
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
    return st;
  }
  if (!changed) return JY_OK; /* the value it has: nothing restarts */
  if (sim->failure != JY_OK) return sim->failure;
  if (sim->stopped_by[0]) return JY_OK; /* nothing more is integrated */
  return restart_here(sim, "an input's change");
}

jyStatus jy_sim_set_input(jySim *sim, const char *name, double value) {
  if (!sim || !sim->ready || !name) return JY_ERR_INVALID;
  int k = jy_model_find_input(sim->model, name);
  if (k < 0) {
    char hint[256] = "";
    jy_model_input_hint(sim->model, name, hint, sizeof hint);
    jy_set_error(sim->error, "no input '%s'%s", name, hint);
    return JY_ERR_INVALID;
  }
  return jy_sim_set_input_index(sim, k, value);
}

double jy_sim_input(const jySim *sim, int k) {
  if (!sim || !sim->ready || k < 0 || k >= sim->model->ninputs) return NAN;
  if (jy_eval_inputs_at(sim->eval, sim->t) != JY_OK) return NAN;
  return sim->eval->input_now[k];
}

jyStatus jy_sim_channels(jySim *sim, double *out) {
  if (!sim || !out) return JY_ERR_INVALID;
  jyStatus st = jy_eval_channels(sim->eval, sim->q, sim->v, sim->t, out);
  if (st != JY_OK) jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
  return st;
}

jyStatus jy_sim_check_output_rows(jySim *sim) {
  const jySimDef *d = &sim->def;
  double rows = ceil((d->t_end - d->t_start) / d->dt_out - 1e-9) + 1;
  if (rows <= JY_MAX_OUTPUT_ROWS) return JY_OK;
  jy_set_error(sim->error,
               "t_end = %.9g with dt_out = %.9g would give %.3g output rows, more than the "
               "limit of %.0e; make dt_out larger than %.3g s (or t_end shorter)",
               d->t_end, d->dt_out, rows, JY_MAX_OUTPUT_ROWS,
               (d->t_end - d->t_start) / (JY_MAX_OUTPUT_ROWS - 1));
  return JY_ERR_INVALID;
}

jyStatus jy_sim_run(jySim *sim, jyRowSink sink, void *ud) {
  if (!sim || !sim->ready) return JY_ERR_INVALID;
  jyStatus rows_ok = jy_sim_check_output_rows(sim);
  if (rows_ok != JY_OK) return rows_ok;
  const jySimDef *d = &sim->def;
  /* Output times t_start + k dt_out; the last one is t_end itself. The count fits a long:
   * jy_sim_check_output_rows bounds it. */
  double span = d->t_end - d->t_start;
  long count = (long)ceil(span / d->dt_out - 1e-9);
  sim->last_row_t = NAN;
  sim->rows_seen = 0;
  for (long k = 0; k <= count; k++) {
    double t_out = k == count ? d->t_end : d->t_start + (double)k * d->dt_out;
    if (t_out < sim->t) continue;
    jyStatus st = advance_through_events(sim, t_out, sink, ud);
    if (st != JY_OK || sim->stopped_by[0]) return st; /* a stop's rows are written */
    if (sim->last_row_t == t_out) continue;           /* an event's row after at this very time */
    st = emit_row(sim, sink, ud);
    if (st != JY_OK) return st;
  }
  return JY_OK;
}

jySimStats jy_sim_stats(const jySim *sim) {
  jySimStats s = {0};
  if (!sim || !sim->ready) return s;
  sim->stepper->stats(sim, &s);
  if (sim->def.method != JY_METHOD_AUTO) { /* auto's stepper keeps its own books */
    s.method_time[sim->def.method] = sim->t - sim->def.t_start;
    s.method_steps[sim->def.method] = s.steps;
    if (sim->def.method == JY_METHOD_ERK) s.erk_rtol = sim->def.rtol;
  }
  s.projections_skipped = sim->projections_skipped;
  s.events = sim->events;
  s.spatial_evals = jy_spatial_solves(sim->eval->spatial);
  return s;
}

/* The simulation object: settings, state, the right-hand side and projection shared by the
 * stepping strategies, output rows and counters. Udwadia–Kalaba: y = [q; v],
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

/* What the right-hand side tells the integrator about a status (message from `why`). */
static int rhs_outcome(jySim *sim, jyStatus st, const char *why) {
  if (st == JY_OK) return 0;
  if (st == JY_ERR_PART || st == JY_ERR_NOMEM || st == JY_ERR_INVALID) {
    sim->failure = st;
    jy_set_error(sim->error, "%s", why);
    return -1;
  }
  /* A trial state off the solution may be singular or inconsistent; let the integrator
   * retry with a smaller step and keep the reason in case it gives up. */
  jy_set_error(sim->rhs_message, "%s", why);
  sim->rhs_status = st;
  return 1;
}

/* CVODE and ARKODE size their first step from norms of the state and its rate: a state of
 * size ~1e300 overflows them, and they ask for the right-hand side at t = NaN. That is said
 * here in the model's terms, rather than as a part "returning a value that is not finite
 * at t = nan" a call later. */
static int time_not_finite(jySim *sim, double t) {
  int n = sim->model->n, big = 0; /* the largest coordinate or rate at the last output */
  for (int j = 1; j < n; j++)
    if (fmax(fabs(sim->q[j]), fabs(sim->v[j])) > fmax(fabs(sim->q[big]), fabs(sim->v[big])))
      big = j;
  sim->failure = JY_ERR_INTEGRATOR;
  jy_set_error(sim->error,
               "the integrator's step size overflowed (it asked for t = %g after t = %.9g): the "
               "state is too large for its error norms (%s = %g, its rate %g); rescale the "
               "model or its initial values",
               t, sim->t, n > 0 ? jy_model_coord_name(sim->model, big) : "(no coordinates)",
               n > 0 ? sim->q[big] : 0.0, n > 0 ? sim->v[big] : 0.0);
  return -1;
}

int jy_sim_rhs(double t, N_Vector y, N_Vector ydot, void *ud) {
  jySim *sim = ud;
  /* Failures are sticky: the fixed-point solver of SUNDIALS 6 treats -1 as recoverable. */
  if (sim->failure != JY_OK) return -1;
  int n = sim->model->n, nq = sim->nq;
  const double *yv = N_VGetArrayPointer(y);
  if (!isfinite(t)) return time_not_finite(sim, t);
  double *dy = N_VGetArrayPointer(ydot);
  memcpy(dy, yv + nq, sizeof(double) * (size_t)nq);
  if (!sim->np)
    return rhs_outcome(sim, jy_eval_acceleration(sim->eval, yv, yv + n, t, dy + n),
                       jy_eval_error(sim->eval));
  jyStatus st =
    jy_np_accelerations(sim->np, yv, yv + n, yv + nq, yv + nq + n, t, dy + nq, dy + nq + n);
  return rhs_outcome(sim, st, jy_np_error(sim->np));
}

N_Vector jy_sim_new_vector(const jySim *sim) {
  return N_VNew_Serial(N_VGetLength(sim->y), sim->ctx);
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

/* Kinetic energy 1/2 x^T M x with the last assembled M (the sparse store or dense). */
static double kinetic(const jyEval *e, const double *x) { return jy_eval_kinetic(e, x); }

/* A velocity projection that takes away a large part of the kinetic energy is not a
 * correction of the integration error but a jump onto another branch of motion: at a
 * singular configuration (the constraint Jacobian losing rank) the branches cross, and a
 * step that ends near the crossing can be projected onto the wrong one. Measured on the
 * single four-bar: corrections within tolerance remove at most 1e-14 of T (rtol 1e-11)
 * to 1e-8 (rtol 1e-6); a branch switch removes all of it. So a jump is flagged when the
 * correction removes more than 1e-3 of T (and of the largest T reported) and is far
 * outside the error weights. The
 * velocity before is v_before; sim->proj_v holds the projected one. */
static int branch_jump(jySim *sim, double t, const double *v_before, const double *v_weights) {
  int n = sim->model->n, worst_j = 0;
  double *dv = sim->proj_dv, worst = 0;
  for (int j = 0; j < n; j++) {
    dv[j] = sim->proj_v[j] - v_before[j];
    if (fabs(dv[j]) * v_weights[j] > worst) worst = fabs(dv[j]) * v_weights[j], worst_j = j;
  }
  if (worst < 100) return 0;
  double removed = kinetic(sim->eval, dv), after = kinetic(sim->eval, sim->proj_v);
  /* Relative to the largest kinetic energy reported so far as well: near a turning point T
   * is small and a correction of tolerance size is a large part of it. */
  if (!(removed > 1e-3 * fmax(after + removed, sim->kinetic_scale))) {
    sim->kinetic_scale = fmax(sim->kinetic_scale, after);
    return 0;
  }
  jy_set_error(sim->rhs_message,
               "at t = %.9g the velocity projection would remove %.3g%% of the kinetic "
               "energy (%s from %.6g to %.6g): the mechanism is at a singular configuration, "
               "where its constraint Jacobian loses rank and branches of motion cross, and "
               "the step would switch branch",
               t, 100 * removed / (after + removed), sim->model->coord_names[worst_j],
               v_before[worst_j], sim->proj_v[worst_j]);
  return 1;
}

int jy_sim_project(jySim *sim, double t, N_Vector y, const double *weights, double eps,
                   N_Vector err, unsigned flags) {
  if (sim->failure != JY_OK) return -1;
  int n = sim->model->n, iterations = 0;
  double *yv = N_VGetArrayPointer(y);
  memcpy(sim->proj_q, yv, sizeof(double) * (size_t)n);
  memcpy(sim->proj_v, yv + n, sizeof(double) * (size_t)n);
  unsigned how = ((flags & JY_PROJECT_ASSEMBLED) ? JY_PROJ_ASSEMBLED : 0u) |
    ((flags & JY_PROJECT_KEEP_CLOSE) ? JY_PROJ_KEEP_CLOSE : 0u);
  jyStatus st =
    jy_project_state(sim->eval, t, sim->proj_q, sim->proj_v, weights, eps, how, &iterations);
  if (st == JY_OK && err)
    st = jy_project_error(sim->eval, N_VGetArrayPointer(err), N_VGetArrayPointer(err) + n);
  if (st == JY_ERR_PART || st == JY_ERR_NOMEM) {
    sim->failure = st;
    jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
    return -1;
  }
  if (st != JY_OK) { /* not converging: the integrator retries with a smaller step */
    jy_set_error(sim->rhs_message,
                 "projection onto the constraints did not converge at "
                 "t = %.9g",
                 t);
    return 1;
  }
  if ((flags & JY_PROJECT_GUARD) && branch_jump(sim, t, yv + n, weights + n)) return 2;
  memcpy(yv, sim->proj_q, sizeof(double) * (size_t)n);
  memcpy(yv + n, sim->proj_v, sizeof(double) * (size_t)n);
  return 0;
}

/* 1 / (rtol |y| + abstol) into sim->proj_weights. */
static const double *own_weights(jySim *sim, N_Vector y) {
  double *w = N_VGetArrayPointer(sim->proj_weights);
  const double *yv = N_VGetArrayPointer(y), *abstol = N_VGetArrayPointer(sim->abstol);
  sunindextype length = N_VGetLength(y);
  for (sunindextype j = 0; j < length; j++) /* one pass, not CVODE's three */
    w[j] = 1.0 / (sim->def.rtol * fabs(yv[j]) + abstol[j]);
  return w;
}

int jy_sim_project_own_weights(jySim *sim, double t, N_Vector y, double eps, unsigned flags) {
  return jy_sim_project(sim, t, y, own_weights(sim, y), eps, NULL, flags);
}

int jy_sim_guard_clears(jySim *sim, double t, N_Vector y) {
  jyEval *e = sim->eval;
  int n = sim->model->n;
  if (sim->np || !e->store_solved || !e->matrices_valid || e->matrices_t != t) return 0;
  const double *w = own_weights(sim, y), *yv = N_VGetArrayPointer(y);
  /* The matrices' state within a hundred tolerances of this one: they differ from its own
   * by ~1e-8 relative at rtol 1e-10 (the last right-hand side is the step's last
   * corrector iterate). */
  for (int j = 0; j < 2 * n; j++)
    if (!(fabs(yv[j] - e->matrices_state[j]) * w[j] <= 100)) return 0;
  if (jy_project_estimate(e, t, yv, yv + n, w, sim->proj_q, sim->proj_dv) != JY_OK) return 0;
  double worst = 0;
  for (int j = 0; j < n; j++) {
    double d = fabs(sim->proj_dv[j]) * w[n + j];
    if (!(d < INFINITY)) return 0; /* NaN too */
    worst = fmax(worst, d);
  }
  if (worst <= 10) return 1;
  /* Or it removes a thousandth of what a branch jump does (branch_jump's measure). */
  for (int j = 0; j < n; j++) sim->proj_v[j] = yv[n + j] + sim->proj_dv[j];
  double removed = kinetic(e, sim->proj_dv), after = kinetic(e, sim->proj_v);
  return removed <= 1e-6 * fmax(after + removed, sim->kinetic_scale);
}

int jy_sim_stop_at_branch(jySim *sim) {
  sim->failure = JY_ERR_BRANCH;
  jy_set_error(sim->error,
               "%s; the run stops rather than continue on another branch "
               "(method bdf, the default, goes through singular configurations)",
               sim->rhs_message);
  return -1;
}

/* Parts with an active non-ideal law (friction) have their local velocity watched after
 * every step: Coulomb friction reverses with the sliding direction, and a body come to
 * rest against friction it cannot overcome (sticking is not modelled) makes every
 * integrator reverse that velocity at nearly every step. A run that went on would creep
 * at the average of the reversals: a wrong motion. Reversals at 4 of the last 8 steps
 * stop it; a sliding oscillation reverses once in many steps. */
static int law_part(const jyModelPart *part) {
  return part->inst.type->nonideal_law && !(part->shape->flags & JY_PART_NO_LAW) &&
    !part->shape->hybrid;
}

static jyStatus setup_friction_watch(jySim *sim) {
  const jyModel *m = sim->model;
  size_t coords = 0;
  for (int k = 0; k < m->nparts; k++)
    if (law_part(&m->parts[k])) coords += (size_t)m->parts[k].inst.ncoords;
  if (coords == 0 || sim->np) return JY_OK;
  sim->law_velocity = jy_calloc(&m->alloc, coords, sizeof(double));
  sim->law_reversals = jy_calloc(&m->alloc, (size_t)m->nparts, 1);
  return sim->law_velocity && sim->law_reversals ? JY_OK : JY_ERR_NOMEM;
}

/* The steps a stop for slow progress waits for: a twentieth of max_steps, at least 100 (an
 * integrator's first steps are its smallest; CVODE grows them at most tenfold a step). The
 * margin: it stops when what is left to t_out is more than a thousand times max_steps of
 * their average, so the steps would have to grow a thousandfold at once for the run to
 * reach t_out within max_steps after all. */
enum { SLOW_STEPS_MIN = 100, SLOW_STEPS_SHARE = 20 };
#define SLOW_MARGIN 1000.0

int jy_sim_steps_spent(jySim *sim, const char *flag, long steps, double t_from, double t_now,
                       double t_out) {
  long budget = sim->def.max_steps, checked = budget / SLOW_STEPS_SHARE;
  if (checked < SLOW_STEPS_MIN) checked = SLOW_STEPS_MIN;
  double way = t_out - t_now, step = steps > 0 ? (t_now - t_from) / (double)steps : 0;
  if (steps >= budget) {
    snprintf(sim->solver_message, sizeof sim->solver_message,
             "more than max_steps = %ld steps between two outputs", budget);
  } else if (steps < checked || !(way > 0)) {
    return 0;
  } else if (!(step > 0)) {
    snprintf(sim->solver_message, sizeof sim->solver_message,
             "%ld steps since t = %.9g have not moved t: the steps are zero at this t", steps,
             t_from);
  } else if (way / step > SLOW_MARGIN * (double)budget) {
    snprintf(sim->solver_message, sizeof sim->solver_message,
             "the %ld steps since t = %.9g average %.3g s: the next output time %.9g is %.3g "
             "such steps away, more than max_steps = %ld allows by far",
             steps, t_from, step, t_out, way / step, budget);
  } else {
    return 0;
  }
  snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s", flag);
  return 1;
}

int jy_sim_check_step(jySim *sim, double t, N_Vector y) {
  const jyModel *m = sim->model;
  if (!sim->law_velocity) return 0;
  const double *yv = N_VGetArrayPointer(y);
  double *prev = sim->law_velocity;
  for (int k = 0; k < m->nparts; k++) {
    const jyModelPart *part = &m->parts[k];
    if (!law_part(part)) continue;
    int nc = part->inst.ncoords, mapped = 0;
    const double *ql, *vl;
    if (jy_localize(sim->eval, part, yv, yv + sim->nq, t, &ql, &vl, &mapped) != JY_OK) return 0;
    double dot = 0;
    for (int i = 0; i < nc; i++) dot += prev[i] * vl[i];
    memcpy(prev, vl, sizeof(double) * (size_t)nc);
    prev += nc;
    unsigned char *history = &sim->law_reversals[k];
    *history = (unsigned char)(*history << 1 | (dot < 0));
    int count = 0;
    for (unsigned h = *history; h; h >>= 1) count += (int)(h & 1u);
    if (count < 4) continue;
    sim->failure = JY_ERR_INTEGRATOR;
    jy_set_error(sim->error,
                 "at t = %.9g the sliding velocity of part '%s' (a friction law) reversed at "
                 "%d of the last 8 steps: the motion has come to rest against Coulomb friction "
                 "that it cannot overcome, and sticking is not modelled; the run stops rather "
                 "than creep. End the run before it comes to rest (t_end)",
                 t, part->inst.name, count);
    return -1;
  }
  return 0;
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
  return sim->proj_q && sim->proj_v && sim->proj_dv && sim->proj_weights ? JY_OK : JY_ERR_NOMEM;
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

int jy_sim_guards(double t, N_Vector y, double *g, void *ud) {
  jySim *sim = ud;
  if (sim->failure != JY_OK) return -1;
  const double *yv = N_VGetArrayPointer(y);
  if (jy_hybrid_guards(sim, t, yv, g) != 0) return -1;
  return jy_events_guards(sim, t, yv, g + sim->nguards_part) != 0 ? -1 : 0;
}

void jy_sim_root_located(jySim *sim, double t, N_Vector y) {
  sim->root_pending = 1;
  sim->root_t = t;
  N_VScale(1.0, y, sim->root_y);
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
  if (*status != JY_OK) return sim;
  sim->eval->run_rtol = sim->def.rtol; /* parts with modes size their bands by them */
  sim->eval->run_atol = sim->def.atol;
  sim->stepper = stepper_of(sim->def.method);
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
  /* The integrators' vectors are clones of y and inherit its operations: fused, a linear
   * combination of a step's stages is one pass instead of a scale and a sum per stage. */
  if (N_VEnableFusedOps_Serial(sim->y, SUNTRUE) != 0) return sim;
  pack_state(sim, N_VGetArrayPointer(sim->y));
  *status = setup_tolerances(sim);
  if (*status == JY_OK) *status = setup_drift(sim);
  if (*status == JY_OK) *status = setup_friction_watch(sim);
  if (*status == JY_OK) *status = setup_events(sim);
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
                   sim->def.method != JY_METHOD_BDF,
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
    sim->kinetic_scale = fmax(sim->kinetic_scale, kinetic(sim->eval, v));
  }
}

/* The output row at the reported state to the sink (none: nothing to do). */
static jyStatus emit_row(jySim *sim, jyRowSink sink, void *ud) {
  if (!sink) return JY_OK;
  jyStatus st = jy_sim_channels(sim, sim->row);
  if (st != JY_OK) return st;
  sim->last_row_t = sim->t;
  if (sink(ud, sim->row, sim->model->nchannels) == 0) return JY_OK;
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

/* Integrates to t_out through the crossings on the way (their rows to the sink), or to the
 * crossing whose event stops the run. */
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
  if (t_out == sim->t) return JY_OK;
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

jyStatus jy_sim_advance(jySim *sim, double t_out) {
  return advance_through_events(sim, t_out, NULL, NULL);
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

void jy_stats_add(jySimStats *sum, const jySimStats *more) {
  sum->steps += more->steps;
  sum->rhs_evals += more->rhs_evals;
  sum->error_test_fails += more->error_test_fails;
  sum->nonlinear_fails += more->nonlinear_fails;
  sum->jac_evals += more->jac_evals;
  sum->jac_rhs_evals += more->jac_rhs_evals;
  sum->krylov_iters += more->krylov_iters;
  sum->guard_evals += more->guard_evals;
}

jySimStats jy_sim_stats(const jySim *sim) {
  jySimStats s = {0};
  if (!sim || !sim->ready) return s;
  sim->stepper->stats(sim, &s);
  s.projections_skipped = sim->projections_skipped;
  s.events = sim->events;
  return s;
}

void jy_sim_record_flag(jySim *sim, const char *name, const char *integrator, int flag) {
  if (name)
    snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s", name);
  else
    snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s flag %d", integrator, flag);
}

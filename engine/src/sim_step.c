/* What the stepping strategies call back into while they step (sim.h): the right-hand side,
 * the projection onto the constraints and its branch check, the root function, the checks
 * after each accepted step, and the counters and flags they record. Below the steppers,
 * which sim.c chooses and drives. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "sim_events.h"
#include "vector_ops.h"

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
  N_Vector v = N_VNew_Serial(N_VGetLength(sim->y), sim->ctx);
  if (v) jy_vector_use_engine_ops(v);
  return v;
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
    ((flags & JY_PROJECT_KEEP_CLOSE) ? JY_PROJ_KEEP_CLOSE : 0u) |
    ((flags & JY_PROJECT_STALL_STOPS) ? JY_PROJ_STALL_STOPS : 0u);
  long factored = sim->eval->factorizations;
  jyStatus st =
    jy_project_state(sim->eval, t, sim->proj_q, sim->proj_v, weights, eps, how, &iterations);
  if (flags & JY_PROJECT_GUARD) sim->step_factorizations += sim->eval->factorizations - factored;
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
  /* A spatial tree's rows keep full rank at every configuration (each body's own rows fix
   * its coordinates given its parent's): no branch to jump to, unless the rows beside the
   * tree near a rank loss; and its right-hand sides leave no matrices to estimate with
   * (dyn_spatial.c). */
  if (!sim->np && e->spatial && jy_spatial_rows_clear(e->spatial)) return 1;
  if (sim->np || !e->store_solved || !e->matrices_valid || e->matrices_t != t) return 0;
  const double *w = own_weights(sim, y), *yv = N_VGetArrayPointer(y);
  /* The matrices' state within a hundred tolerances of this one: they differ from its own
   * by ~1e-8 relative at rtol 1e-10 (the last right-hand side is the step's last
   * corrector iterate). */
  for (int j = 0; j < 2 * n; j++)
    if (!(fabs(yv[j] - e->matrices_state[j]) * w[j] <= 100)) return 0;
  long factored = e->factorizations;
  jyStatus st = jy_project_estimate(e, t, yv, yv + n, w, sim->proj_q, sim->proj_dv);
  sim->step_factorizations += e->factorizations - factored;
  if (st != JY_OK) return 0;
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

jyStatus jy_sim_setup_friction_watch(jySim *sim) {
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
  /* Every `checked` steps the last `checked` alone are judged too (from the second window
   * on; the first is the whole interval, judged below): a run that went well and then
   * crawls (steps of 1e-18 s after thousands of ordinary ones) keeps an average over the
   * whole interval that would not stop it before max_steps. */
  if (steps == 0) sim->slow_mark_t = t_from;
  if (steps > 0 && steps < budget && steps % checked == 0 && way > 0) {
    double recent = (t_now - sim->slow_mark_t) / (double)checked, since = sim->slow_mark_t;
    sim->slow_mark_t = t_now;
    if (steps > checked && !(recent > 0)) { /* steps below the resolution of t there */
      snprintf(sim->solver_message, sizeof sim->solver_message,
               "the last %ld steps have not moved t from %.17g: the steps are below its "
               "resolution there",
               checked, t_now);
      snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s", flag);
      return 1;
    }
    if (steps > checked && way / recent > SLOW_MARGIN * (double)budget) {
      snprintf(sim->solver_message, sizeof sim->solver_message,
               "the last %ld steps, since t = %.9g, average %.3g s: the next output time %.9g "
               "is %.3g such steps away, more than max_steps = %ld allows by far",
               checked, since, recent, t_out, way / recent, budget);
      snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s", flag);
      return 1;
    }
  }
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

void jy_sim_record_flag(jySim *sim, const char *name, const char *integrator, int flag) {
  if (name)
    snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s", name);
  else
    snprintf(sim->solver_flag, sizeof sim->solver_flag, "%s flag %d", integrator, flag);
}

double jy_sim_constraint_sigma(jySim *sim, double t, N_Vector y) {
  return jy_sim_constraint_sigma_rows(sim, t, y, NULL);
}

double jy_sim_constraint_sigma_rows(jySim *sim, double t, N_Vector y, int *kept) {
  const jyModel *md = sim->model;
  if (kept) *kept = 0;
  int n = md->n;
  const double *yv = N_VGetArrayPointer(y);
  if (sim->np || md->m == 0) return NAN;
  if (jy_assemble(sim->eval, yv, yv + n, t, JY_ASM_CONSTRAINTS) != JY_OK) return NAN;
  const jyCsc *a = jy_eval_constraint_matrix(sim->eval);
  const unsigned char *dropped = jy_eval_problem(sim->eval).dropped;
  const jyAllocator *alloc = &md->alloc;
  /* Every row, each scaled to unit length (an inactive row is zero), and the count of those
   * the solve keeps: the matrix's rank away from a singular configuration. Its smallest
   * singular value there is the kept-th largest of all the rows', whichever rows the solve
   * leaves out as dependent: the kept rows' own would fall wherever the dependent ones turn
   * (a planar loop's rows are in space axes: the flyball governor's kept set fell from 0.088
   * to 1e-5 a quarter turn on, and auto took each such place for a singular one). */
  double *norm = jy_calloc(alloc, (size_t)md->m, sizeof(double));
  int *slot = jy_calloc(alloc, (size_t)md->m, sizeof(int));
  double sigma = NAN;
  if (!norm || !slot) goto done;
  for (int j = 0; j < n; j++)
    for (int k = a->p[j]; k < a->p[j + 1]; k++) norm[a->i[k]] += a->x[k] * a->x[k];
  int rows = 0, rank = 0;
  for (int i = 0; i < md->m; i++) {
    slot[i] = norm[i] > 0 ? rows++ : -1;
    if (norm[i] > 0 && !(dropped && dropped[i])) rank++;
  }
  if (kept) *kept = rank;
  if (rank == 0 || rank > n || (double)rows * rows * n > JY_SIGMA_MAX_WORK) goto done;
  double *dense = jy_calloc(alloc, (size_t)rows * (size_t)n + (size_t)rows, sizeof(double));
  if (!dense) goto done;
  for (int j = 0; j < n; j++)
    for (int k = a->p[j]; k < a->p[j + 1]; k++)
      if (slot[a->i[k]] >= 0)
        dense[slot[a->i[k]] + (size_t)j * (size_t)rows] = a->x[k] / sqrt(norm[a->i[k]]);
  double *sv = dense + (size_t)rows * (size_t)n, query = 0;
  if (LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'N', rows, n, dense, rows, sv, NULL, 1, NULL, 1,
                          &query, -1) == 0) {
    lapack_int lwork = (lapack_int)query > 1 ? (lapack_int)query : 1;
    double *work = jy_calloc(alloc, (size_t)lwork, sizeof(double));
    if (work &&
        LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'N', rows, n, dense, rows, sv, NULL, 1, NULL, 1,
                            work, lwork) == 0)
      sigma = sv[rank - 1]; /* rank <= min(rows, n): the singular values are in order */
    jy_free(alloc, work);
  }
  jy_free(alloc, dense);
done:
  jy_free(alloc, norm);
  jy_free(alloc, slot);
  return sigma;
}

/* The segment between the inputs' breakpoints that holds t (seg_lo <= t < seg_hi): the
 * integrators stop at its end, and a signal reads the piece it integrates over. */
void jy_sim_find_segment(jySim *sim, double t) {
  int lo = 0, hi = sim->nbreaks; /* the first break > t */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (sim->breaks[mid] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  jy_sim_set_segment(sim, lo > 0 ? sim->breaks[lo - 1] : -INFINITY,
                     lo < sim->nbreaks ? sim->breaks[lo] : INFINITY);
}

void jy_sim_set_segment(jySim *sim, double lo, double hi) {
  sim->seg_lo = lo;
  sim->seg_hi = hi;
  jyEval *evals[3];
  int count = jy_sim_evals(sim, evals);
  for (int i = 0; i < count; i++) jy_eval_input_segment(evals[i], lo, hi);
}

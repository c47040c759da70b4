/* method = auto: when to leave Adams for BDF and when to come back (int_auto.h). The
 * thresholds are measured in docs/numerics.md, "The automatic method". */
#include "int_auto.h"

#include <float.h>
#include <math.h>

/* Adams steps between looks at its failures; a look without failures costs nothing. */
#define CHECK_STEPS 50
/* Adams' fixed-point corrector converges only while h l1 rho < 1 (l1 <= 1 at every
 * order): at h rho above 1 the steps are held by stability, not by accuracy. */
#define STIFF_H_RHO 1.0
/* BDF's step is one Adams takes stably with a margin: the stiffness has passed. */
#define NONSTIFF_H_RHO 0.25
/* BDF steps after a change for stiffness before its pace is compared with Adams' (its
 * start at order 1 is behind it), and how much faster than Adams it must go to stay. */
#define TRIAL_STEPS 60
#define TRIAL_GAIN 2.0
/* BDF steps between looks at the spectral radius in a stiff stretch. */
#define BDF_CHECK_STEPS 100
/* BDF steps a singular stretch takes at least. */
#define STRETCH_STEPS 40
/* Adams' step below 1/COLLAPSE of its recent largest (which forgets by H_RECENT_DECAY a
 * step: a tenth in 114 steps; one error test failure cuts the step by up to 10),
 * SETTLE_STEPS after it (re)started (its first steps grow from a tiny one): the step
 * collapses. */
#define COLLAPSE 20.0
#define H_RECENT_DECAY 0.98
#define SETTLE_STEPS 30
/* How far from the singular configuration a stretch hands back (in the smallest singular
 * value of the scaled rows, against its value where Adams met it), looked at every
 * SIGMA_CHECK_STEPS BDF steps. Where Adams meets one again soon after, BDF keeps the rest
 * of the run. */
#define SIGMA_CLEAR 16.0
/* An Adams step collapsing is a singular configuration ahead where the smallest singular
 * value has fallen below 1/SIGMA_FALLEN of where Adams took over. */
#define SIGMA_FALLEN 4.0
#define SIGMA_CHECK_STEPS 10
/* The race: Adams' window is the RACE_ADAMS_STEPS steps after its first SETTLE_STEPS in a
 * smooth stretch (its order has grown by then); ERK's shadow run covers the same span from
 * the same state. Work is right-hand sides, the factorizations of the step ends'
 * projections and guard (counted apart, at JY_SPATIAL_FACTOR_WORK each on a spatial tree),
 * and a price per step for the rest: Adams' Nordsieck history (q (q + 1) / 2 vector sums a
 * step) and its step-end assembly; ERK's stage sums. The prices were set when SUNDIALS' own
 * vector kernels (built -O0 by Debian) ran the sums; with the engine's (vector_ops.c) Adams'
 * step besides its right-hand sides is 1.3 to 2.4 of them (W1 at N = 10, the tree, the
 * compound pendulum; callgrind) and ERK's 0.1 to 1.7 besides the counted factorizations.
 * The prices stay: they overstate Adams by about 0.8 a step, under the margin, and with
 * them the clock's ratios in bench/methods.lua came closer to their targets, none farther
 * (docs/numerics.md). ERK must be RACE_MARGIN times cheaper to take over: a window is
 * part of a motion, and the count is not the clock. The margin was 2 while the tree's
 * window oversold ERK 2.5 times (its projections' sparse factorizations counted as one
 * right-hand side each: a window at 1.85 for ERK, the run at 1.7 for Adams); priced, the
 * tree's windows go to Adams at every rtol. On small models the count undersold ERK a
 * little (the compound pendulum, before the engine's kernels: ERK at rtol 1e-10 counted
 * 1.06 of Adams at 1e-11 over the run and took 1/1.3 of its time). */
#define RACE_ADAMS_STEPS 100
#define ADAMS_STEP_WORK 2.5
#define ERK_STEP_WORK 0.5
#define RACE_MARGIN 1.4
/* A lost race is run again this many steps on, then twice as many, and so on: a motion's
 * first second need not be its hardest (the W1 chain at rtol 1e-6: its first window is
 * Adams', the run ERK's by 1.4), and the races cost at most a few windows in all. */
#define RACE_FIRST_WAIT 1000
/* Adams' step grown more than this over a window: it was still starting (the W1 chain at
 * N = 1000 from rest: steps 30 to 130 are a sixth of a second, the 200 after the rest of
 * it), and the window is taken again from there. */
#define RACE_GROWTH 3.0
/* Adams' steps the run must have left (at the window's pace) for a race to be run: a race
 * lost costs up to 1/RACE_MARGIN of a window, and a short run's few hundred steps do not
 * repay it (the rolling disk's 387 steps: 24 % more time with its one race;
 * constant_speed's 566: ERK won its window and lost the run). */
#define RACE_MIN_LEFT 1000.0
/* The first window opens no sooner than the run's step RACE_FIRST_STEPS: a motion's first
 * stretch is the least like the rest of it (constant_speed: Adams' steps 130 to 230 were its
 * hardest, ERK won them 4.5 to 1, and ERK's 156 steps after them cost twice Adams' 336) and
 * a run short enough for that to matter has few steps past it (below RACE_MIN_LEFT); a long
 * run loses a few hundred of its thousands of steps to the wait. */
#define RACE_FIRST_STEPS 300

/* Power iterations per estimate (from the last estimate's direction). */
#define POWER_ITERATIONS 6

jyStatus jy_auto_init(jySim *sim, jyAutoChoice *a, double t, N_Vector start) {
  *a = (jyAutoChoice){0};
  a->stretch_t = a->window_t = t;
  a->check_every = CHECK_STEPS;
  a->sigma_clear = SIGMA_CLEAR;
  a->returned_t = -INFINITY;
  a->sigma_ref = NAN;
  a->sigma_ref_pending = 1;
  a->start_t = t;
  a->start_y = start;
  a->race_wait = RACE_FIRST_WAIT;
  a->race_next = RACE_FIRST_STEPS;
  a->probe = jy_sim_new_vector(sim);
  a->probe_y = jy_sim_new_vector(sim);
  a->f0 = jy_sim_new_vector(sim);
  a->f1 = jy_sim_new_vector(sim);
  a->weights = jy_sim_new_vector(sim);
  return a->probe && a->probe_y && a->f0 && a->f1 && a->weights ? JY_OK : JY_ERR_NOMEM;
}

void jy_auto_measure_start(jySim *sim, jyAutoChoice *a) {
  if (!a->sigma_ref_pending) return;
  a->sigma_ref_pending = 0;
  a->sigma_ref = jy_sim_constraint_sigma(sim, a->start_t, a->start_y);
}

void jy_auto_free(jyAutoChoice *a) {
  N_Vector *v[] = {&a->probe, &a->probe_y, &a->f0, &a->f1, &a->weights};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (*v[i]) N_VDestroy(*v[i]), *v[i] = NULL;
}

/* Weights that make every component's unit its own size (at least its half's largest, so a
 * coordinate passing through zero is not blown up): the power iteration's norm. */
static void probe_weights(const double *y, int nq, double *w) {
  for (int half = 0; half < 2; half++) {
    const double *x = y + half * nq;
    double scale = 0;
    for (int i = 0; i < nq; i++) scale = fmax(scale, fabs(x[i]));
    if (scale == 0) scale = 1;
    for (int i = 0; i < nq; i++) w[half * nq + i] = 1 / (fabs(x[i]) + scale);
  }
}

static double weighted_norm(const double *x, const double *w, int len) {
  double s = 0;
  for (int i = 0; i < len; i++) s = fmax(s, fabs(x[i] * w[i]));
  return s;
}

/* The spectral radius of the right-hand side's Jacobian at (t, y), by power iteration
 * with forward-difference products J x = (f(y + d x) - f(y)) / d, each perturbation
 * moving a component by at most sqrt(eps) of its unit: 1 + POWER_ITERATIONS right-hand
 * sides, from the last estimate's direction. The mechanical Jacobian's largest eigenvalues
 * come in pairs +-i w (or +-w), so the growth is averaged over the iterations, not taken
 * from the last one. NAN when a right-hand side fails there. */
static double spectral_radius(jySim *sim, jyAutoChoice *a, double t, N_Vector y) {
  int len = (int)N_VGetLength(y);
  const double *yv = N_VGetArrayPointer(y);
  double *x = N_VGetArrayPointer(a->probe), *w = N_VGetArrayPointer(a->weights);
  double *yp = N_VGetArrayPointer(a->probe_y);
  const double *f0 = N_VGetArrayPointer(a->f0), *f1 = N_VGetArrayPointer(a->f1);
  probe_weights(yv, len / 2, w);
  if (!a->probe_started) { /* a direction with some of every component */
    for (int i = 0; i < len; i++) x[i] = (i % 2 ? -1.0 : 1.0) * (1 + 0.37 * (i % 7)) / w[i];
    a->probe_started = 1;
  }
  if (jy_sim_rhs(t, y, a->f0, sim) != 0) return NAN;
  double log_growth = 0;
  int done = 0;
  for (int k = 0; k < POWER_ITERATIONS; k++) {
    double size = weighted_norm(x, w, len);
    if (!(size > 0) || !isfinite(size)) break;
    double d = sqrt(DBL_EPSILON) / size;
    for (int i = 0; i < len; i++) yp[i] = yv[i] + d * x[i];
    if (jy_sim_rhs(t, a->probe_y, a->f1, sim) != 0) return NAN;
    for (int i = 0; i < len; i++) x[i] = (f1[i] - f0[i]) / d;
    double grown = weighted_norm(x, w, len);
    if (!(grown > 0) || !isfinite(grown)) break;
    log_growth += log(grown / size);
    done++;
  }
  double size = weighted_norm(x, w, len); /* kept at unit size for the next estimate */
  if (size > 0 && isfinite(size))
    N_VScale(1 / size, a->probe, a->probe);
  else
    a->probe_started = 0;
  return done > 0 ? exp(log_growth / done) : 0;
}

static double pace(double t0, const jyAutoCounters *at, double t, const jyAutoCounters *now) {
  long rhs = now->rhs_evals - at->rhs_evals;
  return rhs > 0 ? (t - t0) / (double)rhs : INFINITY;
}

void jy_auto_stay_bdf(jyAutoChoice *a) { a->sigma_clear = INFINITY; }

void jy_auto_singular(jySim *sim, jyAutoChoice *a, double t, N_Vector y) {
  /* met again within the last stretch's own span of handing back: it was too short */
  if (t - a->returned_t < a->returned_span) jy_auto_stay_bdf(a);
  a->met_t = t;
  a->adams_h = a->h_recent;
  a->sigma_met = a->sigma_last = jy_sim_constraint_sigma(sim, t, y);
}

/* A singular stretch hands back to Adams once it has taken its steps past the time Adams
 * met the configuration and either BDF's step is back to half Adams' before (a collapse
 * for another cause, or well past the configuration) or, with constraint rows, the rows'
 * smallest singular value has grown to SIGMA_CLEAR times what it was there and still
 * grows (moving away, not towards the next one). */
static jyAutoMove leave_singular(jySim *sim, jyAutoChoice *a, double t, N_Vector y, double h,
                                 long in_stretch) {
  if (in_stretch < STRETCH_STEPS || t <= a->met_t || in_stretch % SIGMA_CHECK_STEPS != 0)
    return JY_AUTO_STAY;
  if (isinf(a->sigma_clear)) return JY_AUTO_STAY;
  if (fabs(h) >= 0.5 * a->adams_h) { /* sigma here is where Adams takes over */
    a->sigma_last = jy_sim_constraint_sigma(sim, t, y);
    return JY_AUTO_TO_SMOOTH;
  }
  if (isnan(a->sigma_met)) return JY_AUTO_STAY;
  double sigma = jy_sim_constraint_sigma(sim, t, y), before = a->sigma_last;
  a->sigma_last = sigma;
  return sigma > a->sigma_clear * a->sigma_met && sigma > before ? JY_AUTO_TO_SMOOTH : JY_AUTO_STAY;
}

/* The race at a smooth stretch's step end (in_stretch steps into it): Adams' window opens
 * once it has settled (and the last lost race's wait is over), and after RACE_ADAMS_STEPS
 * its work is measured against ERK's. */
static jyAutoMove race(jyAutoChoice *a, double t, double t_end, double h, const jyAutoCounters *now,
                       long in_stretch) {
  if (a->erk_chosen || a->erk || in_stretch < SETTLE_STEPS) return JY_AUTO_STAY;
  int open = a->race_open && a->race_at.steps >= a->stretch_at.steps; /* in this stretch */
  if (!open && now->steps < a->race_next) return JY_AUTO_STAY;
  if (open && now->steps - a->race_at.steps < RACE_ADAMS_STEPS) return JY_AUTO_STAY;
  /* a window over which Adams' step still grew is its start-up, not its pace: another */
  if (!open || !(t > a->race_t) || fabs(h) > RACE_GROWTH * a->race_h) {
    a->race_open = 1;
    a->race_t = t;
    a->race_h = fabs(h);
    a->race_at = *now;
    a->race_mark = 1;
    return JY_AUTO_STAY;
  }
  a->adams_work = (double)(now->rhs_evals - a->race_at.rhs_evals) +
    ADAMS_STEP_WORK * (double)(now->steps - a->race_at.steps);
  a->race_open = 0;
  a->race_next = now->steps + a->race_wait; /* should ERK lose, or the race not be run */
  a->race_wait *= 2;
  /* Adams' steps left at its pace over the window: too few for ERK to win back a race */
  double left = (t_end - t) / (t - a->race_t) * (double)(now->steps - a->race_at.steps);
  return left >= RACE_MIN_LEFT ? JY_AUTO_RACE : JY_AUTO_STAY;
}

void jy_auto_window_broken(jyAutoChoice *a) { a->race_open = 0; }

double jy_auto_race_budget(const jyAutoChoice *a) { return a->adams_work / RACE_MARGIN; }

jyAutoMove jy_auto_race_result(jyAutoChoice *a, double erk_work) {
  a->erk_chosen = RACE_MARGIN * erk_work < a->adams_work;
  return a->erk_chosen ? JY_AUTO_TO_ERK : JY_AUTO_STAY;
}

double jy_auto_erk_work(long attempts, long steps) {
  return JY_ERK_STAGES * (double)attempts + ERK_STEP_WORK * (double)steps;
}

jyAutoMove jy_auto_after_step(jySim *sim, jyAutoChoice *a, double t, N_Vector y, double h,
                              const jyAutoCounters *now) {
  long in_stretch = now->steps - a->stretch_at.steps;
  if (!a->bdf) {
    /* Adams' step collapsing: a singular configuration (or a jump in the forces) ahead, where
     * BDF goes through at its own pace and Adams would crawl up to the branch guard */
    long settled = now->steps - a->restart_steps;
    if (settled > SETTLE_STEPS && fabs(h) < a->h_recent / COLLAPSE) {
      /* at a singular configuration only where the rows' smallest singular value has
       * fallen well below where Adams took over (a chain whipping round, an impact: no) */
      jy_auto_measure_start(sim, a);
      double sigma = jy_sim_constraint_sigma(sim, t, y);
      if (sigma < a->sigma_ref / SIGMA_FALLEN) {
        jy_auto_singular(sim, a, t, y);
        return JY_AUTO_TO_BDF_COLLAPSE;
      }
      a->h_recent = fabs(h); /* Adams' own business: look again at the next collapse */
    }
    a->h_recent = settled <= 1 ? fabs(h) : fmax(fabs(h), H_RECENT_DECAY * a->h_recent);
    jyAutoMove raced = race(a, t, sim->def.t_end, h, now, in_stretch);
    if (raced != JY_AUTO_STAY) return raced;
    if (now->steps - a->window_at.steps < a->check_every) return JY_AUTO_STAY;
    long fails = now->fails - a->window_at.fails;
    double window_pace = pace(a->window_t, &a->window_at, t, now);
    a->window_t = t;
    a->window_at = *now;
    if (fails == 0) return JY_AUTO_STAY;
    if (!(fabs(h) * spectral_radius(sim, a, t, y) > STIFF_H_RHO)) return JY_AUTO_STAY;
    a->adams_pace = window_pace;
    return JY_AUTO_TO_BDF_STIFF;
  }
  if (a->singular) return leave_singular(sim, a, t, y, h, in_stretch);
  if (in_stretch == TRIAL_STEPS &&
      pace(a->stretch_t, &a->stretch_at, t, now) < TRIAL_GAIN * a->adams_pace) {
    a->check_every = a->check_every < 1000000 ? 4 * a->check_every : a->check_every;
    return JY_AUTO_TO_SMOOTH; /* BDF is no cheaper here: look again less often */
  }
  if (in_stretch < TRIAL_STEPS || in_stretch % BDF_CHECK_STEPS != 0) return JY_AUTO_STAY;
  return fabs(h) * spectral_radius(sim, a, t, y) < NONSTIFF_H_RHO ? JY_AUTO_TO_SMOOTH
                                                                  : JY_AUTO_STAY;
}

void jy_auto_changed(jyAutoChoice *a, jyAutoMove move, double t, const jyAutoCounters *now) {
  enum { ADAMS, BDF, ERK };
  int was = a->bdf ? BDF : a->erk ? ERK : ADAMS;
  double span = t - a->stretch_t;
  if (span >= 0) {
    a->time_by[was] += span;
  } else { /* going back past where the stretch began: the smooth span from there is redone */
    a->time_by[ADAMS] += span;
    if (a->time_by[ADAMS] < 0) a->time_by[ERK] += a->time_by[ADAMS], a->time_by[ADAMS] = 0;
    if (a->time_by[ERK] < 0) a->time_by[ERK] = 0;
  }
  a->steps_by[was] += now->steps - a->stretch_at.steps;
  if (was == BDF && a->singular) {
    a->returned_t = t;
    a->returned_span = t - a->stretch_t;
  }
  int to_smooth = move == JY_AUTO_TO_SMOOTH || move == JY_AUTO_TO_ERK;
  if (move == JY_AUTO_TO_SMOOTH) a->sigma_ref = a->sigma_last, a->sigma_ref_pending = 0;
  a->bdf = !to_smooth;
  a->erk = move == JY_AUTO_TO_ERK || (move == JY_AUTO_TO_SMOOTH && a->erk_chosen);
  a->singular = move == JY_AUTO_TO_BDF_SINGULAR || move == JY_AUTO_TO_BDF_COLLAPSE;
  a->to_stiff += move == JY_AUTO_TO_BDF_STIFF;
  a->to_singular += move == JY_AUTO_TO_BDF_SINGULAR;
  a->to_collapse += move == JY_AUTO_TO_BDF_COLLAPSE;
  a->to_adams += move == JY_AUTO_TO_SMOOTH;
  a->stretch_t = a->window_t = t;
  a->stretch_at = a->window_at = *now;
  a->restart_steps = now->steps;
}

void jy_auto_prescribed(jyAutoChoice *a, double t, const jyAutoCounters *now) {
  a->erk_chosen = 1;
  jy_auto_changed(a, JY_AUTO_TO_ERK, t, now);
}

void jy_auto_restarted(jyAutoChoice *a, const jyAutoCounters *now) {
  a->restart_steps = now->steps;
}

void jy_auto_stats(const jyAutoChoice *a, double t, const jyAutoCounters *now, jySimStats *out) {
  const int m[3] = {JY_METHOD_ADAMS, JY_METHOD_BDF, JY_METHOD_ERK};
  int running = a->bdf ? 1 : a->erk ? 2 : 0;
  for (int k = 0; k < 3; k++) {
    out->method_time[m[k]] = a->time_by[k] + (running == k ? t - a->stretch_t : 0);
    out->method_steps[m[k]] =
      a->steps_by[k] + (running == k ? now->steps - a->stretch_at.steps : 0);
  }
  out->to_stiff = a->to_stiff;
  out->to_collapse = a->to_collapse;
  out->to_singular = a->to_singular;
  out->to_adams = a->to_adams;
}

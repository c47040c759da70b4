/* The simulation object and its stepping strategies. Internal.
 *
 * A simulation owns the state, the evaluator and one stepper: the strategy that advances
 * the state with a SUNDIALS integrator (int_cvode.c: BDF with projection inside its steps,
 * Adams; int_arkode.c: explicit Runge–Kutta with a projection after every step). Every
 * stepper integrates freely towards t_end and answers an output time from its dense output,
 * so what is reported never changes the integration (sim.c projects the reported state onto
 * the constraints, for reporting only). */
#ifndef JY_SIM_H
#define JY_SIM_H

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>

#include "dyn_np.h"
#include "internal.h"

/* A stepping strategy (one per file). Each function returns JY_OK or a status with the
 * reason in sim->error (CVODE/ARKODE's own reason in sim->solver_message). */
typedef struct jyStepperOps {
  const char *name;
  /* Creates the integrator at (sim->t, sim->y); sim->stepper_data is the strategy's. */
  jyStatus (*setup)(jySim *sim);
  /* Integrates until the solution is known at t_out (steps may pass it) and writes the
   * interpolated state there into y_out. */
  jyStatus (*advance)(jySim *sim, double t_out, N_Vector y_out);
  /* Restarts from (t, sim->y) after a change of state, keeping the counters. */
  jyStatus (*restart)(jySim *sim, double t);
  /* Counters since setup (restarts included). */
  void (*stats)(const jySim *sim, jySimStats *out);
  /* Error weights and the last step's estimated local errors (NULL entries skipped);
   * JY_ERR_INVALID when the integrator has none. For failure reports. */
  jyStatus (*error_estimates)(jySim *sim, N_Vector weights, N_Vector local_errors);
  /* Current time and last step size of the integrator (for failure reports). */
  void (*position)(jySim *sim, double *t, double *h);
  void (*destroy)(jySim *sim);
} jyStepperOps;

/* jy_stepper_cvode_adams, ...: each method's stepper, named in JY_METHODS. */
#define JY_STEPPER_DECL_(id, name, stepper, usage) extern const jyStepperOps jy_stepper_##stepper;
JY_METHODS(JY_STEPPER_DECL_)
#undef JY_STEPPER_DECL_

/* ARKODE's explicit Runge–Kutta (int_arkode.c), also for method = auto's ERK stretches and
 * its race: a new ERKStep at (t, y) with the run's settings, postprocess run on every
 * accepted step end when the model projects, the event guards attached when `guards` and
 * the model has events. NULL (out of memory) or the integrator; *st says whether it is
 * ready (free it either way). */
void *jy_erk_create(jySim *sim, double t, N_Vector y, int guards,
                    int (*postprocess)(double, N_Vector, void *), jyStatus *st);
/* Its stop time at step end (t, y): t_end, an input's breakpoint or a mode's step limit. */
void jy_erk_set_stop(jySim *sim, void *arkode, double t, N_Vector y);
/* A failed ARKODE call's flag into sim's report. */
void jy_erk_record_flag(jySim *sim, int flag);

struct jySim {
  const jyModel *model;
  jySimDef def;
  jyEval *eval;
  double t;
  double *q, *v; /* reported state at t (n each) */
  double *row;   /* one output row (nchannels) */
  /* The output selection (sim_columns.c): ncols channel indices, "t" first; want[i]: channel
   * i is a column; col_row: the columns of one row; rows_seen: output rows so far this run
   * (every `every`-th is written). */
  int *cols, ncols;
  unsigned char *want;
  double *col_row;
  long rows_seen;
  int angle_rows; /* selected angle outputs: the rows every skips are still evaluated */
  /* Natsiavas–Paraskevopoulos: the multiplier coordinates and their work (NULL with UK).
   * The integrated state is [q, v] (UK) or [q, lambda, v, lambda'] (N–P); nq is its
   * first half. */
  jyNpWork *np;
  double *lam, *lamdot; /* m each, at t */
  int nq;               /* n (UK) or n + m (N–P) */
  SUNContext ctx;
  N_Vector y;      /* the integrated state at the last output (2 nq) */
  N_Vector abstol; /* absolute tolerance per component (2 nq): atol, atol_velocity */
  double max_step; /* the integrators' largest step, s (max_step's 0 resolved); 0: no limit */
  const jyStepperOps *stepper;
  void *stepper_data;
  jyMethod method_now;               /* the method stepping now (auto: Adams or BDF) */
  int project;                       /* UK with constraint rows and drift = projection */
  double *proj_q, *proj_v, *proj_dv; /* projection scratch (n each); NULL without one */
  N_Vector proj_weights;             /* error weights for a projection (2 nq) */
  long projections_skipped; /* reported states left unprojected (projection did not settle) */
  double kinetic_scale;     /* the largest kinetic energy reported so far (projection only) */
  /* Factorizations the steps' projections and branch guard made (not the reports'): auto
   * counts them as work, so that a method whose step ends need projecting pays for it. */
  long step_factorizations;
  double slow_mark_t;           /* jy_sim_steps_spent: where its last window of steps began */
  double *law_velocity;         /* friction watch: local velocities of law parts, NULL if none */
  unsigned char *law_reversals; /* per part: reversals at the last 8 steps, one bit each */
  int ready;           /* created without error: the only state in which it may integrate */
  jyStatus failure;    /* sticky: once set, the right-hand side refuses to run */
  jyStatus rhs_status; /* last recoverable trouble of the right-hand side */
  char error[JY_ERROR_LEN];
  char stop_reason[96]; /* why the row sink stopped the run (jy_sim_set_stop_reason), or "" */
  int out_identified;   /* the file jy_sim_write_csv wrote, while it is known: */
  unsigned long long out_dev, out_ino; /* its device and inode */
  char solver_flag[64];                /* the integrator's return flag name on failure */
  char solver_message[512];            /* the integrator's own last error message */
  char rhs_message[JY_ERROR_LEN];
  /* Events (sim_events.h): the guard functions the root finding watches, the parts' first
   * (nguards_part), then the user events'; directions per guard (-1, 0, +1). */
  int nguards_part, nguards_user, nguards;
  int *guard_directions, *roots_found; /* nguards each */
  /* A crossing the integrator located (at root_t, state root_y, roots_found) and sim.c has
   * not handled yet: an output time before it may still be answered from the interpolant. */
  int root_pending;
  double root_t;
  N_Vector root_y;
  long guard_evals, events;
  /* Crossings handled in a row, each within JY_EVENT_INSTANT of the one before, and the
   * time of the last: a model whose events keep firing at one instant stops (sim.c). */
  int burst_count;
  double burst_start, burst_t;
  jyEventSummary *event_kinds; /* names owned */
  int nevent_kinds, event_kinds_cap;
  char stopped_by[128]; /* the event that stopped the run, "" while none has */
  double last_row_t;    /* time of the last row jy_sim_run wrote */
  /* Inputs: the run's segment between breakpoints (seg_lo <= t < seg_hi; +-inf without
   * breakpoints), the integrators' stop at its end; the controllers' next samples (index k:
   * t_start + sample[k] period) and the earliest of them (inf: none). */
  double seg_lo, seg_hi;
  double *breaks; /* nbreaks, sorted: the model's and those its signals show (sim.c) */
  int nbreaks;
  /* The first step after a restart at a breakpoint when a signal's breakpoints were found by
   * sampling it (the samples' spacing: a flat signal's first step would otherwise reach
   * over a whole pulse that vanishes at both of the step's ends), else 0: the integrator
   * estimates it, as after every other restart. */
  double scan_h, restart_h0;
  /* The restart under way is at a breakpoint (the signals' next piece), not after a change
   * of state, input or mode: auto's race window may run on over it (int_cvode.c). */
  int restart_at_breakpoint;
  double *settle_weights; /* n: the projection at such a restart (NULL: no rows, no inputs) */
  long *sample;
  double next_sample;
  void *hybrid;      /* sim_hybrid.c's state */
  void *user_events; /* sim_events.c's state */
};

/* What the steppers call back into (sim_step.c, below them). */

/* Every evaluator of the simulation (the formulation's own too), for what must be the same
 * in each: the held inputs and the segment between breakpoints. Returns how many (<= 3). */
static inline int jy_sim_evals(jySim *sim, jyEval **out) {
  int count = 0;
  if (sim->eval) out[count++] = sim->eval;
  if (sim->np) out[count++] = sim->np->e, out[count++] = sim->np->fd;
  return count;
}

/* Where the integrator must stop: t_end, or the next breakpoint of an input before it. */
static inline double jy_sim_stop_time(const jySim *sim) {
  return sim->seg_hi < sim->def.t_end ? sim->seg_hi : sim->def.t_end;
}

/* The segment between the inputs' breakpoints holding t, or (lo, hi) itself, made the run's
 * and every evaluator's (a signal reads the piece the segment lies in). */
void jy_sim_find_segment(jySim *sim, double t);
void jy_sim_set_segment(jySim *sim, double lo, double hi);

/* The right-hand side y' = f(t, y) for SUNDIALS (UK or N–P by sim->np): 0, 1 (recoverable:
 * the integrator retries smaller) or -1 (fatal, reason in sim->error, sticky). */
int jy_sim_rhs(double t, N_Vector y, N_Vector ydot, void *sim);
/* A vector the length of the state, or NULL when memory ran out. Not N_VClone: SUNDIALS 6.4's
 * N_VClone writes into the clone unchecked and crashes when malloc fails. */
N_Vector jy_sim_new_vector(const jySim *sim);

/* What jy_sim_project is told: JY_PROJECT_GUARD, stop at a jump onto another branch;
 * JY_PROJECT_ASSEMBLED, the evaluator's last jy_assemble was JY_ASM_PROJECTION at y itself
 * (its first iteration need not assemble again); JY_PROJECT_KEEP_CLOSE, positions whose
 * correction is within eps in every coordinate stay (jy_project_state's JY_PROJ_KEEP_CLOSE);
 * JY_PROJECT_STALL_STOPS, jy_project_state's JY_PROJ_STALL_STOPS. */
enum {
  JY_PROJECT_GUARD = 1u,
  JY_PROJECT_ASSEMBLED = 2u,
  JY_PROJECT_KEEP_CLOSE = 4u,
  JY_PROJECT_STALL_STOPS = 8u
};

/* Projects y = [q, v] (UK) in place onto the position and velocity manifolds, converged to
 * eps in the weighted RMS norm of `weights`; the correction's components across the
 * manifold are removed from err (NULL: none). 0; 1 when it did not settle (retry smaller);
 * 2 when JY_PROJECT_GUARD is set and it would jump onto another branch of motion (y
 * unchanged, the reason in sim->rhs_message); -1 when fatal (in sim->error). */
int jy_sim_project(jySim *sim, double t, N_Vector y, const double *weights, double eps,
                   N_Vector err, unsigned flags);

/* jy_sim_project with the weights of the state itself, 1 / (rtol |y| + abstol) (a step end
 * or a reported state, where the integrator's own weights belong to another state). */
int jy_sim_project_own_weights(jySim *sim, double t, N_Vector y, double eps, unsigned flags);

/* Whether the guard of a step end y = [q, v] at t (UK, within tolerance of the manifold)
 * can do without its full projection: 1 when the velocity correction, estimated with the
 * evaluator's M and A from the last right-hand side (solved in the store, at t, within a
 * hundred tolerances of y in every component), is within ten tolerances in every velocity
 * or removes under 1e-6 of the kinetic energy, where a branch jump is a hundred tolerances
 * removing 1e-3 of it; 0 (the full projection decides) otherwise, and whenever no such
 * matrices are in hand. Leaves the evaluator's residuals at another state. */
int jy_sim_guard_clears(jySim *sim, double t, N_Vector y);

/* The smallest non-zero singular value of the constraint rows, each scaled to unit length,
 * at the positions of y = [q, v] (UK): the k-th largest of all the rows', k the number the
 * solve keeps (so the same whichever are left out as dependent); how near a singular
 * configuration q is (0 at one). NAN without rows, with N–P, where the dense SVD would cost more than
 * JY_SIGMA_MAX_WORK (m^2 n: some milliseconds), or when it cannot be had (no memory, a
 * failed assembly). For auto's decisions at a collapse and after a singular stretch, not
 * every step. Leaves the evaluator assembled at y. */
#define JY_SIGMA_MAX_WORK 1e8
double jy_sim_constraint_sigma(jySim *sim, double t, N_Vector y);
/* The same, with k (the rows non-zero and not left out as dependent) into *kept. */
double jy_sim_constraint_sigma_rows(jySim *sim, double t, N_Vector y, int *kept);

/* Called by every stepper after each accepted step with its end state: 0, or -1 when the
 * run must stop (reason in sim->error, failure set). Watches friction coming to rest. */
int jy_sim_check_step(jySim *sim, double t, N_Vector y);
/* The friction watch jy_sim_check_step keeps, set up by sim.c when the simulation is created
 * (nothing for a model without a law part, or with N–P): JY_OK or JY_ERR_NOMEM. */
jyStatus jy_sim_setup_friction_watch(jySim *sim);

/* Whether the steps toward the next output are spent (flag: the integrator's name for it,
 * "CV_TOO_MUCH_WORK"): `steps` already taken since t_from, now at t_now, toward t_out. 1
 * (with the flag and the reason in sim->solver_flag and sim->solver_message) when they
 * reach max_steps, or when, past a twentieth of max_steps, their average (or that of the
 * last twentieth alone) is so short that what is left to t_out is more than a thousand
 * times max_steps of them: such a run ends on max_steps anyway, only minutes later. 0
 * otherwise. */
int jy_sim_steps_spent(jySim *sim, const char *flag, long steps, double t_from, double t_now,
                       double t_out);

/* Stops the run at a branch switch found by jy_sim_project (reason in sim->rhs_message):
 * sets the sticky failure and its message; returns -1 for the integrator. */
int jy_sim_stop_at_branch(jySim *sim);

/* JY_OK, or JY_ERR_INVALID with the estimate in sim->error when t_end and dt_out would
 * give more than JY_MAX_OUTPUT_ROWS output rows (checked before a run writes anything). */
jyStatus jy_sim_check_output_rows(jySim *sim);
/* Records a failed integrator call's flag in sim->solver_flag: its name (from the stepper's
 * own table: SUNDIALS' *GetReturnFlagName mallocs unchecked), or "<integrator> flag N". */
void jy_sim_record_flag(jySim *sim, const char *name, const char *integrator, int flag);

/* What a stepper does after each call of its integrator that located a crossing (flag: the
 * integrator's root return): records it as sim->root_pending at t with state y and the
 * integrator's root information already in sim->roots_found. */
void jy_sim_root_located(jySim *sim, double t, N_Vector y);

/* Adds the integrator counters of `more` to `sum` (a stepper's runs before a restart). */
void jy_stats_add(jySimStats *sum, const jySimStats *more);

#endif

/* Resolves sim->def.columns into sim->cols, want and col_row (sim_columns.c); an unmatched
 * pattern is JY_ERR_INVALID with the message in sim->error. */
jyStatus jy_sim_select_columns(jySim *sim);

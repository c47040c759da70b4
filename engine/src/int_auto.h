/* What method = auto decides (int_auto.c); int_cvode.c carries it out. Internal.
 *
 * A run starts under Adams. Once Adams has settled it races ERK: Adams' work over a window
 * of its steps against the work of a shadow ERK run over the same span from the same state
 * (which reports nothing and is thrown away), each counted from the integrators' own
 * counters (right-hand sides, projection factorizations and steps, never the clock: the
 * choice is the same on every machine and for every output interval). ERK takes the smooth
 * stretches from then on where it is 1.4 times as cheap; a lost race is run again later. It
 * changes to BDF with projection for a stretch when the smooth method's step
 * end meets a singular configuration (the branch guard would fire, or the projection does
 * not settle: the run goes back to a step end the guard cleared, so no step straddles the
 * change), or when its steps are held by stability (convergence or error test failures,
 * and h times the estimated spectral radius of the Jacobian above the limit). It comes back
 * to the smooth method when the singular stretch has passed, or when BDF's step is one
 * Adams would take stably, or when BDF turned out no cheaper than the smooth method was. */
#ifndef JY_INT_AUTO_H
#define JY_INT_AUTO_H

#include <nvector/nvector_serial.h>

#include "sim.h"

typedef enum jyAutoMove {
  JY_AUTO_STAY,
  JY_AUTO_TO_BDF_STIFF,    /* Adams' steps are held by stability */
  JY_AUTO_TO_BDF_SINGULAR, /* Adams met a singular configuration */
  JY_AUTO_TO_BDF_COLLAPSE, /* Adams' step collapsed (a singular configuration ahead) */
  JY_AUTO_TO_SMOOTH,       /* the stretch that needed BDF has passed: the smooth method */
  JY_AUTO_RACE,            /* Adams' race window ends here: ERK's shadow run over it */
  JY_AUTO_TO_ERK           /* ERK won the race: it runs the smooth stretches */
} jyAutoMove;

/* The integrator's counters over the whole run (restarts and changes included). */
typedef struct jyAutoCounters {
  /* rhs_evals: Adams' and BDF's right-hand sides (Jacobians' included), ERK's step
   * attempts times its stages (not its count, which includes the evaluations its
   * interpolant makes at output times); fails: convergence and error test failures */
  long steps, rhs_evals, fails;
} jyAutoCounters;

/* Stages of ARKODE's Verner 8(5,6) step, which auto's ERK stretches and method = erk use. */
#define JY_ERK_STAGES 8
/* A step end's factorization on a spatial tree, in right-hand sides (int_cvode.c). */
#define JY_SPATIAL_FACTOR_WORK 6.5

typedef struct jyAutoChoice {
  int bdf;      /* BDF runs now */
  int erk;      /* else ERK runs now (else Adams) */
  int singular; /* BDF's stretch is for a singular configuration (else for stiffness) */
  /* The race of Adams and ERK: erk_chosen once ERK has won (it runs the smooth stretches
   * from then on); else whether Adams' window is open, where it began, the step count at
   * which the next opens and the wait after the next loss. */
  int erk_chosen;
  int race_open;
  long race_next, race_wait;
  int race_mark;         /* Adams' window starts at this step end: int_cvode.c keeps its state */
  double race_t, race_h; /* where the window began, and Adams' step there */
  jyAutoCounters race_at;
  double adams_work; /* Adams' work over the window */
  /* where the present stretch began */
  double stretch_t;
  jyAutoCounters stretch_at;
  /* Adams: the last look at its failures, and how many steps until the next */
  double window_t;
  jyAutoCounters window_at;
  long check_every;
  double adams_pace;            /* simulated time per right-hand side in the smooth method's
                                   last window */
  double met_t;                 /* when Adams met the singular configuration */
  double sigma_met, sigma_last; /* the rows' smallest singular value there, and lately */
  double sigma_clear;           /* how many times sigma_met it hands back at */
  double sigma_ref;             /* the smallest singular value where Adams took over */
  /* sigma_ref at the run's start is measured when first needed (a collapse, or a restart
   * about to overwrite the start state start_y, borrowed from int_cvode.c): a short run
   * never pays the dense SVD (incline_em: 29 k instructions of its 540 k) */
  int sigma_ref_pending;
  double start_t;
  N_Vector start_y;
  double adams_h;       /* Adams' last step size: BDF hands back once its own is half */
  double returned_t;    /* when the last singular stretch handed back to Adams */
  double returned_span; /* and how long it had lasted */
  N_Vector probe, probe_y, f0, f1, weights; /* the power iteration's direction, scratch */
  int probe_started;
  /* what the run summary says */
  double time_by[3]; /* simulated time under Adams, BDF, ERK */
  long steps_by[3];
  long to_stiff, to_singular, to_collapse, to_adams;
  double h_recent;    /* Adams' recent largest step since it (re)started */
  long restart_steps; /* the step count then */
} jyAutoChoice;

/* JY_OK or JY_ERR_NOMEM; the choice starts under Adams at t. */
jyStatus jy_auto_init(jySim *sim, jyAutoChoice *a, double t, N_Vector start);
/* sigma_ref measured at the start state, if it has not been yet. */
void jy_auto_measure_start(jySim *sim, jyAutoChoice *a);
void jy_auto_free(jyAutoChoice *a);

/* After an accepted step that ends at (t, y) with step size h: what to do there. */
jyAutoMove jy_auto_after_step(jySim *sim, jyAutoChoice *a, double t, N_Vector y, double h,
                              const jyAutoCounters *now);

/* The run restarted after a change of state, held input or mode: ERK's shadow, which starts
 * from the window's first state with the inputs and modes of its last, cannot run Adams'
 * window over it; a new one opens. */
void jy_auto_window_broken(jyAutoChoice *a);

/* JY_AUTO_RACE: the most work ERK's shadow run may spend before it has lost, and the move
 * its work over the window (INFINITY: it stopped or ran out of budget) decides. */
double jy_auto_race_budget(const jyAutoChoice *a);
jyAutoMove jy_auto_race_result(jyAutoChoice *a, double erk_work);
/* ERK's work for its step attempts and accepted steps, in right-hand sides. */
double jy_auto_erk_work(long attempts, long steps);

/* Adams' step end y met a singular configuration at t: the run goes back to an earlier
 * step end and BDF takes over (jy_auto_changed says from when). */
void jy_auto_singular(jySim *sim, jyAutoChoice *a, double t, N_Vector y);

/* BDF keeps the rest of the run (Adams cannot be trusted near this model's singular
 * configurations: it met the branch guard, met one again soon after BDF handed back, or
 * BDF could not get through from where Adams left it). */
void jy_auto_stay_bdf(jyAutoChoice *a);

/* At the start (t, counters `now`): the motion is prescribed (no free direction), and ERK
 * runs it as after a won race. */
void jy_auto_prescribed(jyAutoChoice *a, double t, const jyAutoCounters *now);

/* The integrator changes at t by move, with the counters `now`: the books, and a->bdf,
 * a->erk say which method runs from there. */
void jy_auto_changed(jyAutoChoice *a, jyAutoMove move, double t, const jyAutoCounters *now);

/* The integrator restarted (an event, a projected step end) with the counters `now`: its
 * first steps grow from a small one again. */
void jy_auto_restarted(jyAutoChoice *a, const jyAutoCounters *now);

/* The books up to t with the counters `now`, into the run's stats. */
void jy_auto_stats(const jyAutoChoice *a, double t, const jyAutoCounters *now, jySimStats *out);

#endif

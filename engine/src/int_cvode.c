/* Stepping with SUNDIALS CVODE: BDF (Newton) with the projection onto the constraints inside
 * every step, Adams–Moulton (fixed point), which SUNDIALS 6.4 cannot project inside its
 * steps, and auto, which runs Adams or ARKODE's ERK (whichever its race finds cheaper) and
 * changes to BDF for the stretches that need it (int_auto.c decides). All step freely
 * towards t_end and answer output times from the interpolating polynomial, so the output
 * interval never changes the integration. */
#include <arkode/arkode_erkstep.h>
#include <cvode/cvode.h>
#include <cvode/cvode_ls.h>
#include <cvode/cvode_proj.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "eval.h"
#include "int_auto.h"
#include "int_dense.h"
#include "sim.h"
#include "sim_events.h"
#include "vec.h"

/* Step ends auto keeps to go back to: BDF started at Adams' last cleared step end before a
 * singular configuration can be too close to it to get through (the four-bar at the
 * defaults: CV_REPTD_PROJFUNC_ERR from one step back); it goes back further on each try. */
#define AUTO_BACK_MAX 16
#define AUTO_BACK_FIRST 2
#define AUTO_TRY_STEPS 300

/* cs->lmm of auto's ERK stretches (CV_ADAMS and CV_BDF are CVODE's). */
enum { ERK = 3 };

typedef struct CvodeStepper {
  void *cvode;
  SUNNonlinearSolver nls;
  SUNMatrix jac;
  SUNLinearSolver ls;
  N_Vector step_end;   /* Adams with projection: a step's end state (2 nq) */
  int restart_pending; /* step_end, projected, is where Adams restarts before its next step */
  N_Vector jac_weights, jac_column; /* BDF's dense Jacobian: error weights, f at y + dy */
  jySimStats before;                /* counters of the runs before the last restart */
  long restarts;
  int roots; /* guard functions attached (events) */
  /* The time up to which the guards have been checked: a crossing returns at its own time,
   * before the end of the step it lies in, and CVODE checks the rest of that step at its
   * next call. Until then no output time past it may be answered from the interpolant: an
   * unlocated crossing may lie there (rows of motion that never happened, written before
   * the crossing's rows). */
  double checked_to;
  int lmm;           /* CV_ADAMS, CV_BDF or ERK (auto's ERK stretch): the integrator now */
  void *erk;         /* auto's ERK, made with the stepper and started again for each stretch */
  int erk_met_guard; /* ERK's step end met the branch guard (at erk_guard_t) */
  int shadow;        /* ERK's race runs (its guard ends it) */
  int warming;       /* the race's ERK takes its first step on a zero right-hand side */
  N_Vector race_y, race_end; /* the state where Adams' race window began; ERK's there */
  void *race_erk;            /* the race's ERK, made with the stepper: a race allocates nothing */
  unsigned char *race_dependent; /* the evaluator's dependent rows, kept over a race */
  double erk_guard_t;
  long work_before; /* auto's work (jyAutoCounters.rhs_evals) of the integrators before */
  const long *step_factorizations; /* the run's sim->step_factorizations */
  double factor_work;              /* the work of one of them (step_factor_work) */
  double erk_rtol;                 /* the relative tolerance auto's ERK runs at */
  jyAutoChoice *aut;               /* method = auto: its choice; NULL for a fixed method */
  /* auto: the last AUTO_BACK_MAX step ends the guard cleared (or restarts), newest at
   * back[newest], and how many are held; good holds the last step end */
  N_Vector back[AUTO_BACK_MAX], good;
  double back_t[AUTO_BACK_MAX];
  double back_kinetic[AUTO_BACK_MAX]; /* the branch guard's kinetic energy scale there */
  int newest, held;
  int went_back;           /* how far a singular stretch went back (0: it did not) */
  jyAutoMove move_pending; /* a change decided at the last step end, made before the next */
  double good_t;           /* that step end's time (its state is in good) */
  double kinetic_before;   /* the branch guard's kinetic energy scale when a stretch began */
  N_Vector anchor;         /* the state at the start or the last event or set state, at anchor_t */
  double anchor_t, anchor_kinetic;
} CvodeStepper;

/* Auto's ERK when it is the integrator running now (cvode is NULL then), else NULL. */
static void *erk_now(const CvodeStepper *cs) { return cs->lmm == ERK ? cs->erk : NULL; }

/* CVODE reports through this; SUNDIALS 6.4 crashes on a NULL handler, so always set one. */
static void on_cvode_error(int code, const char *module, const char *function, char *msg,
                           void *ud) {
  jySim *sim = ud;
  (void)code;
  snprintf(sim->solver_message, sizeof sim->solver_message, "%s/%s: %s", module, function, msg);
}

/* CVODE's projection callback (BDF): CVODE adds corr to its history itself. */
static int project(sunrealtype t, N_Vector ycur, N_Vector corr, sunrealtype eps, N_Vector err,
                   void *ud) {
  jySim *sim = ud;
  CvodeStepper *cs = sim->stepper_data;
  CVodeGetErrWeights(cs->cvode, sim->proj_weights);
  N_VScale(1.0, ycur, corr);
  int r =
    jy_sim_project(sim, t, corr, N_VGetArrayPointer(sim->proj_weights), eps, err, JY_PROJECT_GUARD);
  if (r == 0) N_VLinearSum(1.0, corr, -1.0, ycur, corr);
  return r == 2 ? 1 : r; /* a branch jump: retry smaller, or fail saying why */
}

/* BDF's dense Jacobian of y' = [v; a(q, v)] by forward differences, with CVODE's own
 * increments (cvLsDenseDQJac: sqrt(uround) |y_j|, at least a floor set by the weighted
 * size of f). CVODE's version allocates a vector header per call; this one allocates
 * nothing. The upper half [0 I] is exact. */
static int dense_jacobian(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix jac, void *ud,
                          N_Vector tmp1, N_Vector tmp2, N_Vector tmp3) {
  jySim *sim = ud;
  CvodeStepper *cs = sim->stepper_data;
  (void)tmp1, (void)tmp2, (void)tmp3;
  int nq = sim->nq, n2 = 2 * nq;
  double h = 0, *yv = N_VGetArrayPointer(y);
  const double *w = N_VGetArrayPointer(cs->jac_weights), *f = N_VGetArrayPointer(fy);
  const double *fj = N_VGetArrayPointer(cs->jac_column);
  CVodeGetErrWeights(cs->cvode, cs->jac_weights);
  CVodeGetCurrentStep(cs->cvode, &h);
  double fnorm = N_VWrmsNorm(fy, cs->jac_weights), srur = sqrt(DBL_EPSILON);
  double min_inc = fnorm != 0 ? 1000 * fabs(h) * DBL_EPSILON * n2 * fnorm : 1.0;
  for (int j = 0; j < n2; j++) {
    double *col = SUNDenseMatrix_Column(jac, j);
    memset(col, 0, sizeof(double) * (size_t)nq); /* d(v)/dq = 0, d(v)/dv = I */
    if (j >= nq) col[j - nq] = 1;
    double saved = yv[j], inc = fmax(srur * fabs(saved), min_inc / w[j]);
    yv[j] += inc;
    int r = jy_sim_rhs(t, y, cs->jac_column, sim);
    yv[j] = saved;
    if (r != 0) return r;
    for (int i = nq; i < n2; i++) col[i] = (fj[i] - f[i]) / inc;
  }
  return 0;
}

/* A failed call: out of memory inside CVODE is JY_ERR_NOMEM like everywhere else. */
static jyStatus step_status(int flag) {
  return flag == CV_MEM_FAIL ? JY_ERR_NOMEM : JY_ERR_INTEGRATOR;
}

/* Newton–Krylov for large models: GMRES with CVODE's difference-quotient Jacobian-vector
 * products, one right-hand side per Krylov iteration and O(n) memory, where a dense
 * Jacobian costs 2n right-hand sides, an O(n^3) LU and (2n)^2 doubles. Unpreconditioned:
 * the exact kinematic block [I -gamma I; 0 I] as a preconditioner saved under 1 % of the
 * Krylov iterations on the chains and the four-bar chain (docs/numerics.md). */
/* SPGMR's work memory, allocated here rather than by SUNLinSolInitialize_SPGMR: SUNDIALS 6.4
 * clones its Krylov vectors with N_VClone (which crashes when malloc fails) and, when one of
 * its allocations fails, frees the solver and then writes into it. Every field filled here
 * is one SUNLinSolFree_SPGMR frees (with free: plain malloc), partial fills included, and
 * SUNLinSolInitialize skips it. JY_OK or JY_ERR_NOMEM. */
static jyStatus allocate_krylov_memory(jySim *sim, SUNLinearSolverContent_SPGMR k) {
  size_t l = (size_t)k->maxl;
  k->V = calloc(l + 1, sizeof *k->V);
  k->Hes = calloc(l + 1, sizeof *k->Hes);
  if (!k->V || !k->Hes) return JY_ERR_NOMEM;
  for (size_t i = 0; i <= l; i++) {
    k->V[i] = jy_sim_new_vector(sim);
    k->Hes[i] = malloc(l * sizeof **k->Hes);
    if (!k->V[i] || !k->Hes[i]) return JY_ERR_NOMEM;
  }
  k->givens = malloc(2 * l * sizeof *k->givens);
  k->yg = malloc((l + 1) * sizeof *k->yg);
  k->cv = malloc((l + 1) * sizeof *k->cv);
  k->Xv = malloc((l + 1) * sizeof *k->Xv);
  return k->givens && k->yg && k->cv && k->Xv ? JY_OK : JY_ERR_NOMEM;
}

static jyStatus attach_krylov(jySim *sim, CvodeStepper *cs) {
  cs->ls = SUNLinSol_SPGMR(sim->y, SUN_PREC_NONE, 0, sim->ctx);
  if (!cs->ls) return JY_ERR_NOMEM;
  jyStatus st = allocate_krylov_memory(sim, cs->ls->content);
  if (st != JY_OK) return st;
  int flag = CVodeSetLinearSolver(cs->cvode, cs->ls, NULL);
  return flag == CVLS_SUCCESS ? JY_OK : flag == CVLS_MEM_FAIL ? JY_ERR_NOMEM : JY_ERR_INTEGRATOR;
}

/* BDF's Newton linear solver: jySimDef.newton, auto by the state's size. */
static jyStatus attach_linear_solver(jySim *sim, CvodeStepper *cs) {
  int n2 = 2 * sim->nq;
  jyNewtonSolver kind = sim->def.newton;
  if (kind == JY_NEWTON_AUTO)
    kind = n2 > JY_NEWTON_DENSE_MAX_STATES ? JY_NEWTON_KRYLOV : JY_NEWTON_DENSE;
  if (kind == JY_NEWTON_KRYLOV) return attach_krylov(sim, cs);
  cs->jac = SUNDenseMatrix(n2 > 0 ? n2 : 1, n2 > 0 ? n2 : 1, sim->ctx);
  cs->ls = cs->jac ? jy_dense_lapack_solver(cs->jac, sim->ctx, &sim->model->alloc) : NULL;
  cs->jac_weights = jy_sim_new_vector(sim);
  cs->jac_column = jy_sim_new_vector(sim);
  if (!cs->ls || !cs->jac_weights || !cs->jac_column) return JY_ERR_NOMEM;
  int flag = CVodeSetLinearSolver(cs->cvode, cs->ls, cs->jac);
  if (flag == CVLS_MEM_FAIL) return JY_ERR_NOMEM;
  if (flag != CVLS_SUCCESS || CVodeSetJacFn(cs->cvode, dense_jacobian) != CV_SUCCESS)
    return JY_ERR_INTEGRATOR;
  return JY_OK;
}

/* The step limit at (t, y) that the parts with modes ask for (jyPartHybrid.max_step): the
 * next step is cut there through the stop time (a maximum step set now would only bound
 * the steps after the one CVODE has already chosen). The run's own max_step stays CVODE's. */
static void limit_step(jySim *sim, CvodeStepper *cs, double t, N_Vector y) {
  if (erk_now(cs)) {
    jy_erk_set_stop(sim, erk_now(cs), t, y);
    return;
  }
  double end = jy_sim_stop_time(sim); /* t_end or an input's next breakpoint */
  if (!cs->roots) {
    CVodeSetStopTime(cs->cvode, end);
    return;
  }
  double h = jy_hybrid_max_step(sim, t, N_VGetArrayPointer(y));
  double stop = h > 0 && t + h < end ? t + h : end;
  CVodeSetStopTime(cs->cvode, stop); /* again each time: a stop time reached is cleared */
}

/* Auto's ERK step end onto the constraints (as method = erk's, int_arkode.c); a branch jump
 * is not a stop here but the run going back to BDF (advance_auto): the step is refused. */
static int erk_project_step(sunrealtype t, N_Vector y, void *ud) {
  jySim *sim = ud;
  CvodeStepper *cs = sim->stepper_data;
  if (cs->warming) return 0;
  int r = jy_sim_project_own_weights(
    sim, t, y, 0.1, JY_PROJECT_GUARD | JY_PROJECT_KEEP_CLOSE | JY_PROJECT_STALL_STOPS);
  if (r == 2) {
    cs->erk_met_guard = 1;
    cs->erk_guard_t = t;
    if (!cs->shadow) N_VScale(1.0, y, cs->step_end);
    return -1;
  }
  return r < 0 ? -1 : 0; /* a projection that did not settle leaves the step as it is */
}

/* Auto's ERK from (t, y): the one made with the stepper, started again. */
static jyStatus start_erk(jySim *sim, CvodeStepper *cs, double t, N_Vector y) {
  cs->lmm = ERK;
  cs->checked_to = t;
  cs->restart_pending = 0;
  cs->erk_met_guard = 0;
  if (sim->project) sim->eval->baumgarte_rate = 0;
  if (ERKStepReInit(cs->erk, jy_sim_rhs, t, y) != ARK_SUCCESS ||
      ERKStepSetInitStep(cs->erk, 0) != ARK_SUCCESS) /* its own estimate */
    return JY_ERR_INTEGRATOR;
  cs->roots = sim->nguards > 0;
  limit_step(sim, cs, t, y);
  return JY_OK;
}

/* Creates CVODE with method lmm at (t, y), with what the method needs: Adams the fixed
 * point solver (and Baumgarte to keep near the manifold, since it cannot project inside its
 * steps: advance_adams projects and restarts where a step end leaves it), BDF its Newton
 * linear solver and the projection inside every step. */
static jyStatus create_integrator(jySim *sim, CvodeStepper *cs, int lmm, double t, N_Vector y) {
  cs->lmm = lmm;
  cs->checked_to = t;
  cs->restart_pending = 0;
  if (sim->project) sim->eval->baumgarte_rate = lmm == CV_ADAMS ? sim->def.baumgarte_rate : 0;
  cs->cvode = CVodeCreate(lmm, sim->ctx);
  if (!cs->cvode) return JY_ERR_NOMEM;
  if (CVodeSetErrHandlerFn(cs->cvode, on_cvode_error, sim) != CV_SUCCESS) return JY_ERR_INTEGRATOR;
  int flag = CVodeInit(cs->cvode, jy_sim_rhs, t, y);
  if (flag != CV_SUCCESS) return step_status(flag);
  CVodeSetUserData(cs->cvode, sim);
  CVodeSVtolerances(cs->cvode, sim->def.rtol, sim->abstol);
  CVodeSetMaxNumSteps(cs->cvode, sim->def.max_steps);
  if (sim->max_step > 0) CVodeSetMaxStep(cs->cvode, sim->max_step);
  CVodeSetStopTime(cs->cvode, jy_sim_stop_time(sim));
  if (sim->nguards > 0) { /* events: CVODE locates the guards' zero crossings */
    flag = CVodeRootInit(cs->cvode, sim->nguards, jy_sim_guards);
    if (flag != CV_SUCCESS) return step_status(flag);
    CVodeSetRootDirection(cs->cvode, sim->guard_directions);
    CVodeSetNoInactiveRootWarn(cs->cvode);
    cs->roots = 1;
    limit_step(sim, cs, t, y);
  }
  if (lmm == CV_ADAMS) {
    cs->nls = SUNNonlinSol_FixedPoint(sim->y, 0, sim->ctx);
    if (!cs->nls) return JY_ERR_NOMEM;
    flag = CVodeSetNonlinearSolver(cs->cvode, cs->nls);
    if (flag != CV_SUCCESS) return step_status(flag);
    if (sim->project && !cs->step_end) cs->step_end = jy_sim_new_vector(sim);
    return !sim->project || cs->step_end ? JY_OK : JY_ERR_NOMEM;
  }
  jyStatus st = attach_linear_solver(sim, cs);
  if (st != JY_OK || !sim->project) return st;
  flag = CVodeSetProjFn(cs->cvode, project); /* allocates CVODE's projection memory */
  return flag == CV_SUCCESS ? JY_OK : step_status(flag);
}

static void free_integrator(CvodeStepper *cs) {
  if (cs->cvode) CVodeFree(&cs->cvode);
  cs->lmm = 0; /* none runs; auto's ERK stays made (destroy frees it) */
  if (cs->nls) SUNNonlinSolFree(cs->nls);
  if (cs->ls) SUNLinSolFree(cs->ls);
  if (cs->jac) SUNMatDestroy(cs->jac);
  if (cs->jac_weights) N_VDestroy(cs->jac_weights);
  if (cs->jac_column) N_VDestroy(cs->jac_column);
  cs->nls = NULL, cs->ls = NULL, cs->jac = NULL, cs->jac_weights = cs->jac_column = NULL;
}

static jyStatus setup(jySim *sim, int lmm) {
  CvodeStepper *cs = jy_calloc(&sim->model->alloc, 1, sizeof *cs);
  if (!cs) return JY_ERR_NOMEM;
  sim->stepper_data = cs;
  return create_integrator(sim, cs, lmm, sim->t, sim->y);
}

static jyStatus setup_bdf(jySim *sim) { return setup(sim, CV_BDF); }
static jyStatus setup_adams(jySim *sim) { return setup(sim, CV_ADAMS); }

/* CVodeGetReturnFlagName mallocs its answer and writes into it unchecked: out of memory,
 * naming a failure would crash. The flags a step or an interpolation returns: */
static const char *flag_name(int flag) {
#define NAME(f) \
  case f:       \
    return #f
  switch (flag) {
    NAME(CV_TOO_MUCH_WORK);
    NAME(CV_TOO_MUCH_ACC);
    NAME(CV_ERR_FAILURE);
    NAME(CV_CONV_FAILURE);
    NAME(CV_LINIT_FAIL);
    NAME(CV_LSETUP_FAIL);
    NAME(CV_LSOLVE_FAIL);
    NAME(CV_RHSFUNC_FAIL);
    NAME(CV_FIRST_RHSFUNC_ERR);
    NAME(CV_REPTD_RHSFUNC_ERR);
    NAME(CV_UNREC_RHSFUNC_ERR);
    NAME(CV_NLS_INIT_FAIL);
    NAME(CV_NLS_SETUP_FAIL);
    NAME(CV_NLS_FAIL);
    NAME(CV_MEM_FAIL);
    NAME(CV_ILL_INPUT);
    NAME(CV_BAD_K);
    NAME(CV_BAD_T);
    NAME(CV_BAD_DKY);
    NAME(CV_TOO_CLOSE);
    NAME(CV_PROJFUNC_FAIL);
    NAME(CV_REPTD_PROJFUNC_ERR);
  default:
    return NULL;
  }
#undef NAME
}

static void record_flag(jySim *sim, int flag) {
  const CvodeStepper *cs = sim->stepper_data;
  if (cs && erk_now(cs))
    jy_erk_record_flag(sim, flag);
  else
    jy_sim_record_flag(sim, flag_name(flag), "CVODE", flag);
}

static double current_time(const CvodeStepper *cs) {
  sunrealtype t = 0;
  if (erk_now(cs))
    ERKStepGetCurrentTime(erk_now(cs), &t);
  else
    CVodeGetCurrentTime(cs->cvode, &t);
  return t;
}

static double last_step(const CvodeStepper *cs) {
  sunrealtype h = 0;
  if (erk_now(cs))
    ERKStepGetLastStep(erk_now(cs), &h);
  else
    CVodeGetLastStep(cs->cvode, &h);
  return h;
}

/* One internal step toward t_out, the steps since t_from counted in *steps; a failure is
 * recorded. After a crossing's return the call first checks the rest of that step: then
 * *new_step is 0 (no step was taken, the step end was checked before). */
static int one_step(jySim *sim, CvodeStepper *cs, N_Vector y_out, long *steps, double t_from,
                    double t_out, int *new_step) {
  double t_before = current_time(cs);
  *new_step = 0;
  if (jy_sim_steps_spent(sim, "CV_TOO_MUCH_WORK", *steps, t_from, t_before, t_out))
    return CV_TOO_MUCH_WORK;
  ++*steps;
  sunrealtype t_reached = 0;
  /* ARKODE's return values are CVODE's: 0 a step, CV_TSTOP_RETURN, CV_ROOT_RETURN, < 0 */
  int flag = erk_now(cs)
    ? ERKStepEvolve(erk_now(cs), sim->def.t_end, y_out, &t_reached, ARK_ONE_STEP)
    : CVode(cs->cvode, sim->def.t_end, y_out, &t_reached, CV_ONE_STEP);
  *new_step = current_time(cs) != t_before;
  if (flag >= 0) cs->checked_to = t_reached;
  if (flag < 0) {
    if (!cs->erk_met_guard) record_flag(sim, flag);
  } else if (flag == CV_ROOT_RETURN) { /* y_out is the state at the crossing */
    if (erk_now(cs))
      ERKStepGetRootInfo(erk_now(cs), sim->roots_found);
    else
      CVodeGetRootInfo(cs->cvode, sim->roots_found);
    jy_sim_root_located(sim, t_reached, y_out);
  } else if (*new_step && jy_sim_check_step(sim, t_reached, y_out) < 0) {
    flag = CV_RHSFUNC_FAIL;
  } else if (*new_step) {
    limit_step(sim, cs, t_reached, y_out);
  }
  return flag;
}

static jyStatus interpolate(jySim *sim, CvodeStepper *cs, double t_out, N_Vector y_out) {
  int flag = erk_now(cs) ? ERKStepGetDky(erk_now(cs), t_out, 0, y_out)
                         : CVodeGetDky(cs->cvode, t_out, 0, y_out);
  if (flag < 0) record_flag(sim, flag);
  return flag < 0 ? JY_ERR_INTEGRATOR : JY_OK;
}

/* Whether a located crossing comes at or before t_out: sim.c handles it first. */
static int crossing_before(const jySim *sim, double t_out) {
  return sim->root_pending && sim->root_t <= t_out;
}

static jyStatus advance_bdf(jySim *sim, double t_out, N_Vector y_out) {
  CvodeStepper *cs = sim->stepper_data;
  long steps = 0;
  double t_from = current_time(cs);
  while (cs->checked_to < t_out && !sim->root_pending) {
    int new_step;
    int flag = one_step(sim, cs, y_out, &steps, t_from, t_out, &new_step);
    if (flag < 0) return step_status(flag);
  }
  if (crossing_before(sim, t_out)) return JY_OK;
  return interpolate(sim, cs, t_out, y_out);
}

static jySimStats counters(const CvodeStepper *cs) {
  jySimStats s = {0};
  if (erk_now(cs)) {
    ERKStepGetNumSteps(erk_now(cs), &s.steps);
    ERKStepGetNumRhsEvals(erk_now(cs), &s.rhs_evals);
    ERKStepGetNumErrTestFails(erk_now(cs), &s.error_test_fails);
    if (cs->roots) ERKStepGetNumGEvals(erk_now(cs), &s.guard_evals);
    return s;
  }
  CVodeGetNumSteps(cs->cvode, &s.steps);
  CVodeGetNumRhsEvals(cs->cvode, &s.rhs_evals);
  CVodeGetNumErrTestFails(cs->cvode, &s.error_test_fails);
  CVodeGetNumNonlinSolvConvFails(cs->cvode, &s.nonlinear_fails);
  if (cs->roots) CVodeGetNumGEvals(cs->cvode, &s.guard_evals);
  if (cs->ls) CVodeGetNumJacEvals(cs->cvode, &s.jac_evals);
  if (cs->jac) s.jac_rhs_evals = s.jac_evals * (long)SUNDenseMatrix_Columns(cs->jac);
  if (cs->ls && !cs->jac) { /* Krylov: CVODE counts its Jacobian-vector products' calls */
    CVodeGetNumLinRhsEvals(cs->cvode, &s.jac_rhs_evals);
    CVodeGetNumLinIters(cs->cvode, &s.krylov_iters);
  }
  return s;
}

/* The work of the integrator running now, in right-hand sides (jyAutoCounters.rhs_evals),
 * from its counters s. */
static long work_of(const CvodeStepper *cs, const jySimStats *s) {
  if (erk_now(cs)) {
    long attempts = 0;
    ERKStepGetNumStepAttempts(erk_now(cs), &attempts);
    return JY_ERK_STAGES * attempts;
  }
  return s->rhs_evals + s->jac_rhs_evals;
}

static jyAutoCounters auto_counters(const CvodeStepper *cs) {
  jySimStats now = counters(cs);
  long work = cs->work_before + work_of(cs, &now) +
    lround(cs->factor_work * (double)*cs->step_factorizations);
  jy_stats_add(&now, &cs->before);
  return (jyAutoCounters){now.steps, work, now.nonlinear_fails + now.error_test_fails};
}

/* The counters of the integrator running now join those before it (a restart or change). */
static void close_counters(CvodeStepper *cs) {
  jySimStats now = counters(cs);
  cs->work_before += work_of(cs, &now);
  jy_stats_add(&cs->before, &now);
}

/* auto: y at t is a step end it may go back to. */
static void keep_step_end(const jySim *sim, CvodeStepper *cs, double t, N_Vector y) {
  cs->newest = (cs->newest + 1) % AUTO_BACK_MAX;
  N_VScale(1.0, y, cs->back[cs->newest]);
  cs->back_t[cs->newest] = t;
  cs->back_kinetic[cs->newest] = sim->kinetic_scale;
  if (cs->held < AUTO_BACK_MAX) cs->held++;
}

static jyStatus restart_at(jySim *sim, CvodeStepper *cs, double t, N_Vector y) {
  close_counters(cs);
  cs->restarts++;
  cs->checked_to = t;
  if (erk_now(cs)) {
    if (ERKStepReInit(erk_now(cs), jy_sim_rhs, t, y) != ARK_SUCCESS) return JY_ERR_INTEGRATOR;
    ERKStepSetInitStep(erk_now(cs), sim->restart_h0); /* 0: ARKODE estimates it (sim.h) */
  } else {
    if (CVodeReInit(cs->cvode, t, y) != CV_SUCCESS) return JY_ERR_INTEGRATOR;
    CVodeSetInitStep(cs->cvode, sim->restart_h0); /* 0: CVODE estimates it (sim.h) */
  }
  limit_step(sim, cs, t, y);
  if (cs->aut) { /* a restart's state is the earliest auto may go back to */
    cs->held = 0;
    keep_step_end(sim, cs, t, y);
    jyAutoCounters now = auto_counters(cs);
    jy_auto_restarted(cs->aut, &now);
  }
  return JY_OK;
}

static jyStatus restart(jySim *sim, double t) {
  CvodeStepper *cs = sim->stepper_data;
  cs->restart_pending = 0;
  cs->move_pending = JY_AUTO_STAY;       /* decided for a state that is gone */
  if (cs->anchor) {                      /* an event or a new state: auto never goes back past it */
    jy_auto_measure_start(sim, cs->aut); /* the start state is about to go */
    N_VScale(1.0, sim->y, cs->anchor);
    cs->anchor_t = t;
    cs->anchor_kinetic = sim->kinetic_scale;
    /* the shadow cannot see a change of state, held input or mode in the race's window */
    if (!sim->restart_at_breakpoint) jy_auto_window_broken(cs->aut);
  }
  return restart_at(sim, cs, t, sim->y);
}

/* Adams with projection. Every step end is checked: a velocity projection that would take
 * the velocity onto another branch of motion stops the run (Adams has no projection inside
 * its steps to keep it on its branch at a singular configuration). When the step end has
 * left the manifold by more than ten times the tolerance of the state's size, it is
 * projected and the integrator restarts from there; Baumgarte keeps such restarts rare (a
 * restart puts Adams back to order 1). Never driven by an output time. A step end within
 * tolerance whose velocity correction, estimated with the last right-hand side's matrices,
 * is within ten tolerances (or removes under 1e-6 of T) is cleared without the full
 * projection (jy_sim_guard_clears): a branch jump is a hundred tolerances removing 1e-3 of
 * T, and near a singular configuration the estimate grows as the projection does. */
static jyStatus hold_manifold(jySim *sim, CvodeStepper *cs, int step_flag, N_Vector y_step,
                              int *singular) {
  int n = sim->model->n;
  N_Vector y_end = cs->step_end;
  double t = current_time(cs), pos = 0, vel = 0, q_size = 0, v_size = 0;
  /* A plain step returns the step end itself (CVODE copies its zn[0]); a root or tstop
   * return holds another time's state, so that is interpolated at the step end. */
  jyStatus st = JY_OK;
  if (step_flag == CV_SUCCESS)
    N_VScale(1.0, y_step, y_end);
  else
    st = interpolate(sim, cs, t, y_end);
  const double *y = N_VGetArrayPointer(y_end);
  if (st == JY_OK) st = jy_assemble(sim->eval, y, y + n, t, JY_ASM_RESIDUALS);
  if (st != JY_OK) return JY_OK; /* a state the next step will judge */
  jy_residual_norms(sim->eval, &pos, &vel);
  q_size = jy_max_abs(y, n);
  v_size = jy_max_abs(y + n, n);
  const double *abstol = N_VGetArrayPointer(sim->abstol);
  int within = pos <= 10 * (sim->def.rtol * q_size + abstol[0]) &&
    vel <= 10 * (sim->def.rtol * v_size + abstol[sim->nq]);
  if (within && jy_sim_guard_clears(sim, t, y_end)) return JY_OK;
  if (jy_assemble(sim->eval, y, y + n, t, JY_ASM_PROJECTION) != JY_OK) return JY_OK;
  /* Within tolerance the projected state is only the guard's (the velocity projection is
   * measured at the position-projected q: near a flat configuration the tangent space turns
   * fast, and at the step end's own q a jump shows much smaller) and the step end stays.
   * Under auto a projection stalling at a singular configuration's floor stops after two
   * passes instead of ten, and auto's collapse check hands such a stretch to BDF: Bricard's
   * Adams step ends near its flat passage (residuals 2e-14 to 7e-13 against 1e-16 asked)
   * spent ten dense solves each there, 88 % of the run (auto at the defaults: 0.59 s ->
   * 0.076 s). A fixed Adams keeps the ten: left to itself it drifts from the step ends given
   * up on (Bricard at rtol 1e-12: 3e5 rtol instead of 2e3). */
  unsigned stall = cs->aut ? JY_PROJECT_STALL_STOPS : 0u;
  int r = jy_sim_project_own_weights(
    sim, t, y_end, 1e-3, JY_PROJECT_GUARD | JY_PROJECT_ASSEMBLED | JY_PROJECT_KEEP_CLOSE | stall);
  if (singular && r == 2) { /* auto: BDF takes over from an earlier step end */
    *singular = 1;
    return JY_OK;
  }
  if (r == 2) jy_sim_stop_at_branch(sim);
  if (r < 0 || r == 2) return sim->failure;
  if (r > 0 || within) return JY_OK; /* did not settle (a singular configuration): go on */
  /* Restarted only when the next step is taken: until then the interpolant answers the
   * output times this step passed. */
  cs->restart_pending = 1;
  return JY_OK;
}

static jyStatus advance_adams(jySim *sim, double t_out, N_Vector y_out) {
  CvodeStepper *cs = sim->stepper_data;
  long steps = 0;
  double t_from = current_time(cs);
  while (cs->checked_to < t_out && !sim->root_pending) {
    /* the projected step end replaces the step once the rest of it has been checked */
    if (cs->restart_pending && cs->checked_to >= current_time(cs)) {
      cs->restart_pending = 0;
      if (restart_at(sim, cs, current_time(cs), cs->step_end) != JY_OK) return JY_ERR_INTEGRATOR;
    }
    int new_step;
    int flag = one_step(sim, cs, y_out, &steps, t_from, t_out, &new_step);
    if (flag < 0) return step_status(flag);
    if (!sim->project || !new_step) continue;
    jyStatus st = hold_manifold(sim, cs, flag, y_out, NULL);
    if (st != JY_OK) return st;
  }
  if (crossing_before(sim, t_out)) return JY_OK;
  return interpolate(sim, cs, t_out, y_out);
}

static void stats(const jySim *sim, jySimStats *out) {
  const CvodeStepper *cs = sim->stepper_data;
  *out = counters(cs);
  jy_stats_add(out, &cs->before);
  out->restarts = cs->restarts;
  if (!cs->aut) return;
  jyAutoCounters now = auto_counters(cs);
  jy_auto_stats(cs->aut, current_time(cs), &now, out);
  out->erk_rtol = out->method_steps[JY_METHOD_ERK] > 0 ? cs->erk_rtol : 0;
}

static jyStatus error_estimates(jySim *sim, N_Vector weights, N_Vector local_errors) {
  CvodeStepper *cs = sim->stepper_data;
  if (erk_now(cs)) {
    if (weights && ERKStepGetErrWeights(erk_now(cs), weights) != ARK_SUCCESS) return JY_ERR_INVALID;
    if (local_errors && ERKStepGetEstLocalErrors(erk_now(cs), local_errors) != ARK_SUCCESS)
      return JY_ERR_INVALID;
    return JY_OK;
  }
  if (weights && CVodeGetErrWeights(cs->cvode, weights) != CV_SUCCESS) return JY_ERR_INVALID;
  if (local_errors && CVodeGetEstLocalErrors(cs->cvode, local_errors) != CV_SUCCESS)
    return JY_ERR_INVALID;
  return JY_OK;
}

static void position(jySim *sim, double *t, double *h) {
  CvodeStepper *cs = sim->stepper_data;
  *t = current_time(cs);
  *h = last_step(cs);
}

static void destroy(jySim *sim) {
  CvodeStepper *cs = sim->stepper_data;
  if (!cs) return;
  free_integrator(cs);
  if (cs->step_end) N_VDestroy(cs->step_end);
  if (cs->good) N_VDestroy(cs->good);
  if (cs->anchor) N_VDestroy(cs->anchor);
  if (cs->race_y) N_VDestroy(cs->race_y);
  if (cs->race_end) N_VDestroy(cs->race_end);
  if (cs->race_erk) ERKStepFree(&cs->race_erk);
  if (cs->erk) ERKStepFree(&cs->erk);
  jy_free(&sim->model->alloc, cs->race_dependent);
  for (int k = 0; k < AUTO_BACK_MAX; k++)
    if (cs->back[k]) N_VDestroy(cs->back[k]);
  if (cs->aut) jy_auto_free(cs->aut);
  jy_free(&sim->model->alloc, cs->aut);
  jy_free(&sim->model->alloc, cs);
  sim->stepper_data = NULL;
}

/* ---- method = auto (int_auto.h decides, this carries it out) ----------------------- */

/* The integrator changes to the other method at (t, y): a new CVODE from there, the
 * counters so far kept. No step straddles the change. */
static jyStatus change_method(jySim *sim, CvodeStepper *cs, jyAutoMove move, double t, N_Vector y) {
  jyAutoCounters now = auto_counters(cs);
  close_counters(cs);
  jy_auto_changed(cs->aut, move, t, &now);
  free_integrator(cs);
  sim->method_now = cs->aut->bdf ? JY_METHOD_BDF : cs->aut->erk ? JY_METHOD_ERK : JY_METHOD_ADAMS;
  jyStatus st = cs->aut->erk ? start_erk(sim, cs, t, y)
                             : create_integrator(sim, cs, cs->aut->bdf ? CV_BDF : CV_ADAMS, t, y);
  if (st != JY_OK) return st;
  if (cs->held == 0 || y != cs->back[cs->newest]) keep_step_end(sim, cs, t, y);
  return JY_OK;
}

/* A right-hand side of zero: what the race's ERK steps once at the start (setup_auto). */
static int zero_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  (void)t, (void)y, (void)ud;
  N_VConst(0.0, ydot);
  return 0;
}

/* ERK's shadow run from (t0, y0) to t1 (first step h0, 0: its own estimate): reporting
 * nothing, without the event guards, thrown away. Its work (jy_auto_erk_work), or INFINITY
 * where it stops, meets the branch guard or spends more than budget. It goes over the
 * inputs' breakpoints as the run does: each piece of the signals read over its own span,
 * stopping at its end, the state settled there and ERK started again (a road's table read
 * from the window's last piece would be that piece's line extended back over the others).
 * What its right-hand sides and projections leave behind is put back: the branch guard's
 * scale, the dependent rows, the run's segment, a failure and the messages (the
 * evaluator's cached matrices are keyed by their state and time). */
static double shadow_erk(jySim *sim, CvodeStepper *cs, double t0, N_Vector y0, double t1, double h0,
                         double budget) {
  jyEval *e = sim->eval;
  double kinetic = sim->kinetic_scale, rate = e->baumgarte_rate;
  double seg_lo = sim->seg_lo, seg_hi = sim->seg_hi;
  int m = sim->model->m, ndependent = e->ndependent;
  void *erk = cs->race_erk;
  memcpy(cs->race_dependent, e->dependent, (size_t)m);
  if (sim->project) e->baumgarte_rate = 0;
  cs->shadow = 1;
  cs->erk_met_guard = 0;
  double work = INFINITY, spent_before = 0;
  long factored = sim->step_factorizations; /* its projections' are its work, not the run's */
  double from = t0;
  N_Vector start = y0;
  jy_sim_find_segment(sim, from);
  for (;;) { /* one piece of the signals */
    double stop = sim->seg_hi < t1 ? sim->seg_hi : t1;
    if (ERKStepReInit(erk, jy_sim_rhs, from, start) != ARK_SUCCESS ||
        ERKStepSetStopTime(erk, stop) != ARK_SUCCESS || ERKStepSetInitStep(erk, h0) != ARK_SUCCESS)
      break;
    sunrealtype reached = from;
    long attempts = 0, steps = 0;
    double spent = spent_before;
    int lost = 0; /* it stopped, met the guard or spent its budget */
    while (!lost && reached < stop) {
      int flag = ERKStepEvolve(erk, stop, cs->race_end, &reached, ARK_ONE_STEP);
      ERKStepGetNumStepAttempts(erk, &attempts);
      ERKStepGetNumSteps(erk, &steps);
      spent = spent_before + jy_auto_erk_work(attempts, steps) +
        cs->factor_work * (double)(sim->step_factorizations - factored);
      lost = flag < 0 || cs->erk_met_guard || spent > budget;
    }
    if (lost) break;
    if (stop >= t1) {
      work = spent;
      break;
    }
    /* a breakpoint: settled onto the next piece's rows, as restart_here does in the run */
    char why[JY_ERROR_LEN];
    jy_sim_find_segment(sim, stop);
    if (sim->settle_weights &&
        jy_sim_settle_state(sim, stop, N_VGetArrayPointer(cs->race_end), sim->settle_weights, why,
                            sizeof why) != JY_OK)
      break;
    spent_before = jy_auto_erk_work(attempts, steps) + spent_before;
    from = stop;
    start = cs->race_end;
    h0 = sim->scan_h > 0 && sim->scan_h <= sim->seg_hi - stop ? sim->scan_h : 0;
  }
  cs->shadow = 0;
  cs->erk_met_guard = 0;
  sim->step_factorizations = factored;
  sim->kinetic_scale = kinetic;
  e->baumgarte_rate = rate;
  memcpy(e->dependent, cs->race_dependent, (size_t)m);
  e->ndependent = ndependent;
  jy_sim_set_segment(sim, seg_lo, seg_hi);
  if (sim->failure != JY_OK) sim->failure = JY_OK, sim->error[0] = '\0';
  sim->solver_flag[0] = sim->solver_message[0] = sim->rhs_message[0] = '\0';
  return work;
}

/* The race: ERK over Adams' window, from the state where it began (cs->race_y at
 * aut->race_t) to t; a crossing in the window costs it error test failures, as it would in
 * the run. The first step is Adams' mean step over the window: ERK's own first estimate is
 * far smaller, and its climb from there would be most of a window's work. */
static double race_erk(jySim *sim, CvodeStepper *cs, double t) {
  const jyAutoChoice *a = cs->aut;
  double h0 = (t - a->race_t) / (double)(auto_counters(cs).steps - a->race_at.steps);
  return shadow_erk(sim, cs, a->race_t, cs->race_y, t, h0, jy_auto_race_budget(a));
}

/* The relative tolerance of ERK's steps on a prescribed motion (setup_auto). */
#define PRESCRIBED_STEP_RTOL 1e-6

/* As many independent rows as coordinates at the start: the motion is prescribed, with no
 * free direction. Counted from the rows themselves, not their number: a model's inactive
 * contacts are zero rows, and nonholonomic rows may depend on the position rows (the sliding
 * box: 25 rows on 19 coordinates, 6 degrees of freedom). */
static int prescribed(jySim *sim) {
  const jyModel *md = sim->model;
  int kept = 0;
  if (!sim->project || md->n == 0 || md->m - md->ndependent < md->n) return 0;
  double sigma = jy_sim_constraint_sigma_rows(sim, sim->t, sim->y, &kept);
  return kept == md->n && sigma > md->solver.rank_rcond;
}

/* Whether every constraint row is a position row (the projection fixes q as well as v). */
static int position_rows_only(const jyModel *md) {
  for (int i = 0; i < md->m; i++)
    if (md->row_kinds[i] != JY_ROW_POSITION) return 0;
  return 1;
}

/* The work of one factorization made by a step end's projection or branch guard, in
 * right-hand sides. On the row path a right-hand side factors the same matrix: one. A
 * spatial tree's right-hand side is its recursion, several times cheaper than the sparse
 * factorization of all its rows that a projection makes (the 14-body tree under ERK: a
 * projection costs 10.6 right-hand sides and makes 1.6 factorizations). The planar tree's
 * rows are few beside its recursion (the W1 chain: 1.2 right-hand sides a projection). */
static double step_factor_work(const jySim *sim) {
  return sim->eval->spatial ? JY_SPATIAL_FACTOR_WORK : 1.0;
}

static jyStatus setup_auto(jySim *sim) {
  const jyAllocator *alloc = &sim->model->alloc;
  CvodeStepper *cs = jy_calloc(alloc, 1, sizeof *cs);
  if (!cs) return JY_ERR_NOMEM;
  sim->stepper_data = cs;
  cs->aut = jy_calloc(alloc, 1, sizeof *cs->aut);
  if (!cs->aut) return JY_ERR_NOMEM;
  cs->step_factorizations = &sim->step_factorizations;
  cs->factor_work = step_factor_work(sim);
  cs->erk_rtol = sim->def.rtol;
  cs->good = jy_sim_new_vector(sim);
  for (int k = 0; k < AUTO_BACK_MAX; k++)
    if (!(cs->back[k] = jy_sim_new_vector(sim))) return JY_ERR_NOMEM;
  cs->anchor = jy_sim_new_vector(sim);
  cs->race_y = jy_sim_new_vector(sim);
  cs->race_end = jy_sim_new_vector(sim);
  if (sim->project) cs->step_end = jy_sim_new_vector(sim);
  cs->race_dependent = jy_calloc(alloc, (size_t)sim->model->m + 1, 1);
  if (!cs->good || !cs->anchor || !cs->race_y || !cs->race_end || !cs->race_dependent ||
      (sim->project && !cs->step_end))
    return JY_ERR_NOMEM;
  N_VScale(1.0, sim->y, cs->anchor);
  cs->anchor_t = sim->t;
  cs->anchor_kinetic = sim->kinetic_scale;
  jyStatus st = jy_auto_init(sim, cs->aut, sim->t, cs->anchor);
  if (st != JY_OK) return st;
  keep_step_end(sim, cs, sim->t, sim->y);
  jyStatus made = JY_OK;
  cs->erk = jy_erk_create(sim, sim->t, sim->y, 1, erk_project_step, &made);
  if (made != JY_OK) return made;
  /* A fully prescribed motion (as many independent rows as coordinates): every reported
   * state is the projection's, exact whatever the steps, so the method only carries the
   * state from one projection to the next, and ERK does that cheapest at every rtol
   * (examples/crank_motor at the defaults: ERK 0.0049 s, Adams 0.0046, BDF 0.037, whose
   * Jacobians cost 13 right-hand sides a step; examples/tracking: ERK 0.0035, BDF 0.0032,
   * Adams 0.0072). It keeps the stretch as after a won race: a failed step or the branch
   * guard still hands the run to BDF. */
  if (prescribed(sim)) {
    jyAutoCounters none = {0, 0, 0};
    jy_auto_prescribed(cs->aut, sim->t, &none);
    sim->method_now = JY_METHOD_ERK;
    /* Where the projection fixes the whole state, its error test only sets how far the
     * state goes between projections, which are made at the run's own weights: at
     * PRESCRIBED_STEP_RTOL the step ends are well within the projection's reach, and the
     * answer stays the projection's (crank_motor at the defaults: 43 steps instead of 254,
     * the rocker 1e-13 rad off its closed form instead of 1e-15, against rtol 1e-11); and a
     * cubic interpolant serves the rows (the default degree 5 costs about 4 right-hand
     * sides a row). Not with state the projection does not fix (positions under a velocity
     * row: a speed drive integrates its angle; N-P's multipliers) or event guards, which
     * are located on the interpolant. */
    int projected = sim->nq == sim->model->n && sim->nguards == 0 && position_rows_only(sim->model);
    if (projected && ERKStepSetInterpolantDegree(cs->erk, 3) != ARK_SUCCESS)
      return JY_ERR_INTEGRATOR;
    if (projected && sim->def.rtol < PRESCRIBED_STEP_RTOL) {
      N_Vector atol = jy_sim_new_vector(sim);
      if (!atol) return JY_ERR_NOMEM;
      N_VScale(PRESCRIBED_STEP_RTOL / sim->def.rtol, sim->abstol, atol);
      int flag = ERKStepSVtolerances(cs->erk, PRESCRIBED_STEP_RTOL, atol);
      N_VDestroy(atol);
      if (flag != ARK_SUCCESS) return JY_ERR_INTEGRATOR;
      cs->erk_rtol = PRESCRIBED_STEP_RTOL;
    }
    return start_erk(sim, cs, sim->t, sim->y);
  }
  /* the race's shadow: without the event guards, since it reports nothing */
  cs->race_erk = jy_erk_create(sim, sim->t, sim->y, 0, erk_project_step, &made);
  if (made != JY_OK) return made;
  /* ARKODE allocates its stage vectors on the first step: one step now, so that a race
   * during the run allocates nothing. Of a zero right-hand side, unprojected: the step is
   * thrown away, and the model's own would cost a short run a fifth of its time (incline_em,
   * 19 steps: 71 k instructions of the run's 540 k) */
  double span = sim->def.t_end - sim->t;
  if (span > 0) { /* a failure only leaves the allocation to the first race */
    sunrealtype reached = sim->t;
    cs->warming = 1;
    if (ERKStepReInit(cs->race_erk, zero_rhs, sim->t, sim->y) == ARK_SUCCESS &&
        ERKStepSetStopTime(cs->race_erk, sim->t + 1e-6 * span) == ARK_SUCCESS &&
        ERKStepSetInitStep(cs->race_erk, 1e-6 * span) == ARK_SUCCESS)
      ERKStepEvolve(cs->race_erk, sim->t + 1e-6 * span, cs->race_end, &reached, ARK_ONE_STEP);
    cs->warming = 0;
  }
  sim->method_now = JY_METHOD_ADAMS;
  return create_integrator(sim, cs, CV_ADAMS, sim->t, sim->y);
}

/* Going back to an earlier state: what the steps since left behind is forgotten (the branch
 * guard's kinetic energy scale as the stretch began, not what a failed try's states made
 * it; the dependent rows decided since; a crossing located since, which BDF locates
 * again; the guard's reason, not a failure now), and angles continue from there. */
static void forget_since(jySim *sim, CvodeStepper *cs) {
  sim->kinetic_scale = cs->kinetic_before;
  jy_eval_restore_dependent(sim->eval);
  jy_eval_continue_angles(sim->eval);
  sim->root_pending = 0;
  sim->rhs_message[0] = '\0';
}

/* Adams' step just taken ends at a singular configuration (or BDF, started before it,
 * could not get through): back `steps` kept step ends (a crossing located since is dropped:
 * BDF locates it again), and BDF from there. The output times answered since were answered
 * from Adams' steps the guard cleared. */
static jyStatus go_back_to_bdf(jySim *sim, CvodeStepper *cs, int steps) {
  if (steps > cs->held - 1) steps = cs->held - 1;
  int k = ((cs->newest - steps) % AUTO_BACK_MAX + AUTO_BACK_MAX) % AUTO_BACK_MAX;
  cs->newest = k;
  cs->held -= steps;
  cs->went_back += steps;
  /* the guard's scale as it was there: the steps since may have crawled towards a blow-up
   * (a prescribed speed growing without bound), and a scale they raised would let BDF's
   * projections jump through it unflagged */
  cs->kinetic_before = cs->back_kinetic[k];
  forget_since(sim, cs);
  return change_method(sim, cs, JY_AUTO_TO_BDF_SINGULAR, cs->back_t[k], cs->back[k]);
}

/* After an accepted step checked to its end: the step end is kept, and the choice moves
 * there. */
static jyStatus after_step(jySim *sim, CvodeStepper *cs, int step_flag, N_Vector y_step) {
  double t = current_time(cs), h = 0;
  if (cs->lmm == CV_ADAMS && cs->restart_pending)
    N_VScale(1.0, cs->step_end, cs->good); /* projected: Adams restarts from it */
  else if (step_flag == CV_SUCCESS)
    N_VScale(1.0, y_step, cs->good);
  else if (interpolate(sim, cs, t, cs->good) != JY_OK)
    return JY_ERR_INTEGRATOR;
  /* A singular stretch's steps are not kept: a retry goes back to before it started. Nor
   * are Adams' steps closer than half its recent largest step to the last kept: crawling
   * towards a singular configuration, it takes thousands in a microsecond. */
  if (!cs->aut->singular && t - cs->back_t[cs->newest] >= 0.5 * cs->aut->h_recent)
    keep_step_end(sim, cs, t, cs->good);
  h = last_step(cs);
  jyAutoCounters now = auto_counters(cs);
  jyAutoMove move = jy_auto_after_step(sim, cs->aut, t, cs->good, h, &now);
  if (sim->failure != JY_OK) return sim->failure; /* a probe's right-hand side failed */
  if (cs->aut->race_mark) {                       /* Adams' race window starts here */
    cs->aut->race_mark = 0;
    N_VScale(1.0, cs->good, cs->race_y);
  }
  if (move == JY_AUTO_RACE) move = jy_auto_race_result(cs->aut, race_erk(sim, cs, t));
  if (move == JY_AUTO_STAY || t >= sim->def.t_end) return JY_OK;
  cs->went_back = 0;
  cs->kinetic_before = sim->kinetic_scale;
  if (move == JY_AUTO_TO_SMOOTH) cs->held = 0; /* going back never goes past a hand-back */
  /* made before the next step: until then this step answers the output times it passed */
  cs->move_pending = move;
  cs->good_t = t;
  return JY_OK;
}

/* BDF failed inside a singular stretch: it started too close to the configuration to get
 * through. Tries again from further back: AUTO_BACK_FIRST more step ends, then the earliest
 * kept, then the run's start or its last event (and BDF to the end from there, as a fixed
 * BDF run would have gone). The failure (and a right-hand side's sticky one with it, a
 * state of the failed try) is forgotten. 1 when it tries again. */
static int retry_further_back(jySim *sim, CvodeStepper *cs) {
  jyAutoChoice *a = cs->aut;
  if (!a->singular || !a->bdf || cs->went_back < 0) return 0;
  sim->failure = JY_OK;
  sim->error[0] = sim->solver_flag[0] = sim->solver_message[0] = '\0';
  int further = cs->went_back > 0 ? cs->held - 1 : AUTO_BACK_FIRST; /* then the earliest */
  if (further >= 1 && further <= cs->held - 1) return go_back_to_bdf(sim, cs, further) == JY_OK;
  jy_auto_stay_bdf(a);
  cs->kinetic_before = cs->anchor_kinetic;
  forget_since(sim, cs);
  cs->held = 0;
  jyStatus st = change_method(sim, cs, JY_AUTO_TO_BDF_SINGULAR, cs->anchor_t, cs->anchor);
  cs->went_back = -1; /* nothing further back */
  return st == JY_OK;
}

/* BDF in a singular stretch taking steps a millionth of Adams' before (left alone it goes
 * down to 1e-277 s without failing), or still a hundredth of them after AUTO_TRY_STEPS
 * (the four-bar chain crawled 11,697 steps of 1e-6 s before failing, where BDF from
 * further back goes through in a few hundred): stuck as surely as failed. */
static int stuck(const CvodeStepper *cs) {
  if (!cs->aut->singular || !cs->aut->bdf) return 0;
  double h = last_step(cs);
  long in_try = auto_counters(cs).steps - cs->aut->stretch_at.steps;
  return fabs(h) < 1e-6 * cs->aut->adams_h ||
    (in_try > AUTO_TRY_STEPS && fabs(h) < 1e-2 * cs->aut->adams_h);
}

static jyStatus advance_auto(jySim *sim, double t_out, N_Vector y_out) {
  CvodeStepper *cs = sim->stepper_data;
  long steps = 0;
  double t_from = current_time(cs);
  while (cs->checked_to < t_out && !sim->root_pending) {
    if (cs->move_pending) { /* at the step end kept last (projected when Adams' was) */
      jyAutoMove move = cs->move_pending;
      cs->move_pending = JY_AUTO_STAY;
      jyStatus st = change_method(sim, cs, move, cs->good_t, cs->good);
      if (st != JY_OK) return st;
    }
    if (cs->restart_pending && cs->checked_to >= current_time(cs)) {
      cs->restart_pending = 0;
      if (restart_at(sim, cs, current_time(cs), cs->step_end) != JY_OK) return JY_ERR_INTEGRATOR;
    }
    int new_step;
    int flag = one_step(sim, cs, y_out, &steps, t_from, t_out, &new_step);
    if (cs->erk_met_guard) { /* as Adams' below: BDF from an earlier step end, to the end */
      cs->erk_met_guard = 0;
      jy_auto_singular(sim, cs->aut, cs->erk_guard_t, cs->step_end);
      jy_auto_stay_bdf(cs->aut);
      cs->went_back = 0;
      cs->kinetic_before = sim->kinetic_scale;
      jyStatus st = go_back_to_bdf(sim, cs, AUTO_BACK_FIRST);
      if (st != JY_OK) return st;
      continue;
    }
    if (flag < 0 && !cs->aut->bdf && sim->failure == JY_OK && cs->held > 1) {
      /* the smooth method's step failed (ERK's error test at Bricard's flat passage, where
       * it had just taken over): as at the guard, BDF from an earlier step end to the end */
      sim->error[0] = sim->solver_flag[0] = sim->solver_message[0] = '\0';
      jy_auto_singular(sim, cs->aut, current_time(cs), cs->good);
      jy_auto_stay_bdf(cs->aut);
      cs->went_back = 0;
      cs->kinetic_before = sim->kinetic_scale;
      jyStatus st = go_back_to_bdf(sim, cs, AUTO_BACK_FIRST);
      if (st != JY_OK) return st;
      steps = 0, t_from = current_time(cs);
      continue;
    }
    if ((flag < 0 || stuck(cs)) && retry_further_back(sim, cs)) {
      steps = 0, t_from = current_time(cs); /* the steps toward t_out count from here */
      continue;
    }
    if (flag < 0) return step_status(flag);
    if (new_step && cs->lmm == CV_ADAMS && sim->project) {
      int singular = 0;
      jyStatus st = hold_manifold(sim, cs, flag, y_out, &singular);
      if (st != JY_OK) return st;
      if (singular) {
        jy_auto_singular(sim, cs->aut, current_time(cs), cs->step_end);
        jy_auto_stay_bdf(cs->aut); /* it came that close to a jump: the rest is BDF's */
        cs->went_back = 0;
        cs->kinetic_before = sim->kinetic_scale;
        st = go_back_to_bdf(sim, cs, AUTO_BACK_FIRST);
        if (st != JY_OK) return st;
        continue;
      }
    }
    /* a crossing's step is judged once the rest of it is checked, after the event (which
     * either restarted the integrator or left the step as it was) */
    if (cs->checked_to < current_time(cs) || sim->root_pending) continue;
    jyStatus st = after_step(sim, cs, flag, y_out);
    if (st != JY_OK) return st;
  }
  if (crossing_before(sim, t_out)) return JY_OK;
  return interpolate(sim, cs, t_out, y_out);
}

const jyStepperOps jy_stepper_cvode_bdf = {"CVODE BDF", setup_bdf,       advance_bdf, restart,
                                           stats,       error_estimates, position,    destroy};
const jyStepperOps jy_stepper_cvode_adams = {
  "CVODE Adams", setup_adams, advance_adams, restart, stats, error_estimates, position, destroy};
const jyStepperOps jy_stepper_cvode_auto = {
  "CVODE Adams/BDF (auto)", setup_auto, advance_auto, restart, stats,
  error_estimates,          position,   destroy};

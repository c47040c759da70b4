/* Stepping with SUNDIALS ARKODE: an explicit Runge–Kutta method (ERKStep) whose every step
 * end is projected onto the constraints (ARKODE's step post-processing), output times
 * answered from its interpolant. */
#include <arkode/arkode_erkstep.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"
#include "sim_events.h"

typedef struct ArkodeStepper {
  void *arkode;
  long restarts;
  jySimStats before;
  int roots;         /* guard functions attached (events) */
  double checked_to; /* guards checked up to here (int_cvode.c says why) */
} ArkodeStepper;

/* The step limit the parts with modes ask for, through the stop time (int_cvode.c). */
static void limit_step(jySim *sim, ArkodeStepper *as, double t, N_Vector y) {
  jy_erk_set_stop(sim, as->arkode, t, y);
}

static void on_arkode_error(int code, const char *module, const char *function, char *msg,
                            void *ud) {
  jySim *sim = ud;
  (void)code;
  snprintf(sim->solver_message, sizeof sim->solver_message, "%s/%s: %s", module, function, msg);
}

/* After every accepted step: the state onto the manifold, converged well inside the
 * step's error weights (0.1 of them, as CVODE's own projection asks). */
static int project_step(sunrealtype t, N_Vector y, void *ud) {
  jySim *sim = ud;
  int r = jy_sim_project_own_weights(sim, t, y, 0.1, JY_PROJECT_GUARD | JY_PROJECT_KEEP_CLOSE);
  if (r == 2) return jy_sim_stop_at_branch(sim); /* ARKODE cannot retry a processed step */
  return r < 0 ? -1 : 0; /* a projection that did not settle leaves the step as it is */
}

void *jy_erk_create(jySim *sim, double t, N_Vector y, int guards,
                    int (*postprocess)(double, N_Vector, void *), jyStatus *st) {
  void *arkode = ERKStepCreate(jy_sim_rhs, t, y, sim->ctx);
  *st = JY_ERR_NOMEM;
  if (!arkode) return NULL;
  *st = JY_ERR_INTEGRATOR;
  if (ERKStepSetErrHandlerFn(arkode, on_arkode_error, sim) != ARK_SUCCESS) return arkode;
  ERKStepSetUserData(arkode, sim);
  ERKStepSVtolerances(arkode, sim->def.rtol, sim->abstol);
  ERKStepSetTableNum(arkode, ARKODE_VERNER_8_5_6);
  ERKStepSetMaxNumSteps(arkode, sim->def.max_steps);
  if (sim->max_step > 0) ERKStepSetMaxStep(arkode, sim->max_step);
  ERKStepSetStopTime(arkode, jy_sim_stop_time(sim));
  if (sim->project && ERKStepSetPostprocessStepFn(arkode, postprocess) != ARK_SUCCESS)
    return arkode;
  if (guards && sim->nguards > 0) { /* events: ARKODE locates the guards' zero crossings */
    int flag = ERKStepRootInit(arkode, sim->nguards, jy_sim_guards);
    if (flag != ARK_SUCCESS) {
      *st = flag == ARK_MEM_FAIL ? JY_ERR_NOMEM : JY_ERR_INTEGRATOR;
      return arkode;
    }
    ERKStepSetRootDirection(arkode, sim->guard_directions);
    ERKStepSetNoInactiveRootWarn(arkode);
  }
  *st = JY_OK;
  return arkode;
}

void jy_erk_set_stop(jySim *sim, void *arkode, double t, N_Vector y) {
  double end = jy_sim_stop_time(sim); /* t_end or an input's next breakpoint */
  double h = sim->nguards > 0 ? jy_hybrid_max_step(sim, t, N_VGetArrayPointer(y)) : 0;
  ERKStepSetStopTime(arkode, h > 0 && t + h < end ? t + h : end); /* a stop reached is cleared */
}

static jyStatus setup(jySim *sim) {
  ArkodeStepper *as = jy_calloc(&sim->model->alloc, 1, sizeof *as);
  if (!as) return JY_ERR_NOMEM;
  sim->stepper_data = as;
  as->checked_to = sim->t;
  jyStatus st = JY_OK;
  as->arkode = jy_erk_create(sim, sim->t, sim->y, 1, project_step, &st);
  if (st != JY_OK) return st;
  as->roots = sim->nguards > 0;
  if (as->roots) limit_step(sim, as, sim->t, sim->y);
  return JY_OK;
}

/* ERKStepGetReturnFlagName mallocs its answer and writes into it unchecked: out of memory,
 * naming a failure would crash. The flags a step or an interpolation returns: */
static const char *flag_name(int flag) {
#define NAME(f) \
  case f:       \
    return #f
  switch (flag) {
    NAME(ARK_TOO_MUCH_WORK);
    NAME(ARK_TOO_MUCH_ACC);
    NAME(ARK_ERR_FAILURE);
    NAME(ARK_RHSFUNC_FAIL);
    NAME(ARK_FIRST_RHSFUNC_ERR);
    NAME(ARK_REPTD_RHSFUNC_ERR);
    NAME(ARK_UNREC_RHSFUNC_ERR);
    NAME(ARK_POSTPROCESS_STEP_FAIL);
    NAME(ARK_MEM_FAIL);
    NAME(ARK_ILL_INPUT);
    NAME(ARK_BAD_K);
    NAME(ARK_BAD_T);
    NAME(ARK_BAD_DKY);
    NAME(ARK_TOO_CLOSE);
    NAME(ARK_INTERP_FAIL);
  default:
    return NULL;
  }
#undef NAME
}

void jy_erk_record_flag(jySim *sim, int flag) {
  jy_sim_record_flag(sim, flag_name(flag), "ARKODE", flag);
}

static double current_time(const ArkodeStepper *as) {
  sunrealtype t = 0;
  ERKStepGetCurrentTime(as->arkode, &t);
  return t;
}

static jyStatus advance(jySim *sim, double t_out, N_Vector y_out) {
  ArkodeStepper *as = sim->stepper_data;
  long steps = 0;
  double t_from = current_time(as);
  while (as->checked_to < t_out && !sim->root_pending) {
    double t_before = current_time(as);
    if (jy_sim_steps_spent(sim, "ARK_TOO_MUCH_WORK", steps++, t_from, t_before, t_out))
      return JY_ERR_INTEGRATOR;
    sunrealtype t_reached = 0;
    int flag = ERKStepEvolve(as->arkode, sim->def.t_end, y_out, &t_reached, ARK_ONE_STEP);
    if (flag < 0) {
      jy_erk_record_flag(sim, flag);
      return flag == ARK_MEM_FAIL ? JY_ERR_NOMEM : JY_ERR_INTEGRATOR;
    }
    as->checked_to = t_reached;
    if (flag == ARK_ROOT_RETURN) { /* y_out is the state at the crossing */
      ERKStepGetRootInfo(as->arkode, sim->roots_found);
      jy_sim_root_located(sim, t_reached, y_out);
    } else if (current_time(as) != t_before && jy_sim_check_step(sim, t_reached, y_out) < 0) {
      return sim->failure;
    } else if (current_time(as) != t_before) {
      limit_step(sim, as, t_reached, y_out);
    }
  }
  if (sim->root_pending && sim->root_t <= t_out) return JY_OK; /* sim.c handles it first */
  int flag = ERKStepGetDky(as->arkode, t_out, 0, y_out);
  if (flag < 0) jy_erk_record_flag(sim, flag);
  return flag < 0 ? JY_ERR_INTEGRATOR : JY_OK;
}

static jySimStats counters(const ArkodeStepper *as) {
  jySimStats s = {0};
  ERKStepGetNumSteps(as->arkode, &s.steps);
  ERKStepGetNumRhsEvals(as->arkode, &s.rhs_evals);
  ERKStepGetNumErrTestFails(as->arkode, &s.error_test_fails);
  if (as->roots) ERKStepGetNumGEvals(as->arkode, &s.guard_evals);
  return s;
}

static jyStatus restart(jySim *sim, double t) {
  ArkodeStepper *as = sim->stepper_data;
  jySimStats now = counters(as);
  jy_stats_add(&as->before, &now);
  as->restarts++;
  as->checked_to = t;
  if (ERKStepReInit(as->arkode, jy_sim_rhs, t, sim->y) != ARK_SUCCESS) return JY_ERR_INTEGRATOR;
  ERKStepSetInitStep(as->arkode, sim->restart_h0); /* 0: ARKODE estimates it (sim.h) */
  limit_step(sim, as, t, sim->y);
  return JY_OK;
}

static void stats(const jySim *sim, jySimStats *out) {
  const ArkodeStepper *as = sim->stepper_data;
  *out = counters(as);
  jy_stats_add(out, &as->before);
  out->restarts = as->restarts;
}

static jyStatus error_estimates(jySim *sim, N_Vector weights, N_Vector local_errors) {
  ArkodeStepper *as = sim->stepper_data;
  if (weights && ERKStepGetErrWeights(as->arkode, weights) != ARK_SUCCESS) return JY_ERR_INVALID;
  if (local_errors && ERKStepGetEstLocalErrors(as->arkode, local_errors) != ARK_SUCCESS)
    return JY_ERR_INVALID;
  return JY_OK;
}

static void position(jySim *sim, double *t, double *h) {
  ArkodeStepper *as = sim->stepper_data;
  sunrealtype tc = *t, hc = 0;
  ERKStepGetCurrentTime(as->arkode, &tc);
  ERKStepGetLastStep(as->arkode, &hc);
  *t = tc;
  *h = hc;
}

static void destroy(jySim *sim) {
  ArkodeStepper *as = sim->stepper_data;
  if (!as) return;
  if (as->arkode) ERKStepFree(&as->arkode);
  jy_free(&sim->model->alloc, as);
  sim->stepper_data = NULL;
}

const jyStepperOps jy_stepper_arkode_erk = {"ARKODE ERK", setup,           advance,  restart,
                                            stats,        error_estimates, position, destroy};

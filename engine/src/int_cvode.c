/* Integration with SUNDIALS CVODE. Udwadia–Kalaba: state y = [q; v], y' = [v; q''(q, v, t)].
 * Natsiavas–Paraskevopoulos: y = [q; lambda; v; lambda'], y' = [v; lambda'; q''; lambda'']
 * (dyn_np.c). */
#include <cvode/cvode.h>
#include <cvode/cvode_ls.h>
#include <cvode/cvode_proj.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <string.h>
#include <sundials/sundials_config.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "int_diagnose.h"
#include "internal.h"
#include "sim.h"

#if SUNDIALS_VERSION_MAJOR >= 7
#define JY_SUN_COMM SUN_COMM_NULL
#else
#define JY_SUN_COMM NULL
#endif

jySimDef jy_default_sim_def(void) {
  return (jySimDef){
      .method = JY_METHOD_ADAMS,
      .rtol = 1e-8,
      .atol = 1e-10,
      .t_start = 0,
      .t_end = 10,
      .dt_out = 0.01,
      .max_step = 0,
      .max_steps = 100000,
      .baumgarte_rate = 5,
      .formulation = JY_FORMULATION_UK,
      .drift = JY_DRIFT_PROJECTION,
  };
}

static jyStatus restart(jySim *sim, double t);

/* CVODE reports through this; SUNDIALS 6.4 crashes on a NULL handler, so always set one. */
static void on_cvode_error(int code, const char *module, const char *function, char *msg,
                           void *ud) {
  jySim *sim = ud;
  (void)code;
  snprintf(sim->cvode_message, sizeof sim->cvode_message, "%s/%s: %s", module, function, msg);
}

/* What the right-hand side tells CVODE about a status (message from `why`). */
static int rhs_outcome(jySim *sim, jyStatus st, const char *why) {
  if (st == JY_OK) return 0;
  if (st == JY_ERR_PART || st == JY_ERR_NOMEM || st == JY_ERR_INVALID) {
    sim->failure = st;
    jy_set_error(sim->error, "%s", why);
    return -1;
  }
  /* A trial state off the solution may be singular or inconsistent; let CVODE retry with
   * a smaller step and keep the reason in case it gives up. */
  jy_set_error(sim->rhs_message, "%s", why);
  sim->rhs_status = st;
  return 1;
}

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  jySim *sim = ud;
  /* Failures are sticky: the fixed-point solver of SUNDIALS 6 treats -1 as recoverable. */
  if (sim->failure != JY_OK) return -1;
  int n = sim->model->n;
  const double *yv = N_VGetArrayPointer(y);
  double *dy = N_VGetArrayPointer(ydot);
  memcpy(dy, yv + n, sizeof(double) * (size_t)n);
  jyStatus st = jy_eval_acceleration(sim->eval, yv, yv + n, t, dy + n);
  return rhs_outcome(sim, st, jy_eval_error(sim->eval));
}

/* y = [q; lambda; v; lambda'] (nq = n + m each half). */
static int rhs_np(sunrealtype t, N_Vector y, N_Vector ydot, void *ud) {
  jySim *sim = ud;
  if (sim->failure != JY_OK) return -1;
  int n = sim->model->n, nq = sim->nq;
  const double *yv = N_VGetArrayPointer(y);
  double *dy = N_VGetArrayPointer(ydot);
  memcpy(dy, yv + nq, sizeof(double) * (size_t)nq);
  jyStatus st = jy_np_accelerations(sim->np, yv, yv + n, yv + nq, yv + nq + n, t, dy + nq,
                                    dy + nq + n);
  return rhs_outcome(sim, st, jy_np_error(sim->np));
}

static jyStatus invalid(jySim *sim, const char *fmt, double value) {
  jy_set_error(sim->error, fmt, value);
  return JY_ERR_INVALID;
}

static jyStatus check_def(jySim *sim, const jySimDef *d) {
  if (d->method != JY_METHOD_ADAMS && d->method != JY_METHOD_BDF)
    return invalid(sim, "method %g is neither adams nor bdf", (double)d->method);
  if (!(d->rtol > 0 && isfinite(d->rtol))) return invalid(sim, "rtol = %g must be > 0", d->rtol);
  if (!(d->atol > 0 && isfinite(d->atol))) return invalid(sim, "atol = %g must be > 0", d->atol);
  if (!isfinite(d->t_start)) return invalid(sim, "t_start = %g must be finite", d->t_start);
  if (!(d->t_end > d->t_start && isfinite(d->t_end)))
    return invalid(sim, "t_end = %g must be finite and after t_start", d->t_end);
  if (!(d->dt_out > 0 && isfinite(d->dt_out)))
    return invalid(sim, "dt_out = %g must be > 0", d->dt_out);
  if (!(d->max_step >= 0)) return invalid(sim, "max_step = %g must be >= 0", d->max_step);
  if (d->max_steps <= 0) return invalid(sim, "max_steps = %g must be > 0", (double)d->max_steps);
  if (d->drift != JY_DRIFT_BAUMGARTE && d->drift != JY_DRIFT_PROJECTION &&
      d->drift != JY_DRIFT_NONE)
    return invalid(sim, "drift control %g is none of baumgarte, projection, none",
                   (double)d->drift);
  if (d->formulation != JY_FORMULATION_UK && d->formulation != JY_FORMULATION_NP)
    return invalid(sim, "formulation %g is neither udwadia-kalaba nor natsiavas-paraskevopoulos",
                   (double)d->formulation);
  if (!(d->baumgarte_rate >= 0 && isfinite(d->baumgarte_rate)))
    return invalid(sim, "baumgarte_rate = %g must be >= 0 (0 turns stabilization off)",
                   d->baumgarte_rate);
  return JY_OK;
}

/* The CVODE state from sim->q, v (and lambda, lambda'). */
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
  jyStatus st = jy_np_initial_multipliers(sim->np, sim->q, sim->v, sim->t, sim->lam,
                                          sim->lamdot);
  if (st != JY_OK)
    jy_set_error(sim->error, "initial multipliers of the N-P formulation: %s",
                 jy_np_error(sim->np));
  return st;
}

/* CVODE's projection callback: (q, v) onto the constraint manifolds, least kinetic-energy
 * correction (int_project.c); CVODE adds corr to its history itself. */
static int project(sunrealtype t, N_Vector ycur, N_Vector corr, sunrealtype eps, N_Vector err,
                   void *ud) {
  jySim *sim = ud;
  if (sim->failure != JY_OK) return -1;
  int n = sim->model->n, iterations = 0;
  const double *y = N_VGetArrayPointer(ycur);
  double *c = N_VGetArrayPointer(corr);
  memcpy(sim->proj_q, y, sizeof(double) * (size_t)n);
  memcpy(sim->proj_v, y + n, sizeof(double) * (size_t)n);
  CVodeGetErrWeights(sim->cvode, sim->proj_weights);
  jyStatus st = jy_project_state(sim->eval, t, sim->proj_q, sim->proj_v,
                                 N_VGetArrayPointer(sim->proj_weights), eps, &iterations);
  if (st == JY_OK && err)
    st = jy_project_error(sim->eval, N_VGetArrayPointer(err), N_VGetArrayPointer(err) + n);
  if (st == JY_ERR_PART || st == JY_ERR_NOMEM) {
    sim->failure = st;
    jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
    return -1;
  }
  if (st != JY_OK) { /* not converging: CVODE retries with a smaller step */
    jy_set_error(sim->rhs_message, "projection did not converge at t = %.9g", (double)t);
    return 1;
  }
  for (int j = 0; j < n; j++) {
    c[j] = sim->proj_q[j] - y[j];
    c[n + j] = sim->proj_v[j] - y[n + j];
  }
  return 0;
}

static jyStatus setup_cvode(jySim *sim) {
  int n2 = 2 * sim->nq;
  if (SUNContext_Create(JY_SUN_COMM, &sim->ctx) != 0) return JY_ERR_NOMEM;
  sim->y = N_VNew_Serial(n2 > 0 ? n2 : 1, sim->ctx);
  if (!sim->y) return JY_ERR_NOMEM;
  sim->cvode = CVodeCreate(sim->def.method == JY_METHOD_BDF ? CV_BDF : CV_ADAMS, sim->ctx);
  if (!sim->cvode) return JY_ERR_NOMEM;
  if (CVodeSetErrHandlerFn(sim->cvode, on_cvode_error, sim) != CV_SUCCESS) return JY_ERR_INTEGRATOR;
  pack_state(sim, N_VGetArrayPointer(sim->y));
  if (CVodeInit(sim->cvode, sim->np ? rhs_np : rhs, sim->t, sim->y) != CV_SUCCESS)
    return JY_ERR_INTEGRATOR;
  CVodeSetUserData(sim->cvode, sim);
  CVodeSStolerances(sim->cvode, sim->def.rtol, sim->def.atol);
  CVodeSetMaxNumSteps(sim->cvode, sim->def.max_steps);
  if (sim->def.max_step > 0) CVodeSetMaxStep(sim->cvode, sim->def.max_step);
  CVodeSetStopTime(sim->cvode, sim->def.t_end);
  if (sim->def.method == JY_METHOD_ADAMS) {
    sim->nls = SUNNonlinSol_FixedPoint(sim->y, 0, sim->ctx);
    if (!sim->nls || CVodeSetNonlinearSolver(sim->cvode, sim->nls) != CV_SUCCESS)
      return JY_ERR_INTEGRATOR;
  } else if (n2 > 200) {
    /* Large models: a difference-quotient dense Jacobian would cost 2n right-hand sides
     * and an O(n^3) factorization; Newton–Krylov (GMRES, Jacobian-vector products by
     * difference quotients) needs a few right-hand sides per iteration instead. */
    sim->ls = SUNLinSol_SPGMR(sim->y, SUN_PREC_NONE, 0, sim->ctx);
    if (!sim->ls || CVodeSetLinearSolver(sim->cvode, sim->ls, NULL) != CV_SUCCESS)
      return JY_ERR_INTEGRATOR;
  } else {
    sim->jac = SUNDenseMatrix(n2 > 0 ? n2 : 1, n2 > 0 ? n2 : 1, sim->ctx);
    sim->ls = sim->jac ? SUNLinSol_Dense(sim->y, sim->jac, sim->ctx) : NULL;
    if (!sim->ls || CVodeSetLinearSolver(sim->cvode, sim->ls, sim->jac) != CV_SUCCESS)
      return JY_ERR_INTEGRATOR;
  }
  /* Drift control applies to Udwadia–Kalaba; N–P brings its own recovery (eq. 76/78). */
  if (sim->def.drift == JY_DRIFT_PROJECTION && sim->model->m > 0 && !sim->np) {
    int n = sim->model->n;
    sim->proj_q = jy_calloc(&sim->model->alloc, (size_t)n + 1, sizeof(double));
    sim->proj_v = jy_calloc(&sim->model->alloc, (size_t)n + 1, sizeof(double));
    sim->proj_weights = N_VNew_Serial(n2 > 0 ? n2 : 1, sim->ctx);
    if (!sim->proj_q || !sim->proj_v || !sim->proj_weights) return JY_ERR_NOMEM;
    /* CVODE 6.4 projects inside its steps with BDF only; with Adams the state is projected
     * at every output time and the integrator restarted there (jy_sim_advance). */
    if (sim->def.method == JY_METHOD_BDF && CVodeSetProjFn(sim->cvode, project) != CV_SUCCESS)
      return JY_ERR_INTEGRATOR;
  }
  return JY_OK;
}

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
  *status = JY_ERR_NOMEM;
  if (sim->def.formulation == JY_FORMULATION_NP) {
    sim->np = jy_np_create(model);
    sim->lam = jy_calloc(&model->alloc, (size_t)model->m + 1, sizeof(double));
    sim->lamdot = jy_calloc(&model->alloc, (size_t)model->m + 1, sizeof(double));
    if (!sim->np || !sim->lam || !sim->lamdot) return sim;
    sim->nq = model->n + model->m;
  }
  memcpy(sim->q, model->q0, sizeof(double) * (size_t)model->n);
  memcpy(sim->v, model->v0, sizeof(double) * (size_t)model->n);
  sim->t = sim->def.t_start;
  /* N–P brings its own constraint recovery (eq. 76/78); Baumgarte applies to UK only. */
  /* Baumgarte keeps Adams close to the manifold between the output-time projections too;
   * BDF projects every step, N–P brings its own recovery (eq. 76/78). */
  int baumgarte = sim->def.drift == JY_DRIFT_BAUMGARTE ||
                  (sim->def.drift == JY_DRIFT_PROJECTION && sim->def.method == JY_METHOD_ADAMS);
  sim->eval->baumgarte_rate = sim->np || !baumgarte ? 0 : sim->def.baumgarte_rate;
  *status = initial_multipliers(sim);
  if (*status != JY_OK) return sim;
  *status = setup_cvode(sim);
  if (*status != JY_OK && !sim->error[0])
    jy_set_error(sim->error, "could not set up CVODE: %s", sim->cvode_message);
  sim->ready = *status == JY_OK;
  return sim;
}

void jy_sim_destroy(jySim *sim) {
  if (!sim) return;
  if (sim->cvode) CVodeFree(&sim->cvode);
  if (sim->nls) SUNNonlinSolFree(sim->nls);
  if (sim->ls) SUNLinSolFree(sim->ls);
  if (sim->jac) SUNMatDestroy(sim->jac);
  if (sim->y) N_VDestroy(sim->y);
  if (sim->proj_weights) N_VDestroy(sim->proj_weights);
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
  jy_free(a, sim);
}

const char *jy_sim_error(const jySim *sim) { return sim ? sim->error : ""; }
double jy_sim_time(const jySim *sim) { return sim ? sim->t : NAN; }
const double *jy_sim_q(const jySim *sim) { return sim ? sim->q : NULL; }
const double *jy_sim_v(const jySim *sim) { return sim ? sim->v : NULL; }

jyStatus jy_sim_set_state(jySim *sim, double t, const double *q, const double *v) {
  if (!sim || !sim->cvode || !sim->ready || !q || !v || !isfinite(t)) return JY_ERR_INVALID;
  int n = sim->model->n;
  memcpy(sim->q, q, sizeof(double) * (size_t)n);
  memcpy(sim->v, v, sizeof(double) * (size_t)n);
  sim->t = t;
  sim->failure = JY_OK;
  jy_eval_continue_angles(sim->eval); /* a new trajectory: angles continue from here */
  jyStatus st = initial_multipliers(sim);
  if (st != JY_OK) return st;
  pack_state(sim, N_VGetArrayPointer(sim->y));
  return restart(sim, t);
}

/* Adams with projection: the state at an output time is projected (to a correction of at
 * most 1e-3 of the error weights, tighter than CVODE's per-step 0.1 since it happens less
 * often) and the integrator restarts from it. */
static jyStatus project_and_restart(jySim *sim, double t) {
  int n = sim->model->n, iterations = 0;
  double *y = N_VGetArrayPointer(sim->y);
  /* Within atol already (Baumgarte keeps it close between outputs): no restart needed. */
  double pos = 0, vel = 0;
  jyStatus st = jy_assemble(sim->eval, y, y + n, t, JY_ASM_RESIDUALS);
  if (st == JY_OK) jy_residual_norms(sim->eval, &pos, &vel);
  if (st == JY_OK && pos <= sim->def.atol && vel <= sim->def.atol) return JY_OK;
  memcpy(sim->proj_q, y, sizeof(double) * (size_t)n);
  memcpy(sim->proj_v, y + n, sizeof(double) * (size_t)n);
  N_VAbs(sim->y, sim->proj_weights); /* error weights 1 / (rtol |y| + atol) */
  N_VScale(sim->def.rtol, sim->proj_weights, sim->proj_weights);
  N_VAddConst(sim->proj_weights, sim->def.atol, sim->proj_weights);
  N_VInv(sim->proj_weights, sim->proj_weights);
  st = jy_project_state(sim->eval, t, sim->proj_q, sim->proj_v,
                       N_VGetArrayPointer(sim->proj_weights), 1e-3, &iterations);
  if (st == JY_ERR_INCONSISTENT) {
    /* Gauss-Newton did not settle (a singular configuration): keep the integrated state,
     * Baumgarte holds it until the next output. */
    sim->projections_skipped++;
    return JY_OK;
  }
  if (st != JY_OK) {
    jy_set_error(sim->error, "projection onto the constraints failed at t = %.9g: %s", t,
                 jy_eval_error(sim->eval));
    sim->failure = st;
    return st;
  }
  memcpy(y, sim->proj_q, sizeof(double) * (size_t)n);
  memcpy(y + n, sim->proj_v, sizeof(double) * (size_t)n);
  return restart(sim, t);
}

/* The interpolated output of a projected BDF run, put on the manifold for reporting (the
 * integrator keeps its own state). Left as it is where the projection does not settle. */
static void project_output(jySim *sim, double t) {
  int n = sim->model->n, iterations = 0;
  double *y = N_VGetArrayPointer(sim->y);
  memcpy(sim->proj_q, y, sizeof(double) * (size_t)n);
  memcpy(sim->proj_v, y + n, sizeof(double) * (size_t)n);
  N_VAbs(sim->y, sim->proj_weights);
  N_VScale(sim->def.rtol, sim->proj_weights, sim->proj_weights);
  N_VAddConst(sim->proj_weights, sim->def.atol, sim->proj_weights);
  N_VInv(sim->proj_weights, sim->proj_weights);
  if (jy_project_state(sim->eval, t, sim->proj_q, sim->proj_v,
                       N_VGetArrayPointer(sim->proj_weights), 1e-3, &iterations) != JY_OK) {
    sim->projections_skipped++;
    return;
  }
  memcpy(y, sim->proj_q, sizeof(double) * (size_t)n);
  memcpy(y + n, sim->proj_v, sizeof(double) * (size_t)n);
}

jyStatus jy_sim_advance(jySim *sim, double t_out) {
  if (!sim || !sim->cvode || !sim->ready) return JY_ERR_INVALID;
  if (sim->failure != JY_OK) return sim->failure;
  if (!(t_out >= sim->t)) {
    jy_set_error(sim->error, "cannot integrate back from t = %.9g to %.9g",
             sim->t, t_out);
    return JY_ERR_INVALID;
  }
  if (t_out == sim->t) return JY_OK;
  sunrealtype t_reached = sim->t;
  sim->rhs_message[0] = '\0';
  int flag;
  int interpolated = 0;
  if (sim->proj_q && sim->def.method == JY_METHOD_BDF) {
    /* Projection inside the steps: step until the output time is passed and interpolate
     * there (forcing a step to end at every output stalls BDF near singular
     * configurations); the interpolated output is projected below, for reporting only. */
    sunrealtype t_now = 0;
    CVodeGetCurrentTime(sim->cvode, &t_now);
    flag = CV_SUCCESS;
    long steps = 0; /* one step per call: CVODE's own max_steps count never trips here */
    while (flag >= 0 && t_now < t_out) {
      if (steps++ >= sim->def.max_steps) {
        flag = CV_TOO_MUCH_WORK;
        snprintf(sim->cvode_message, sizeof sim->cvode_message,
                 "more than max_steps = %ld steps on the way to t = %.9g", sim->def.max_steps,
                 t_out);
        break;
      }
      flag = CVode(sim->cvode, sim->def.t_end, sim->y, &t_reached, CV_ONE_STEP);
      CVodeGetCurrentTime(sim->cvode, &t_now);
    }
    if (flag >= 0) {
      flag = CVodeGetDky(sim->cvode, t_out, 0, sim->y);
      t_reached = t_out;
      interpolated = 1;
    }
  } else {
    /* Adams with projection restarts from the state at the output: let that be a step end,
     * not an interpolated state. */
    if (sim->proj_q) CVodeSetStopTime(sim->cvode, t_out);
    flag = CVode(sim->cvode, t_out, sim->y, &t_reached, CV_NORMAL);
  }
  if (sim->failure != JY_OK) return sim->failure; /* message already in sim->error */
  if (flag < 0) {
    /* Say why, in the model's terms (int_diagnose.c); error path: two vectors and the
     * diagnosis' scratch are allocated here and freed. */
    char *name = CVodeGetReturnFlagName(flag); /* malloc'ed in SUNDIALS 6 */
    sunrealtype t_cur = t_reached, h = NAN;
    CVodeGetCurrentTime(sim->cvode, &t_cur);
    CVodeGetLastStep(sim->cvode, &h);
    N_Vector weights = N_VClone(sim->y), errors = N_VClone(sim->y);
    int have = weights && errors && CVodeGetErrWeights(sim->cvode, weights) == CV_SUCCESS &&
               CVodeGetEstLocalErrors(sim->cvode, errors) == CV_SUCCESS;
    jyFailure why = {name ? name : "?", sim->cvode_message, sim->rhs_message,
                     sim->def.method == JY_METHOD_ADAMS, sim->nq, (double)t_cur, (double)h,
                     sim->def.rtol, sim->def.atol, N_VGetArrayPointer(sim->y),
                     have ? N_VGetArrayPointer(weights) : NULL,
                     have ? N_VGetArrayPointer(errors) : NULL};
    jy_diagnose_failure(sim->eval, &why, sim->error, sizeof sim->error);
    if (weights) N_VDestroy(weights);
    if (errors) N_VDestroy(errors);
    free(name);
    sim->failure = JY_ERR_INTEGRATOR;
    return sim->failure;
  }
  if (sim->proj_q && sim->def.method == JY_METHOD_ADAMS) {
    jyStatus st = project_and_restart(sim, t_reached);
    if (st != JY_OK) return st;
  }
  if (interpolated) project_output(sim, t_reached);
  unpack_state(sim, N_VGetArrayPointer(sim->y));
  sim->t = t_reached;
  return JY_OK;
}

jyStatus jy_sim_np_multipliers(jySim *sim, double *lam, double *lamdot, double *lamdd) {
  if (!sim || !sim->np || !sim->cvode) return JY_ERR_INVALID;
  int m = sim->model->m, n = sim->model->n;
  if (lam) memcpy(lam, sim->lam, sizeof(double) * (size_t)m);
  if (lamdot) memcpy(lamdot, sim->lamdot, sizeof(double) * (size_t)m);
  if (!lamdd) return JY_OK;
  /* y' of the interpolating polynomial at t; before the first step, the right-hand side. */
  N_Vector dky = N_VClone(sim->y);
  if (!dky) return JY_ERR_NOMEM;
  long steps = 0;
  CVodeGetNumSteps(sim->cvode, &steps);
  int flag = steps > 0 ? CVodeGetDky(sim->cvode, sim->t, 1, dky)
                       : rhs_np(sim->t, sim->y, dky, sim);
  if (flag == 0) memcpy(lamdd, N_VGetArrayPointer(dky) + sim->nq + n, sizeof(double) * (size_t)m);
  N_VDestroy(dky);
  return flag == 0 ? JY_OK : JY_ERR_INTEGRATOR;
}

jyStatus jy_sim_channels(jySim *sim, double *out) {
  if (!sim || !out) return JY_ERR_INVALID;
  jyStatus st = jy_eval_channels(sim->eval, sim->q, sim->v, sim->t, out);
  if (st != JY_OK) jy_set_error(sim->error, "%s", jy_eval_error(sim->eval));
  return st;
}

jyStatus jy_sim_run(jySim *sim, jyRowSink sink, void *ud) {
  if (!sim || !sim->cvode || !sim->ready) return JY_ERR_INVALID;
  const jySimDef *d = &sim->def;
  /* Output times t_start + k dt_out; the last one is t_end itself. */
  double span = d->t_end - d->t_start;
  long count = (long)ceil(span / d->dt_out - 1e-9);
  for (long k = 0; k <= count; k++) {
    double t_out = k == count ? d->t_end : d->t_start + (double)k * d->dt_out;
    if (t_out < sim->t) continue;
    jyStatus st = jy_sim_advance(sim, t_out);
    if (st == JY_OK) st = jy_sim_channels(sim, sim->row);
    if (st != JY_OK) return st;
    if (sink && sink(ud, sim->row, sim->model->nchannels) != 0) {
      jy_set_error(sim->error, "stopped by the output sink at t = %.9g", sim->t);
      return JY_ERR_IO;
    }
  }
  return JY_OK;
}

/* CVODE's counters since its last (re)initialization. */
static jySimStats cvode_counters(const jySim *sim) {
  jySimStats s = {0};
  CVodeGetNumSteps(sim->cvode, &s.steps);
  CVodeGetNumRhsEvals(sim->cvode, &s.rhs_evals);
  CVodeGetNumErrTestFails(sim->cvode, &s.error_test_fails);
  CVodeGetNumNonlinSolvConvFails(sim->cvode, &s.nonlinear_fails);
  if (sim->def.method == JY_METHOD_BDF) CVodeGetNumJacEvals(sim->cvode, &s.jac_evals);
  return s;
}

/* Restarts CVODE at (t, y), keeping the counters of the runs before. */
static jyStatus restart(jySim *sim, double t) {
  jySimStats now = cvode_counters(sim);
  sim->stats_before.steps += now.steps;
  sim->stats_before.rhs_evals += now.rhs_evals;
  sim->stats_before.error_test_fails += now.error_test_fails;
  sim->stats_before.nonlinear_fails += now.nonlinear_fails;
  sim->stats_before.jac_evals += now.jac_evals;
  sim->restarts++;
  return CVodeReInit(sim->cvode, t, sim->y) == CV_SUCCESS ? JY_OK : JY_ERR_INTEGRATOR;
}

jySimStats jy_sim_stats(const jySim *sim) {
  jySimStats s = {0};
  if (!sim || !sim->cvode) return s;
  s = cvode_counters(sim);
  s.steps += sim->stats_before.steps;
  s.rhs_evals += sim->stats_before.rhs_evals;
  s.error_test_fails += sim->stats_before.error_test_fails;
  s.nonlinear_fails += sim->stats_before.nonlinear_fails;
  s.jac_evals += sim->stats_before.jac_evals;
  s.restarts = sim->restarts;
  s.projections_skipped = sim->projections_skipped;
  return s;
}

/* The simulation object, shared by the integrator and the CSV writer. Internal. */
#ifndef JY_SIM_H
#define JY_SIM_H

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>

#include "dyn_np.h"
#include "internal.h"

struct jySim {
  const jyModel *model;
  jySimDef def;
  jyEval *eval;
  double t;
  double *q, *v; /* state at t (n each) */
  double *row;   /* one output row (nchannels) */
  /* Natsiavas–Paraskevopoulos: the multiplier coordinates and their work (NULL with UK).
   * The CVODE state is [q, v] (UK) or [q, lambda, v, lambda'] (N–P); nq is its first half. */
  jyNpWork *np;
  double *lam, *lamdot; /* m each, at t */
  int nq;               /* n (UK) or n + m (N–P) */
  SUNContext ctx;
  void *cvode;
  N_Vector y;
  SUNNonlinearSolver nls;
  SUNMatrix jac;
  SUNLinearSolver ls;
  double *proj_q, *proj_v;  /* projection scratch (n each); NULL without projection */
  N_Vector proj_weights;    /* CVODE's error weights (2n) */
  jySimStats stats_before; /* counters of CVODE runs before its last restart */
  long restarts;
  int ready; /* created without error: the only state in which it may integrate */
  long projections_skipped; /* output-time projections that did not converge */
  jyStatus failure;   /* sticky: once set, the right-hand side refuses to run */
  jyStatus rhs_status;/* last recoverable trouble of the right-hand side */
  char error[JY_ERROR_LEN];
  char cvode_message[512];
  char rhs_message[JY_ERROR_LEN];
};

/* N–P only: the multiplier coordinates at the current time and lambda'' from the
 * integrator's interpolating polynomial there (m each; NULL to skip). JY_ERR_INVALID for a
 * UK simulation. */
jyStatus jy_sim_np_multipliers(jySim *sim, double *lam, double *lamdot, double *lamdd);

#endif

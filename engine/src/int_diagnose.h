/* Why an integration failed, said in the model's terms (int_diagnose.c). Internal; knows
 * nothing of CVODE's memory, so any stepping strategy can call it on its failure path. */
#ifndef JY_INT_DIAGNOSE_H
#define JY_INT_DIAGNOSE_H

#include <stddef.h>

#include "internal.h"

/* What the integrator knew when it gave up. The state arrays follow the integrator's
 * layout: y = [q (nq); v (nq)] with nq = n (Udwadia–Kalaba) or n + m (Natsiavas–
 * Paraskevopoulos: q = [coordinates; multipliers]). */
typedef struct jyFailure {
  const char *flag;           /* the integrator's name for the failure ("CV_TOO_MUCH_WORK") */
  const char *detail;         /* its own message, or "" */
  const char *rhs_trouble;    /* the right-hand side's last recoverable trouble, or "" */
  int nonstiff_method;        /* stepping with a non-stiff method (Adams, explicit RK) */
  int nq;                     /* first half of the state: n or n + m */
  double t, h;                /* time reached and the last step size (NAN when unknown) */
  double rtol, atol;          /* the run's tolerances (stand in for missing error weights) */
  const double *y;            /* state at t (2 nq) */
  const double *weights;      /* error weights 1 / (rtol |y| + atol) (2 nq), or NULL */
  const double *local_errors; /* estimated local errors of the last step (2 nq), or NULL */
} jyFailure;

/* Writes the failure message into out (len bytes, truncating): the time, the step, the
 * integrator's reason; the state components with the largest weighted local error named
 * "part.coord" / "der(part.coord)" with their part; and the likely causes the state
 * supports, each with what to try. Probes the right-hand side through `eval` at states
 * near y (at t and, for rheonomic rows, before t). Error path only: it allocates
 * 2 n + 4 max(n, m, largest part) doubles through the model's allocator and frees them
 * (without that memory it names the components but probes nothing), and it leaves eval's
 * scratch and warm start (the row forces of the last law solve) changed. */
void jy_diagnose_failure(jyEval *eval, const jyFailure *f, char *out, size_t len);

#endif

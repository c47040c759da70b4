/* The floor: each workload hand-written in minimal coordinates and integrated with the same
 * CVODE joinery uses, so that joinery's time over this one is its framework overhead.
 *
 *   floor WORKLOAD N METHOD RTOL T
 *     WORKLOAD  w1 (N-link chain), w2 (two masses, two springs), w3 (four-bar), fbc (the
 *               40-window four-bar chain; N is the number of windows)
 *     METHOD    adams | bdf (BDF with a dense Jacobian: small models only)
 *     RTOL      relative tolerance; the absolute one is RTOL / 100
 *
 * W1 integrates the absolute link angles theta_i; each right-hand side solves the tridiagonal
 * system of the link tensions (LAPACK dgtsv), so it is O(N), as Simbody's recursions are: see docs/bench.md.
 * W3 and the chain move on their parallelogram branch, one degree of freedom:
 * (sum of crank inertias + coupler masses) theta'' = -(their moments) g cos(theta).
 * Prints one line "result key=value ..." (see bench/peers/run.py). */
#define _POSIX_C_SOURCE 200809L
#include <cvode/cvode.h>
#include <lapacke.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <time.h>

#define GRAVITY 9.81

typedef struct {
  char workload[8];
  long n;                               /* links (w1) or windows (fbc) */
  double *cosv, *sinv, *omega2;         /* per link: cos, sin theta, L theta'^2 */
  double *sub, *diag, *super, *tension; /* the tridiagonal tension system */
} Floor;

/* W1: theta'' from the link tensions. Mass k (1 kg) feels g, -T_k u_k and +T_{k+1} u_{k+1};
 * each rigid link i gives u_i . (a_i - a_{i-1}) = -L theta_i'^2, tridiagonal in T. */
static void chain_accel(Floor *f, const double *th, const double *w, double *acc) {
  long n = f->n;
  for (long i = 0; i < n; i++) {
    f->cosv[i] = cos(th[i]);
    f->sinv[i] = sin(th[i]);
    f->omega2[i] = w[i] * w[i];
  }
  for (long i = 0; i < n; i++) {
    /* link 1 hangs from the fixed origin (a_0 = 0): one tension term, and g . u_1 moves to
     * the right-hand side */
    f->diag[i] = (i == 0) ? -1.0 : -2.0;
    f->tension[i] = -f->omega2[i] + (i == 0 ? GRAVITY * f->sinv[0] : 0.0);
    if (i + 1 < n) {
      double c = f->cosv[i] * f->cosv[i + 1] + f->sinv[i] * f->sinv[i + 1];
      f->super[i] = c;
      f->sub[i] = c;
    }
  }
  lapack_int info = LAPACKE_dgtsv(LAPACK_COL_MAJOR, (lapack_int)n, 1, f->sub, f->diag, f->super,
                                  f->tension, (lapack_int)n);
  if (info != 0) {
    fprintf(stderr, "floor: dgtsv failed (%d)\n", (int)info);
    exit(2);
  }
  /* a_i - a_{i-1} = T_{i+1} u_{i+1} - T_i u_i - [i>0](T_i u_i - T_{i-1} u_{i-1}) (+g for i = 0) */
  for (long i = 0; i < n; i++) {
    double dx = -f->tension[i] * f->cosv[i], dy = -f->tension[i] * f->sinv[i];
    if (i + 1 < n) {
      dx += f->tension[i + 1] * f->cosv[i + 1];
      dy += f->tension[i + 1] * f->sinv[i + 1];
    }
    if (i > 0) {
      dx -= f->tension[i] * f->cosv[i] - f->tension[i - 1] * f->cosv[i - 1];
      dy -= f->tension[i] * f->sinv[i] - f->tension[i - 1] * f->sinv[i - 1];
    } else {
      dy -= GRAVITY;
    }
    acc[i] = -f->sinv[i] * dx + f->cosv[i] * dy; /* u_i^perp . (a_i - a_{i-1}), L = 1 */
  }
}

/* The four-bar (windows = 1) and the chain on the parallelogram branch: cranks (m L^2 / 3
 * about the pivot, moment m g L / 2) and couplers translating with the crank tips. */
static void parallelogram_coeffs(long windows, double *inertia, double *moment) {
  *inertia = (windows + 1) / 3.0 + windows;
  *moment = (windows + 1) / 2.0 + windows;
}

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user) {
  (void)t;
  Floor *f = user;
  double *q = N_VGetArrayPointer(y), *d = N_VGetArrayPointer(ydot);
  if (strcmp(f->workload, "w1") == 0) {
    long n = f->n;
    memcpy(d, q + n, (size_t)n * sizeof *d);
    chain_accel(f, q, q + n, d + n);
  } else if (strcmp(f->workload, "w2") == 0) {
    /* x1, x2 displacements; m = 1, 2; k = 100 (wall-m1), 50 (m1-m2) */
    d[0] = q[2];
    d[1] = q[3];
    d[2] = (-100.0 * q[0] + 50.0 * (q[1] - q[0])) / 1.0;
    d[3] = (-50.0 * (q[1] - q[0])) / 2.0;
  } else {
    double inertia, moment;
    parallelogram_coeffs(f->n, &inertia, &moment);
    d[0] = q[1];
    d[1] = -moment * GRAVITY * cos(q[0]) / inertia;
  }
  return 0;
}

/* Instants at which each driver measures the energy (run.py's DRIFT_SAMPLES). */
#define DRIFT_SAMPLES 20

static long state_size(const Floor *f) {
  if (strcmp(f->workload, "w1") == 0) return 2 * f->n;
  if (strcmp(f->workload, "w2") == 0) return 4;
  return 2;
}

static void initial_state(const Floor *f, double *q) {
  memset(q, 0, (size_t)state_size(f) * sizeof *q);
  if (strcmp(f->workload, "w2") == 0) {
    q[0] = 0.1;
  } else if (strcmp(f->workload, "w1") != 0) {
    q[0] = 2.0 * atan(1.0); /* square, crank turning at -1 rad/s */
    q[1] = -1.0;
  }
}

static double energy(const Floor *f, const double *q) {
  if (strcmp(f->workload, "w1") == 0) {
    double x = 0, y = 0, vx = 0, vy = 0, e = 0;
    for (long i = 0; i < f->n; i++) {
      double w = q[f->n + i];
      x += cos(q[i]);
      y += sin(q[i]);
      vx += -sin(q[i]) * w;
      vy += cos(q[i]) * w;
      e += 0.5 * (vx * vx + vy * vy) + GRAVITY * y;
    }
    (void)x;
    return e;
  }
  if (strcmp(f->workload, "w2") == 0)
    return 0.5 * q[2] * q[2] + q[3] * q[3] + 50.0 * q[0] * q[0] +
      25.0 * (q[1] - q[0]) * (q[1] - q[0]);
  double inertia, moment;
  parallelogram_coeffs(f->n, &inertia, &moment);
  return 0.5 * inertia * q[1] * q[1] + moment * GRAVITY * sin(q[0]);
}

static void print_result(const Floor *f, const double *q, double e0, double drift, double seconds,
                         long steps, long nfe) {
  printf("result time=%.6g steps=%ld rhs=%ld e0=%.17g e1=%.17g drift=%.17g", seconds, steps, nfe,
         e0, energy(f, q), drift);
  if (strcmp(f->workload, "w1") == 0) {
    double x = 0, y = 0;
    for (long i = 0; i < f->n; i++) {
      x += cos(q[i]);
      y += sin(q[i]);
    }
    printf(" tip_x=%.17g tip_y=%.17g", x, y);
  } else if (strcmp(f->workload, "w2") == 0) {
    printf(" x1=%.17g x2=%.17g", q[0], q[1]);
  } else {
    printf(" theta=%.17g", q[0]);
  }
  printf("\n");
}

static void check(int flag, const char *what) {
  if (flag < 0) {
    fprintf(stderr, "floor: %s failed (%d)\n", what, flag);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: floor w1|w2|w3|fbc N adams|bdf RTOL T\n");
    return 2;
  }
  Floor f = {0};
  snprintf(f.workload, sizeof f.workload, "%s", argv[1]);
  f.n = atol(argv[2]);
  if (strcmp(f.workload, "w3") == 0) f.n = 1;
  int bdf = strcmp(argv[3], "bdf") == 0;
  double rtol = atof(argv[4]), t_end = atof(argv[5]);
  long n = f.n > 0 ? f.n : 1;
  double *work = calloc((size_t)(7 * n), sizeof *work);
  if (!work) return 2;
  f.cosv = work, f.sinv = work + n, f.omega2 = work + 2 * n, f.sub = work + 3 * n;
  f.diag = work + 4 * n, f.super = work + 5 * n, f.tension = work + 6 * n;

  SUNContext ctx;
  check(SUNContext_Create(NULL, &ctx), "SUNContext_Create");
  long ns = state_size(&f);
  N_Vector y = N_VNew_Serial(ns, ctx);
  initial_state(&f, N_VGetArrayPointer(y));
  double e0 = energy(&f, N_VGetArrayPointer(y));
  void *cv = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, ctx);
  check(CVodeInit(cv, rhs, 0.0, y), "CVodeInit");
  check(CVodeSStolerances(cv, rtol, rtol / 100), "CVodeSStolerances");
  check(CVodeSetUserData(cv, &f), "CVodeSetUserData");
  check(CVodeSetMaxNumSteps(cv, 100000000L), "CVodeSetMaxNumSteps");
  SUNMatrix jac = NULL;
  SUNLinearSolver ls = NULL;
  SUNNonlinearSolver nls = NULL;
  if (bdf) {
    jac = SUNDenseMatrix(ns, ns, ctx);
    ls = SUNLinSol_Dense(y, jac, ctx);
    check(CVodeSetLinearSolver(cv, ls, jac), "CVodeSetLinearSolver");
  } else {
    nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
    check(CVodeSetNonlinearSolver(cv, nls), "CVodeSetNonlinearSolver");
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  double t = 0, drift = 0;
  /* The energy at DRIFT_SAMPLES instants (CVODE interpolates to each: the steps are the same
   * as for one call to t_end); its largest departure from E0 is the drift measure. */
  for (int k = 1; k <= DRIFT_SAMPLES; k++) {
    check(CVode(cv, t_end * k / DRIFT_SAMPLES, y, &t, CV_NORMAL), "CVode");
    drift = fmax(drift, fabs(energy(&f, N_VGetArrayPointer(y)) - e0));
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long steps = 0, nfe = 0, nfe_ls = 0;
  CVodeGetNumSteps(cv, &steps);
  CVodeGetNumRhsEvals(cv, &nfe);
  if (bdf) CVodeGetNumLinRhsEvals(cv, &nfe_ls);
  print_result(&f, N_VGetArrayPointer(y), e0, drift,
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), steps,
               nfe + nfe_ls);
  CVodeFree(&cv);
  if (nls) SUNNonlinSolFree(nls);
  if (ls) SUNLinSolFree(ls);
  if (jac) SUNMatDestroy(jac);
  N_VDestroy(y);
  SUNContext_Free(&ctx);
  free(work);
  return 0;
}

/* jy_lqr (engine/src/lqr.c): the double integrator's closed form; 150 random systems (n =
 * 1..10 states, m = 1..3 inputs, mostly open-loop unstable) all solved, the closed loop
 * A - B K with every eigenvalue (LAPACK dgeev) in the open left half plane and P positive
 * definite, the Riccati residual below 1e-12 of its terms where the problem is well
 * conditioned (max|P| <= 100 max|Q|: measured 5.3e-14) and below 1e-14 max|P| / max|Q|
 * everywhere (measured 2.1e-15: the Schur method's error grows with the conditioning, as
 * max|P| / max|Q| reaching 6e5 for one input driving ten states shows); the gains of a system with a stable mode B does
 * not reach; bad input, each with its message, K and P untouched. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

enum { NMAX = 10, MMAX = 3 };

/* xorshift64*, uniform in [-1, 1) */
static double uniform(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* The relative Riccati residual |A'P + PA - P B R^-1 B' P + Q| / (2 |A| |P| + |P|^2 |B R^-1
 * B'| + |Q|) (Frobenius norms), with R^-1 B' from K = R^-1 B' P recomputed independently:
 * P B R^-1 B' P = K' R K. */
static double residual(int n, int m, const double *A, const double *Q, const double *R,
                       const double *K, const double *P) {
  double res = 0, an = 0, pn = 0, qn = 0, krk = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      long double r = Q[i + j * n], t = 0;
      for (int k = 0; k < n; k++)
        r += (long double)A[k + i * n] * P[k + j * n] + (long double)P[i + k * n] * A[k + j * n];
      for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) t += (long double)K[a + i * m] * R[a + b * m] * K[b + j * m];
      r -= t;
      res += (double)(r * r);
      an += A[i + j * n] * A[i + j * n];
      pn += P[i + j * n] * P[i + j * n];
      qn += Q[i + j * n] * Q[i + j * n];
      krk += (double)(t * t);
    }
  return sqrt(res) / (2 * sqrt(an * pn) + sqrt(krk) + sqrt(qn));
}

/* The largest real part of an eigenvalue of A - B K. */
static double closed_loop_abscissa(int n, int m, const double *A, const double *B,
                                   const double *K) {
  double Acl[NMAX * NMAX], wr[NMAX], wi[NMAX], vl[1], vr[1];
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = A[i + j * n];
      for (int k = 0; k < m; k++) s -= B[i + k * n] * K[k + j * m];
      Acl[i + j * n] = s;
    }
  if (LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', 'N', n, Acl, n, wr, wi, vl, 1, vr, 1) != 0)
    return INFINITY;
  double worst = -INFINITY;
  for (int k = 0; k < n; k++) worst = fmax(worst, wr[k]);
  return worst;
}

/* 1 when the symmetric n x n P is positive definite (Cholesky). */
static int positive_definite(int n, const double *P) {
  double L[NMAX * NMAX];
  memcpy(L, P, sizeof(double) * (size_t)(n * n));
  return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, L, n) == 0;
}

static void bad(const char *what, int n, int m, const double *A, const double *B, const double *Q,
                const double *R, jyStatus want, const char *part) {
  double K[8], P[16];
  for (int k = 0; k < 8; k++) K[k] = 42;
  for (int k = 0; k < 16; k++) P[k] = 42;
  char error[300] = "x";
  jyStatus st = jy_lqr(n, m, A, B, Q, R, K, P, error, sizeof error);
  int untouched = 1;
  for (int k = 0; k < 8; k++) untouched &= K[k] == 42;
  for (int k = 0; k < 16; k++) untouched &= P[k] == 42;
  ok(st == want && strstr(error, part) != NULL && untouched,
     "%s: %s, the message names '%s', K and P untouched", what, jy_status_text(want), part);
  diag("  %s", error);
}

int main(void) {
  plan(1 + 4 + 3 + 1 + 10);

  /* The double integrator, Q = I, R = 1: P = [[sqrt3, 1], [1, sqrt3]], K = [1, sqrt3]. */
  {
    const double A[] = {0, 0, 1, 0}, B[] = {0, 1}, Q[] = {1, 0, 0, 1}, R[] = {1};
    double K[2], P[4];
    char error[200];
    jyStatus st = jy_lqr(2, 1, A, B, Q, R, K, P, error, sizeof error);
    double s3 = sqrt(3.0), worst = 0;
    const double Pw[] = {s3, 1, 1, s3}, Kw[] = {1, s3};
    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(P[k] - Pw[k]));
    for (int k = 0; k < 2; k++) worst = fmax(worst, fabs(K[k] - Kw[k]));
    ok(st == JY_OK && worst < 1e-14,
       "double integrator: P = [[sqrt3, 1], [1, sqrt3]], K = [1, sqrt3] to %.3g", worst);
  }

  /* Random systems: A with entries in [-1, 1) scaled by 2 (unstable modes common), B n x m
   * generic (controllable), Q = C'C + 0.01 I, R = D'D + 0.1 I. */
  {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double worst_res = 0, worst_scaled = 0, worst_abscissa = -INFINITY;
    int well = 0, solved = 0, pd = 0, unstable_open = 0, count = 0;
    for (int n = 1; n <= NMAX; n++)
      for (int m = 1; m <= MMAX; m++)
        for (int rep = 0; rep < 5; rep++, count++) {
          double A[NMAX * NMAX], B[NMAX * MMAX], C[NMAX * NMAX], Q[NMAX * NMAX], D[MMAX * MMAX],
            R[MMAX * MMAX], K[MMAX * NMAX], P[NMAX * NMAX];
          for (int k = 0; k < n * n; k++) A[k] = 2 * uniform(&seed);
          for (int k = 0; k < n * m; k++) B[k] = uniform(&seed);
          for (int k = 0; k < n * n; k++) C[k] = uniform(&seed);
          for (int k = 0; k < m * m; k++) D[k] = uniform(&seed);
          for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
              double s = i == j ? 0.01 : 0;
              for (int k = 0; k < n; k++) s += C[k + i * n] * C[k + j * n];
              Q[i + j * n] = s;
            }
          for (int j = 0; j < m; j++)
            for (int i = 0; i < m; i++) {
              double s = i == j ? 0.1 : 0;
              for (int k = 0; k < m; k++) s += D[k + i * m] * D[k + j * m];
              R[i + j * m] = s;
            }
          double zero[MMAX * NMAX] = {0};
          if (closed_loop_abscissa(n, m, A, B, zero) > 0) unstable_open++;
          char error[300];
          if (jy_lqr(n, m, A, B, Q, R, K, P, error, sizeof error) != JY_OK) {
            diag("n = %d, m = %d, rep %d: %s", n, m, rep, error);
            continue;
          }
          solved++;
          double rr = residual(n, m, A, Q, R, K, P), pm = 0, qm = 0;
          for (int k = 0; k < n * n; k++) pm = fmax(pm, fabs(P[k]));
          for (int k = 0; k < n * n; k++) qm = fmax(qm, fabs(Q[k]));
          double kappa = fmax(1, pm / qm);
          if (kappa <= 1e2) {
            well++;
            worst_res = fmax(worst_res, rr);
          }
          worst_scaled = fmax(worst_scaled, rr / kappa);
          worst_abscissa = fmax(worst_abscissa, closed_loop_abscissa(n, m, A, B, K));
          pd += positive_definite(n, P);
        }
    ok(solved == count, "random systems: %d of %d solved (%d open-loop unstable)", solved, count,
       unstable_open);
    ok(worst_res < 1e-12 && well > count / 2,
       "random systems with max|P| <= 100 max|Q| (%d of them): Riccati residual at most %.3g "
       "of its terms",
       well, worst_res);
    ok(worst_scaled < 1e-14,
       "every random system: the residual over max(1, max|P| / max|Q|) at most %.3g", worst_scaled);
    ok(worst_abscissa < 0 && pd == solved,
       "random systems: every closed-loop eigenvalue in the left half plane (largest real part "
       "%.3g), P positive definite",
       worst_abscissa);
  }

  /* A stable mode B does not reach (stabilizable, not controllable): x1' = -x1, x2' = x2 + u,
   * Q = I, R = 1: p11 = 1/2, x2's scalar Riccati 2 p - p^2 + 1 = 0: p22 = 1 + sqrt2. */
  {
    const double A[] = {-1, 0, 0, 1}, B[] = {0, 1}, Q[] = {1, 0, 0, 1}, R[] = {1};
    double K[2], P[4];
    char error[200];
    jyStatus st = jy_lqr(2, 1, A, B, Q, R, K, P, error, sizeof error);
    ok(st == JY_OK, "stabilizable, not controllable: solved");
    is_near(P[0], 0.5, 1e-15, "p11 = 1/2");
    is_near(K[1], 1 + sqrt(2.0), 1e-14, "k2 = p22 = 1 + sqrt2");
  }
  /* Without an error buffer. */
  {
    const double A[] = {1}, B[] = {0}, Q[] = {1}, R[] = {1};
    double K[1], P[1];
    ok(jy_lqr(1, 1, A, B, Q, R, K, P, NULL, 0) == JY_ERR_CONVERGENCE,
       "no error buffer: the status alone");
  }

  /* Bad input. */
  {
    const double A2[] = {0, 0, 1, 0}, B2[] = {0, 1}, I2[] = {1, 0, 0, 1}, one[] = {1};
    const double neg[] = {-1}, asym[] = {1, 0, 1, 1}, nan2[] = {0, NAN};
    const double A1[] = {1}, B0[] = {0}, Q0[] = {0, 0, 0, 0};
    const double osc[] = {0, -1, 1, 0}, B00[] = {0, 0};
    bad("n = 0", 0, 1, A2, B2, I2, one, JY_ERR_INVALID, "n = 0");
    bad("m = 0", 2, 0, A2, B2, I2, one, JY_ERR_INVALID, "m = 0");
    bad("A missing", 2, 1, NULL, B2, I2, one, JY_ERR_INVALID, "must all be given");
    bad("B not finite", 2, 1, A2, nan2, I2, one, JY_ERR_INVALID, "B (2 x 1) has an entry not");
    bad("Q not symmetric", 2, 1, A2, B2, asym, one, JY_ERR_INVALID, "Q is not symmetric");
    bad("R not positive definite", 2, 1, A2, B2, I2, neg, JY_ERR_INVALID,
        "R is not positive definite");
    bad("not stabilizable (x' = x, B = 0)", 1, 1, A1, B0, one, one, JY_ERR_CONVERGENCE,
        "not stabilizable");
    bad("Q = 0 on the double integrator", 2, 1, A2, B2, Q0, one, JY_ERR_CONVERGENCE,
        "imaginary axis");
    bad("an undamped oscillator B does not reach", 2, 1, osc, B00, I2, one, JY_ERR_CONVERGENCE,
        "imaginary axis");
    char small[16];
    double K[2], P[4];
    jy_lqr(1, 1, A1, B0, one, one, K, P, small, sizeof small);
    ok(strlen(small) == sizeof small - 1, "a short error buffer holds the message cut");
  }
  return done();
}

/* The continuous-time linear-quadratic regulator: the stabilizing solution of the algebraic
 * Riccati equation A'P + PA - P B R^-1 B' P + Q = 0 by the ordered real Schur form of the
 * Hamiltonian matrix (Laub's method, as SLICOT's SB02MD and MATLAB's care), all of it
 * LAPACK: dposv for R^-1 B', dgees with the stable eigenvalues ordered first, dgesv for
 * P = U21 U11^-1, dgecon for the condition of U11. docs/control-examples.md. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"

static jyStatus fail(char *error, size_t len, jyStatus st, const char *fmt, ...) {
  if (error && len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, len, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* dgees' ordering: the eigenvalues in the open left half plane first. */
static lapack_logical stable(const double *re, const double *im) {
  (void)im;
  return *re < 0;
}

/* 1 when every entry of the rows x cols matrix M is finite. */
static int all_finite(const double *M, int rows, int cols) {
  for (int k = 0; k < rows * cols; k++)
    if (!isfinite(M[k])) return 0;
  return 1;
}

/* The largest |M_ij - M_ji| of the n x n matrix M relative to its largest entry (0 for 0). */
static double asymmetry(const double *M, int n) {
  double big = 0, off = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      big = fmax(big, fabs(M[i + j * n]));
      off = fmax(off, fabs(M[i + j * n] - M[j + i * n]));
    }
  return big > 0 ? off / big : 0;
}

jyStatus jy_lqr(int n, int m, const double *A, const double *B, const double *Q, const double *R,
                double *K, double *P, char *error, size_t len) {
  if (error && len > 0) error[0] = '\0';
  if (n < 1 || m < 1 || n > 10000 || m > 10000)
    return fail(error, len, JY_ERR_INVALID, "lqr: n = %d states and m = %d inputs must be >= 1", n,
                m);
  if (!A || !B || !Q || !R || !K || !P)
    return fail(error, len, JY_ERR_INVALID, "lqr: A, B, Q, R, K and P must all be given");
  const struct {
    const char *name;
    const double *M;
    int rows, cols;
  } given[] = {{"A", A, n, n}, {"B", B, n, m}, {"Q", Q, n, n}, {"R", R, m, m}};
  for (int k = 0; k < 4; k++)
    if (!all_finite(given[k].M, given[k].rows, given[k].cols))
      return fail(error, len, JY_ERR_INVALID, "lqr: %s (%d x %d) has an entry not finite",
                  given[k].name, given[k].rows, given[k].cols);
  const double sym_tol = 1e-12;
  if (asymmetry(Q, n) > sym_tol)
    return fail(error, len, JY_ERR_INVALID,
                "lqr: Q is not symmetric (|Q - Q'| is %.3g of its largest entry)", asymmetry(Q, n));
  if (asymmetry(R, m) > sym_tol)
    return fail(error, len, JY_ERR_INVALID,
                "lqr: R is not symmetric (|R - R'| is %.3g of its largest entry)", asymmetry(R, m));

  size_t nn = (size_t)n, mm = (size_t)m, n2 = 2 * nn;
  size_t doubles = mm * mm + mm * nn + nn * nn + 2 * n2 * n2 + 2 * n2 + 2 * nn * nn;
  double *block = malloc(doubles * sizeof(double));
  lapack_int *ipiv = malloc(nn * sizeof(lapack_int));
  if (!block || !ipiv) {
    free(block);
    free(ipiv);
    return fail(error, len, JY_ERR_NOMEM, "lqr: out of memory (n = %d, m = %d)", n, m);
  }
  double *Rf = block;       /* m x m: R, then its Cholesky factor */
  double *X = Rf + mm * mm; /* m x n: R^-1 B' */
  double *G = X + mm * nn;  /* n x n: B R^-1 B' */
  double *H = G + nn * nn;  /* 2n x 2n: the Hamiltonian, then its Schur form */
  double *U = H + n2 * n2;  /* 2n x 2n: the Schur vectors */
  double *wr = U + n2 * n2, *wi = wr + n2;
  double *U11t = wi + n2;      /* n x n: U11', then its LU factors */
  double *Pt = U11t + nn * nn; /* n x n: U21', then P' */
  jyStatus st = JY_OK;

  /* R X = B' by Cholesky: R must be positive definite. */
  memcpy(Rf, R, mm * mm * sizeof(double));
  for (size_t i = 0; i < mm; i++)
    for (size_t j = 0; j < nn; j++) X[i + j * mm] = B[j + i * nn];
  lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', m, n, Rf, m, X, m);
  if (info > 0) {
    st =
      fail(error, len, JY_ERR_INVALID,
           "lqr: R is not positive definite (its leading minor of order %d is not > 0)", (int)info);
    goto done;
  }
  if (info < 0) {
    st = fail(error, len, JY_ERR_INVALID, "lqr: dposv rejected argument %d", (int)-info);
    goto done;
  }
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) {
      double s = 0;
      for (size_t k = 0; k < mm; k++) s += B[i + k * nn] * X[k + j * mm];
      G[i + j * nn] = s;
    }

  /* H = [A, -G; -Q, -A'] */
  double hnorm = 0;
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) {
      H[i + j * n2] = A[i + j * nn];
      H[i + (j + nn) * n2] = -0.5 * (G[i + j * nn] + G[j + i * nn]);
      H[(i + nn) + j * n2] = -0.5 * (Q[i + j * nn] + Q[j + i * nn]);
      H[(i + nn) + (j + nn) * n2] = -A[j + i * nn];
    }
  for (size_t k = 0; k < n2 * n2; k++) hnorm += H[k] * H[k];
  hnorm = sqrt(hnorm);

  lapack_int sdim = 0;
  info =
    LAPACKE_dgees(LAPACK_COL_MAJOR, 'V', 'S', stable, 2 * n, H, 2 * n, &sdim, wr, wi, U, 2 * n);
  if (info < 0 || (info > 0 && info <= 2 * n)) {
    st = fail(error, len, JY_ERR_CONVERGENCE,
              "lqr: the Schur form of the Hamiltonian matrix did not converge (dgees info %d)",
              (int)info);
    goto done;
  }
  /* The Hamiltonian's eigenvalues pair as (s, -s): the stabilizing solution exists only when
   * none lies on the imaginary axis (to within sqrt(eps) of |H|), and then n are stable. */
  double axis_tol = sqrt(DBL_EPSILON) * fmax(hnorm, DBL_MIN);
  for (size_t k = 0; k < n2; k++)
    if (fabs(wr[k]) <= axis_tol) {
      st = fail(error, len, JY_ERR_CONVERGENCE,
                "lqr: no stabilizing solution: the Hamiltonian matrix has the eigenvalue "
                "%.3g%+.3gi on the imaginary axis (within %.3g; a mode on the axis that B does "
                "not reach or Q does not see)",
                wr[k], wi[k], axis_tol);
      goto done;
    }
  if (info > 0 || sdim != n) {
    st = fail(error, len, JY_ERR_CONVERGENCE,
              "lqr: no stabilizing solution: %d of the %d eigenvalues of the Hamiltonian "
              "matrix are stable, not %d%s",
              (int)sdim, 2 * n, n, info > 0 ? " (dgees could not order them)" : "");
    goto done;
  }

  /* P U11 = U21, as U11' P' = U21'. */
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) {
      U11t[j + i * nn] = U[i + j * n2];
      Pt[j + i * nn] = U[(i + nn) + j * n2];
    }
  double unorm = LAPACKE_dlange(LAPACK_COL_MAJOR, '1', n, n, U11t, n);
  info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, n, U11t, n, ipiv, Pt, n);
  double rcond = 0;
  if (info == 0 && LAPACKE_dgecon(LAPACK_COL_MAJOR, '1', n, U11t, n, unorm, &rcond) != 0) rcond = 0;
  if (info != 0 || !(rcond > (double)n * DBL_EPSILON)) {
    st = fail(error, len, JY_ERR_CONVERGENCE,
              "lqr: no stabilizing solution: U11 of the stable invariant subspace is singular "
              "(reciprocal condition %.3g): (A, B) is not stabilizable",
              rcond);
    goto done;
  }
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) P[i + j * nn] = 0.5 * (Pt[i + j * nn] + Pt[j + i * nn]);
  /* A posteriori: the Riccati residual relative to the size of its terms (a Hamiltonian
   * eigenvalue near the axis that the tests above let pass leaves a solution this catches). */
  double res = 0, an = 0, pn = 0, gn = 0, qn = 0;
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) {
      double r = Q[i + j * nn];
      for (size_t k = 0; k < nn; k++) {
        r += A[k + i * nn] * P[k + j * nn] + P[i + k * nn] * A[k + j * nn];
        double pg = 0;
        for (size_t l = 0; l < nn; l++) pg += P[i + l * nn] * G[l + k * nn];
        r -= pg * P[k + j * nn];
      }
      res += r * r;
      an += A[i + j * nn] * A[i + j * nn];
      pn += P[i + j * nn] * P[i + j * nn];
      gn += G[i + j * nn] * G[i + j * nn];
      qn += Q[i + j * nn] * Q[i + j * nn];
    }
  double scale = 2 * sqrt(an * pn) + pn * sqrt(gn) + sqrt(qn);
  double rel = scale > 0 ? sqrt(res) / scale : sqrt(res);
  if (!(rel <= 1e-8)) {
    st = fail(error, len, JY_ERR_CONVERGENCE,
              "lqr: no accurate stabilizing solution: the Riccati residual is %.3g of its "
              "terms (an eigenvalue of the Hamiltonian near the imaginary axis)",
              rel);
    goto done;
  }
  /* K = R^-1 B' P */
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < mm; i++) {
      double s = 0;
      for (size_t k = 0; k < nn; k++) s += X[i + k * mm] * P[k + j * nn];
      K[i + j * mm] = s;
    }
done:
  free(block);
  free(ipiv);
  return st;
}

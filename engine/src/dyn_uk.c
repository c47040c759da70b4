/* The acceleration solve: Udwadia–Kalaba through the auxiliary-mass form.
 *
 *   M_a = M + alpha A^T A = L L^T,  u = M_a^-1 (Q + C + alpha A^T b),
 *   q'' = u + L^-T (A L^-T)^+ (b - A u).
 *
 * For every w with A w = 0 the conditions A q'' = b and w^T (M q'' - Q - C) = 0 are those
 * of the original system, so q'' does not depend on alpha (exact, not a penalty), and M_a
 * is positive definite exactly when the acceleration is unique (rank [M; A] = n). Rows of
 * A are scaled to unit length first so that rank decisions and alpha see comparable rows.
 */
#include "dyn_uk.h"

#include <cblas.h>
#include <float.h>
#include <lapack.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "mem.h"

struct jyUkWork {
  jyAllocator alloc;
  int n_max, m_max;
  double *scaled_jac;    /* A with unit rows (m x n) */
  double *scaled_rhs;    /* b scaled likewise (m) */
  double *row_scale;     /* 1/|A_i|, 0 for zero and dropped rows (m) */
  double *row_norm;      /* |A_i| (m) */
  double *tau;           /* QR reflectors of the rank decision (min(m, n)) */
  double *factor;        /* M_a, then its Cholesky factor L (n x n) */
  double *inv_root_mass; /* 1/sqrt(M_jj) when M is diagonal and positive (n) */
  double *b_mat;         /* A L^-T, overwritten by dgelsy (m x n) */
  double *b_copy;        /* A L^-T kept for the residual (m x n) */
  double *solution;      /* right side, then minimum-norm solution (max(m, n)) */
  double *row_residual;  /* (m) */
  double *at_mat;        /* A^T for the multipliers (n x m) */
  double *at_rhs;        /* right sides of the multiplier solve (max(m, n) x (m + 1)) */
  double *gram;          /* W^T W of the dropped rows' null vectors (m x m) */
  double *null_coef;     /* (W^T W)^-1 W^T x for the dropped rows (m) */
  int *dropped_list;     /* indices of the dropped rows (m) */
  int *kept_rows;        /* the rows the regular solve keeps (m) */
  double *lapack_work;
  lapack_int lwork;
  lapack_int *pivots; /* (max(m, n)) */
};

static int imax(int a, int b) { return a > b ? a : b; }

jyUkWork *jy_uk_create(const jyAllocator *alloc, int n, int m) {
  if (n < 0 || m < 0) return NULL;
  jyAllocator a = alloc ? *alloc : (jyAllocator){0};
  jyUkWork *w = jy_calloc(&a, 1, sizeof *w);
  if (!w) return NULL;
  w->alloc = a;
  w->n_max = n;
  w->m_max = m;
  size_t nn = (size_t)n, mm = (size_t)m, big = (size_t)imax(imax(n, m), 1);
  w->scaled_jac = jy_calloc(&a, mm * nn + 1, sizeof(double));
  w->scaled_rhs = jy_calloc(&a, mm + 1, sizeof(double));
  w->row_scale = jy_calloc(&a, mm + 1, sizeof(double));
  w->row_norm = jy_calloc(&a, mm + 1, sizeof(double));
  w->tau = jy_calloc(&a, big, sizeof(double));
  w->factor = jy_calloc(&a, nn * nn + 1, sizeof(double));
  w->inv_root_mass = jy_calloc(&a, nn + 1, sizeof(double));
  w->b_mat = jy_calloc(&a, mm * nn + 1, sizeof(double));
  w->b_copy = jy_calloc(&a, mm * nn + 1, sizeof(double));
  w->solution = jy_calloc(&a, big, sizeof(double));
  w->row_residual = jy_calloc(&a, mm + 1, sizeof(double));
  w->at_mat = jy_calloc(&a, mm * nn + 1, sizeof(double));
  w->at_rhs = jy_calloc(&a, big * (mm + 1), sizeof(double));
  w->gram = jy_calloc(&a, mm * mm + 1, sizeof(double));
  w->null_coef = jy_calloc(&a, mm + 1, sizeof(double));
  w->dropped_list = jy_calloc(&a, mm + 1, sizeof(int));
  w->kept_rows = jy_calloc(&a, mm + 1, sizeof(int));
  w->pivots = jy_calloc(&a, big, sizeof(lapack_int));
  if (!w->scaled_jac || !w->scaled_rhs || !w->row_scale || !w->row_norm || !w->tau || !w->factor ||
      !w->inv_root_mass || !w->b_mat || !w->b_copy || !w->solution || !w->row_residual ||
      !w->at_mat || !w->at_rhs || !w->gram || !w->null_coef || !w->dropped_list || !w->kept_rows ||
      !w->pivots) {
    jy_uk_destroy(w);
    return NULL;
  }
  /* One workspace large enough for both minimum-norm solves (m x n and n x m) and the
   * rank decision (QR with column pivoting of the n x m A^T). */
  lapack_int lwork = 1;
  if (n > 0 && m > 0) {
    double query = 0;
    lapack_int rank = 0, ld = imax(imax(m, n), 1);
    if (LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, 1, w->b_mat, m, w->solution, ld, w->pivots,
                            1e-10, &rank, &query, -1) == 0)
      lwork = (lapack_int)query;
    if (LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, n, m, m + 1, w->at_mat, n, w->at_rhs, ld, w->pivots,
                            1e-10, &rank, &query, -1) == 0 &&
        (lapack_int)query > lwork)
      lwork = (lapack_int)query;
    if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, n, m, w->at_mat, n, w->pivots, w->tau, &query, -1) ==
          0 &&
        (lapack_int)query > lwork)
      lwork = (lapack_int)query;
  }
  if (lwork < m + 1) lwork = m + 1; /* dgeqr2 of the regular solve takes m */
  w->lwork = lwork;
  w->lapack_work = jy_calloc(&a, (size_t)lwork, sizeof(double));
  if (!w->lapack_work) {
    jy_uk_destroy(w);
    return NULL;
  }
  return w;
}

void jy_uk_destroy(jyUkWork *w) {
  if (!w) return;
  jyAllocator a = w->alloc;
  jy_free(&a, w->scaled_jac);
  jy_free(&a, w->scaled_rhs);
  jy_free(&a, w->row_scale);
  jy_free(&a, w->row_norm);
  jy_free(&a, w->tau);
  jy_free(&a, w->factor);
  jy_free(&a, w->inv_root_mass);
  jy_free(&a, w->b_mat);
  jy_free(&a, w->b_copy);
  jy_free(&a, w->solution);
  jy_free(&a, w->row_residual);
  jy_free(&a, w->at_mat);
  jy_free(&a, w->at_rhs);
  jy_free(&a, w->gram);
  jy_free(&a, w->null_coef);
  jy_free(&a, w->dropped_list);
  jy_free(&a, w->kept_rows);
  jy_free(&a, w->lapack_work);
  jy_free(&a, w->pivots);
  jy_free(&a, w);
}

/* Scales each row of A and b to unit length; zero and dropped rows get scale 0 (a zero
 * row, which the minimum-norm solve leaves alone). */
void jy_uk_finish_row_norms(const double *jac, int m, int n, double *norm) {
  for (int i = 0; i < m; i++) {
    double s = sqrt(norm[i]);
    if (!(s > 1e-150 && s < 1e150)) {
      s = 0;
      for (int j = 0; j < n; j++) s = hypot(s, jac[i + (size_t)j * m]);
    }
    norm[i] = s;
  }
}

void jy_uk_row_norms(const double *jac, int m, int n, double *norm) {
  for (int i = 0; i < m; i++) norm[i] = 0;
  for (int j = 0; j < n; j++) /* column by column: A is column-major */
    for (int i = 0; i < m; i++) {
      double a = jac[i + (size_t)j * m];
      norm[i] += a * a;
    }
  jy_uk_finish_row_norms(jac, m, n, norm);
}

static void scale_rows(jyUkWork *w, const jyUkProblem *p) {
  int n = p->n, m = p->m;
  jy_uk_row_norms(p->jac, m, n, w->row_norm);
  for (int i = 0; i < m; i++) {
    double norm = w->row_norm[i];
    w->row_scale[i] = norm > 0 && !(p->dropped && p->dropped[i]) ? 1.0 / norm : 0.0;
    w->scaled_rhs[i] = w->row_scale[i] * p->rhs[i];
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++)
      w->scaled_jac[i + (size_t)j * m] = w->row_scale[i] * p->jac[i + (size_t)j * m];
}

double jy_uk_augmentation(const double *mass, int n, double augment_scale) {
  double trace = 0;
  for (int j = 0; j < n; j++) trace += mass[j + (size_t)j * n];
  double alpha = n > 0 ? trace / n : 1.0;
  if (!(alpha > 0)) alpha = 1.0;
  return alpha * (augment_scale > 0 ? augment_scale : 1.0);
}

/* M_a = M + alpha As^T As in the lower triangle, then its Cholesky factor. Returns 0 when
 * positive definite (to working precision). */
static int factor_augmented(jyUkWork *w, const jyUkProblem *p, double alpha) {
  int n = p->n, m = p->m;
  memcpy(w->factor, p->mass, sizeof(double) * (size_t)n * n);
  if (m > 0)
    cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, m, alpha, w->scaled_jac, m, 1.0,
                w->factor, n);
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, w->factor, n) != 0) return -1;
  /* A pivot this small relative to its own column's diagonal means a direction that is
   * massless and unconstrained up to rounding (the Schur complement lost all but rounding
   * of that diagonal): the acceleration along it is not determined. Relative to its own
   * diagonal, not the largest, so that the cut does not depend on units or on how light a
   * part is next to another (a 1e-9 kg bob on a 1e9 kg pendulum has mass). */
  for (int j = 0; j < n; j++) {
    double d = w->factor[j + (size_t)j * n], diag = p->mass[j + (size_t)j * n];
    for (int i = 0; i < m; i++) {
      double a = w->scaled_jac[i + (size_t)j * m];
      diag += alpha * a * a;
    }
    if (!(d * d > 1e-13 * diag)) return -1;
  }
  return 0;
}

static int diagonal_positive(const jyUkProblem *p) {
  int n = p->n;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = p->mass[i + (size_t)j * n];
      if (i == j ? !(v > 0) || !isfinite(v) : v != 0) return 0;
    }
  return 1;
}

/* Relative residuals per row, from what B y left of r (solved rows) or measured on the
 * acceleration itself, (A_i q'' - b_i) / |A_i| (dropped rows); zero rows of A must have
 * b = 0. Fills result->residual and ->dropped_residual. */
static void measure_residuals(jyUkWork *w, const jyUkProblem *p, const double *acc, double scale,
                              jyUkResult *result) {
  int n = p->n, m = p->m;
  double worst = 0, dropped_worst = 0;
  for (int i = 0; i < m; i++) {
    int dropped = p->dropped && p->dropped[i];
    if (w->row_norm[i] == 0) {
      w->row_residual[i] = p->rhs[i];
    } else if (dropped) {
      double r = -p->rhs[i];
      for (int j = 0; j < n; j++) r += p->jac[i + (size_t)j * m] * acc[j];
      w->row_residual[i] = r / w->row_norm[i];
    }
    w->row_residual[i] /= scale;
    worst = fmax(worst, fabs(w->row_residual[i]));
    if (dropped) dropped_worst = fmax(dropped_worst, fabs(w->row_residual[i]));
  }
  result->residual = worst;
  result->dropped_residual = dropped_worst;
}

/* u = M^-1 (Q + C) with a diagonal M (inv_root_mass filled), else u = M_a^-1 (Q + C +
 * alpha As^T bs) with M_a factored into w->factor; into acc. -1 when M_a is not positive
 * definite (the acceleration is not unique). */
static int unconstrained_acceleration(jyUkWork *w, const jyUkProblem *p, const jyUkOptions *opt,
                                      int diagonal, double *acc) {
  int n = p->n, m = p->m;
  for (int j = 0; j < n; j++) acc[j] = p->force[j] + (p->nonideal ? p->nonideal[j] : 0.0);
  if (diagonal) {
    for (int j = 0; j < n; j++) {
      double mj = p->mass[j + (size_t)j * n];
      w->inv_root_mass[j] = 1.0 / sqrt(mj);
      acc[j] /= mj;
    }
    return 0;
  }
  double alpha = m > 0 ? jy_uk_augmentation(p->mass, n, opt->augment_scale) : 0.0;
  if (factor_augmented(w, p, alpha) != 0) return -1;
  if (m > 0)
    cblas_dgemv(CblasColMajor, CblasTrans, m, n, alpha, w->scaled_jac, m, w->scaled_rhs, 1, 1.0,
                acc, 1);
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, w->factor, n, acc, n);
  return 0;
}

/* Bt = B^T = L^-1 As^T over the kept rows (n x k, ld n): column c is row kept_rows[c]. */
static void transposed_b(jyUkWork *w, const jyUkProblem *p, int diagonal, int k, double *bt) {
  int n = p->n, m = p->m;
  for (int c = 0; c < k; c++) {
    const double *row = w->scaled_jac + w->kept_rows[c];
    double *col = bt + (size_t)c * n;
    for (int j = 0; j < n; j++) col[j] = row[(size_t)j * m] * (diagonal ? w->inv_root_mass[j] : 1);
  }
  if (!diagonal)
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, k, 1.0,
                w->factor, n, bt, n);
}

/* A kept row whose distance from the span of the rows before it is below this fraction of
 * its length is left to the rank-revealing solve: near a singular configuration (a row
 * within ~1e-3 rad of the others) the rank decision is dgelsy's, as it always was. */
#define REGULAR_MIN_SINE 1e-3

/* y = B^+ r when the kept rows of B are independent: B^T = Q R (unpivoted Householder QR,
 * backward stable like the rank-revealing solve, at a fraction of its cost on small
 * problems), R^T z = r, y = Q [z; 0]. r in w->solution (m), y out (n); row_residual gets
 * what B y leaves of r on the kept rows. Returns the rank (the kept count), or -1 when the
 * rows are more than the coordinates or a pivot shows a row (nearly) dependent on the
 * others: the caller then takes the rank-revealing solve. */
static int regular_solve(jyUkWork *w, const jyUkProblem *p, int diagonal) {
  int n = p->n, m = p->m, k = 0;
  for (int i = 0; i < m; i++)
    if (w->row_scale[i] > 0) w->kept_rows[k++] = i;
  if (k > n) return -1;
  double *bt = w->at_mat, *y = w->solution, *col_norm = w->null_coef;
  transposed_b(w, p, diagonal, k, bt);
  memcpy(w->b_copy, bt, sizeof(double) * (size_t)n * k);
  for (int c = 0; c < k; c++) { /* entries of unit rows times 1/sqrt(M_jj): no overflow */
    const double *col = bt + (size_t)c * n;
    col_norm[c] = sqrt(cblas_ddot(n, col, 1, col, 1));
  }
  lapack_int rows = n, cols = k, ld = n, info = 0;
  if (k > 0) LAPACK_dgeqr2(&rows, &cols, bt, &ld, w->tau, w->lapack_work, &info);
  if (info != 0) return -1;
  for (int c = 0; c < k; c++)
    if (!(fabs(bt[c + (size_t)c * n]) > REGULAR_MIN_SINE * col_norm[c])) return -1;
  for (int c = 0; c < k; c++) y[c] = y[w->kept_rows[c]]; /* kept_rows[c] >= c: in place */
  for (int j = k; j < n; j++) y[j] = 0;
  if (k > 0) cblas_dtrsv(CblasColMajor, CblasUpper, CblasTrans, CblasNonUnit, k, bt, n, y, 1);
  for (int c = k - 1; c >= 0; c--) {              /* y = H_0 ... H_{k-1} [z; 0] */
    const double *v = bt + (size_t)c * n + c + 1; /* the reflector below its implicit 1 */
    double s = w->tau[c] * (y[c] + cblas_ddot(n - c - 1, v, 1, y + c + 1, 1));
    y[c] -= s;
    cblas_daxpy(n - c - 1, -s, v, 1, y + c + 1, 1);
  }
  for (int c = 0; c < k; c++) /* what B y leaves of r on the kept rows */
    w->row_residual[w->kept_rows[c]] -= cblas_ddot(n, w->b_copy + (size_t)c * n, 1, y, 1);
  return k;
}

/* y = B^+ r, minimum norm, by complete orthogonal factorization (QR with column pivoting):
 * any rank. r in w->solution (m), y out (n); row_residual gets what B y leaves of r. */
static int rank_revealing_solve(jyUkWork *w, const jyUkProblem *p, int diagonal, double rcond) {
  int n = p->n, m = p->m;
  if (diagonal) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++)
        w->b_mat[i + (size_t)j * m] = w->scaled_jac[i + (size_t)j * m] * w->inv_root_mass[j];
  } else {
    memcpy(w->b_mat, w->scaled_jac, sizeof(double) * (size_t)m * n);
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0,
                w->factor, n, w->b_mat, m);
  }
  memcpy(w->b_copy, w->b_mat, sizeof(double) * (size_t)m * n);
  for (int i = 0; i < m; i++) w->solution[i] = w->row_residual[i];
  memset(w->pivots, 0, sizeof(lapack_int) * (size_t)imax(m, n));
  lapack_int rank = 0;
  LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, 1, w->b_mat, m, w->solution, imax(m, n), w->pivots,
                      rcond, &rank, w->lapack_work, w->lwork);
  cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, -1.0, w->b_copy, m, w->solution, 1, 1.0,
              w->row_residual, 1);
  return (int)rank;
}

jyUkOutcome jy_uk_solve(jyUkWork *w, const jyUkProblem *p, const jyUkOptions *opt, double *acc,
                        jyUkResult *result) {
  int n = p->n, m = p->m;
  jyUkResult local;
  if (!result) result = &local;
  result->outcome = JY_UK_OK;
  result->rank = 0;
  result->residual = 0;
  result->dropped_residual = 0;
  result->row_residual = w->row_residual;
  if (n > w->n_max || m > w->m_max) {
    result->outcome = JY_UK_NOT_UNIQUE;
    return result->outcome;
  }
  scale_rows(w, p);
  if (n == 0) { /* nothing moves: rows can only ask b = 0 (and LAPACK must not see n = 0) */
    measure_residuals(w, p, acc, 1.0, result);
    if (!(result->residual <= opt->consistency_tol)) result->outcome = JY_UK_INCONSISTENT;
    return result->outcome;
  }
  /* A diagonal, positive M (rigid bodies, point masses) is its own factor: L = M^1/2 with
   * no augmentation, which saves forming and factoring M_a. */
  int diagonal = m > 0 && diagonal_positive(p);
  if (unconstrained_acceleration(w, p, opt, diagonal, acc) != 0) {
    result->outcome = JY_UK_NOT_UNIQUE;
    return result->outcome;
  }
  if (m == 0) return result->outcome;

  /* r = bs - As u */
  memcpy(w->solution, w->scaled_rhs, sizeof(double) * (size_t)m);
  cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, -1.0, w->scaled_jac, m, acc, 1, 1.0, w->solution,
              1);
  double scale = 0;
  for (int i = 0; i < m; i++) {
    w->row_residual[i] = w->solution[i];
    scale = fmax(scale, fabs(w->scaled_rhs[i]));
    scale = fmax(scale, fabs(w->scaled_rhs[i] - w->solution[i]));
  }
  if (!(scale > 0)) scale = 1;

  /* y = B^+ r, B = As L^-T */
  int rank = regular_solve(w, p, diagonal);
  if (rank < 0) rank = rank_revealing_solve(w, p, diagonal, opt->rank_rcond);
  result->rank = rank;
  /* q'' = u + L^-T y */
  if (diagonal)
    for (int j = 0; j < n; j++) w->solution[j] *= w->inv_root_mass[j];
  else
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, w->factor, n, w->solution,
                1);
  for (int j = 0; j < n; j++) acc[j] += w->solution[j];

  measure_residuals(w, p, acc, scale, result);
  if (!(result->residual <= opt->consistency_tol)) result->outcome = JY_UK_INCONSISTENT;
  return result->outcome;
}

int jy_uk_dependent_rows(jyUkWork *w, const jyUkProblem *p, double rcond, double loose_rcond,
                         int max_count, unsigned char *dependent) {
  int n = p->n, m = p->m;
  if (n > w->n_max || m > w->m_max) return -1;
  if (m == 0 || n == 0) {
    for (int i = 0; i < m; i++) dependent[i] = 0;
    return 0;
  }
  jyUkProblem all = *p;
  all.dropped = NULL;
  scale_rows(w, &all);
  /* Unit rows tie often (symmetric mechanisms); a weight 1 + 1e-9 (m - i) / m, which
   * changes no rank, breaks the ties towards keeping the earlier rows: of rows that depend
   * on each other, the one declared last is the one left out. */
  for (int i = 0; i < m; i++) {
    double weight = 1.0 + 1e-9 * (double)(m - i) / m;
    for (int j = 0; j < n; j++)
      w->at_mat[j + (size_t)i * n] = weight * w->scaled_jac[i + (size_t)j * m];
  }
  memset(w->pivots, 0, sizeof(lapack_int) * (size_t)imax(m, n));
  if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, n, m, w->at_mat, n, w->pivots, w->tau, w->lapack_work,
                          w->lwork) != 0)
    return -1;
  /* Pivots k >= min(m, n) have no diagonal: those rows are dependent whatever the cut. */
  int kmax = imax(0, m < n ? m : n), strict = m, loose = m;
  double r00 = fabs(w->at_mat[0]);
  for (int k = 0; k < kmax; k++) {
    double r = fabs(w->at_mat[k + (size_t)k * n]);
    if (r > rcond * r00) strict = m - (k + 1);
    if (r > loose_rcond * r00) loose = m - (k + 1);
  }
  int count = strict;
  if (max_count >= 0) count = loose < max_count ? loose : max_count;
  for (int i = 0; i < m; i++) dependent[i] = 0; /* only now: a failure leaves them as they were */
  for (int k = m - count; k < m; k++) dependent[w->pivots[k] - 1] = 1;
  return count;
}

/* With k dropped rows the scaled multipliers were solved on the kept rows only: column 0
 * of at_rhs holds x0 (zero on the dropped rows), column 1 + a holds c_a with
 * As_K^T c_a = (row d_a of As). The vectors w_a = e_{d_a} - c_a span the null space of As^T
 * (up to the drift), and x0 - W (W^T W)^-1 W^T x0 is the minimum-norm solution over every
 * row: the same convention as a solve that keeps every row. W^T W = I + C^T C, since c_a
 * vanishes on the dropped rows. */
static void spread_over_dropped(jyUkWork *w, int m, int k, int ld) {
  const double *x0 = w->at_rhs;
  double *g = w->null_coef;
  for (int a = 0; a < k; a++) {
    const double *ca = w->at_rhs + (size_t)(1 + a) * ld;
    g[a] = -cblas_ddot(m, ca, 1, x0, 1); /* w_a . x0, x0 being 0 at d_a */
    for (int b = 0; b <= a; b++)
      w->gram[a + (size_t)b * k] =
        (a == b) + cblas_ddot(m, ca, 1, w->at_rhs + (size_t)(1 + b) * ld, 1);
  }
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', k, w->gram, k) != 0) return;
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', k, 1, w->gram, k, g, k);
  double *x = w->at_rhs;
  for (int a = 0; a < k; a++) {
    const double *ca = w->at_rhs + (size_t)(1 + a) * ld;
    x[w->dropped_list[a]] -= g[a];
    cblas_daxpy(m, g[a], ca, 1, x, 1);
  }
}

int jy_uk_multipliers(jyUkWork *w, const jyUkProblem *p, const double *acc, double *mu,
                      double *unexplained) {
  int n = p->n, m = p->m, ld = imax(m, n), k = 0;
  if (n > w->n_max || m > w->m_max) return -1;
  if (m == 0) {
    if (unexplained) *unexplained = 0;
    return 0;
  }
  scale_rows(w, p);
  /* f = M acc - Q - C, the constraint force the ideal rows must explain */
  double *f = w->at_rhs;
  for (int j = 0; j < n; j++) f[j] = -p->force[j] - (p->nonideal ? p->nonideal[j] : 0.0);
  cblas_dsymv(CblasColMajor, CblasLower, n, 1.0, p->mass, n, acc, 1, 1.0, f, 1);
  memcpy(w->solution, f, sizeof(double) * (size_t)n);
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++) w->at_mat[j + (size_t)i * n] = w->scaled_jac[i + (size_t)j * m];
    if (!p->dropped || !p->dropped[i] || w->row_norm[i] == 0) continue;
    double *col = w->at_rhs + (size_t)(1 + k) * ld; /* the dropped row, unit length */
    for (int j = 0; j < n; j++) col[j] = p->jac[i + (size_t)j * m] / w->row_norm[i];
    w->dropped_list[k++] = i;
  }
  memset(w->pivots, 0, sizeof(lapack_int) * (size_t)imax(m, n));
  lapack_int rank = 0;
  /* Scaled multipliers mu_s solve As^T mu_s = f with minimum norm; mu = diag(s) mu_s. */
  LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, n, m, 1 + k, w->at_mat, n, w->at_rhs, ld, w->pivots, 1e-10,
                      &rank, w->lapack_work, w->lwork);
  if (k > 0) spread_over_dropped(w, m, k, ld);
  for (int i = 0; i < m; i++) mu[i] = w->row_norm[i] > 0 ? w->at_rhs[i] / w->row_norm[i] : 0.0;
  if (unexplained) {
    /* |A^T mu - f| with f still in w->solution */
    double sq = 0;
    for (int j = 0; j < n; j++) {
      double s = -w->solution[j];
      for (int i = 0; i < m; i++) s += p->jac[i + (size_t)j * m] * mu[i];
      sq += s * s;
    }
    *unexplained = sqrt(sq);
  }
  return 0;
}

/* Singular values (sv, n) and right singular vectors (vt, n x n) of the rows x n matrix
 * `stack` (destroyed), with a workspace from the allocator (LAPACKE's would come from malloc
 * and print on failure). 0, or -1. */
static int right_singular(const jyAllocator *a, double *stack, int rows, int n, double *sv,
                          double *vt) {
  double query = 0;
  if (LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', rows, n, stack, rows, sv, NULL, 1, vt, n,
                          &query, -1) != 0)
    return -1;
  lapack_int lwork = (lapack_int)query > 1 ? (lapack_int)query : 1;
  double *work = jy_calloc(a, (size_t)lwork, sizeof(double));
  int info = work ? LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', rows, n, stack, rows, sv, NULL,
                                        1, vt, n, work, lwork)
                  : -1;
  jy_free(a, work);
  return info == 0 ? 0 : -1;
}

int jy_uk_free_directions(jyUkWork *w, const jyUkProblem *p, double rcond, int *free_dir) {
  int n = p->n, m = p->m, rows = n + m;
  for (int j = 0; j < n; j++) free_dir[j] = 0;
  if (n == 0) return 0;
  scale_rows(w, p);
  /* [M / mean diag; As]: both blocks on a unit scale, then its null space by SVD. */
  double alpha = jy_uk_augmentation(p->mass, n, 1);
  double *stack = jy_calloc(&w->alloc, (size_t)rows * n, sizeof(double));
  double *sv = jy_calloc(&w->alloc, (size_t)n, sizeof(double));
  double *vt = jy_calloc(&w->alloc, (size_t)n * n, sizeof(double));
  int count = -1;
  if (stack && sv && vt) {
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) stack[i + (size_t)j * rows] = p->mass[i + (size_t)j * n] / alpha;
      for (int i = 0; i < m; i++)
        stack[n + i + (size_t)j * rows] = w->scaled_jac[i + (size_t)j * m];
      /* Columns to unit length: a light coordinate next to a heavy one is not free (only a
       * zero column, or a combination that cancels, is). */
      double norm = cblas_dnrm2(rows, stack + (size_t)j * rows, 1);
      if (norm > 0) cblas_dscal(rows, 1.0 / norm, stack + (size_t)j * rows, 1);
    }
    if (right_singular(&w->alloc, stack, rows, n, sv, vt) == 0) {
      double cut = (rcond > 0 ? rcond : 1e-10) * fmax(sv[0], DBL_MIN);
      count = 0;
      for (int k = 0; k < n; k++) {
        if (sv[k] > cut) continue;
        /* Row k of V^T is a null direction: flag coordinates that move noticeably in it. */
        for (int j = 0; j < n; j++)
          if (fabs(vt[k + (size_t)j * n]) > 1e-3 && !free_dir[j]) {
            free_dir[j] = 1;
            count++;
          }
      }
    }
  }
  jy_free(&w->alloc, stack);
  jy_free(&w->alloc, sv);
  jy_free(&w->alloc, vt);
  return count;
}

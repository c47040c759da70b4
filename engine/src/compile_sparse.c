/* The sparse side of the initial-state stage, for large models (n >= the solver's
 * sparse_min_coords): a Gauss–Newton step of minimum norm through a Cholesky factorization
 * of J J^T (CHOLMOD), and the check that a model has no dependent rows through a Cholesky
 * factorization of the unit-row A A^T. Each answers only when the factorization is well
 * conditioned by a wide margin; otherwise the caller takes the dense rank-revealing path,
 * which decides the borderline cases as it does for small models. docs/numerics.md. */
#include <math.h>
#include <string.h>

#include "compile.h"

#include <suitesparse/cholmod.h>

struct jyCompileSparse {
  cholmod_common common;
  const jyAllocator *alloc;
};

/* A pivot of the Cholesky factor of J J^T below this fraction of its row's norm is a rank
 * loss this path does not decide: the dense path's cut is 1e-12 of the largest singular
 * value, and between the two the normal equations would lose the digits a Newton step
 * needs (their condition is the square of J's). */
static const double PIVOT_MARGIN = 1e-6;

jyCompileSparse *jy_compile_sparse_create(const jyAllocator *a) {
  jyCompileSparse *s = jy_calloc(a, 1, sizeof *s);
  if (!s) return NULL;
  s->alloc = a;
  cholmod_start(&s->common);
  s->common.print = 0;
  s->common.supernodal = CHOLMOD_SIMPLICIAL;
  s->common.final_ll = 1;
  return s;
}

void jy_compile_sparse_destroy(jyCompileSparse *s) {
  if (!s) return;
  cholmod_finish(&s->common);
  jy_free(s->alloc, s);
}

/* The assembled constraint matrix A (m x n) as CHOLMOD's: the one place that reads the
 * evaluator's A, a copy of its fixed-pattern store (O(nnz); entries the pattern holds but
 * this state leaves zero are kept). */
static cholmod_sparse *assembled_constraints(jyCompileSparse *s, jyEval *e) {
  const jyCsc *c = jy_eval_constraint_matrix(e);
  int n = e->model->n;
  size_t nnz = (size_t)c->p[n];
  cholmod_sparse *a = cholmod_allocate_sparse((size_t)e->model->m, (size_t)n, nnz ? nnz : 1, 1, 1,
                                              0, CHOLMOD_REAL, &s->common);
  if (!a) return NULL;
  memcpy(a->p, c->p, sizeof(int) * ((size_t)n + 1));
  memcpy(a->i, c->i, sizeof(int) * nnz);
  memcpy(a->x, c->x, sizeof(double) * nnz);
  return a;
}

/* A[rows, cols] with each row k scaled by row_scale[k] (NULL: 1), in O(nnz + m + n). */
static cholmod_sparse *constraint_block(jyCompileSparse *s, jyEval *e, const int *rows, int nrows,
                                        const int *cols, int ncols, const double *row_scale) {
  int m = e->model->m;
  cholmod_sparse *a = assembled_constraints(s, e), *block = NULL;
  int *row_at = jy_calloc(s->alloc, (size_t)m + 1, sizeof(int));
  if (!a || !row_at) goto done;
  for (int i = 0; i < m; i++) row_at[i] = -1;
  for (int k = 0; k < nrows; k++) row_at[rows[k]] = k;
  const int *ap = a->p, *ai = a->i;
  const double *ax = a->x;
  size_t nnz = 0;
  for (int c = 0; c < ncols; c++)
    for (int k = ap[cols[c]]; k < ap[cols[c] + 1]; k++) nnz += row_at[ai[k]] >= 0;
  block = cholmod_allocate_sparse((size_t)nrows, (size_t)ncols, nnz ? nnz : 1, 0, 1, 0,
                                  CHOLMOD_REAL, &s->common);
  if (!block) goto done;
  int *cp = block->p, *ri = block->i;
  double *x = block->x;
  size_t at = 0;
  for (int c = 0; c < ncols; c++) {
    cp[c] = (int)at;
    for (int k = ap[cols[c]]; k < ap[cols[c] + 1]; k++) {
      int r = row_at[ai[k]];
      if (r < 0) continue;
      ri[at] = r;
      x[at++] = ax[k] * (row_scale ? row_scale[r] : 1.0);
    }
  }
  cp[ncols] = (int)at;
done:
  cholmod_free_sparse(&a, &s->common);
  jy_free(s->alloc, row_at);
  return block;
}

/* Factors J J^T; NULL (and *rank_loss set) when a pivot is below PIVOT_MARGIN of its row's
 * norm, NULL with *rank_loss clear when out of memory. */
static cholmod_factor *factor_rows(jyCompileSparse *s, cholmod_sparse *j, int *rank_loss) {
  *rank_loss = 0;
  cholmod_factor *l = cholmod_analyze(j, &s->common);
  if (!l) return NULL;
  int ok = cholmod_factorize(j, l, &s->common);
  if (s->common.status == CHOLMOD_OUT_OF_MEMORY)
    ok = 0;
  else if (!ok || s->common.status == CHOLMOD_NOT_POSDEF || l->minor < l->n)
    *rank_loss = 1;
  if (ok && !*rank_loss) {
    /* row norms in the factor's order: diag(J J^T) */
    const int *cp = j->p, *ri = j->i, *perm = l->Perm, *lp = l->p;
    const double *x = j->x, *lx = l->x;
    cholmod_dense *d = cholmod_zeros(j->nrow, 1, CHOLMOD_REAL, &s->common);
    if (!d)
      ok = 0;
    else {
      double *row2 = d->x;
      for (size_t c = 0; c < j->ncol; c++)
        for (int k = cp[c]; k < cp[c + 1]; k++) row2[ri[k]] += x[k] * x[k];
      for (size_t k = 0; k < l->n && !*rank_loss; k++) {
        double pivot = lx[lp[k]], row = sqrt(row2[perm ? perm[k] : (int)k]);
        if (!(pivot > PIVOT_MARGIN * row)) *rank_loss = 1;
      }
      cholmod_free_dense(&d, &s->common);
    }
  }
  if (!ok || *rank_loss) cholmod_free_factor(&l, &s->common);
  return l;
}

int jy_compile_sparse_step(jyCompileSparse *s, jyEval *e, const int *rows, int nrows,
                           const int *cols, int ncols, const double *res, double *dx) {
  cholmod_sparse *j = constraint_block(s, e, rows, nrows, cols, ncols, NULL);
  if (!j) return JY_ERR_NOMEM;
  int rank_loss = 0, out = JY_ERR_NOMEM;
  cholmod_factor *l = factor_rows(s, j, &rank_loss);
  cholmod_dense *r = NULL, *y = NULL, *step = NULL;
  if (!l) {
    out = rank_loss ? 1 : JY_ERR_NOMEM;
    goto done;
  }
  r = cholmod_zeros((size_t)nrows, 1, CHOLMOD_REAL, &s->common);
  step = cholmod_zeros((size_t)ncols, 1, CHOLMOD_REAL, &s->common);
  if (!r || !step) goto done;
  memcpy(r->x, res, sizeof(double) * (size_t)nrows);
  y = cholmod_solve(CHOLMOD_A, l, r, &s->common);
  double one[2] = {1, 0}, zero[2] = {0, 0};
  if (!y || !cholmod_sdmult(j, 1, one, zero, y, step, &s->common)) goto done;
  memcpy(dx, step->x, sizeof(double) * (size_t)ncols);
  out = 0;
done:
  cholmod_free_dense(&r, &s->common);
  cholmod_free_dense(&y, &s->common);
  cholmod_free_dense(&step, &s->common);
  cholmod_free_factor(&l, &s->common);
  cholmod_free_sparse(&j, &s->common);
  return out;
}

int jy_compile_sparse_no_dependent_rows(jyCompileSparse *s, jyEval *e, int *rows, int *cols) {
  const jyModel *md = e->model;
  int m = md->m, n = md->n;
  for (int i = 0; i < m; i++) rows[i] = i;
  for (int j = 0; j < n; j++) cols[j] = j;
  cholmod_sparse *a = constraint_block(s, e, rows, m, cols, n, NULL);
  if (!a) return JY_ERR_NOMEM;
  /* unit rows, as the dense decision scales them */
  double *norm = jy_calloc(s->alloc, (size_t)m + 1, sizeof(double));
  int out = JY_ERR_NOMEM;
  if (!norm) goto done;
  const int *cp = a->p, *ri = a->i;
  double *x = a->x;
  for (int k = 0; k < cp[n]; k++) norm[ri[k]] += x[k] * x[k];
  out = 0;
  for (int i = 0; i < m; i++)
    if (!(norm[i] > 0)) goto done; /* an empty row: the dense path names it */
  for (int k = 0; k < cp[n]; k++) x[k] /= sqrt(norm[ri[k]]);
  int rank_loss = 0;
  cholmod_factor *l = factor_rows(s, a, &rank_loss);
  out = l ? 1 : rank_loss ? 0 : JY_ERR_NOMEM;
  cholmod_free_factor(&l, &s->common);
done:
  jy_free(s->alloc, norm);
  cholmod_free_sparse(&a, &s->common);
  return out;
}

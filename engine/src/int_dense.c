/* BDF's dense Newton solver through LAPACK.
 *
 * Debian's SUNDIALS 6.4.1 is built without optimization, its dense LU (SUNDlsMat_denseGETRF
 * and denseGETRS) included: on Andrews' mechanism under BDF (46 states) the back
 * substitutions alone were 15 % of the run's instructions. This solver keeps SUNLinSol_Dense's
 * contract (the matrix factored in place at setup, pivots kept, a singular matrix the
 * recoverable SUNLS_LUFACT_FAIL, the solution overwriting x) and hands the work to the
 * system's LAPACK. LAPACK's LU pivots as SUNDIALS' does (partial, the largest magnitude) but
 * orders its sums by blocks, so the Newton corrections differ in the last bits, well inside
 * the Newton iteration's own tolerance. */
#include "int_dense.h"

#include <lapacke.h>
#include <nvector/nvector_serial.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "mem.h"

typedef struct DenseLapack {
  const jyAllocator *alloc;
  lapack_int n;
  lapack_int *pivots;
  sunindextype last_flag;
} DenseLapack;

static SUNLinearSolver_Type get_type(SUNLinearSolver s) {
  (void)s;
  return SUNLINEARSOLVER_DIRECT;
}

static SUNLinearSolver_ID get_id(SUNLinearSolver s) {
  (void)s;
  return SUNLINEARSOLVER_CUSTOM;
}

static int initialize(SUNLinearSolver s) {
  ((DenseLapack *)s->content)->last_flag = SUNLS_SUCCESS;
  return SUNLS_SUCCESS;
}

static int setup(SUNLinearSolver s, SUNMatrix a) {
  DenseLapack *d = s->content;
  if (SUNMatGetID(a) != SUNMATRIX_DENSE || SUNDenseMatrix_Rows(a) != d->n ||
      SUNDenseMatrix_Columns(a) != d->n) {
    d->last_flag = SUNLS_ILL_INPUT;
    return SUNLS_ILL_INPUT;
  }
  lapack_int info =
    LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, d->n, d->n, SUNDenseMatrix_Data(a), d->n, d->pivots);
  d->last_flag = info;
  return info > 0 ? SUNLS_LUFACT_FAIL : info < 0 ? SUNLS_PACKAGE_FAIL_UNREC : SUNLS_SUCCESS;
}

static int solve(SUNLinearSolver s, SUNMatrix a, N_Vector x, N_Vector b, realtype tol) {
  (void)tol;
  DenseLapack *d = s->content;
  N_VScale(1.0, b, x);
  lapack_int info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', d->n, 1, SUNDenseMatrix_Data(a),
                                        d->n, d->pivots, N_VGetArrayPointer(x), d->n);
  d->last_flag = info;
  return info == 0 ? SUNLS_SUCCESS : SUNLS_PACKAGE_FAIL_UNREC;
}

static sunindextype last_flag(SUNLinearSolver s) { return ((DenseLapack *)s->content)->last_flag; }

static int space(SUNLinearSolver s, long *real_words, long *int_words) {
  *real_words = 0;
  *int_words = 2 + (long)((DenseLapack *)s->content)->n;
  return SUNLS_SUCCESS;
}

static int destroy(SUNLinearSolver s) {
  if (!s) return SUNLS_SUCCESS;
  DenseLapack *d = s->content;
  if (d) {
    const jyAllocator *alloc = d->alloc;
    jy_free(alloc, d->pivots);
    jy_free(alloc, d);
    s->content = NULL;
  }
  SUNLinSolFreeEmpty(s);
  return SUNLS_SUCCESS;
}

SUNLinearSolver jy_dense_lapack_solver(SUNMatrix a, SUNContext ctx, const jyAllocator *alloc) {
  if (!a || SUNMatGetID(a) != SUNMATRIX_DENSE ||
      SUNDenseMatrix_Rows(a) != SUNDenseMatrix_Columns(a))
    return NULL;
  SUNLinearSolver s = SUNLinSolNewEmpty(ctx);
  if (!s) return NULL;
  s->ops->gettype = get_type;
  s->ops->getid = get_id;
  s->ops->initialize = initialize;
  s->ops->setup = setup;
  s->ops->solve = solve;
  s->ops->lastflag = last_flag;
  s->ops->space = space;
  s->ops->free = destroy;
  DenseLapack *d = jy_calloc(alloc, 1, sizeof *d);
  if (!d) {
    SUNLinSolFreeEmpty(s);
    return NULL;
  }
  s->content = d;
  d->alloc = alloc;
  d->n = (lapack_int)SUNDenseMatrix_Rows(a);
  d->pivots = jy_calloc(alloc, (size_t)d->n + 1, sizeof *d->pivots);
  if (!d->pivots) {
    destroy(s);
    return NULL;
  }
  return s;
}

/* tests/engine/t_int_dense.c — BDF's dense Newton solver through LAPACK (engine/src/int_dense.c)
 * against SUNDIALS' own SUNLinSol_Dense, whose contract it takes over:
 *   - solutions: Newton-like matrices I - gamma J (J random, gamma from 1e-6 to 10) of sizes
 *     1 to 80 (the dense limit), solved by both; the two agree to 1e-12 of the solution's
 *     size times the matrix's condition estimate, and both satisfy A x = b to the same
 *     relative residual bound;
 *   - the factor is kept: several right-hand sides after one setup;
 *   - a singular matrix (a zero column; a zero row) is the recoverable SUNLS_LUFACT_FAIL,
 *     as SUNDIALS' is, and a solver of the wrong size refuses the matrix (SUNLS_ILL_INPUT);
 *   - every allocation can fail: with an allocator failing at the k-th call the solver is
 *     NULL and nothing leaks (AddressSanitizer's build checks the leak). */
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdint.h>
#include <stdio.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "int_dense.h"
#include "tap.h"

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *state) { /* in [-1, 1) */
  return (double)(splitmix(state) >> 11) / 4503599627370496.0 - 1.0;
}

typedef struct counting {
  long calls, fail_at; /* fail_at 0: never */
} counting;

static void *counting_alloc(void *ud, size_t size) {
  counting *c = ud;
  if (c->fail_at && ++c->calls >= c->fail_at) return NULL;
  return malloc(size);
}

static void counting_free(void *ud, void *p) {
  (void)ud;
  free(p);
}

static double max_abs(const double *x, long n) {
  double m = 0;
  for (long i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

/* max_i |(A x - b)_i| / (|A| |x| + |b|) with A given column-major */
static double residual(const double *a, const double *x, const double *b, long n) {
  double worst = 0;
  for (long i = 0; i < n; i++) {
    double r = -b[i], scale = fabs(b[i]);
    for (long j = 0; j < n; j++) {
      r += a[j * n + i] * x[j];
      scale += fabs(a[j * n + i] * x[j]);
    }
    worst = fmax(worst, fabs(r) / (scale > 0 ? scale : 1));
  }
  return worst;
}

int main(void) {
  SUNContext ctx;
  if (SUNContext_Create(NULL, &ctx) != 0) return 1;
  jyAllocator plain = {0};
  uint64_t state = 44;
  const long sizes[] = {1, 2, 5, 18, 46, 80};
  const double gammas[] = {1e-6, 1e-3, 0.1, 10.0};
  double worst_diff = 0, worst_residual = 0, worst_sundials_residual = 0;
  long systems = 0, kept_factor_ok = 1, made = 1;
  for (int s = 0; s < 6; s++)
    for (int g = 0; g < 4; g++) {
      long n = sizes[s];
      SUNMatrix mine = SUNDenseMatrix(n, n, ctx), theirs = SUNDenseMatrix(n, n, ctx);
      SUNMatrix original = SUNDenseMatrix(n, n, ctx);
      N_Vector b = N_VNew_Serial(n, ctx), x_mine = N_VNew_Serial(n, ctx);
      N_Vector x_theirs = N_VNew_Serial(n, ctx);
      SUNLinearSolver ls_mine = jy_dense_lapack_solver(mine, ctx, &plain);
      SUNLinearSolver ls_theirs = SUNLinSol_Dense(b, theirs, ctx);
      if (!mine || !theirs || !original || !b || !x_mine || !x_theirs || !ls_mine || !ls_theirs) {
        made = 0;
        break;
      }
      double *a = SUNDenseMatrix_Data(original);
      for (long k = 0; k < n * n; k++) a[k] = -gammas[g] * 3 * uniform(&state);
      for (long i = 0; i < n; i++) a[i * n + i] += 1.0;
      SUNMatCopy(original, mine);
      SUNMatCopy(original, theirs);
      SUNLinSolInitialize(ls_mine);
      SUNLinSolInitialize(ls_theirs);
      int setup_mine = SUNLinSolSetup(ls_mine, mine),
          setup_theirs = SUNLinSolSetup(ls_theirs, theirs);
      if (setup_mine != 0 || setup_theirs != 0) {
        made = 0;
        diag("setup: %d and %d at n = %ld, gamma = %g", setup_mine, setup_theirs, n, gammas[g]);
      }
      for (int rhs = 0; rhs < 3 && made; rhs++) { /* one factor, several right-hand sides */
        double *bd = N_VGetArrayPointer(b);
        for (long i = 0; i < n; i++) bd[i] = uniform(&state) * pow(10.0, rhs - 1);
        int solved = SUNLinSolSolve(ls_mine, mine, x_mine, b, 0.0) == 0 &&
          SUNLinSolSolve(ls_theirs, theirs, x_theirs, b, 0.0) == 0;
        if (!solved) kept_factor_ok = 0;
        const double *xm = N_VGetArrayPointer(x_mine), *xt = N_VGetArrayPointer(x_theirs);
        double diff = 0;
        for (long i = 0; i < n; i++) diff = fmax(diff, fabs(xm[i] - xt[i]));
        /* I - gamma J with |gamma J| up to 30 n: the error bound grows with the condition */
        double size = max_abs(xt, n), cond = 1 + 3 * gammas[g] * (double)n;
        worst_diff = fmax(worst_diff, diff / (size * cond));
        worst_residual = fmax(worst_residual, residual(a, xm, bd, n));
        worst_sundials_residual = fmax(worst_sundials_residual, residual(a, xt, bd, n));
        systems++;
      }
      SUNLinSolFree(ls_mine);
      SUNLinSolFree(ls_theirs);
      SUNMatDestroy(mine);
      SUNMatDestroy(theirs);
      SUNMatDestroy(original);
      N_VDestroy(b);
      N_VDestroy(x_mine);
      N_VDestroy(x_theirs);
    }

  /* singular matrices: a zero column, then a zero row (exactly singular whatever the order
   * of the elimination's sums, as two equal rows need not be under a blocked BLAS) */
  int singular_flags[2] = {0, 0}, theirs_flags[2] = {0, 0};
  for (int c = 0; c < 2; c++) {
    long n = 4;
    SUNMatrix mine = SUNDenseMatrix(n, n, ctx), theirs = SUNDenseMatrix(n, n, ctx);
    N_Vector b = N_VNew_Serial(n, ctx);
    SUNLinearSolver ls_mine = jy_dense_lapack_solver(mine, ctx, &plain);
    SUNLinearSolver ls_theirs = SUNLinSol_Dense(b, theirs, ctx);
    double *a = SUNDenseMatrix_Data(mine);
    for (long k = 0; k < n * n; k++) a[k] = uniform(&state);
    if (c == 0)
      for (long i = 0; i < n; i++) a[2 * n + i] = 0; /* column 2 */
    else
      for (long j = 0; j < n; j++) a[j * n + 3] = 0; /* row 3 */
    SUNMatCopy(mine, theirs);
    singular_flags[c] = SUNLinSolSetup(ls_mine, mine);
    theirs_flags[c] = SUNLinSolSetup(ls_theirs, theirs);
    SUNLinSolFree(ls_mine);
    SUNLinSolFree(ls_theirs);
    SUNMatDestroy(mine);
    SUNMatDestroy(theirs);
    N_VDestroy(b);
  }

  /* a solver made for 3 x 3 given a 4 x 4 matrix */
  SUNMatrix three = SUNDenseMatrix(3, 3, ctx), four = SUNDenseMatrix(4, 4, ctx);
  SUNLinearSolver ls3 = jy_dense_lapack_solver(three, ctx, &plain);
  int wrong_size = ls3 ? SUNLinSolSetup(ls3, four) : 0;
  SUNMatrix three_by_two = SUNDenseMatrix(3, 2, ctx);
  SUNLinearSolver not_square = jy_dense_lapack_solver(three_by_two, ctx, &plain);

  /* allocation failures: the k-th allocation fails, for every k the solver makes */
  int failures_refused = 1, made_at_last = 0;
  for (long k = 1; k <= 4; k++) {
    counting c = {0, k};
    jyAllocator failing = {.alloc = counting_alloc, .free = counting_free, .ud = &c};
    SUNLinearSolver ls = jy_dense_lapack_solver(three, ctx, &failing);
    if (ls && k <= 2) failures_refused = 0;
    if (ls && k > 2) made_at_last = 1;
    if (ls) SUNLinSolFree(ls);
  }

  plan(8);
  ok(made, "every solver and matrix was made and every setup succeeded");
  ok(systems == 72 && kept_factor_ok, "%ld systems solved, three right-hand sides per factor",
     systems);
  ok(worst_diff < 1e-12,
     "LAPACK's solutions agree with SUNDIALS' dense LU: %.2g of the solution times the "
     "condition bound (at most 1e-12)",
     worst_diff);
  ok(worst_residual < 1e-13 && worst_residual < 10 * worst_sundials_residual + 1e-15,
     "relative residuals |Ax - b| / (|A||x| + |b|): %.2g, SUNDIALS' %.2g (at most 1e-13)",
     worst_residual, worst_sundials_residual);
  ok(singular_flags[0] == SUNLS_LUFACT_FAIL && singular_flags[1] == SUNLS_LUFACT_FAIL &&
       theirs_flags[0] == SUNLS_LUFACT_FAIL && theirs_flags[1] == SUNLS_LUFACT_FAIL,
     "a singular matrix is the recoverable SUNLS_LUFACT_FAIL (%d, %d), as SUNDIALS' (%d, %d)",
     singular_flags[0], singular_flags[1], theirs_flags[0], theirs_flags[1]);
  ok(ls3 && wrong_size == SUNLS_ILL_INPUT, "a matrix of another size is refused: %d", wrong_size);
  ok(!not_square, "a non-square matrix makes no solver");
  ok(failures_refused && made_at_last,
     "a failed allocation gives no solver (and frees what was made); enough memory, a solver");
  if (ls3) SUNLinSolFree(ls3);
  SUNMatDestroy(three);
  SUNMatDestroy(four);
  SUNMatDestroy(three_by_two);
  if (not_square) SUNLinSolFree(not_square);
  SUNContext_Free(&ctx);
  return done();
}

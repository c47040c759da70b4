/* tests/engine/t_dyn_sparse.c — the sparse acceleration solve alone (engine/src/dyn_sparse.c)
 * against the dense one (dyn_uk.c) on the same M, A, Q, C, b:
 *   - seeded random problems shaped like mechanisms (n = 60 coordinates, diagonal positive M
 *     over four decades, 40 rows each touching 2 to 4 neighbouring coordinates, rows scaled
 *     over four decades, pattern entries that happen to be zero): the accelerations agree,
 *     with and without a non-ideal force C, and with dependent rows left out (dropped);
 *   - q'' satisfies A q'' = b on its own;
 *   - what the sparse path must hand back to the dense one (JY_UK_NOT_UNIQUE): redundant rows
 *     it was not told to drop, a zero row (the dense path finds b != 0 there inconsistent);
 *     a dropped row contradicting its twin is JY_UK_INCONSISTENT from both paths;
 *   - jy_sparse_applies only for a diagonal positive M; jy_sparse_create refuses empty
 *     sizes; after the first, a solve allocates nothing.
 * Tolerance: both paths solve the same problem exactly up to rounding; the condition of the
 * row-scaled A M^-1/2 is printed per family (at most ~110 measured), so each answer is within
 * ~1e2 * 1e-16 relative of the truth (measured: 2e-14 apart), and the sparse path's shift
 * (1e-12 of the largest pivot) is removed by its refinement to the same level. 1e-10
 * relative to the largest acceleration leaves a margin of ~1e3 over that, for any BLAS
 * kernel, and is far below the O(1) error of a wrong term.
 */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "count_malloc.h"
#include "dyn_sparse.h"
#include "dyn_uk.h"
#include "tap.h"

#define N 60
#define M 40
#define AGREE_TOL 1e-10 /* relative: see the head comment */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static double uniform(void) { /* xorshift64*, in [0, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

typedef struct problem {
  double mass[N * N], force[N], nonideal[N], jac[M * N], rhs[M];
  unsigned char pattern[M * N], dropped[M];
} problem;

/* Row i touches coordinates start .. start + width - 1, start near 1.5 i (a chain). Every
 * pattern entry but one in five gets a value; b = A x for a random x, so b is in range(A). */
static void fill(problem *p) {
  memset(p, 0, sizeof *p);
  for (int j = 0; j < N; j++) {
    p->mass[j + j * N] = pow(10, 4 * uniform() - 2); /* 0.01 .. 100 kg */
    p->force[j] = 2 * uniform() - 1;
  }
  for (int i = 0; i < M; i++) {
    int width = 2 + (int)(3 * uniform()), start = (int)(1.5 * i);
    double scale = pow(10, 4 * uniform() - 2); /* rows in other units */
    for (int k = 0; k < width && start + k < N; k++) {
      int j = start + k;
      p->pattern[i + j * M] = 1;
      if (k == 0) /* one entry of size 1 .. 2 keeps the row away from zero */
        p->jac[i + j * M] = scale * (1 + uniform());
      else if (uniform() > 0.2)
        p->jac[i + j * M] = scale * (2 * uniform() - 1);
    }
  }
  double x[N];
  for (int j = 0; j < N; j++) x[j] = 2 * uniform() - 1;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) p->rhs[i] += p->jac[i + j * M] * x[j];
}

/* The condition of the row-scaled A M^-1/2 (what both paths factor), for the record. */
static double condition(const problem *p) {
  double f[M * N], sv[M], superb[M];
  for (int i = 0; i < M; i++) {
    double norm = 0;
    for (int j = 0; j < N; j++) norm += p->jac[i + j * M] * p->jac[i + j * M];
    norm = sqrt(norm);
    for (int j = 0; j < N; j++)
      f[i + j * M] = p->dropped[i] ? 0 : p->jac[i + j * M] / norm / sqrt(p->mass[j + j * N]);
  }
  if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', M, N, f, M, sv, NULL, 1, NULL, 1, superb) != 0)
    return INFINITY;
  double smallest = INFINITY;
  for (int i = 0; i < M; i++)
    if (sv[i] > 1e-12 * sv[0]) smallest = sv[i];
  return sv[0] / smallest;
}

/* Row `to` becomes `factor` times row `from` (pattern, values and b). */
static void copy_row(problem *p, int from, int to, double factor) {
  for (int j = 0; j < N; j++) {
    p->jac[to + j * M] = factor * p->jac[from + j * M];
    p->pattern[to + j * M] = p->pattern[from + j * M];
  }
  p->rhs[to] = factor * p->rhs[from];
}

static const jyUkOptions options = {1e-10, 1.0, 1e-4}; /* the solver's defaults */

/* The store the evaluator would hold: A's pattern in compressed columns. */
static jySparseWork *make_sparse(const problem *p, jyCsc *store) {
  int rows[M * N], cols[M * N], count = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++)
      if (p->pattern[i + j * M]) rows[count] = i, cols[count++] = j;
  if (jy_csc_build(NULL, M, N, (size_t)count, rows, cols, store) != 0) return NULL;
  return jy_sparse_create(NULL, store);
}

/* The sparse solve of the dense problem: M's diagonal and A's values gathered into the store. */
static jyUkOutcome solve_sparse(jySparseWork *sw, jyCsc *store, const jyUkProblem *up,
                                const jyUkOptions *opt, double *acc, jyUkResult *res) {
  double diag[N];
  for (int j = 0; j < N; j++) {
    diag[j] = up->mass[j + j * N];
    for (int k = store->p[j]; k < store->p[j + 1]; k++) store->x[k] = up->jac[store->i[k] + j * M];
  }
  return jy_sparse_solve(sw, diag, store->x, up, opt, acc, NULL, res);
}

/* Relative difference of the two paths, and |A q'' - b| relative to |b|, over `trials`
 * problems; the families: plain, with C, with every fifth row a dependent copy dropped. */
typedef enum { PLAIN, NONIDEAL, DROPPED } family;
static void compare_paths(family fam, int trials, const char *what) {
  static problem p;
  double worst = 0, worst_res = 0, worst_cond = 0;
  int outcomes_ok = 1;
  for (int trial = 0; trial < trials; trial++) {
    fill(&p);
    for (int j = 0; j < N && fam == NONIDEAL; j++) p.nonideal[j] = 2 * uniform() - 1;
    for (int i = 4; i < M && fam == DROPPED; i += 5) { /* row i = 2 row (i - 1) */
      copy_row(&p, i - 1, i, 2);
      p.dropped[i] = 1;
    }
    jyUkProblem up = {N,
                      M,
                      p.mass,
                      p.force,
                      fam == NONIDEAL ? p.nonideal : NULL,
                      p.jac,
                      p.rhs,
                      fam == DROPPED ? p.dropped : NULL};
    jyCsc store;
    jySparseWork *sw = make_sparse(&p, &store);
    jyUkWork *dw = jy_uk_create(NULL, N, M);
    double sparse[N], dense[N];
    jyUkResult rs, rd;
    jyUkOutcome os = sw ? solve_sparse(sw, &store, &up, &options, sparse, &rs) : JY_UK_NOT_UNIQUE;
    jyUkOutcome od = dw ? jy_uk_solve(dw, &up, &options, dense, &rd) : JY_UK_NOT_UNIQUE;
    outcomes_ok &= os == JY_UK_OK && od == JY_UK_OK && rs.dropped_residual <= 1e-10;
    double scale = 0, diff = 0, bscale = 0, res = 0;
    for (int j = 0; j < N; j++) {
      scale = fmax(scale, fabs(dense[j]));
      diff = fmax(diff, fabs(sparse[j] - dense[j]));
    }
    for (int i = 0; i < M; i++) {
      double ax = 0;
      for (int j = 0; j < N; j++) ax += p.jac[i + j * M] * sparse[j];
      res = fmax(res, fabs(ax - p.rhs[i]));
      bscale = fmax(bscale, fabs(p.rhs[i]));
    }
    worst = fmax(worst, diff / scale);
    worst_res = fmax(worst_res, res / bscale);
    worst_cond = fmax(worst_cond, condition(&p));
    jy_sparse_destroy(sw);
    jy_csc_free(NULL, &store);
    jy_uk_destroy(dw);
  }
  diag("%s: condition of the row-scaled A M^-1/2 up to %.3g", what, worst_cond);
  ok(outcomes_ok, "%s: both paths solve every problem (JY_UK_OK)", what);
  is_near(worst, 0, AGREE_TOL, what);
  is_near(worst_res, 0, AGREE_TOL, "... and A q'' = b holds for the sparse answer");
}

/* What the sparse path must leave to the dense one, or report. */
static void check_refusals(void) {
  static problem p;
  fill(&p);
  jyCsc store;
  jySparseWork *sw = make_sparse(&p, &store);
  jyUkWork *dw = jy_uk_create(NULL, N, M);
  jyUkProblem up = {N, M, p.mass, p.force, NULL, p.jac, p.rhs, NULL};
  double acc[N];
  jyUkResult res;
  /* The first factorization takes CHOLMOD's workspace (7 allocations measured); the
   * simulation's warm-up evaluation does that before stepping. */
  jyUkOutcome out = sw ? solve_sparse(sw, &store, &up, &options, acc, &res) : JY_UK_NOT_UNIQUE;
  long before = process_allocations;
  for (int k = 0; k < 10 && out == JY_UK_OK; k++) {
    p.force[k] += 0.1;
    out = solve_sparse(sw, &store, &up, &options, acc, &res);
  }
  ok(out == JY_UK_OK && (!WRAP_MALLOC || process_allocations == before),
     "after the first, 10 solves allocate nothing (%ld calls%s)", process_allocations - before,
     WRAP_MALLOC ? "" : "; not counted under ASan");
  jy_sparse_destroy(sw);
  jy_csc_free(NULL, &store);
  copy_row(&p, M - 2, M - 1, 1); /* the last row repeats the one before, not dropped */
  sw = make_sparse(&p, &store);
  ok(sw && solve_sparse(sw, &store, &up, &options, acc, &res) == JY_UK_NOT_UNIQUE,
     "a repeated row not dropped: JY_UK_NOT_UNIQUE, so the dense path takes over");
  for (int j = 0; j < N; j++) p.jac[M - 1 + j * M] = 0;
  ok(sw && solve_sparse(sw, &store, &up, &options, acc, &res) == JY_UK_NOT_UNIQUE &&
       jy_uk_solve(dw, &up, &options, acc, &res) == JY_UK_INCONSISTENT,
     "a zero row with b != 0: left to the dense path, which finds it inconsistent");
  copy_row(&p, M - 2, M - 1, 2);
  p.rhs[M - 1] += 1; /* dropped, but contradicting the row it copies */
  p.dropped[M - 1] = 1;
  up.dropped = p.dropped;
  jyUkResult rd;
  jyUkOutcome os = sw ? solve_sparse(sw, &store, &up, &options, acc, &res) : JY_UK_OK;
  jyUkOutcome od = jy_uk_solve(dw, &up, &options, acc, &rd);
  ok(os == JY_UK_INCONSISTENT && od == JY_UK_INCONSISTENT && res.dropped_residual > 1e-4 &&
       rd.dropped_residual > 1e-4,
     "a dropped row that contradicts its twin: both paths say JY_UK_INCONSISTENT "
     "(dropped residual %.3g sparse, %.3g dense)",
     res.dropped_residual, rd.dropped_residual);
  jy_sparse_destroy(sw);
  jy_csc_free(NULL, &store);
  jy_uk_destroy(dw);
}

static void check_applies_and_create(void) {
  double diag[N];
  for (int j = 0; j < N; j++) diag[j] = 1 + j;
  ok(jy_sparse_applies(diag, N), "applies to a diagonal positive M");
  diag[5] = 0;
  ok(!jy_sparse_applies(diag, N), "not to an M with a massless coordinate");
  jyCsc empty = {0, N, NULL, NULL, NULL};
  ok(!jy_sparse_create(NULL, &empty) && !jy_sparse_create(NULL, NULL),
     "create refuses no rows or no pattern");
}

int main(void) {
  plan(16);
  compare_paths(PLAIN, 20, "sparse and dense q'' agree (20 problems)");
  compare_paths(NONIDEAL, 10, "sparse and dense q'' agree with a non-ideal C (10 problems)");
  compare_paths(DROPPED, 10, "sparse and dense q'' agree with dependent rows dropped (10)");
  check_refusals();
  check_applies_and_create();
  return done();
}

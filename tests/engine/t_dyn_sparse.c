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
 *     sizes; after the first, a solve allocates nothing, also after a factorization CHOLMOD
 *     refused (the repeated row: not positive definite, as the matrix is not shifted);
 *   - the KKT path (dyn_kkt.c) on the same shapes with M block diagonal (1x1 and 2x2 blocks)
 *     and singular (massless coordinates, each the leading entry of a row), with independent
 *     rows and with dependent rows dropped (answered unshifted, in one solve) or not dropped
 *     (copies: answered by the shifted factorization, refined; a row combining two others:
 *     by either, its unshifted pivot being rounding): q'' and the constraint force A^T mu
 *     agree with the dense path; no rows at all (q'' = M^-1 Q); a massless coordinate no row touches is
 *     JY_UK_NOT_UNIQUE; after the first, a solve allocates nothing; the factorization kept
 *     between solves of the same M and A gives, bit for bit, what a fresh one gives;
 *   - the KKT path on spatial bodies (M's 7 x 7 blocks singular along q, norm rows, rows
 *     joining bodies): the auxiliary mass over the norm rows alone answers, as the dense
 *     path does; a body with a zero moment of inertia or no mass sends the solve back to
 *     all rows, with the same answer;
 *   - the KKT ordering by row pivots (a glue's rows after their block coordinates): random
 *     chains whose rows each reach the next rows' pivots, all placed by them and answered
 *     unshifted (in at most KKT_SOLVES_MAX solves) as the dense path answers; and case by
 *     case, which pivots the ordering keeps (a chain; a group of rows vouching for the
 *     zeros between them) and drops (a cycle; a shared pivot; an unpivoted row in a pivot
 *     column; a pivot off the row), each still answered unshifted and as the dense path
 *     does.
 * Tolerance: both paths solve the same problem exactly up to rounding; the condition of the
 * row-scaled A M^-1/2 is printed per family (at most ~110 measured), so each answer is within
 * ~1e2 * 1e-16 relative of the truth (measured: 2e-14 apart); the sparse path factors
 * A M^-1 A^T unshifted and checks its answer's backward error is rounding. 1e-10
 * relative to the largest acceleration leaves a margin of ~1e3 over that, for any BLAS
 * kernel, and is far below the O(1) error of a wrong term. The KKT path's unshifted answer is kept
 * only at a rounding-level backward error, and its shifted one refined to that level
 * (measured: 4e-14 apart).
 */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "count_malloc.h"
#include "dyn_kkt.h"
#include "dyn_sparse.h"
#include "dyn_uk.h"
#include "tap.h"

#define N 60
/* The unshifted KKT answer: one solve when its backward error is at rounding, a pass or two
 * of refinement otherwise; these problems' masses span four decades (measured: 1 solve). */
#define KKT_SOLVES_MAX 3
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
  before = process_allocations; /* after factorizations CHOLMOD refused (not positive definite) */
  jyUkOutcome os = sw ? solve_sparse(sw, &store, &up, &options, acc, &res) : JY_UK_OK;
  long refused_after = process_allocations - before;
  jyUkOutcome od = jy_uk_solve(dw, &up, &options, acc, &rd);
  ok(os == JY_UK_INCONSISTENT && od == JY_UK_INCONSISTENT && res.dropped_residual > 1e-4 &&
       rd.dropped_residual > 1e-4,
     "a dropped row that contradicts its twin: both paths say JY_UK_INCONSISTENT "
     "(dropped residual %.3g sparse, %.3g dense)",
     res.dropped_residual, rd.dropped_residual);
  ok(!WRAP_MALLOC || refused_after == 0,
     "a solve after a refused factorization allocates nothing either (%ld calls%s)", refused_after,
     WRAP_MALLOC ? "" : "; not counted under ASan");
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

/* --- the KKT path (dyn_kkt.c): block-diagonal, singular M --- */

/* M of 1x1 and 2x2 positive blocks with massless coordinates: those where rows 0, 3, 6, ...
 * start (about one in seven coordinates), each then the leading entry of its own row (so [M; A] has full column rank and q''
 * is unique). */
static void fill_blocks(problem *p) {
  fill(p);
  memset(p->mass, 0, sizeof p->mass);
  unsigned char massless[N] = {0};
  for (int i = 0; i < M; i += 3) /* not rows 4, 9, ...: compare_kkt makes those copies */
    if (i % 5 != 4) massless[(int)(1.5 * i)] = 1;
  for (int j = 0; j < N; j++) {
    if (massless[j]) continue;
    double a = pow(10, 4 * uniform() - 2);
    p->mass[j + j * N] = a;
    if (j + 1 < N && !massless[j + 1] && uniform() < 0.5) { /* a 2x2 block */
      double b = pow(10, 4 * uniform() - 2), c = 0.5 * sqrt(a * b) * (2 * uniform() - 1);
      p->mass[j + 1 + (j + 1) * N] = b;
      p->mass[j + (j + 1) * N] = p->mass[j + 1 + j * N] = c;
      j++;
    }
  }
}

/* The stores the evaluator would hold for p: M's pattern (the diagonal, p's non-zeros, and
 * every entry of the first `blocks` 7 x 7 diagonal blocks, as a body3d's), A's pattern. */
static jyKktWork *make_kkt_stores(const problem *p, jyCsc *mass, jyCsc *jac, const int *pivot,
                                  const int *block, int blocks) {
  static int rows[N * N], cols[N * N];
  int count = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      if (i == j || p->mass[i + j * N] != 0 || (i < 7 * blocks && j < 7 * blocks && i / 7 == j / 7))
        rows[count] = i, cols[count++] = j;
  if (jy_csc_build(NULL, N, N, (size_t)count, rows, cols, mass) != 0) return NULL;
  count = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++)
      if (p->pattern[i + j * M]) rows[count] = i, cols[count++] = j;
  if (jy_csc_build(NULL, M, N, (size_t)count, rows, cols, jac) != 0) return NULL;
  return jy_kkt_create(NULL, mass, jac, pivot, block);
}

static jyKktWork *make_kkt_pivoted(const problem *p, jyCsc *mass, jyCsc *jac, const int *pivot,
                                   const int *block) {
  return make_kkt_stores(p, mass, jac, pivot, block, 0);
}

static jyKktWork *make_kkt(const problem *p, jyCsc *mass, jyCsc *jac) {
  return make_kkt_pivoted(p, mass, jac, NULL, NULL);
}

static void gather(const problem *p, jyCsc *mass, jyCsc *jac) {
  for (int j = 0; j < N; j++) {
    for (int k = mass->p[j]; k < mass->p[j + 1]; k++) mass->x[k] = p->mass[mass->i[k] + j * N];
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) jac->x[k] = p->jac[jac->i[k] + j * M];
  }
}

/* The constraint force A^T mu (n), the same for every choice of mu among redundant rows. */
static void constraint_force(const problem *p, const double *mu, double *force) {
  for (int j = 0; j < N; j++) {
    force[j] = 0;
    for (int i = 0; i < M; i++) force[j] += p->jac[i + j * M] * mu[i];
  }
}

static double relative_diff(const double *a, const double *b, int count) {
  double scale = 0, diff = 0;
  for (int k = 0; k < count; k++) {
    scale = fmax(scale, fabs(b[k]));
    diff = fmax(diff, fabs(a[k] - b[k]));
  }
  return diff / fmax(scale, 1e-300);
}

/* Which rows repeat others (every fifth twice the one before: after scaling to unit length
 * the very same row, so its unshifted pivot is exactly zero) and whether the solve is told
 * to leave them out; or one row a combination of two others, kept (its pivot is rounding,
 * of either sign). */
enum { INDEPENDENT, COPIES_DROPPED, COPIES_KEPT, COMBINATION_KEPT, PIVOTED };

/* KKT against dense on random block-diagonal singular-M problems: q'' and the constraint
 * force A^T mu agree. Independent rows, or dependent ones dropped, are answered by the
 * unshifted factorization; dependent rows not dropped (a pivot at rounding) by the
 * shifted one, refined. */
static void compare_kkt(int redundant, int trials, const char *what) {
  static problem p;
  double worst = 0, worst_force = 0;
  int outcomes_ok = 1, unshifted = 0, most_solves = 0, all_pivoted = 1;
  for (int trial = 0; trial < trials; trial++) {
    fill_blocks(&p);
    for (int j = 0; j < N; j++) p.nonideal[j] = 2 * uniform() - 1;
    for (int i = 4; i < M && (redundant == COPIES_DROPPED || redundant == COPIES_KEPT); i += 5) {
      copy_row(&p, i - 1, i, 2);
      p.dropped[i] = 1;
    }
    if (redundant == COMBINATION_KEPT) { /* row 4 = 2 row 3 + 0.37 row 2 */
      copy_row(&p, 3, 4, 2);
      for (int j = 0; j < N; j++) {
        p.jac[4 + j * M] += 0.37 * p.jac[2 + j * M];
        p.pattern[4 + j * M] |= p.pattern[2 + j * M];
      }
      p.rhs[4] += 0.37 * p.rhs[2];
    }
    jyUkProblem up = {N,          M,     p.mass, p.force,
                      p.nonideal, p.jac, p.rhs,  redundant == COPIES_DROPPED ? p.dropped : NULL};
    /* PIVOTED: each row placed after its leading coordinate (its entry of size 1 .. 2); a
     * row reaches the leading coordinates of the next one or two, never of one before */
    int pivot[M], block[M];
    for (int i = 0; i < M; i++) pivot[i] = (int)(1.5 * i), block[i] = i;
    jyCsc mass, jac;
    jyKktWork *kw = redundant == PIVOTED ? make_kkt_pivoted(&p, &mass, &jac, pivot, block)
                                         : make_kkt(&p, &mass, &jac);
    all_pivoted &= !kw || jy_kkt_pivoted_rows(kw) == (redundant == PIVOTED ? M : 0);
    jyUkWork *dw = jy_uk_create(NULL, N, M);
    double kkt[N], dense[N], mu_k[M], mu_d[M], force_k[N], force_d[N];
    jyUkResult rk, rd;
    if (kw) gather(&p, &mass, &jac);
    jyUkOutcome ok_k =
      kw ? jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, mu_k, &rk) : JY_UK_NOT_UNIQUE;
    jyUkOutcome ok_d = dw ? jy_uk_solve(dw, &up, &options, dense, &rd) : JY_UK_NOT_UNIQUE;
    outcomes_ok &= ok_k == JY_UK_OK && ok_d == JY_UK_OK;
    if (kw) {
      double beta;
      int solves;
      jy_kkt_last_path(kw, &beta, &solves);
      unshifted += beta == 0;
      most_solves = solves > most_solves ? solves : most_solves;
    }
    if (ok_k == JY_UK_OK && ok_d == JY_UK_OK) {
      jy_uk_multipliers(dw, &up, dense, mu_d, NULL);
      constraint_force(&p, mu_k, force_k);
      constraint_force(&p, mu_d, force_d);
      worst = fmax(worst, relative_diff(kkt, dense, N));
      worst_force = fmax(worst_force, relative_diff(force_k, force_d, N));
    }
    jy_kkt_destroy(kw);
    jy_csc_free(NULL, &mass);
    jy_csc_free(NULL, &jac);
    jy_uk_destroy(dw);
  }
  ok(outcomes_ok, "%s: both paths solve every problem (JY_UK_OK)", what);
  is_near(worst, 0, AGREE_TOL, what);
  is_near(worst_force, 0, AGREE_TOL, "... and the constraint forces A^T mu agree");
  if (redundant == COPIES_KEPT)
    ok(unshifted == 0, "... each answered by the shifted factorization (%d of %d unshifted)",
       unshifted, trials);
  else if (redundant == COMBINATION_KEPT) /* either: the answers agree above */
    diag("%d of %d answered unshifted (a rounding pivot of the right sign)", unshifted, trials);
  else
    ok(unshifted == trials && most_solves <= KKT_SOLVES_MAX,
       "... each answered unshifted (%d of %d), in at most %d solves (%d)", unshifted, trials,
       KKT_SOLVES_MAX, most_solves);
  if (redundant == PIVOTED)
    ok(all_pivoted, "... with every row placed right after its pivot coordinate");
}

/* The ordering's pivot rules on 4 coordinates (M = diag(1, 2, 3, 4)) and 2 rows: how many
 * rows it places by their pivots, and that K then factors unshifted and answers as the
 * dense path does. */
static void pivot_case(const char *what, const double *rows_ab, const int *pattern,
                       const int *pivot, const int *block, int want_pivoted) {
  enum { CN = 4, CM = 2 };
  double mass_d[CN * CN] = {0}, force[CN] = {1, -2, 0.5, 3}, rhs[CM] = {0.3, -0.7}, jac_d[CM * CN];
  int rows[CN * CN], cols[CN * CN], count = 0;
  for (int j = 0; j < CN; j++) mass_d[j + j * CN] = 1 + j;
  for (int j = 0; j < CN; j++) rows[count] = cols[count] = j, count++;
  jyCsc mass, jac;
  jy_csc_build(NULL, CN, CN, (size_t)count, rows, cols, &mass);
  count = 0;
  for (int j = 0; j < CN; j++)
    for (int i = 0; i < CM; i++) {
      jac_d[i + j * CM] = rows_ab[i * CN + j];
      if (pattern[i * CN + j]) rows[count] = i, cols[count++] = j;
    }
  jy_csc_build(NULL, CM, CN, (size_t)count, rows, cols, &jac);
  for (int j = 0; j < CN; j++) {
    mass.x[mass.p[j]] = mass_d[j + j * CN];
    for (int k = jac.p[j]; k < jac.p[j + 1]; k++) jac.x[k] = jac_d[jac.i[k] + j * CM];
  }
  jyKktWork *kw = jy_kkt_create(NULL, &mass, &jac, pivot, block);
  jyUkWork *dw = jy_uk_create(NULL, CN, CM);
  jyUkProblem up = {CN, CM, mass_d, force, NULL, jac_d, rhs, NULL};
  double kkt[CN], dense[CN], beta = NAN;
  int solves = 0, pivoted = -1;
  jyUkResult rk, rd;
  int solved = kw && dw &&
    jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, NULL, &rk) == JY_UK_OK &&
    jy_uk_solve(dw, &up, &options, dense, &rd) == JY_UK_OK;
  if (kw) jy_kkt_last_path(kw, &beta, &solves), pivoted = jy_kkt_pivoted_rows(kw);
  ok(solved && pivoted == want_pivoted && beta == 0,
     "pivots, %s: %d of 2 rows placed by them (want %d), answered unshifted", what, pivoted,
     want_pivoted);
  is_near(solved ? relative_diff(kkt, dense, CN) : 1, 0, AGREE_TOL, "... and as the dense path");
  jy_kkt_destroy(kw);
  jy_uk_destroy(dw);
  jy_csc_free(NULL, &mass);
  jy_csc_free(NULL, &jac);
}

static void check_kkt_pivots(void) {
  static const int dense_pattern[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  static const int own_blocks[2] = {0, 1}, one_block[2] = {0, 0};
  /* row 0 reaches row 1's pivot, not the other way: one order, both placed */
  static const double chain[8] = {1, -1, 0, 0, 0, 1, -1, 0};
  static const int chain_pattern[8] = {1, 1, 0, 0, 0, 1, 1, 0}, chain_pivot[2] = {0, 1};
  pivot_case("a chain (no groups given)", chain, chain_pattern, chain_pivot, NULL, 2);
  /* each reaches the other's pivot: B = [1 .5; .7 1] is not triangular in any order */
  static const double cycle[8] = {1, 0.5, 0, 0, 0.7, 1, 0, -1};
  static const int cycle_pattern[8] = {1, 1, 0, 0, 1, 1, 0, 1};
  pivot_case("a cycle", cycle, cycle_pattern, chain_pivot, own_blocks, 0);
  /* a glue's two rows on the identity block (0, 1): the pattern reaches both, the group
   * vouches for the zeros; told apart (own groups) they are a cycle in the pattern */
  static const double glue[8] = {1, 0, -1, 0.5, 0, 1, 0.25, -1};
  pivot_case("a glue's rows grouped", glue, dense_pattern, chain_pivot, one_block, 2);
  pivot_case("a glue's rows not grouped", glue, dense_pattern, chain_pivot, own_blocks, 0);
  /* two rows on one pivot; a row without one in a pivot's column; a pivot off the row */
  static const int shared[2] = {0, 0}, first_only[2] = {0, -1}, off_row[2] = {2, -1};
  pivot_case("one pivot for two rows", cycle, cycle_pattern, shared, own_blocks, 0);
  pivot_case("a row without one in its column", cycle, cycle_pattern, first_only, own_blocks, 0);
  pivot_case("a pivot where the row has no entry", chain, chain_pattern, off_row, own_blocks, 0);
}

/* No rows (springs only), a free massless direction, allocation after the first solve. */
static void check_kkt_cases(void) {
  static problem p;
  fill_blocks(&p);
  for (int j = 0; j < N; j++)
    if (p.mass[j + j * N] == 0) p.mass[j + j * N] = 1; /* every coordinate with mass */
  jyCsc mass, jac, none;
  jyKktWork *kw = make_kkt(&p, &mass, &jac);
  int rows[1] = {0}, cols[1] = {0};
  jy_csc_build(NULL, 0, N, 0, rows, cols, &none);
  jyKktWork *kw0 = jy_kkt_create(NULL, &mass, &none, NULL, NULL);
  jyUkWork *dw = jy_uk_create(NULL, N, M);
  double kkt[N], dense[N];
  jyUkResult rk, rd;
  jyUkProblem up0 = {N, 0, p.mass, p.force, NULL, p.jac, p.rhs, NULL};
  gather(&p, &mass, &jac);
  jyUkOutcome o0 =
    kw0 ? jy_kkt_solve(kw0, &mass, &none, &up0, &options, kkt, NULL, &rk) : JY_UK_NOT_UNIQUE;
  jyUkOutcome d0 = jy_uk_solve(dw, &up0, &options, dense, &rd);
  is_near(o0 == JY_UK_OK && d0 == JY_UK_OK ? relative_diff(kkt, dense, N) : 1, 0, AGREE_TOL,
          "no constraint rows: q'' = M^-1 Q from the KKT path as from the dense one");
  fill_blocks(&p);
  jyUkProblem up = {N, M, p.mass, p.force, NULL, p.jac, p.rhs, NULL};
  jy_kkt_destroy(kw);
  jy_csc_free(NULL, &mass);
  jy_csc_free(NULL, &jac);
  kw = make_kkt(&p, &mass, &jac);
  gather(&p, &mass, &jac);
  jyUkOutcome out =
    kw ? jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, NULL, &rk) : JY_UK_NOT_UNIQUE;
  long before = process_allocations;
  for (int k = 0; k < 10 && out == JY_UK_OK; k++) {
    p.force[k] += 0.1;
    out = jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, NULL, &rk);
  }
  ok(out == JY_UK_OK && (!WRAP_MALLOC || process_allocations == before),
     "KKT: after the first, 10 solves allocate nothing (%ld calls%s)", process_allocations - before,
     WRAP_MALLOC ? "" : "; not counted under ASan");
  for (int k = jac.p[0]; k < jac.p[1]; k++) jac.x[k] = 0; /* coordinate 0: massless, free */
  ok(jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, NULL, &rk) == JY_UK_NOT_UNIQUE,
     "a massless coordinate no row touches: JY_UK_NOT_UNIQUE (the dense path names it)");
  jy_kkt_destroy(kw);
  jy_kkt_destroy(kw0);
  jy_csc_free(NULL, &mass);
  jy_csc_free(NULL, &jac);
  jy_csc_free(NULL, &none);
  jy_uk_destroy(dw);
}

/* Spatial bodies as body3d makes them: 8 bodies of 7 coordinates (x, y, z, q0 .. q3), M's
 * block m I and 4 G^T J G (singular along q), each with its norm row 2 q^T; 5 random rows
 * between each body and the next, 2 before the last (rows joining two blocks), and 4
 * coordinates of mass no row touches. The auxiliary mass needs only the norm rows: the
 * subset answers, as the dense path does. A body with a zero principal moment (its
 * block singular beyond q, held only by the joints' rows) sends the solve back to all
 * rows, as it answered before; so does a body without mass. */
static void fill_spatial(problem *p, int zero_moment_body, int massless_body) {
  enum { BODIES = 8 };
  memset(p, 0, sizeof *p);
  int row = 0;
  for (int b = 0; b < BODIES; b++) {
    int at = 7 * b;
    double q[4], norm = 0, mass = pow(10, 2 * uniform() - 1), moment[3];
    for (int k = 0; k < 4; k++) q[k] = 2 * uniform() - 1, norm += q[k] * q[k];
    for (int k = 0; k < 4; k++) q[k] /= sqrt(norm);
    for (int k = 0; k < 3; k++)
      moment[k] = b == zero_moment_body && k == 0 ? 0 : mass * (0.1 + uniform());
    if (b == massless_body) mass = moment[0] = moment[1] = moment[2] = 0;
    double g[3][4] = {
      {-q[1], q[0], q[3], -q[2]}, {-q[2], -q[3], q[0], q[1]}, {-q[3], q[2], -q[1], q[0]}};
    for (int k = 0; k < 3; k++) p->mass[at + k + (at + k) * N] = mass;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        double sum = 0;
        for (int k = 0; k < 3; k++) sum += 4 * g[k][i] * moment[k] * g[k][j];
        p->mass[at + 3 + i + (at + 3 + j) * N] = sum;
      }
    for (int k = 0; k < 4; k++) {
      p->jac[row + (at + 3 + k) * M] = 2 * q[k];
      p->pattern[row + (at + 3 + k) * M] = 1;
    }
    row++;
  }
  for (int b = 0; b + 1 < BODIES; b++) /* 5 rows to the next body, the last 2: 40 rows */
    for (int r = 0; r < (b + 2 < BODIES ? 5 : 2); r++, row++)
      for (int k = 0; k < 14; k++) {
        int j = k < 7 ? 7 * b + k : 7 * (b + 1) + k - 7;
        p->jac[row + j * M] = 2 * uniform() - 1;
        p->pattern[row + j * M] = 1;
      }
  for (int j = 7 * BODIES; j < N; j++) p->mass[j + j * N] = 1 + uniform();
  for (int j = 0; j < N; j++) p->force[j] = 2 * uniform() - 1;
  double x[N];
  for (int j = 0; j < N; j++) x[j] = 2 * uniform() - 1;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) p->rhs[i] += p->jac[i + j * M] * x[j];
}

/* The stores for fill_spatial's problems: M's pattern each body's whole 7 x 7 block, as the
 * evaluator stores a part's mass, whatever its zeros. */
static jyKktWork *make_kkt_spatial(const problem *p, jyCsc *mass, jyCsc *jac) {
  return make_kkt_stores(p, mass, jac, NULL, NULL, 8);
}

static void check_kkt_spatial(void) {
  static problem p;
  const char *what[3] = {"spatial bodies: the subset (the 8 norm rows) answers",
                         "... a body with a zero principal moment: all 40 rows answer",
                         "... a body without mass: all 40 rows answer"};
  for (int c = 0; c < 3; c++) {
    double worst = 0;
    int solved = 1, rows = -1, last_rows = -1;
    for (int trial = 0; trial < 10; trial++) {
      fill_spatial(&p, c == 1 ? 3 : -1, c == 2 ? 5 : -1);
      jyCsc mass, jac;
      jyKktWork *kw = make_kkt_spatial(&p, &mass, &jac);
      jyUkWork *dw = jy_uk_create(NULL, N, M);
      jyUkProblem up = {N, M, p.mass, p.force, NULL, p.jac, p.rhs, NULL};
      double kkt[N], dense[N];
      jyUkResult rk, rd;
      if (kw) gather(&p, &mass, &jac);
      int both = kw && dw &&
        jy_kkt_solve(kw, &mass, &jac, &up, &options, kkt, NULL, &rk) == JY_UK_OK &&
        jy_uk_solve(dw, &up, &options, dense, &rd) == JY_UK_OK;
      solved &= both;
      if (both) worst = fmax(worst, relative_diff(kkt, dense, N));
      last_rows = kw ? jy_kkt_last_augmented(kw) : -1;
      rows = trial == 0 || rows == last_rows ? last_rows : -1;
      jy_kkt_destroy(kw);
      jy_uk_destroy(dw);
      jy_csc_free(NULL, &mass);
      jy_csc_free(NULL, &jac);
    }
    ok(solved && rows == (c == 0 ? 8 : M), "%s (10 problems; %d rows augmented)", what[c], rows);
    is_near(worst, 0, AGREE_TOL, "... as the dense path does");
  }
}

/* One KKT solve on a work of its own (factored afresh). */
static jyUkOutcome solve_fresh(const problem *p, const jyUkProblem *up, const jyUkOptions *opt,
                               double *acc) {
  jyCsc mass, jac;
  jyKktWork *kw = make_kkt(p, &mass, &jac);
  jyUkResult r;
  jyUkOutcome out = JY_UK_NOT_UNIQUE;
  if (kw) {
    gather(p, &mass, &jac);
    out = jy_kkt_solve(kw, &mass, &jac, up, opt, acc, NULL, &r);
  }
  jy_kkt_destroy(kw);
  jy_csc_free(NULL, &mass);
  jy_csc_free(NULL, &jac);
  return out;
}

/* The factorization kept between solves: one work through a sequence (new Q and b on the
 * same M and A: the factor reused; a changed mass entry; rows left out as a projection
 * does; the values back; a failed factorization, then the same values restored) gives, bit
 * for bit, what a work of its own gives each time, and agrees with the dense path. */
static void check_kkt_reuse(void) {
  static problem p;
  static const jyUkOptions projection = {1e-10, 1.0, 1.0};
  fill_blocks(&p);
  unsigned char left_out[M] = {0};
  for (int i = 0; i < M; i++) left_out[i] = i % 3 != 0; /* keep the massless coordinates' rows */
  jyCsc mass, jac;
  jyKktWork *kw = make_kkt(&p, &mass, &jac);
  jyUkWork *dw = jy_uk_create(NULL, N, M);
  int identical = kw != NULL && dw != NULL, solved = identical;
  double worst = 0;
  for (int step = 0; step < 7 && kw && dw; step++) {
    if (step == 1 || step == 3)
      for (int j = 0; j < N; j++) p.force[j] = 2 * uniform() - 1;
    if (step == 1)
      for (int i = 0; i < M; i++) p.rhs[i] *= 1.5;
    if (step == 2) p.mass[1 + 1 * N] *= 1.001;
    if (step == 4) p.mass[1 + 1 * N] /= 1.001;
    jyUkProblem up = {N, M, p.mass, p.force, NULL, p.jac, p.rhs, step == 3 ? left_out : NULL};
    gather(&p, &mass, &jac);
    if (step == 5) /* coordinate 0, massless, no longer held by a row: singular */
      for (int k = jac.p[0]; k < jac.p[1]; k++) jac.x[k] = 0;
    double kept[N], fresh[N], dense[N];
    jyUkResult rk, rd;
    /* the left-out rows are not met: a projection's options (any b) */
    const jyUkOptions *opt = step == 3 ? &projection : &options;
    jyUkOutcome out = jy_kkt_solve(kw, &mass, &jac, &up, opt, kept, NULL, &rk);
    if (step == 5) {
      solved &= out == JY_UK_NOT_UNIQUE;
      continue;
    }
    /* the dense path as the projection calls it: the left-out rows zero */
    static problem zeroed;
    zeroed = p;
    for (int i = 0; i < M; i++) {
      if (step != 3 || !left_out[i]) continue;
      zeroed.rhs[i] = 0;
      for (int j = 0; j < N; j++) zeroed.jac[i + j * M] = 0;
    }
    jyUkProblem dense_up = {N, M, p.mass, p.force, NULL, zeroed.jac, zeroed.rhs, NULL};
    /* A projection takes any outcome but NOT_UNIQUE: the left-out rows are measured against
     * their b, which it does not meet (relative residuals above 1 happen) */
    jyUkOutcome fresh_out = solve_fresh(&p, &up, opt, fresh), want = JY_UK_OK;
    if (step == 3 && out == JY_UK_INCONSISTENT) want = JY_UK_INCONSISTENT;
    solved &=
      out == want && fresh_out == want && jy_uk_solve(dw, &dense_up, opt, dense, &rd) == JY_UK_OK;
    identical &= memcmp(kept, fresh, sizeof kept) == 0;
    worst = fmax(worst, relative_diff(kept, dense, N));
  }
  ok(solved, "KKT kept factor: every solve of the sequence OK (the singular one NOT_UNIQUE)");
  ok(identical, "... bit for bit what a work factored afresh gives");
  is_near(worst, 0, AGREE_TOL, "... and the dense path's q''");
  jy_kkt_destroy(kw);
  jy_uk_destroy(dw);
  jy_csc_free(NULL, &mass);
  jy_csc_free(NULL, &jac);
}

/* The diagonal path keeps F and its factor between solves of the same M, A and rows left
 * out: one work through a sequence (new Q and b; a changed mass; rows left out; the mass
 * back; a zero row, which fails; the values restored after it) gives, bit for bit, what a
 * work of its own gives each time, multipliers included. A reuse that kept the old Q's
 * unconstrained acceleration, or the factor of other values, would differ in every step
 * after the first. */
static void check_sparse_reuse(void) {
  static problem p;
  fill(&p);
  unsigned char left_out[M] = {0};
  for (int i = 4; i < M; i += 5) {
    copy_row(&p, i - 1, i, 2);
    left_out[i] = 1;
  }
  jyCsc store, own;
  jySparseWork *kept_work = make_sparse(&p, &store);
  int identical = kept_work != NULL, solved = identical;
  for (int step = 0; step < 7 && kept_work; step++) {
    if (step == 1)
      for (int j = 0; j < N; j++) p.force[j] = 2 * uniform() - 1;
    if (step == 1)
      for (int i = 0; i < M; i++) p.rhs[i] *= 1.5;
    if (step == 2) p.mass[1 + 1 * N] *= 1.001;
    if (step == 4) p.mass[1 + 1 * N] /= 1.001;
    double saved_row[N];
    for (int j = 0; j < N; j++) saved_row[j] = p.jac[7 + j * M];
    if (step == 5) /* row 7 zero with b != 0: no factorization */
      for (int j = 0; j < N; j++) p.jac[7 + j * M] = 0;
    /* dependent rows left out, or (step 3) kept, which the factorization refuses */
    jyUkProblem up = {N, M, p.mass, p.force, NULL, p.jac, p.rhs, step == 3 ? NULL : left_out};
    double kept[N], fresh[N], mu_kept[M], mu_fresh[M];
    jyUkResult rk, rf;
    double diag_mass[N];
    for (int j = 0; j < N; j++) {
      diag_mass[j] = p.mass[j + j * N];
      for (int k = store.p[j]; k < store.p[j + 1]; k++) store.x[k] = p.jac[store.i[k] + j * M];
    }
    jyUkOutcome out =
      jy_sparse_solve(kept_work, diag_mass, store.x, &up, &options, kept, mu_kept, &rk);
    jySparseWork *fresh_work = make_sparse(&p, &own);
    jyUkOutcome fresh_out = fresh_work
      ? jy_sparse_solve(fresh_work, diag_mass, store.x, &up, &options, fresh, mu_fresh, &rf)
      : JY_UK_OK + 100;
    jy_sparse_destroy(fresh_work);
    jy_csc_free(NULL, &own);
    for (int j = 0; j < N; j++) p.jac[7 + j * M] = saved_row[j];
    if (step == 3 || step == 5) {
      solved &= out == JY_UK_NOT_UNIQUE && fresh_out == JY_UK_NOT_UNIQUE;
      continue;
    }
    solved &= out == JY_UK_OK && fresh_out == JY_UK_OK;
    identical &=
      memcmp(kept, fresh, sizeof kept) == 0 && memcmp(mu_kept, mu_fresh, sizeof mu_kept) == 0;
  }
  ok(solved, "diagonal path kept factor: every solve of the sequence as a fresh work answers");
  ok(identical, "... bit for bit what a work factored afresh gives, multipliers included");
  jy_sparse_destroy(kept_work);
  jy_csc_free(NULL, &store);
}

int main(void) {
  plan(65);
  compare_paths(PLAIN, 20, "sparse and dense q'' agree (20 problems)");
  compare_paths(NONIDEAL, 10, "sparse and dense q'' agree with a non-ideal C (10 problems)");
  compare_paths(DROPPED, 10, "sparse and dense q'' agree with dependent rows dropped (10)");
  check_refusals();
  check_applies_and_create();
  compare_kkt(INDEPENDENT, 20, "KKT and dense q'' agree, block-diagonal singular M (20 problems)");
  compare_kkt(COPIES_DROPPED, 10, "KKT and dense q'' agree with dependent rows dropped (10)");
  compare_kkt(COPIES_KEPT, 10, "KKT and dense q'' agree with dependent rows not dropped (10)");
  compare_kkt(COMBINATION_KEPT, 40,
              "KKT and dense q'' agree with a combination row not dropped (40)");
  compare_kkt(PIVOTED, 20, "KKT ordered by row pivots and dense q'' agree (20 problems)");
  check_kkt_pivots();
  check_kkt_cases();
  check_kkt_spatial();
  check_kkt_reuse();
  check_sparse_reuse();
  return done();
}

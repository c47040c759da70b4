/* The acceleration solve (Udwadia–Kalaba with the auxiliary-mass form), on dense matrices.
 * Internal: tested alone by tests/engine/t_dyn_uk.c. */
#ifndef JY_DYN_UK_H
#define JY_DYN_UK_H

#include "joinery/joinery.h"

/* One acceleration problem: M q'' = Q + C + (ideal constraint force), A q'' = b.
 * Matrices are column-major: M is n x n (ld n), A is m x n (ld m). */
typedef struct jyUkProblem {
  int n, m;
  const double *mass;     /* M, symmetric positive semi-definite */
  const double *force;    /* Q (n) */
  const double *nonideal; /* C (n), or NULL for ideal constraints */
  const double *jac;      /* A (m x n) */
  const double *rhs;      /* b (m) */
  /* m flags, or NULL: rows left out of the solve because the others imply them (the
   * dependent rows of a redundant mechanism, decided at a consistent configuration; see
   * jy_uk_dependent_rows). Their residual is still measured: jyUkResult.dropped_residual. */
  const unsigned char *dropped;
} jyUkProblem;

typedef struct jyUkOptions {
  double rank_rcond;      /* relative cut for the rank of the (row-scaled) constraint matrix */
  double augment_scale;   /* scales alpha in M + alpha A^T A */
  double consistency_tol; /* relative residual of A q'' = b that counts as inconsistent;
                           * INFINITY: any b, not measured (a projection's step) */
} jyUkOptions;

typedef enum jyUkOutcome {
  JY_UK_OK,
  JY_UK_NOT_UNIQUE,  /* M + alpha A^T A not positive definite: see jy_uk_free_directions */
  JY_UK_INCONSISTENT /* b outside range(A): see jyUkResult.row_residual */
} jyUkOutcome;

typedef struct jyUkResult {
  jyUkOutcome outcome;
  int rank;                   /* numerical rank of A */
  double residual;            /* max_i |(A q'' - b)_i| / scale_i after the solve (relative) */
  double dropped_residual;    /* the same over the dropped rows only (0 when none) */
  const double *row_residual; /* m values (inside the work), meaningful when INCONSISTENT */
} jyUkResult;

typedef struct jyUkWork jyUkWork;

/* Workspace for problems of size up to n x m; all memory is taken here, none in solve. */
jyUkWork *jy_uk_create(const jyAllocator *alloc, int n, int m);
void jy_uk_destroy(jyUkWork *work);

/* q'' = u + L^-T (A L^-T)^+ (b - A u), u = M_a^-1 (Q + C + alpha A^T b),
 * M_a = M + alpha A^T A = L L^T. Writes acc (n). */
jyUkOutcome jy_uk_solve(jyUkWork *work, const jyUkProblem *p, const jyUkOptions *opt, double *acc,
                        jyUkResult *result);

/* Decides which rows depend on the others at this A: QR with column pivoting of the
 * row-scaled A^T; the columns chosen last whose pivot |R_kk| is at most rcond |R_00| are the
 * dependent rows (flagged in `dependent`, m flags). With max_count >= 0 (a re-decision at a
 * state that may be off the manifold) at most max_count rows are flagged, and a pivot up to
 * loose_rcond |R_00| still counts as dependent: a dependent row looks independent by about
 * the distance from the manifold, which loose_rcond must exceed. p->dropped is ignored.
 * Returns how many rows were flagged. */
int jy_uk_dependent_rows(jyUkWork *work, const jyUkProblem *p, double rcond, double loose_rcond,
                         int max_count, unsigned char *dependent);

/* Multipliers mu (m) with A^T mu = M acc - Q - C (the ideal constraint force), and the norm
 * of what that equation leaves unexplained (0 for an exact acceleration). With redundant
 * rows mu is not unique: this one makes the row forces |A_i| mu_i (the size of the force
 * each row applies) minimum-norm, a choice that does not depend on the units of the rows. */
int jy_uk_multipliers(jyUkWork *work, const jyUkProblem *p, const double *acc, double *mu,
                      double *unexplained);

/* alpha of the auxiliary mass M + alpha As^T As (As: A with unit rows): augment_scale (1
 * when not positive) times the mean diagonal of M (1 when that is not positive), so that
 * alpha As^T As is on M's scale. The one factor the dense, N–P and diagnostic paths use. */
double jy_uk_augmentation(const double *mass, int n, double augment_scale);

/* The Euclidean norms of the rows of A (m x n, column-major, ld m) into norm (m): sums of
 * squares walked column by column, hypot along the row only where a sum over- or
 * underflowed (entries beyond 1e+-150). */
void jy_uk_row_norms(const double *jac, int m, int n, double *norm);

/* The same when norm already holds each row's sum of squares (a caller that knows which
 * entries can be non-zero sums only those): square roots, with the same fallback. */
void jy_uk_finish_row_norms(const double *jac, int m, int n, double *norm);

/* After JY_UK_NOT_UNIQUE: marks in `free_dir` (n flags) the coordinates that take part in a
 * direction that is both massless and unconstrained ([M; A] x = 0). Returns how many. */
int jy_uk_free_directions(jyUkWork *work, const jyUkProblem *p, double rcond, int *free_dir);

#endif

/* Compressed-column matrices with a fixed pattern, and the sparse acceleration solve for any
 * symmetric positive semi-definite sparse M (blocks of any size, massless coordinates) through
 * the quasi-definite KKT matrix (ordered by CHOLMOD, factored by SuiteSparse's LDL). Internal. */
#ifndef JY_DYN_KKT_H
#define JY_DYN_KKT_H

#include "dyn_uk.h"

/* A compressed-column matrix whose pattern is fixed when it is built: column j's entries are
 * p[j] .. p[j + 1] - 1, rows i[] sorted, values x[]. */
typedef struct jyCsc {
  int nrow, ncol;
  int *p, *i;
  double *x;
} jyCsc;

/* The pattern of `count` (row, col) pairs (duplicates merged), values zero. 0, or -1 (no
 * memory). */
int jy_csc_build(const jyAllocator *alloc, int nrow, int ncol, size_t count, const int *rows,
                 const int *cols, jyCsc *out);
void jy_csc_free(const jyAllocator *alloc, jyCsc *c);

/* Position of (row, col) in c's pattern, or -1 (binary search in the column). */
static inline int jy_csc_find(const jyCsc *c, int row, int col) {
  int lo = c->p[col], hi = c->p[col + 1] - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, r = c->i[mid];
    if (r == row) return mid;
    if (r < row)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

typedef struct jyKktWork jyKktWork;

/* For M (n x n, both triangles stored) and A (m x n, m may be 0) of these patterns: the
 * ordering and symbolic factorization, done once. NULL when out of memory.
 * row_pivot (m, or NULL) may name for row r a coordinate where its coefficient is non-zero
 * at every state (-1: none), and pivot_block (m, or NULL: each row alone) groups rows:
 * within a group each row's coefficient at the others' pivots is zero at every state (a
 * glue's rows on a block of coordinates that is the identity there). The ordering then
 * places each row right after its pivot instead of after its last coordinate, where that
 * keeps every leading block of K nonsingular (dyn_kkt.c, usable_pivots); other pivots are
 * ignored. */
jyKktWork *jy_kkt_create(const jyAllocator *alloc, const jyCsc *mass, const jyCsc *jac,
                         const int *row_pivot, const int *pivot_block);
void jy_kkt_destroy(jyKktWork *work);

/* q'' (acc) and the multipliers mu (m, A^T mu = M q'' - Q - C; NULL: not wanted) from the
 * values in mass and jac, Q, C, b and the dropped rows of p (p->mass and p->jac are not
 * read). Solves [M + alpha As^T As, As^T; As, -beta I] [q''; z] = [Q + C + alpha As^T bs; bs]
 * (As, bs: rows scaled to unit length; the auxiliary mass first over the subset of rows the
 * patterns allow, dyn_kkt.c) at beta = 0; where that does not factor or its
 * answer does not reach rounding, at beta > 0 refined against beta = 0. JY_UK_NOT_UNIQUE when
 * the pivots show a free massless direction or rows that depend on the others (the caller
 * decides: the dense rank-revealing path, or an error). No allocation. */
jyUkOutcome jy_kkt_solve(jyKktWork *work, const jyCsc *mass, const jyCsc *jac, const jyUkProblem *p,
                         const jyUkOptions *opt, double *acc, double *mu, jyUkResult *result);

/* How the last solve was answered: the shift its factorization was made at (0: unshifted;
 * NaN: none succeeded) and the triangular solves it took. For tests and measurements. */
void jy_kkt_last_path(const jyKktWork *work, double *beta, int *solves);

/* The numeric factorizations of K so far (a solve whose M, A and scales are those of the
 * factor in hand reuses it). */
long jy_kkt_factorizations(const jyKktWork *work);

/* How many rows the ordering placed by the pivots jy_kkt_create was given. For tests. */
int jy_kkt_pivoted_rows(const jyKktWork *work);

/* How many rows the auxiliary mass of the last answer held: m, or fewer when K augmented
 * by the subset the patterns allow answered (dyn_kkt.c, augmented_rows). For tests. */
int jy_kkt_last_augmented(const jyKktWork *work);

#endif

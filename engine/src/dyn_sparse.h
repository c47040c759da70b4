/* The sparse acceleration solve for a diagonal positive mass matrix (CHOLMOD). Internal. */
#ifndef JY_DYN_SPARSE_H
#define JY_DYN_SPARSE_H

#include "dyn_kkt.h"

typedef struct jySparseWork jySparseWork;

/* For A of this pattern (m x n, m > 0); the values of every solve come in this pattern. */
jySparseWork *jy_sparse_create(const jyAllocator *alloc, const jyCsc *jac);
void jy_sparse_destroy(jySparseWork *work);

/* Whether M's diagonal (n values; the caller knows M has nothing off it) is positive: the
 * only case this path solves. */
int jy_sparse_applies(const double *mass_diag, int n);

/* q'' as jy_uk_solve computes it (rank is not revealed: result->rank = -1) from M's
 * diagonal (n) and A's values in its pattern (p->mass and p->jac are not read), and the
 * multipliers mu (A^T mu = M q'' - Q - C, dropped rows 0; NULL: not wanted). Returns
 * JY_UK_NOT_UNIQUE when the factorization fails; the caller then uses the dense path. */
jyUkOutcome jy_sparse_solve(jySparseWork *work, const double *mass_diag, const double *jac_values,
                            const jyUkProblem *p, const jyUkOptions *opt, double *acc, double *mu,
                            jyUkResult *result);

#endif

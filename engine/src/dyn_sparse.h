/* The sparse acceleration solve for a diagonal positive mass matrix (CHOLMOD). Internal. */
#ifndef JY_DYN_SPARSE_H
#define JY_DYN_SPARSE_H

#include "dyn_uk.h"

typedef struct jySparseWork jySparseWork;

/* pattern: m x n (column-major) flags of the entries of A that can be non-zero. */
jySparseWork *jy_sparse_create(const jyAllocator *alloc, int n, int m,
                               const unsigned char *pattern);
void jy_sparse_destroy(jySparseWork *work);

/* Whether M is diagonal with positive entries (the only case this path solves); diagonal
 * != 0 says the assembly already knows it has no off-diagonal entries. */
int jy_sparse_applies(const jyUkProblem *p, int diagonal);

/* q'' as jy_uk_solve computes it (rank is not revealed: result->rank = -1). Returns
 * JY_UK_NOT_UNIQUE when the factorization fails; the caller then uses the dense path. */
jyUkOutcome jy_sparse_solve(jySparseWork *work, const jyUkProblem *p, const jyUkOptions *opt,
                            double *acc, jyUkResult *result);

#endif

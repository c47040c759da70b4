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

/* The least kinetic-energy corrections for two targets at once: dx_k = W A^T y_k with
 * (A W A^T) y_k = target_k (rows dropped: left free), through the factor the last solve
 * made of this M's diagonal, A and rows left out, when that solve's answer passed its
 * backward-error test (Cholesky is backward stable whatever the right-hand side). 0, or -1
 * when the last solve was not such a one (nothing is written). */
int jy_sparse_correction_pair(jySparseWork *work, const double *mass_diag, const double *jac_values,
                              const unsigned char *dropped, const double *target_a,
                              const double *target_b, double *dx_a, double *dx_b);

#endif

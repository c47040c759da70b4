/* BDF's dense Newton solver through LAPACK. Internal. */
#ifndef JY_INT_DENSE_H
#define JY_INT_DENSE_H

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "joinery/joinery.h"

/* A direct SUNLinearSolver for a square SUNDenseMatrix, factored in place by LAPACK's
 * dgetrf and solved by dgetrs: the contract of SUNDIALS' SUNLinSol_Dense (a singular
 * matrix is the recoverable SUNLS_LUFACT_FAIL), with the system's LAPACK instead of the
 * unoptimized build of SUNDIALS' own LU (int_dense.c says why). NULL when memory ran out;
 * its memory comes from alloc, which must outlive it. */
SUNLinearSolver jy_dense_lapack_solver(SUNMatrix a, SUNContext ctx, const jyAllocator *alloc);

#endif

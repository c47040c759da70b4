/* The stages of compiling a system into a model (model_compile.c runs them in order):
 * layout (compile_layout.c: numbering and names), glue elimination (compile_glue.c), the
 * consistent initial state and the dependent rows there (compile_initial.c). Internal. */
#ifndef JY_COMPILE_H
#define JY_COMPILE_H

#include "internal.h"

/* Copies the parts and glues the model keeps, chooses the glues to eliminate, numbers
 * coordinates, rows and channels and names them. */
jyStatus jy_compile_layout(jyModel *md, const jySystem *sys);

/* Chooses the glues to eliminate and fills md->links sorted by part; md->parts and
 * md->glues are copied already. */
jyStatus jy_compile_glue_links(jyModel *md, const jySystem *sys);

/* Once the coordinates are numbered: the columns of each part with links, where its links'
 * sources sit among them, and the links each part leads. */
jyStatus jy_compile_chain_columns(jyModel *md);

/* Makes (md->q0, md->v0) consistent with the constraints, reporting what moved. */
jyStatus jy_compile_initial_state(jyModel *md, jySystem *sys, jyEval *e);

/* Decides the rows that depend on the others at the consistent initial state and keeps
 * them in the model, so that every evaluator leaves them out of its solves. */
jyStatus jy_compile_dependent_rows(jyModel *md, jyEval *e);

/* The sparse side of the initial-state stage (compile_sparse.c), for models with at least
 * the solver's sparse_min_coords coordinates. */
typedef struct jyCompileSparse jyCompileSparse;
jyCompileSparse *jy_compile_sparse_create(const jyAllocator *a);
void jy_compile_sparse_destroy(jyCompileSparse *s);

/* The minimum-norm dx (ncols) with J dx = res, J = A[rows, cols] as assembled in e:
 * 0 solved; 1 when J J^T's Cholesky factor shows a rank loss, or a near one, that the
 * dense rank-revealing step must decide; JY_ERR_NOMEM. */
int jy_compile_sparse_step(jyCompileSparse *s, jyEval *e, const int *rows, int nrows,
                           const int *cols, int ncols, const double *res, double *dx);

/* 1 when the assembled A (unit rows) has full row rank by a wide margin, so that no row
 * depends on the others; 0 when the dense rank-revealing decision is needed; JY_ERR_NOMEM.
 * rows (m) and cols (n) are scratch. */
int jy_compile_sparse_no_dependent_rows(jyCompileSparse *s, jyEval *e, int *rows, int *cols);

/* Grows the model's report by one formatted line (compile_report.c, below every stage;
 * bounded; allocation is fine here).
 * JY_ERR_NOMEM when the line could not be kept: a report must not lose lines silently. */
jyStatus jy_compile_report(jyModel *md, const char *fmt, ...)
  __attribute__((format(printf, 2, 3), warn_unused_result));

#endif

/* The evaluator's functions, on the structs of internal.h (which includes this header at its
 * end): the tree recursion (dyn_tree.c), assembly and the views of linked parts
 * (dyn_assemble.c), the evaluator and its store (eval.c), the acceleration solve
 * (eval_solve.c), the parts' modes (eval_modes.c) and the projection (int_project.c).
 * Internal. */
#ifndef JY_EVAL_H
#define JY_EVAL_H

#include "internal.h"

/* The tree recursion's buffers for e's model (a tree model): NULL when out of memory. */
jyTreeWork *jy_tree_create(const jyEval *e);
void jy_tree_destroy(const jyAllocator *a, jyTreeWork *w);

/* The acceleration of a tree model at (q, v, t) by the articulated recursion; with
 * glue_forces the eliminated glues' forces into tree->link_force too. Never allocates. */
jyStatus jy_tree_acceleration(jyEval *e, const double *q, const double *v, double t, double *acc,
                              int glue_forces);

/* A pivot block of an articulated mass (nk x nk, column-major, leading dimension nk)
 * factored in place by lower Cholesky (a 1 x 1 block is its own factor): 0, or -1 when it is
 * not positive definite against scale, its part's largest diagonal entry (a pivot squared
 * under 1e-12 of it is a direction without mass). And rhs := block^-1 rhs for ncols columns.
 * Shared by the tree recursions (dyn_tree.c, dyn_spatial.c). */
int jy_tree_factor_block(double *block, int nk, double scale);
void jy_tree_solve_block(const double *factor, int nk, double *rhs, int ncols);

/* The spatial recursion for e's model (dyn_spatial.c): *out NULL when the model is not a
 * spatial tree (JY_OK), JY_ERR_NOMEM when out of memory. */
jyStatus jy_spatial_create(jyEval *e, jySpatialWork **out);
void jy_spatial_destroy(const jyAllocator *a, jySpatialWork *w);
/* Right-hand sides solved so far (0 for NULL). */
long jy_spatial_solves(const jySpatialWork *w);
/* A parameter changed: the joints' geometry and the bodies' inertia are read again. */
void jy_spatial_params_changed(jySpatialWork *w);
/* Whether the last acceleration found the model's rows far from a rank loss: a pure tree
 * (its rows keep full rank at every configuration), or rows beside it well conditioned
 * through it. Then no branch is near, and the branch guard need not estimate. */
int jy_spatial_rows_clear(jySpatialWork *w);
/* The rows beside the tree left out as dependent go back to the first state's choice (the
 * evaluator went back to an earlier state: jy_eval_restore_dependent). */
void jy_spatial_forget_rows(jySpatialWork *w);
/* The acceleration of a spatial tree at (q, v, t) (assembling Q and C, and the rows beside
 * the tree when it has any). JY_OK, a part's failure, or JY_ERR_NOT_UNIQUE when a body's
 * articulated inertia is not positive definite along its joint's freedoms or the rows beside
 * the tree are not independent through it: the row path then solves, or says why it cannot.
 * Never allocates. */
jyStatus jy_spatial_acceleration(jyEval *e, const double *q, const double *v, double t,
                                 double *acc);

/* A tree model's part at (q, v, t) within the current view epoch: its mass matrix added into
 * mass (nc x nc), its force and non-ideal force into force; *power += C . (v_loc - the
 * velocity bias of its view). Checks the part's outputs unless e->trust_parts. */
jyStatus jy_tree_load_part(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                           double t, double *mass, double *force, double *power);

/* Whether every one of count values is finite. */
int jy_all_finite(const double *x, size_t count);

/* The instance a part's functions see through this evaluator (its parameter overrides). */
static inline const jyPartInstance *jy_eval_inst(const jyEval *e, const jyModelPart *p) {
  return e->insts ? &e->insts[p - e->model->parts] : &p->inst;
}

/* Puts the parts in `modes` (nparts, NULL: all 0; every part without modes at 0): the inactive rows and
 * the rows left out of the solves follow. JY_OK, or JY_ERR_NOMEM. */
jyStatus jy_eval_set_modes(jyEval *e, const int *modes);

/* Whether some part of the model has modes. */
int jy_model_has_modes(const jyModel *m);

/* The modes each part with modes starts in at (q, v, t) (its initial_mode, else 0), set as
 * by jy_eval_set_modes; nothing for a model without such parts. JY_OK or an error. */
jyStatus jy_eval_initial_modes(jyEval *e, const double *q, const double *v, double t);

/* Frees what jy_eval_set_modes and jy_eval_set_param made (jy_eval_destroy calls it). */
void jy_eval_modes_free(jyEval *e);

/* The impulsive Udwadia-Kalaba solve at (q, v, t) in the current modes: the velocity change
 * dv (n) with the least kinetic energy such that each row with a restitution e
 * (restitution[i] not NaN, m entries; the row need not be active) ends with rate -e times
 * its rate now, and every other active row's rate is unchanged. impulse (m; NULL: not
 * wanted): the row impulses, N s (A^T impulse = M dv). JY_OK or an error in e->error. */
jyStatus jy_eval_impulse(jyEval *e, const double *q, const double *v, double t,
                         const double *restitution, double *dv, double *impulse);

/* An evaluator that never solves sparse and keeps every dense array (the
 * Natsiavas–Paraskevopoulos formulation reads the dense M and A). */
jyEval *jy_eval_create_dense(const jyModel *model);

/* Fills the global arrays of `what` at (q, v, t). On a part failure returns JY_ERR_PART
 * with the message (part, function, time) in e->error. Never allocates. */
jyStatus jy_assemble(jyEval *e, const double *q, const double *v, double t, unsigned what);

/* One part's whole non-ideal force (static C plus its law at row forces mu and global
 * acceleration acc), local, into e->local_vec; *v_loc receives its local velocities. At the
 * state of the current view epoch (jy_localize_same_state). */
jyStatus jy_part_nonideal(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                          double t, const double *mu, const double *acc, const double **v_loc);

/* Adds the parts' non-ideal laws C(q, v, t, row forces mu, acc) into e->nonideal. */
jyStatus jy_assemble_laws(jyEval *e, const double *q, const double *v, double t, const double *mu,
                          const double *acc);

/* Makes the evaluator report angle outputs continuous from here on, the next report
 * starting afresh in the parts' own range (a simulation's, at its start or a new state). */
void jy_eval_continue_angles(jyEval *e);

/* The dependent rows back to the compile's (and the rows inactive in the present modes):
 * for a run that goes back to an earlier state, where the rows decided since may not hold. */
void jy_eval_restore_dependent(jyEval *e);

/* Decides the dependent rows at the assembled A (strictly, as at a consistent state) into
 * e->dependent; returns how many, or -1. */
int jy_eval_decide_dependent(jyEval *e);

/* Acceleration from already assembled M, Q, C, A, b; names rows/coordinates on failure. */
jyStatus jy_eval_assembled_acceleration(jyEval *e, double t, double *acc);

/* The same with the multipliers into e->multipliers (through the laws' fixed point when
 * there are laws): for the output rows. */
jyStatus jy_eval_acceleration_and_multipliers(jyEval *e, const double *q, const double *v, double t,
                                              double *acc);

/* The same, resolving the parts' non-ideal laws by fixed-point iteration on the row forces
 * (e->nonideal holds the static C on entry, the total on return; e->multipliers the row
 * forces). Without laws it is jy_eval_assembled_acceleration. */
jyStatus jy_eval_acceleration_with_laws(jyEval *e, const double *q, const double *v, double t,
                                        double *acc);

/* Writes the constant G of every part whose view gathers (jyModelPart.gather): once, when
 * the evaluator is made. */
void jy_views_init(jyEval *e);

/* A part's local state. With no eliminated coordinates: pointers into q and v, and
 * *mapped = 0. Otherwise pointers into the part's view (its sources' terminals evaluated,
 * valid until the part is localized at another state) and *mapped = 1. Starts a view epoch:
 * the state may differ from the last call's. */
jyStatus jy_localize(jyEval *e, const jyModelPart *p, const double *q, const double *v, double t,
                     const double **q_loc, const double **v_loc, int *mapped);

/* The same without starting an epoch: for a caller that has assembled, solved or localized
 * at this very (q, v, t) and not since at another state, so the views computed then stand
 * (a part at depth d costs O(1), not O(d): the output row of a 10,000-pendulum chain). */
jyStatus jy_localize_same_state(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                                double t, const double **q_loc, const double **v_loc, int *mapped);

/* Projects (q, v) at t onto the constraint manifold in place: Gauss–Newton on the position
 * rows with the least kinetic-energy correction until its weighted RMS norm is below eps,
 * then the velocities in one linear step. how: JY_PROJ_ASSEMBLED, the last jy_assemble was
 * JY_ASM_PROJECTION at this (q, v, t); JY_PROJ_KEEP_CLOSE, a q whose first correction is
 * within eps in every weighted coordinate stays as it is (a step end after an explicit
 * step; not inside BDF's corrector, whose history the correction belongs to);
 * JY_PROJ_STALL_STOPS, a residual that stops halving after two corrections ends the
 * iteration unsettled (JY_ERR_INCONSISTENT), as ten passes would. */
enum { JY_PROJ_ASSEMBLED = 1u, JY_PROJ_KEEP_CLOSE = 2u, JY_PROJ_STALL_STOPS = 4u };
jyStatus jy_project_state(jyEval *e, double t, double *q, double *v, const double *weights,
                          double eps, unsigned how, int *iterations);
/* The velocity correction the projection of (q, v) would make, estimated into dv with the M
 * and A the evaluator holds (the caller knows them to be from within tolerance of this
 * state) and e->residual from a JY_ASM_RESIDUALS assembly at (q, v, t): one position step
 * to q_work, the rows' rates there (at q itself when the step is within tolerance in every
 * coordinate of `weights`, n), one velocity step. Assembles no matrix, and factors none
 * where the solve kept its factorization of those matrices. */
jyStatus jy_project_estimate(jyEval *e, double t, const double *q, const double *v,
                             const double *weights, double *q_work, double *dv);
/* Removes from an error estimate its components across the manifold (same projector). */
jyStatus jy_project_error(jyEval *e, double *err_q, double *err_v);

/* The part's local acceleration q_loc'' = G acc + g into e->acc_loc (after jy_localize with
 * the same part: mapped as it returned). */
void jy_local_acceleration(jyEval *e, const jyModelPart *p, int mapped, const double *acc);

/* Terminal k's Jacobian (dim x ncoords, local) at a part's local state. */
jyStatus jy_terminal_jacobian(jyEval *e, const jyModelPart *p, int k, const double *q_loc,
                              const double *v_loc, double t, double *jac);

/* Two least kinetic-energy corrections with the evaluator's M and A at once (targets and dx
 * as min_kinetic_step's, every row used but the dependent ones), through the factor of the
 * last solve when that was the diagonal sparse path's at these M and A. 0, or -1: solve them
 * one by one. */
int jy_eval_correction_pair(jyEval *e, const double *target_a, const double *target_b, double *dx_a,
                            double *dx_b);

/* The Udwadia–Kalaba solve of one problem by the sparse route when it applies, else the
 * dense one; the evaluator's dependent rows are left out. */
jyUkOutcome jy_eval_sparse_or_dense(jyEval *e, const jyUkProblem *p, const jyUkOptions *opt,
                                    double *acc, jyUkResult *result);

/* The same with the rows p->dropped left out (NULL: the evaluator's dependent rows) and the
 * multipliers into mu (m; NULL: not wanted). A problem of the evaluator's own M and A (p->mass
 * == e->mass, p->jac == e->jac) solves sparse when the evaluator does (the store, not the
 * dense arrays: those may be stale after JY_ASM_SPARSE_ONLY); the dense rank-revealing solve
 * takes over where the sparse pivots show a rank loss. */
jyUkOutcome jy_eval_solve(jyEval *e, const jyUkProblem *p, const jyUkOptions *opt, double *acc,
                          double *mu, jyUkResult *result);

/* The assembled A (the last jy_assemble with JY_ASM_CONSTRAINTS) in compressed-column form,
 * m x n, its pattern fixed for the evaluator's life: no dense array is read when the
 * evaluator solves sparse; for a small model it is gathered from the dense A (O(nnz)). */
const jyCsc *jy_eval_constraint_matrix(jyEval *e);

/* The dense A, M (not on a large model) and rank-revealing workspace, made on first need on
 * a model that solves in its store, and filled from the store: 0, or -1 out of memory. */
int jy_eval_dense_ready(jyEval *e);

/* out = A x (m values) with the last assembled A: from the store when it holds it, else from
 * the dense A. */
void jy_eval_constraint_times(const jyEval *e, const double *x, double *out);

/* 1/2 x^T M x with the last assembled M (the store's when it holds it). */
double jy_eval_kinetic(const jyEval *e, const double *x);

/* Makes the dense M and A current from the store after a JY_ASM_SPARSE_ONLY assembly (for a
 * dense solve: a fallback, not the hot path). O(n^2 + nm). */
void jy_eval_make_dense(jyEval *e);

/* The problem the evaluator's assembled arrays make (its dependent rows dropped). */
jyUkProblem jy_eval_problem(const jyEval *e);

/* The state a part function sees (local q, v at t), its error buffer cleared. */
jyPartState jy_part_state(jyEval *e, const jyModelPart *p, const double *q_loc, const double *v_loc,
                          double t);

/* Records "part 'name' (type), function: why at t = ..." in e->error; JY_ERR_PART. */
jyStatus jy_part_failed(jyEval *e, const jyModelPart *p, const char *function, double t);

/* Sets parameter `param` of part `part` to value for this evaluator only (a simulation's
 * event action): checked against the parameter's domain, the part's shape must not change,
 * its instance data is made again by `init`. JY_OK, or JY_ERR_PARAM / JY_ERR_INVALID with
 * the reason in e->error. */
jyStatus jy_eval_set_param(jyEval *e, int part, int param, double value);

/* Norms of the position and velocity residuals from e->residual / e->rate. */
void jy_residual_norms(const jyEval *e, double *pos, double *vel);

#endif

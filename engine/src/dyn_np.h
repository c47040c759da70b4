/* The Natsiavas–Paraskevopoulos formulation (seed natsiavas-*, eqs. (54)-(78)): n + m
 * second-order ODEs in the coordinates q and one multiplier coordinate lambda_R per
 * constraint row. Internal; tested by tests/engine/t_np.c. docs/formulations.md explains
 * the equations and the choices made here.
 *
 * Per row R, with a_R the row of A: c_R = a_R / (a_R . a_R), m_RR = c_R^T M c_R,
 * c_RR = -c_R^T (df/dv) c_R, k_RR = -c_R^T (df/dq) c_R, f_R = c_R^T f, f = Q + C.
 *   (70)  M q'' = f + sum_R a_R h_R,  h_R = (m_RR lambda_R')' + c_RR lambda_R' + k_RR lambda_R - f_R
 *   (76)  (m_RR phi_R')' + c_RR phi_R' + k_RR phi_R = 0        (position rows)
 *   (78)  (m_RR psi_R)' + c_RR psi_R = 0                         (velocity rows)
 * (76)/(78) fix A q'' = b~ (b~ = b minus the recovery terms over m_RR); with (70) projected
 * on the admissible directions that is the Udwadia–Kalaba problem with b~, whose multiplier
 * mu is h. So q'' comes from the engine's UK solve with b~, and
 * lambda_R'' = (mu_R + f_R - (m_RR' + c_RR) lambda_R' - k_RR lambda_R) / m_RR. */
#ifndef JY_DYN_NP_H
#define JY_DYN_NP_H

#include "internal.h"

typedef enum jyNpRowKind {
  JY_NP_ROW_MASSIVE, /* m_RR > 0: the seed's equations as written */
  JY_NP_ROW_AUX,     /* m_RR = 0 (only massless coordinates move along c_R): m_RR is taken
                        from the auxiliary mass M + alpha As^T As the UK solve uses */
  JY_NP_ROW_EMPTY    /* a_R = 0 at this state: no direction; the row is left to the UK solve
                        and lambda_R'' = 0 */
} jyNpRowKind;

/* Workspace for one model: two evaluators (the state, and perturbed states for the finite
 * differences) and per-row arrays. Everything the right-hand side needs is taken here.
 * After an evaluation the per-row arrays hold its coefficients (tests read them). */
typedef struct jyNpWork {
  const jyModel *model;
  jyAllocator alloc;
  jyEval *e;  /* the state itself */
  jyEval *fd; /* perturbed states */
  int n, m;
  double *dir; /* n x m: c_R, column R */
  /* m each: m_RR, c_RR, k_RR, f_R, m_RR' along the motion, the UK multiplier of the
   * modified problem */
  double *mass, *damping, *stiffness, *force, *mass_rate, *mu;
  double *plus, *minus;  /* m: row masses at shifted states */
  unsigned char *kind;   /* m: jyNpRowKind */
  double *qp, *vp, *acc; /* n */
  char error[JY_ERROR_LEN];
} jyNpWork;

jyNpWork *jy_np_create(const jyModel *model);
void jy_np_destroy(jyNpWork *w);
const char *jy_np_error(const jyNpWork *w);

/* Refuses (JY_ERR_INVALID, the reason in jy_np_error) a model the formulation cannot
 * integrate: a position or velocity row with no equivalent mass (m_RR = 0) along
 * coordinates that carry mass, such as a body3d's quaternion-norm row. There the velocity
 * terms of the Lagrangian give the row a stiffness of the size of the kinetic energy against
 * the auxiliary mass, and (76) makes its violation grow exponentially. Massless rows between
 * massless coordinates (a rod's ends without glue elimination) have no such force and pass.
 * Evaluated at (q, v, t), the initial state. */
jyStatus jy_np_check_model(jyNpWork *w, const double *q, const double *v, double t);

/* q'' (n) and lambda'' (m) at the N–P state (q, lambda, v, lambda', t). Never allocates.
 * Statuses as jy_eval_acceleration; the message is jy_np_error. */
jyStatus jy_np_accelerations(jyNpWork *w, const double *q, const double *lam, const double *v,
                             const double *lamdot, double t, double *qdd, double *lamdd);

/* Consistent lambda(0), lambda'(0) (m each) at (q, v, t): the multiplier coordinates start at
 * rest in balance with the constraint force mu of that state (lambda'' = 0): where k_RR != 0,
 * lambda = (mu + f_R) / k_RR, lambda' = 0; else where m_RR' + c_RR != 0, lambda = 0,
 * lambda' = (mu + f_R) / (m_RR' + c_RR); else both 0 (lambda'' then carries the force). */
jyStatus jy_np_initial_multipliers(jyNpWork *w, const double *q, const double *v, double t,
                                   double *lam, double *lamdot);

/* Everything per row at (q, v, t) into the work's per-row arrays: c_R, m_RR, f_R and the
 * kind from the state, m_RR', k_RR and c_RR by central differences. w->e holds M, Q, C, A,
 * b, phi, phi' of the state afterwards. */
jyStatus jy_np_coefficients(jyNpWork *w, const double *q, const double *v, double t);

#endif

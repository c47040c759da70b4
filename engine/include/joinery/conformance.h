/* joinery/conformance.h — the part-protocol conformance suite, as a library.
 *
 * jy_check_part_type() builds instances of one part type the way the engine does (shape,
 * then init) and calls every function of the type at seeded random states, comparing what
 * the part says with what it must be:
 *
 *   - terminal J against central finite differences (FD) of the terminal value in q, the
 *     velocity bias p_t against FD in t, the acceleration bias gamma against the FD of
 *     J v + p_t along the motion (q + s v, t + s);
 *   - constraint A against FD of the residual (phi in q for position rows, psi in v for
 *     velocity rows), b against -(second derivative of phi along (v, 1)) for position rows
 *     and -(psi_q v + psi_t) for velocity rows, rate against A v + phi_t;
 *   - M symmetric and positive semi-definite (smallest eigenvalue, LAPACK dsyev), constant
 *     when JY_PART_CONSTANT_MASS says so, and T = 1/2 v^T M v when the part has an energy
 *     function;
 *   - Q against Lagrange's equations of its own energy, L = T - V, when the part is
 *     conservative (JY_PART_CONSERVATIVE in its shape flags); for other parts, advisory
 *     checks that at rest Q = -dV/dq and that the rest of Q does no positive work;
 *   - the schema (version, doc, every parameter with a unit, a doc and a default in its
 *     domain), the shape (within the limits of part.h, names set and unique), that no
 *     function fails, writes past its outputs, or returns non-finite numbers (outputs and
 *     nonideal_law are called with random row forces and accelerations), that NULL
 *     optional outputs change nothing, and that a terminal flagged is_coord_block is
 *     exactly its block of coordinates.
 *
 * Instances: the parameter settings given are fixed; every other parameter takes its
 * default and, in a second instance, a random value of its domain; a `dim` parameter
 * (JY_PARAM_DIMENSION) that is not set is swept over 1, 2 and 3. States: q and v uniform
 * in [-1, 1], t in [0, 10] s, gravity uniform in [-10, 10] m/s^2 per component. A type
 * may reject a parameter set in its shape function (with a message): that instance is
 * skipped, and the report fails only when no instance could be made.
 *
 * Tolerances, and why: first derivatives by central differences with step 1e-6 on O(1)
 * states err by about h^2 |f'''| + eps |f| / h ~ 1e-10; the tolerance 1e-6 (relative to
 * 1 + the size of the block) leaves room for strong curvature while a wrong sign or factor
 * errs by O(1). Second differences (b of position rows) with step 1e-4 err by about
 * h^2 |f''''| + 4 eps |f| / h^2 ~ 1e-8: tolerance 1e-5. Comparisons that involve no
 * differencing (symmetry of M, T = 1/2 v^T M v, NULL outputs) allow only rounding.
 *
 * Thread safety: the suite keeps no global state; it only reads the type and allocates
 * through the environment's allocator (freed before it returns).
 */
#ifndef JOINERY_CONFORMANCE_H
#define JOINERY_CONFORMANCE_H

#include "joinery/joinery.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The checks: X(id, name, advisory, description). An advisory check is measured and
 * reported but never fails the report. */
#define JY_CHECK_LIST(X)                                                                   \
  X(JY_CHECK_SCHEMA, "schema", 0,                                                          \
    "version, doc, every parameter named with a unit, a doc and a default in its domain")  \
  X(JY_CHECK_SHAPE, "shape", 0,                                                            \
    "shape within the limits, names set and unique; a rejected parameter set says why")    \
  X(JY_CHECK_CALLS, "calls", 0, "no function fails at random states")                      \
  X(JY_CHECK_BOUNDS, "bounds", 0, "no function writes past its outputs")                   \
  X(JY_CHECK_FINITE, "finite", 0, "every output of every function is finite")              \
  X(JY_CHECK_OPTIONAL, "optional_outputs", 0, "NULL optional outputs change nothing")      \
  X(JY_CHECK_COORD_BLOCK, "coord_block", 0,                                                \
    "an is_coord_block terminal is q[offset..offset+dim): J = [0 I 0], no biases")         \
  X(JY_CHECK_TERMINAL_JAC, "terminal_jacobian", 0, "terminal J = dp/dq (central FD)")      \
  X(JY_CHECK_TERMINAL_VEL_BIAS, "terminal_vel_bias", 0, "terminal p_t = dp/dt (FD in t)")  \
  X(JY_CHECK_TERMINAL_ACC_BIAS, "terminal_acc_bias", 0,                                    \
    "terminal gamma = d/ds [J v + p_t](q + s v, v, t + s) (FD)")                           \
  X(JY_CHECK_CONSTRAINT_A, "constraint_A", 0,                                              \
    "A = dphi/dq (position rows), dpsi/dv (velocity rows) (FD)")                           \
  X(JY_CHECK_CONSTRAINT_B, "constraint_b", 0,                                              \
    "b = -d2/ds2 phi(q + s v, t + s) (position), -(psi_q v + psi_t) (velocity) (FD)")      \
  X(JY_CHECK_CONSTRAINT_RATE, "constraint_rate", 0, "rate = A v + phi_t (FD in t)")        \
  X(JY_CHECK_MASS_SYMMETRIC, "mass_symmetric", 0, "M symmetric")                           \
  X(JY_CHECK_MASS_PSD, "mass_psd", 0,                                                      \
    "M positive semi-definite: smallest eigenvalue >= -1e-12 max|M|")                      \
  X(JY_CHECK_MASS_CONSTANT, "mass_constant", 0,                                            \
    "M does not change with q and t when JY_PART_CONSTANT_MASS is set")                    \
  X(JY_CHECK_KINETIC, "kinetic", 0, "kinetic energy T = 1/2 v^T M v")                      \
  X(JY_CHECK_LAGRANGE, "lagrange", 0,                                                      \
    "conservative parts: Q = dL/dq - d/dt(dL/dv) + M q'' with L = T - V (FD)")             \
  X(JY_CHECK_REST_FORCE, "rest_force", 1, "other parts: at rest Q(q, 0, t) = -dV/dq (FD)") \
  X(JY_CHECK_PASSIVE, "passive", 1,                                                        \
    "other parts: the non-Lagrangian part of Q does no positive work, v.(Q - Q_L) <= 0")   \
  X(JY_CHECK_SCRATCH, "scratch", 0,                                                        \
    "with its scratch every function answers as without it, bit for bit, at a state and "  \
    "at that state with one input changed")

typedef enum jyCheck {
#define JY_CHECK_ENUM(id, name, advisory, what) id,
  JY_CHECK_LIST(JY_CHECK_ENUM)
#undef JY_CHECK_ENUM
    JY_CHECK_COUNT
} jyCheck;

/* One check over every instance and state tried. */
typedef struct jyCheckResult {
  const char *name; /* "terminal_jacobian" (static string) */
  const char *what; /* one line (static string) */
  int advisory;     /* 1: never fails the report */
  int count;        /* comparisons made; 0: nothing to check (e.g. a part without rows) */
  int failed;       /* comparisons beyond tol */
  double worst;     /* worst error in the check's measure: relative error for FD checks,
                       |min eigenvalue| / max|M| for mass_psd, 1 per failure for yes/no
                       checks; +inf for NaN */
  double tol;       /* the tolerance the check applies */
  char where[256];  /* the instance (and coordinate/row/terminal) of the worst case */
} jyCheckResult;

typedef struct jyConformanceReport {
  int passed;    /* every non-advisory check had no failure, and some instance was made */
  int instances; /* instances checked */
  int rejected;  /* parameter sets the type refused (with a message) */
  int states;    /* random states per instance */
  jyCheckResult checks[JY_CHECK_COUNT];
  /* A text log: one line per instance tried, the first failures of each check, and a
   * closing summary line per check. Truncated (ending in "...") when it does not fit. */
  char log[8192];
} jyConformanceReport;

/* How the suite runs; jy_default_conformance_def() gives the defaults shown. */
typedef struct jyConformanceDef {
  unsigned seed;     /* of the random states and parameters (1) */
  int nstates;       /* random states per instance (6) */
  int random_params; /* also check an instance with random parameter values (1) */
  /* -1: conservative when the shape says JY_PART_CONSERVATIVE (-1); 1: treat as
   * conservative regardless; 0: treat as not conservative. */
  int conservative;
} jyConformanceDef;

JY_API jyConformanceDef jy_default_conformance_def(void);

/* Runs the suite on `type` with the defaults and the given seed. env supplies the
 * allocator (may be NULL: malloc). params (nparams settings, may be NULL when 0) fix
 * parameter values. Returns JY_OK when the checks ran (out->passed tells the verdict),
 * JY_ERR_INVALID for NULL type/out, JY_ERR_UNKNOWN_NAME or JY_ERR_PARAM for a setting
 * the schema refuses (the reason is in out->log), JY_ERR_NOMEM. */
JY_API jyStatus jy_check_part_type(const jyEnv *env, const jyPartType *type,
                                   const jyParamSetting *params, int nparams, unsigned seed,
                                   jyConformanceReport *out);

/* The same with every setting of the suite (def may be NULL: the defaults). */
JY_API jyStatus jy_check_part_type_def(const jyEnv *env, const jyPartType *type,
                                       const jyParamSetting *params, int nparams,
                                       const jyConformanceDef *def, jyConformanceReport *out);

#ifdef __cplusplus
}
#endif
#endif

/* joinery/part.h — the part protocol.
 *
 * A part type is a versioned, read-only table of functions. The built-in parts in
 * components/ use exactly this protocol; so do parts written in Lua and C plugins.
 *
 * Conventions every function follows:
 *   - SI units. Coordinates q, velocities v = q' and time t are the part's own (local)
 *     coordinates, in the order the part declared them.
 *   - Matrices are dense, column-major. A block with r rows over the part's nc coordinates
 *     has leading dimension r: element (i, j) is at [i + j * r].
 *   - Every output buffer arrives zero-filled; a function writes only what is non-zero.
 *   - A function returns 0 on success. On failure it writes one line saying why into
 *     state->error (at most state->error_len bytes, NUL-terminated) and returns non-zero;
 *     the engine adds the part's name and the simulation time.
 *   - Functions never allocate and never keep pointers to their arguments.
 *   - Any function pointer except `shape` may be NULL, meaning "contributes nothing"
 *     (for `energy`: kinetic energy 1/2 v^T M v and no potential).
 */
#ifndef JOINERY_PART_H
#define JOINERY_PART_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a field of jyPartType or its function signatures change. The engine
 * refuses a type whose `version` differs. */
#define JY_PART_PROTOCOL_VERSION 1

#define JY_PART_MAX_COORDS 64
#define JY_PART_MAX_TERMINALS 16
#define JY_PART_MAX_ROWS 64
#define JY_PART_MAX_OUTPUTS 16
#define JY_TERMINAL_MAX_DIM 3

/* What values a parameter accepts; checked before the part sees it. */
typedef enum jyParamDomain {
  JY_PARAM_REAL,        /* any finite number */
  JY_PARAM_POSITIVE,    /* finite, > 0 */
  JY_PARAM_NONNEGATIVE, /* finite, >= 0 */
  JY_PARAM_DIMENSION    /* 1, 2 or 3 */
} jyParamDomain;

/* One entry of a part type's parameter schema. */
typedef struct jyParamSpec {
  const char *name;     /* as scripts write it, e.g. "m" */
  double default_value; /* used when the script does not set it */
  jyParamDomain domain;
  const char *unit;     /* "kg", "N/m", "m", "1" for dimensionless */
  const char *doc;      /* one line */
} jyParamSpec;

/* How a constraint row restricts the motion; decides how drift is measured. */
typedef enum jyRowKind {
  JY_ROW_POSITION,    /* phi(q, t) = 0: residual phi, rate phi' */
  JY_ROW_VELOCITY,    /* psi(q, v, t) = 0: residual psi, rate unused */
  JY_ROW_ACCELERATION /* given directly as A q'' = b: no residual, nothing to drift */
} jyRowKind;

typedef struct jyTerminalSpec {
  const char *name; /* e.g. "pos", "tip" */
  int dim;          /* 1..JY_TERMINAL_MAX_DIM */
  /* Set is_coord_block when the terminal is exactly q[coord_offset .. coord_offset + dim)
   * (J = I on that block, no biases): the engine may then eliminate a glue to it. */
  int is_coord_block;
  int coord_offset;
} jyTerminalSpec;

/* What one instance looks like, given its parameters. Names are copied by the engine
 * right after `shape` returns, so they may point into the part type or the instance. */
typedef struct jyPartShape {
  int ncoords;
  const char *coord_names[JY_PART_MAX_COORDS];
  double coord_defaults[JY_PART_MAX_COORDS]; /* initial q when the script sets none */
  int nterminals;
  jyTerminalSpec terminals[JY_PART_MAX_TERMINALS];
  int nrows; /* internal constraint rows */
  const char *row_names[JY_PART_MAX_ROWS];
  jyRowKind row_kinds[JY_PART_MAX_ROWS];
  int noutputs; /* extra output channels, named "<part>.<output>" */
  const char *output_names[JY_PART_MAX_OUTPUTS];
  unsigned flags;       /* JY_PART_* below */
  size_t instance_size; /* bytes of per-instance data `init` fills (0: none) */
} jyPartShape;

/* M does not depend on q or t: the engine may assemble it once. */
#define JY_PART_CONSTANT_MASS 1u

struct jyPartType;

/* One part in a compiled model, as a part function sees it. Read-only while simulating:
 * many simulations of one model share it. */
typedef struct jyPartInstance {
  const struct jyPartType *type;
  const char *name;     /* the instance name the script gave */
  const double *params; /* validated values, in schema order (type->nparams) */
  const void *data;     /* instance_size bytes that `init` filled, or NULL */
  int ncoords, nrows;
} jyPartInstance;

/* The state one call sees: the part's own slice of the system state. */
typedef struct jyPartState {
  const double *q;       /* coordinates (ncoords) */
  const double *v;       /* velocities (ncoords) */
  double t;              /* time, s */
  const double *gravity; /* uniform field of the system, m/s^2 (3; 1-D parts use [0]) */
  char *error;           /* where a failing function says why */
  size_t error_len;
} jyPartState;

typedef struct jyPartType {
  unsigned version; /* JY_PART_PROTOCOL_VERSION */
  const char *name; /* type name scripts use, e.g. "spring_mass" */
  const char *doc;  /* one line */
  const jyParamSpec *params;
  int nparams;

  /* Sizes and names of an instance with these parameter values (nparams, in schema
   * order, already domain-checked). Returns non-zero with a message in `error` when the
   * values do not make a part (e.g. a zero normal vector). */
  int (*shape)(const struct jyPartType *type, const double *params, jyPartShape *shape,
               char *error, size_t error_len);

  /* Fills the instance's private data once, at model compile time. */
  int (*init)(const jyPartInstance *self, void *data, char *error, size_t error_len);

  /* Terminal k: its value p(q, t) (dim), Jacobian J = dp/dq (dim x ncoords), velocity bias
   * p_t (so p' = J v + p_t) and acceleration bias gamma (so p'' = J q'' + gamma, i.e.
   * gamma = J' v + 2 J_t v + p_tt). Any of jac, vel_bias, acc_bias may be NULL: skip it. */
  int (*terminal)(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                  double *jac, double *vel_bias, double *acc_bias);

  /* Mass matrix block (ncoords x ncoords), symmetric positive semi-definite. */
  int (*mass)(const jyPartInstance *self, const jyPartState *state, double *mass);

  /* Applied generalized force Q (ncoords): everything except constraint forces, with the
   * velocity-dependent inertia terms of the part's Lagrangian included, so that
   * M q'' = Q + (constraint forces). */
  int (*force)(const jyPartInstance *self, const jyPartState *state, double *force);

  /* Internal constraint rows at acceleration level, A q'' = b: A (nrows x ncoords), b
   * (nrows), residual (phi for position rows, psi for velocity rows) and rate (phi' for
   * position rows; left 0 for velocity rows). residual and rate may be NULL: skip them. */
  int (*constraints)(const jyPartInstance *self, const jyPartState *state, double *jac,
                     double *rhs, double *residual, double *rate);

  /* Non-ideal constraint force C (ncoords): the work the constraint forces do in a virtual
   * displacement w (A w = 0) is w^T C. */
  int (*nonideal)(const jyPartInstance *self, const jyPartState *state, double *force);

  /* Kinetic and potential energy, J. */
  int (*energy)(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                double *potential);

  /* Extra output channels (noutputs). row_forces are the multipliers of the part's own
   * constraint rows (nrows): the ideal constraint force on the part is A^T row_forces. */
  int (*outputs)(const jyPartInstance *self, const jyPartState *state,
                 const double *row_forces, double *out);

  /* A non-ideal constraint force that depends on the ideal force of the part's own rows,
   * C(q, v, t, row_forces) (ncoords), e.g. Coulomb friction proportional to a normal force.
   * It adds to `nonideal`. The engine resolves the dependence by fixed-point iteration:
   * solve with the current row forces, evaluate the law, repeat until the row forces
   * settle (docs/numerics.md). */
  int (*nonideal_law)(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, double *force);

  /* Called once when the environment that registered the type is destroyed. */
  void (*release)(const struct jyPartType *type);

  void *type_data; /* owned by whoever registered the type (e.g. the Lua binding) */
} jyPartType;

#ifdef __cplusplus
}
#endif
#endif

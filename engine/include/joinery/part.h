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
 *   - Functions may be called from several threads at once (many simulations share one
 *     model): they read only their arguments, the instance and the type, and write only
 *     their outputs, state->error and state->scratch (each simulation has its own).
 *
 * Sizes, with n = shape.ncoords, m = shape.nrows, d = the terminal's dim:
 *   terminal value d, jac d x n, vel_bias d, acc_bias d;  mass n x n;  force n;
 *   constraints jac m x n, rhs m, residual m, rate m;  nonideal n;  outputs noutputs.
 *
 * Sign conventions: Q and C are forces ON the part's coordinates (a stretched spring's
 * Q pulls its ends together); the equation of motion is M q'' = Q + A^T lambda + C with
 * A q'' = b, so b carries the convective terms with a minus sign (see `constraints`).
 * A generalized force conjugate to an angle is a torque (N m), to a length a force (N).
 *
 * Writing a part outside joinery (a plugin, joinery/plugin.h): fill a static jyPartType
 * with .version = JY_PART_PROTOCOL_VERSION and your functions, register it with
 * jy_env_register(), and run the conformance suite (joinery/conformance.h, or
 * joinery.check_part in Lua) over it: it compares every derivative you wrote with finite
 * differences.
 */
#ifndef JOINERY_PART_H
#define JOINERY_PART_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a field of jyPartType, jyPartShape, jyPartInstance or jyPartState, or
 * a function signature, changes. A type sets `version` to the value it was compiled with.
 * jy_env_register accepts the versions JY_PART_PROTOCOL_OLDEST .. JY_PART_PROTOCOL_VERSION
 * and refuses (JY_ERR_PROTOCOL) any other, so a plugin built against an incompatible
 * joinery fails to load with a clear message instead of misreading the tables.
 *
 * Compatibility rule: a change that only appends a field to a struct the engine allocates
 * and zero-fills (jyPartShape) keeps the older versions readable; the engine reads a field
 * added after a type's version as zero. Any other change also sets JY_PART_PROTOCOL_OLDEST
 * to the new version.
 *   1  the first protocol.
 *   2  jyPartShape.angle_outputs (a version 1 type has none: no output is an angle).
 *   3  jyPartShape.nguards and .hybrid, jyPartState.mode: parts with modes (contacts that
 *      close and open, friction that sticks and slips; docs/events.md).
 *   4  jyPartShape.scratch_size, jyPartState.scratch: what a part computes from the state
 *      once for all its functions called at that state (docs/parts.md, "Scratch").
 *   5  jyPartState.rtol, .atol and .acc: the run's tolerances and, in a transition, the
 *      part's acceleration (a contact sizes its slowest bounce by them); jyPartHybrid.max_step
 *      (read for version 5 types only): the longest step a contact allows.
 *   6  jyPartState.ninputs, .inputs, .input_rates, .input_accels: the model's inputs
 *      (joinery.h, "inputs"), which a part reads by an index it takes as a parameter.
 *   7  jyPartShape.nvisuals and .visual: how the part draws itself (joinery animate,
 *      docs/animation.md). A type without them (any older one) is not drawn.
 *   8  jyPartShape.spatial and .spatial_param: the part's role in a spatial tree, which the
 *      engine's spatial recursion solves without its rows (docs/numerics.md, "The spatial
 *      tree"). A type without one (any older one) keeps a model with rows on the row path. */
#define JY_PART_PROTOCOL_VERSION 8
#define JY_PART_PROTOCOL_OLDEST 1

#define JY_PART_MAX_COORDS 64
#define JY_PART_MAX_TERMINALS 16
#define JY_PART_MAX_ROWS 64
#define JY_PART_MAX_OUTPUTS 16
#define JY_PART_MAX_GUARDS 8
#define JY_PART_MAX_SCRATCH 4096 /* bytes */
#define JY_PART_MAX_VISUALS 16
#define JY_TERMINAL_MAX_DIM 7 /* a spatial frame: position and unit quaternion */

/* What values a parameter accepts; checked before the part sees it. */
typedef enum jyParamDomain {
  JY_PARAM_REAL,        /* any finite number */
  JY_PARAM_POSITIVE,    /* finite, > 0 */
  JY_PARAM_NONNEGATIVE, /* finite, >= 0 */
  JY_PARAM_DIMENSION,   /* 1, 2 or 3 */
  JY_PARAM_BOUND        /* any number or +-infinity (no bound), not NaN */
} jyParamDomain;

/* One entry of a part type's parameter schema. */
typedef struct jyParamSpec {
  const char *name;     /* as scripts write it, e.g. "m" */
  double default_value; /* used when the script does not set it */
  jyParamDomain domain;
  const char *unit; /* "kg", "N/m", "m", "1" for dimensionless */
  const char *doc;  /* one line */
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
   * (J = I on that block, no biases): the engine then takes it to be those coordinates
   * without calling `terminal` for it, and may eliminate a glue to it. */
  int is_coord_block;
  int coord_offset;
} jyTerminalSpec;

struct jyPartInstance;
struct jyPartState;

/* What a visual draws (protocol 7). Positions are world coordinates in metres, always three
 * of them: a 1-D part draws on the x axis (y = z = 0), a planar one in z = 0. A visual keeps
 * its kind at every state (joinery animate refuses a change). */
typedef enum jyVisualKind {
  JY_VISUAL_NONE = 0, /* nothing (a slot the part leaves empty) */
  JY_VISUAL_POINT,    /* a ball at a, radius size (0: the viewer's default) */
  JY_VISUAL_ROD,      /* a straight bar from a to b */
  JY_VISUAL_SPRING,   /* a zigzag from a to b */
  JY_VISUAL_DAMPER,   /* a dashpot from a to b */
  JY_VISUAL_FRAME,    /* a body: axes at a, orientation quat, size its half-extent (m) */
  JY_VISUAL_GROUND,   /* fixed support at a: a hatched line (planar) or a plane with normal b */
  JY_VISUAL_ARROW,    /* a force: vector b (N) at a; drawn only when forces are asked for */
  JY_VISUAL_ROPE      /* a slack-capable line from a to b */
} jyVisualKind;

/* One shape at one instant. Unused fields stay as they arrived (zero). */
typedef struct jyVisual {
  int kind;       /* jyVisualKind */
  double a[3];    /* position, or first end, m */
  double b[3];    /* second end (m), normal (any length), or force (N) */
  double quat[4]; /* orientation of a FRAME, unit quaternion w, x, y, z (0, 0, 0, 0: none) */
  double size;    /* radius or half-extent, m; 0: the viewer picks one from the scene's size */
} jyVisual;

/* Fills out[0 .. shape.nvisuals) (zero-filled) from the part's state; row_forces are the
 * part's own rows' forces as for `outputs`, or NULL when forces are not drawn. Returns 0,
 * or non-zero with a message in state->error, as every part function. */
/* A part's role in a spatial tree (protocol 8): what the spatial recursion (the articulated
 * body algorithm over the joints' own freedoms) reads instead of calling the part. A model
 * takes that path only when every part with rows or mass has a role and the joints form a
 * tree; a part without one may still be there as a force element (no mass, no rows, none of
 * its coordinates its own). The role fixes the coordinate and terminal layout, and the
 * parameters from spatial_param on in the order given:
 *   BODY    coordinates x, y, z, q0..q3 (centre of mass, quaternion: the frame), terminals
 *           frame (0) and pos (1) that frame and point, M = diag(m I, 4 G^T J G) with
 *           w = 2 G(q) q' in body axes, one row (the quaternion's norm); m, Ixx, Iyy, Izz,
 *           Ixy, Ixz, Iyz.
 *   OFFSET  massless, rowless, coordinates a copy of a frame (terminal 0, glued to it),
 *           terminals 1 (pos) and 2 (frame) that frame's origin moved by r in its axes; rx,
 *           ry, rz.
 *   FIXED   no coordinates, terminals frame (0) and pos (1) at a fixed pose; x, y, z,
 *           q0..q3 (normalized).
 *   POINT   no coordinates, terminal pos (0) at a fixed point; x, y, z.
 *   HINGE   massless, coordinates copies of frames a (0..6) and b (7..13), rows that hold
 *           the points r_a (in a's axes) and r_b (in b's) together and axis n_a along n_b;
 *           rax, ray, raz, rbx, rby, rbz, nax, nay, naz, nbx, nby, nbz.
 *   SLIDER  as HINGE, rows that hold b's orientation at q_ref relative to a's and the point
 *           r_b on the line through r_a along n_a (a's axes); rax .. rbz, nax, nay, naz,
 *           q0..q3 (q_ref, normalized).
 *   WELD    as HINGE, rows that hold the points together and b's orientation at q_ref
 *           relative to a's; rax .. rbz, q0..q3.
 * A ball joint is a glue of two points (pos terminals) and needs no role. */
typedef enum jySpatialRole {
  JY_SPATIAL_NONE = 0,
  JY_SPATIAL_BODY,
  JY_SPATIAL_OFFSET,
  JY_SPATIAL_FIXED,
  JY_SPATIAL_HINGE,
  JY_SPATIAL_SLIDER,
  JY_SPATIAL_WELD,
  JY_SPATIAL_POINT
} jySpatialRole;

typedef int (*jyPartVisualFn)(const struct jyPartInstance *self, const struct jyPartState *state,
                              const double *row_forces, jyVisual *out);

/* What one instance looks like, given its parameters. Names are copied by the engine
 * right after `shape` returns, so they may point into the part type or the instance. */
typedef struct jyPartShape {
  /* Coordinates the part owns (0..JY_PART_MAX_COORDS); names unique within the part and
   * without '.', the CSV names them "<part>.<coord>". */
  int ncoords;
  const char *coord_names[JY_PART_MAX_COORDS];
  double coord_defaults[JY_PART_MAX_COORDS]; /* initial q when the script sets none */
  int nterminals;
  jyTerminalSpec terminals[JY_PART_MAX_TERMINALS];
  int nrows; /* internal constraint rows (0..JY_PART_MAX_ROWS), named "<part>.<row>" */
  const char *row_names[JY_PART_MAX_ROWS];
  jyRowKind row_kinds[JY_PART_MAX_ROWS];
  int noutputs; /* extra output channels, named "<part>.<output>" */
  const char *output_names[JY_PART_MAX_OUTPUTS];
  unsigned flags;       /* JY_PART_* below */
  size_t instance_size; /* bytes of per-instance data `init` fills (0: none) */
  /* Bit k set: output k is an angle the part knows only modulo 2 pi (an atan2, say). A
   * simulation reports it continuous, shifted by whole turns to lie within pi of its
   * previous report, so it stays right while it turns less than half a turn between
   * reports. Protocol version 2; read as zero for a version 1 type. */
  unsigned angle_outputs;
  /* A part with modes (protocol version 3; NULL and 0 for older types): its functions and
   * how many guard functions it has (0..JY_PART_MAX_GUARDS, the same in every mode). */
  const struct jyPartHybrid *hybrid;
  int nguards;
  /* Bytes of scratch the part keeps in each evaluator (0 .. JY_PART_MAX_SCRATCH; protocol
   * version 4, read as zero for older types): jyPartState.scratch. */
  size_t scratch_size;
  /* How the part draws itself (protocol 7; 0 and NULL for older types: not drawn): how many
   * visuals (0 .. JY_PART_MAX_VISUALS) and the function that places them. */
  int nvisuals;
  jyPartVisualFn visual;
  /* Its role in a spatial tree and the index of the role's first parameter (protocol 8;
   * JY_SPATIAL_NONE for older types): jySpatialRole. */
  jySpatialRole spatial;
  int spatial_param;
} jyPartShape;

/* M does not depend on q or t: the engine may assemble it once. */
#define JY_PART_CONSTANT_MASS 1u
/* This instance's nonideal_law contributes nothing (e.g. a friction coefficient of 0), so
 * the engine need not iterate on the row forces for it. */
#define JY_PART_NO_LAW 4u
/* Q is exactly what Lagrange's equations of L = T - V (from `energy`) give: no damping, no
 * driving. The conformance suite then checks Q against the derivatives of the energy. */
#define JY_PART_CONSERVATIVE 2u
/* The part's coordinate-block terminals carry no mass of their own (a pendulum's pivot: its M
 * is singular), so glue elimination may substitute them although the part has mass, and
 * such parts chain: a pendulum hung from a pendulum's bob follows it. */
#define JY_PART_FOLLOWS_GLUE 8u
/* The part's outputs are left out of the default output selection (jySimDef.columns empty)
 * and computed only when a pattern names them: set by force elements that a model may hold
 * by the thousand (a cloth's springs), so that the default output grows with the parts' own
 * coordinates, not with their connections. An older type reads it as unset. */
#define JY_PART_OUTPUTS_ON_REQUEST 16u
/* The part's `constraints` takes jac and rhs NULL when the engine wants the residual and rate
 * alone (the check at each Adams step end), and then skips the Jacobian and curvature: a
 * cheaper call with the same residual and rate. An older type reads it as unset and is always
 * given both. */
#define JY_PART_RESIDUALS_ALONE 32u

struct jyPartType;
struct jyPartHybrid;

/* One part in a compiled model, as a part function sees it. Read-only while simulating:
 * many simulations of one model share it. */
typedef struct jyPartInstance {
  const struct jyPartType *type;
  const char *name;     /* the instance name the script gave */
  const double *params; /* validated values, in schema order (type->nparams); a
                           JY_PARAM_DIMENSION value is exactly 1.0, 2.0 or 3.0 */
  const void *data;     /* instance_size bytes that `init` filled, or NULL */
  int ncoords, nrows;
} jyPartInstance;

/* The state one call sees: the part's own slice of the system state. */
typedef struct jyPartState {
  const double *q;       /* coordinates (ncoords) */
  const double *v;       /* velocities (ncoords) */
  double t;              /* time, s */
  const double *gravity; /* uniform field of the system, m/s^2 (3; 1-D parts use [0],
                            2-D parts [0] and [1]); a part with mass adds its weight to Q */
  char *error;           /* where a failing function says why */
  size_t error_len;
  int mode; /* the part's current mode (0 for a part without modes); protocol 3 */
  /* shape.scratch_size bytes of this part's own in the evaluator calling it, or NULL
   * (protocol 4; a caller that keeps none, such as the conformance suite's plain calls):
   * where a part keeps what it computes from the state (a sine, a rotation) so that its
   * functions called at one state compute it once. The engine zero-fills it when the
   * evaluator is made and when one of the part's parameters changes, and otherwise leaves
   * it alone: a part reuses what it keeps there only when every input it was computed from
   * (what it read of the state and of the instance) is bit for bit the one it reads now,
   * never by guessing how the engine sequences its calls. NULL: compute afresh. The
   * conformance suite checks that calls with and without it answer the same. */
  void *scratch;
  /* Protocol 5. The running simulation's tolerances: rtol, and atol on the coordinates (0
   * both outside a simulation: at compile time, in eval_part, in the conformance suite).
   * The smallest displacement the run resolves is about atol + rtol |q|: a part with modes
   * sizes its dead bands and its slowest bounce by it (components/unilateral.c). */
  double rtol, atol;
  /* Protocol 5. The part's acceleration (local coordinates, ncoords) at this state where
   * the caller has it (a `transition`), else NULL. */
  const double *acc;
  /* Protocol 6. The model's inputs at t (ninputs each; NULL when 0): value, first and
   * second time derivative (0 for a held input). A part names the input it reads by an
   * index parameter (jy_system_find_input), never by keeping a pointer. */
  int ninputs;
  const double *inputs, *input_rates, *input_accels;
} jyPartState;

typedef struct jyPartType {
  unsigned version; /* JY_PART_PROTOCOL_VERSION */
  const char *name; /* type name scripts use, e.g. "spring_mass" */
  const char *doc;  /* one line */
  const jyParamSpec *params;
  int nparams;

  /* Sizes and names of an instance with these parameter values (nparams, in schema
   * order, already domain-checked). `shape` arrives zero-filled; fill ncoords and the
   * names, terminals, rows, outputs, flags and instance_size that apply. Returns non-zero
   * with a message in `error` when the values do not make a part (e.g. a zero normal
   * vector). Called at build time, more than once per instance. */
  int (*shape)(const struct jyPartType *type, const double *params, jyPartShape *shape, char *error,
               size_t error_len);

  /* Fills the instance's private data (shape.instance_size bytes, zero-filled) once, at
   * model compile time: precomputed constants, never pointers to the arguments. */
  int (*init)(const jyPartInstance *self, void *data, char *error, size_t error_len);

  /* Terminal k: its value p(q, t) (dim), Jacobian J = dp/dq (dim x ncoords), velocity bias
   * p_t (so p' = J v + p_t) and acceleration bias gamma (so p'' = J q'' + gamma, i.e.
   * gamma = J' v + 2 J_t v + p_tt). Any of jac, vel_bias, acc_bias may be NULL: skip it.
   * k is 0 .. nterminals - 1. Units: those of the terminal (m for a point); jac is d x n
   * with leading dimension d. A terminal that is a plain block of coordinates may say so
   * in its jyTerminalSpec (is_coord_block) and must then be exactly that block. */
  int (*terminal)(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                  double *jac, double *vel_bias, double *acc_bias);

  /* Mass matrix block (ncoords x ncoords), symmetric positive semi-definite: M = d2T/dv2
   * (kg, kg m, kg m^2 by the coordinates' units). Singular is fine (massless terminal
   * coordinates); the glue and constraints must then determine those coordinates. */
  int (*mass)(const jyPartInstance *self, const jyPartState *state, double *mass);

  /* Applied generalized force Q (ncoords): everything except constraint forces, with the
   * velocity-dependent inertia terms of the part's Lagrangian included, so that
   * M q'' = Q + (constraint forces). For L = T - V this is Q = dL/dq - (d2L/dv dq) v -
   * d2L/dv dt. Weight (from state->gravity), springs, dampers and applied loads go here. */
  int (*force)(const jyPartInstance *self, const jyPartState *state, double *force);

  /* Internal constraint rows at acceleration level, A q'' = b: A (nrows x ncoords), b
   * (nrows), residual (phi for position rows, psi for velocity rows) and rate (phi' for
   * position rows; left 0 for velocity rows). residual and rate may be NULL: skip them. jac
   * and rhs are NULL only for a type that sets JY_PART_RESIDUALS_ALONE.
   * Position row phi(q, t) = 0: A = phi_q, b = -(v^T phi_qq v + 2 phi_qt v + phi_tt),
   * rate = phi_q v + phi_t. Velocity row psi(q, v, t) = 0: A = psi_v, b = -(psi_q v + psi_t).
   * A is nrows x ncoords with leading dimension nrows. */
  int (*constraints)(const jyPartInstance *self, const jyPartState *state, double *jac, double *rhs,
                     double *residual, double *rate);

  /* Non-ideal constraint force C (ncoords): the work the constraint forces do in a virtual
   * displacement w (A w = 0) is w^T C. Zero for ideal constraints; signs as for Q. */
  int (*nonideal)(const jyPartInstance *self, const jyPartState *state, double *force);

  /* Kinetic and potential energy, J: kinetic must equal 1/2 v^T M v; potential is the
   * energy of the conservative part of Q (gravity included), so that energy + dissipated
   * work is constant. */
  int (*energy)(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                double *potential);

  /* Extra output channels (noutputs). row_forces are the multipliers of the part's own
   * constraint rows (nrows): the ideal constraint force on the part is A^T row_forces. */
  int (*outputs)(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                 double *out);

  /* A non-ideal constraint force that depends on the ideal force of the part's own rows,
   * C(q, v, t, row_forces) (ncoords), e.g. Coulomb friction proportional to a normal force.
   * It adds to `nonideal`. The engine resolves the dependence by fixed-point iteration:
   * solve with the current row forces, evaluate the law, repeat until the row forces
   * settle (docs/numerics.md). acc is the part's acceleration from the previous iterate
   * (zero at the first), so a Coulomb law can pick the sliding direction from rest. */
  int (*nonideal_law)(const jyPartInstance *self, const jyPartState *state,
                      const double *row_forces, const double *acc, double *force);

  /* Called once when the environment that registered the type is destroyed. */
  void (*release)(const struct jyPartType *type);

  void *type_data; /* owned by whoever registered the type (e.g. the Lua binding); the
                      engine never reads it */
} jyPartType;

/* A part with modes: a contact that is open or closed, friction that slides or sticks.
 * The part lists every row it can ever have (shape.nrows); each mode makes some of them
 * active, and the others are left out of every solve, projection and residual (their row
 * forces are 0). Guards are functions of the state and the active rows' forces whose
 * zero crossings the integrator locates (like a user event's); at a crossing `transition`
 * picks the new mode and may ask for an impact on some rows, which changes the velocities
 * by the impulsive Udwadia-Kalaba equation: the M-closest velocity with each such row's
 * rate -e times what it was, the other active rows held (rate 0). In the new mode the
 * engine solves again and asks `admissible` whether the mode holds with its own forces,
 * and switches again until every part's mode holds (docs/events.md). All functions return
 * 0 on success, non-zero with a message in state->error. */
typedef struct jyPartHybrid {
  /* Bit k set: row k is active in `mode`. */
  unsigned long long (*active_rows)(const struct jyPartInstance *self, int mode);
  /* The mode at the start of a simulation (state->mode is 0), e.g. closed when touching;
   * `admissible` then checks it. NULL: mode 0. */
  int (*initial_mode)(const struct jyPartInstance *self, const jyPartState *state, int *mode);
  /* The nguards guard values in state->mode. row_forces: the part's rows' forces (0 on
   * inactive rows); acc: the part's acceleration (local coordinates). */
  int (*guards)(const struct jyPartInstance *self, const jyPartState *state,
                const double *row_forces, const double *acc, double *g);
  /* Guard k crossed zero, rising (direction +1) or falling (-1), in state->mode: set *mode
   * to the new mode (left unchanged: nothing happens) and, for an impact, restitution[r] in
   * [0, 1] on the rows it acts on (they arrive NaN: no impact). */
  int (*transition)(const struct jyPartInstance *self, const jyPartState *state,
                    const double *row_forces, int guard, int direction, int *mode,
                    double *restitution);
  /* In state->mode just entered, with its row forces and acceleration: leave *mode as it is
   * when the mode holds, else set the mode to take instead (a contact that would pull
   * opens, a stick that needs more than the static friction slips). NULL: always holds. */
  int (*admissible)(const struct jyPartInstance *self, const jyPartState *state,
                    const double *row_forces, const double *acc, int *mode);
  /* A short name of the mode or transition for the event list ("contact", "free",
   * "stick", "slide"); an impact is listed as "impact". NULL: "mode<k>". */
  const char *(*mode_name)(const struct jyPartInstance *self, int mode);
  /* Protocol 5 (read only for a type of version 5 or later). The longest step the
   * integrator may take from this state (s), or 0 for no limit: for a crossing the guards
   * cannot show at a step's two ends (two balls passing right through each other within one
   * step: their |b - a| - D is positive on both sides). NULL: no limit. */
  double (*max_step)(const struct jyPartInstance *self, const jyPartState *state);
} jyPartHybrid;

#ifdef __cplusplus
}
#endif
#endif

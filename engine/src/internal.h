/* Internal structures shared by the engine's stages. Not API. */
#ifndef JY_INTERNAL_H
#define JY_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "dyn_sparse.h"
#include "dyn_uk.h"
#include "joinery/joinery.h"
#include "mem.h"

#define JY_ERROR_LEN 1024

/* Beyond this many coordinates a sparse solve that finds its matrix singular reports it
 * rather than handing the problem to the dense rank-revealing solve (O(n^3): ~1 s here,
 * minutes and gigabytes at 10,000). */
#define JY_DENSE_FALLBACK_MAX_COORDS 2000

/* Room for one more element in an array grown geometrically (capacity 8, 16, 32, ...):
 * 0, or -1 when out of memory with the array unchanged. */
static inline int jy_grow(const jyAllocator *a, void **array, int *cap, int count, size_t elem) {
  if (count < *cap) return 0;
  int ncap = *cap ? 2 * *cap : 8;
  void *fresh = jy_calloc(a, (size_t)ncap, elem);
  if (!fresh) return -1;
  if (count) memcpy(fresh, *array, elem * (size_t)count);
  jy_free(a, *array);
  *array = fresh;
  *cap = ncap;
  return 0;
}

/* printf into a fixed error buffer (truncating). names.c, with jy_suggest. */
void jy_set_error(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes " (did you mean 'x'?)" for the nearest candidate within reach, else the list. */
void jy_suggest(char *out, size_t len, const char *name, const char *const *candidates, int count);

/* Writes x as printf's "%.17g" does (the same characters; io_number.c), with its NUL, into
 * out[JY_NUMBER_LEN]; returns the length. */
#define JY_NUMBER_LEN 32
int jy_format_double(char *out, double x);

/* Whether the engine reads part types of this protocol version (joinery/part.h). */
int jy_protocol_supported(unsigned version);

/* A part type's shape for these parameters, read as the type's protocol version defines it
 * (fields added after that version zero). Returns what type->shape returns. part_shapes.c. */
int jy_part_shape(const jyPartType *type, const double *params, jyPartShape *shape, char *error,
                  size_t error_len);

/* The parameter door's helpers (params.c). */
int jy_param_in_domain(jyParamDomain domain, double value);
int jy_param_index(const jyPartType *type, const char *name); /* -1: no such parameter */
/* Whether the type's parameter names can all be set: named, listed once, not init/vel/guess,
 * not a terminal's name at the default parameters. 0, or -1 with the reason in error. */
int jy_param_names_check(const jyPartType *type, char *error, size_t len);

struct jyEnv {
  jyAllocator alloc;
  const jyPartType **types;
  int ntypes, cap;
  char error[JY_ERROR_LEN];
};

/* Distinct part shapes, each held once with its own copies of the names (part_shapes.c):
 * the system's and the model's parts point into their pool, since parts of one type with
 * the same parameters almost always share a shape. Open addressing on a hash of the
 * content (slot k holds index + 1, 0 empty), so adding the N-th part finds its shape in
 * O(1), not by comparing with every earlier one. */
typedef struct jyShapePool {
  jyPartShape **shapes; /* count, in the order first added */
  unsigned *hashes;     /* count: each shape's content hash */
  int count, cap;
  int *slots;
  int nslots; /* a power of two, at least twice count; 0 before the first */
} jyShapePool;

/* The pool's shape equal to `shape` in content (names as strings, NULL names read as the
 * builder always read them, coordinate defaults bit for bit), added as an owned copy when
 * the pool has none. NULL when out of memory, with the pool's shapes unchanged. */
const jyPartShape *jy_shape_pool_intern(jyShapePool *pool, const jyAllocator *a,
                                        const jyPartShape *shape);
void jy_shape_pool_free(jyShapePool *pool, const jyAllocator *a);

/* One part as the builder holds it. */
typedef struct jySysPart {
  char *name;
  const jyPartType *type;
  double *params;           /* type->nparams */
  const jyPartShape *shape; /* in the system's shape pool */
  double *q0, *v0;          /* ncoords */
  unsigned char *q_set, *v_set;
  /* Initial angular velocity (rad/s, jy_system_set_angular_velocity): JY_OMEGA_SPACE or
   * JY_OMEGA_BODY axes, or -1 for none; the compile turns it into quaternion rates. */
  int omega_axes;
  double omega[3];
} jySysPart;

/* The offset of the orientation q0..q3 in a part's coordinates: the part's terminal
 * "frame" is a 7-D block of its own coordinates (x, y, z, q0..q3: a body3d); -1 if not. */
int jy_part_frame_quaternion(const jyPartShape *shape);

typedef struct jySysGlue {
  char *name;
  jyTerminalId a, b;
  int dim;
} jySysGlue;

typedef struct jyUserChannel {
  char *name;
  jyChannelFn fn;
  void *ud;
} jyUserChannel;

/* A user event (jy_system_add_event); the model's copies own their names. */
typedef struct jyUserEvent {
  char *name;
  jyEventWhenFn when;
  jyEventDirection direction;
  jyEventActionFn action; /* NULL: stop the run */
  void *ud;
} jyUserEvent;

/* An input (jy_system_add_input): held (kind JY_INPUT_HELD, its initial value), a time table
 * (interp, count points; cubic: the spline's second derivatives m2) or a function with
 * breakpoints. The model's copies own their arrays and names. */
enum { JY_INPUT_HELD = -1, JY_INPUT_TABLE = 0, JY_INPUT_FUNCTION = 1 };
typedef struct jyInputDef {
  char *name, *unit;
  double value;
  int kind;
  jyInterp interp;
  int count;
  double *t, *u, *m2;
  jyInputFn fn;
  void *ud;
  int nbreaks;
  double *breaks;
} jyInputDef;

/* The state an event's `when` or action, or a controller, sees (sim_events.c; inputs.c for a
 * continuous controller, which runs inside an evaluation: sim NULL, eval set). */
struct jyEventCall {
  struct jySim *sim;
  struct jyEval *eval;
  const struct jyUserEvent *event;       /* NULL in a controller's call */
  const struct jyController *controller; /* NULL in an event's */
  double t;
  double *q, *v; /* into the state being read (const in a `when`) or changed */
  int in_action;
  int row_ready, stop, moved, param_changed;
  char error[512];
};

/* A controller (jy_system_add_controller): sampled every period, or continuous (period 0). */
typedef struct jyController {
  char *name;
  double period;
  jyControllerFn fn;
  void *ud;
} jyController;

/* Names to indices (open addressing; slot k holds index + 1, 0 empty), so that adding the
 * N-th part or glue checks its name in O(1), not against every earlier one. */
typedef struct jyNameIndex {
  int *slots;
  int cap; /* a power of two, at least twice the names held; 0 before the first */
} jyNameIndex;

struct jySystem {
  jyEnv *env;
  jyNameIndex part_names, glue_names;
  jyShapePool shapes; /* the parts' */
  jyUserChannel *channels;
  int nchannels, channels_cap;
  jyUserEvent *events;
  int nevents, events_cap;
  jyInputDef *inputs;
  int ninputs, inputs_cap;
  jyController *controllers;
  int ncontrollers, controllers_cap;
  jySysPart *parts;
  int nparts, parts_cap;
  jySysGlue *glues;
  int nglues, glues_cap;
  double gravity[3];
  char error[JY_ERROR_LEN];
};

/* A part of a compiled model. */
typedef struct jyModelPart {
  jyPartInstance inst;      /* name, params, data owned by the model */
  const jyPartShape *shape; /* in the model's shape pool */
  int coord_offset;         /* first global coordinate of its own (not eliminated) ones */
  int row_offset;           /* first global constraint row of its internal rows */
  int output_channel;       /* channel index of its first output */
  int row_force_channel;    /* "force.<part>.<row>" for each row, or -1 */
  int power_channel;        /* "power.<part>.ideal", ".nonideal", or -1 */
  int impulse_channel;      /* "impulse.<part>" for a part with modes, or -1 */
  int *coord_map;           /* ncoords: global index, or -1 - link for an eliminated coordinate */
  int first_link, nlinks;   /* its eliminated blocks: model->links[first_link ..] */
  /* With links: the global coordinates its local state depends on (its own kept ones first,
   * then those of its sources, up the chain), and how many links up the chain goes (1: its
   * sources have no links). Without: cols NULL, ncols = ncoords (its own), depth 0. */
  int *cols, ncols, depth;
  /* With links, each to a coordinate block of a part without links (a rod or a spring
   * between masses): local coordinate j is column gather[j], so G is a constant selection,
   * made once, and the view only gathers q and v. Else NULL. */
  int *gather;
} jyModelPart;

/* Column k of a part: its cols when it has links, else its own coordinate k. */
static inline int jy_part_column(const jyModelPart *p, int k) {
  return p->cols ? p->cols[k] : p->coord_offset + k;
}

/* The first of the coordinates terminal k of part p is exactly (a coordinate terminal, or a
 * terminal declared a coordinate block), or -1: its value needs no call to the part. */
static inline int jy_terminal_coord_block(const jyModelPart *p, int k) {
  if (k >= p->shape->nterminals) return k - p->shape->nterminals;
  const jyTerminalSpec *ts = &p->shape->terminals[k];
  return ts->is_coord_block ? ts->coord_offset : -1;
}

/* An eliminated glue: a block of coordinates of `part` (massless, or a part that declares
 * JY_PART_FOLLOWS_GLUE) follows a terminal of `source`, which may itself follow others. */
typedef struct jyModelLink {
  int glue;
  int part, offset, dim; /* the block: local coordinates offset .. offset + dim - 1 */
  int source, terminal;
  int part_is_a; /* the block is the glue's first terminal */
  int *pos;      /* the source's columns (its cols, or its own coordinates) in part's cols */
} jyModelLink;

typedef struct jyModelGlue {
  char *name;
  int part_a, terminal_a, part_b, terminal_b, dim;
  int row_offset;    /* -1 when eliminated */
  int link;          /* index into model->links when eliminated, else -1 */
  int force_channel; /* channel of the first force component */
} jyModelGlue;

struct jyModel {
  jyAllocator alloc;
  int n; /* coordinates */
  int m; /* constraint rows: parts' internal rows first, then glue rows */
  int nparts, nglues;
  jyModelPart *parts;
  jyShapePool shapes; /* the parts' distinct shapes, names owned by the model */
  jyModelGlue *glues;
  jyModelLink *links; /* sorted by part */
  int nlinks;
  double gravity[3];
  int nlocal;           /* coordinates of all parts, eliminated ones included */
  char **local_names;   /* nlocal "part.coord", owned, in part order */
  int *local_coord;     /* nlocal: the model coordinate of each, -1 when eliminated */
  char **coord_names;   /* n, "part.coord" (pointers into local_names) */
  char **row_names;     /* m */
  jyRowKind *row_kinds; /* m */
  int *row_part;        /* m: owning part, or -1 for glue rows */
  int nchannels;
  char **channel_names;
  jyUserChannel *user_channels; /* names owned by the model */
  int nuser, user_channel;      /* how many, and the channel index of the first */
  int ch_derived;               /* index of the first derived channel (JY_DERIVED_CHANNELS) */
  jyUserEvent *events;          /* nevents, in the order added; names owned by the model */
  int nevents;
  jyInputDef *inputs; /* ninputs, declaration order; input_channel: "input.<first>" */
  int ninputs, input_channel;
  double *breaks; /* nbreaks: every signal's breakpoints, sorted, each once */
  int nbreaks;
  jyController *controllers; /* ncontrollers, names owned; ncontinuous of them period 0 */
  int ncontrollers, ncontinuous;
  double *q0, *v0; /* consistent initial state */
  /* m flags: the rows that depend on the others at the initial state (redundant
   * constraints), left out of the acceleration solve; ndependent of them. */
  unsigned char *dependent_rows;
  int ndependent;
  char *report;
  size_t report_len, report_cap; /* grown geometrically: a report of N lines costs O(N) */
  jyMovedValue *moved;           /* nmoved: initial values moved beyond the assembly tolerance */
  int nmoved;
  jySolverDef solver;
  int max_part_coords, max_part_rows;
  int max_part_cols;                   /* most columns of a part (its ncols; at least 1) */
  int chain_depth;                     /* the deepest link chain (0: no links) */
  int *source_link_ptr, *source_links; /* nparts + 1, nlinks: the links each part leads */
  int has_laws;                        /* some part has a non-ideal law (fixed-point solve) */
  /* No rows, every glue eliminated and the links a tree (compile_glue.c): the acceleration
   * by the articulated recursion (dyn_tree.c); tree_order (nparts) lists the parts by depth,
   * sources before their followers. No part keeps columns beyond its own, nor a G. */
  int tree;
  int *tree_order;
};

/* The derived channels every model reports after t, q and der(q), in this order: their
 * names (compile_layout.c) and their offsets from model->ch_derived (eval_channels.c) come
 * from this one list. */
#define JY_DERIVED_CHANNELS(X)    \
  X(ENERGY, "energy")             \
  X(KINETIC, "kinetic")           \
  X(POTENTIAL, "potential")       \
  X(RESIDUAL_POS, "residual.pos") \
  X(RESIDUAL_VEL, "residual.vel") \
  X(POWER_IDEAL, "power.ideal")   \
  X(POWER_NONIDEAL, "power.nonideal")

enum {
#define JY_DERIVED_OFFSET(id, name) JY_CH_##id,
  JY_DERIVED_CHANNELS(JY_DERIVED_OFFSET)
#undef JY_DERIVED_OFFSET
    JY_NUM_DERIVED
};

/* What jy_assemble fills. */
enum {
  JY_ASM_MASS = 1u,
  JY_ASM_FORCE = 2u,
  JY_ASM_NONIDEAL = 4u,
  JY_ASM_CONSTRAINTS = 8u, /* A and b */
  JY_ASM_RESIDUALS = 16u,  /* residual and rate per row */
  JY_ASM_SPARSE_ONLY = 32u /* M and A into the store only (when the evaluator solves there) */
};

/* What a projection assembles: M and A where the evaluator solves (the store alone on a
 * large model), the residuals and rates. */
#define JY_ASM_PROJECTION (JY_ASM_MASS | JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS | JY_ASM_SPARSE_ONLY)

/* The articulated recursion's buffers (dyn_tree.c), for a tree model: per part (nc its
 * coordinates, at mat_at / vec_at) its articulated mass and force in its own coordinates
 * (its M, Q and C plus what its followers pass up), the factor of the block of its kept
 * coordinates, that block's solve against the rest (nc x (nc + 1)), its acceleration; per
 * link the source terminal's Jacobian (dim x the source's nc, at link_jac_at) and bias, and
 * the glue's force on the block, written by the views and the recursion. */
typedef struct jySpatialWork jySpatialWork;

typedef struct jyTreeWork {
  size_t *mat_at, *vec_at, *link_jac_at;
  size_t mats, vecs; /* the pools' lengths */
  double *mass, *factor, *reduced, *force, *acc;
  double *link_jac, *link_bias, *link_force; /* link_bias, link_force: JY_TERMINAL_MAX_DIM a link */
  double nonideal_power; /* C . (v_loc - velocity bias) over the parts: C . v in global terms */
  /* per part: its kept local coordinates then its eliminated ones (coords, at vec_at), how
   * many are kept, the one source of its links (-1: a force element between parts, or none) */
  int *coords, *nkept, *source;
  double *scratch; /* M', Q', the stacked Jacobian and bias, M' J: 4 w^2 + 4 w (w: widest part) */
} jyTreeWork;

struct jyEval {
  const jyModel *model;
  jyAllocator alloc;
  double run_rtol, run_atol; /* a simulation's tolerances (jyPartState.rtol, .atol), else 0 */
  /* Inputs (inputs.c): the held values (ninputs), the values, rates and accelerations at
   * input_t (3 ninputs, after them), valid while input_valid; the segment between
   * breakpoints being integrated (-inf, inf outside a run); a signal's failure. */
  double *input_held, *input_now;
  double input_t, input_lo, input_hi;
  int input_valid;
  jyStatus input_status;
  char input_error[JY_ERROR_LEN];
  double *mass, *force, *nonideal, *jac, *rhs, *residual,
    *rate; /* global, dense; a large model keeps no M and makes A only when compile needs it */
  double *multipliers; /* m */
  /* scratch for one part call; local_bias: -M_loc g of a mapped part, added to its Q_loc */
  double *local_mass, *local_vec, *local_bias, *local_jac, *local_rhs, *local_res, *local_rate;
  double *local_balance; /* an eliminated glue's part: its balance (eval_channels.c) */
  double *term_jac_a, *term_jac_b;
  /* The local view of each part with links (eliminated coordinates): q, v, the
   * acceleration bias g (q_loc'' = G q'' + g) and G, dense over the part's columns (p->cols,
   * ncols to a row); the part's at views + view_at[part]. A view is computed once per
   * view_epoch (view_stamp[part]): jy_assemble and every other entry with a new state start
   * an epoch, so a chain's sources are evaluated once per assembly, not once per follower. */
  double *views;
  size_t *view_at;
  uint64_t *view_stamp, view_epoch;
  /* The parts' scratch (jyPartState.scratch): part i's shape.scratch_size bytes at
   * scratch + scratch_at[i]; NULL when no part keeps any. */
  unsigned char *scratch;
  size_t *scratch_at;
  double *acc_loc;
  double *block; /* G^T M_loc G, A_loc G, J G: max_part_cols x (max_part_cols + rows) */
  /* Where each block lands in the store, so no assembly searches the pattern: per part with
   * mass its ncols x ncols block over its columns (column-major), per part with rows its
   * nrows x ncols, per glue with rows its dim x (ncols of part a, then of part b); -1: not
   * in the pattern. Offsets into slots: mass_slot_at, row_slot_at (nparts), glue_slot_at. */
  int *slots;
  size_t *mass_slot_at, *row_slot_at, *glue_slot_at;
  jyUkWork *uk;
  /* The fixed-pattern compressed-column store of M (both triangles) and A, built for every
   * model from its parts, links and glues (jy_eval_constraint_matrix hands A out). When
   * store_solves (the model has at least sparse_min_coords coordinates) jy_assemble fills it
   * on every call and the solves go through it (sparse for diagonal M, kkt otherwise); the
   * dense arrays are then filled only when a caller asks (JY_ASM_SPARSE_ONLY leaves them).
   * store_valid / dense_valid: which of JY_ASM_MASS, JY_ASM_CONSTRAINTS each holds now. */
  jyCsc store_mass, store_jac;
  int *store_mass_diag;         /* n: position of M_jj in store_mass */
  double *mass_diag;            /* n: M's diagonal gathered for the diagonal path */
  unsigned char *solve_dropped; /* m: scratch, rows a projection leaves out */
  int store_solves;
  unsigned store_valid, dense_valid;
  /* The state (q then v, 2n) and time of the last assembly that filled both M and A in the
   * store, while matrices_valid (cleared by a failed or partial one, a parameter or a mode
   * change): a check that can do with matrices from within tolerance of its own state
   * solves with these instead of assembling and factoring again. */
  double *matrices_state, matrices_t;
  int matrices_valid;
  /* store_only: a solve the store path cannot make fails (JY_UK_NOT_UNIQUE) rather than go
   * dense (an estimate that is worth only what it saves); store_solved: the last solve was
   * made in the store. */
  int store_only, store_solved;
  int dense_refused;   /* the last solve: failed on the sparse path, too large for dense */
  int lazy_dense;      /* solves in the store: dense arrays made on demand (jy_eval_dense_ready) */
  double *jac_times_v; /* m: A v for the output rows' powers */
  int large;           /* no dense M, projection copy or dense workspace kept (see eval.c) */
  /* The glues with rows on each part: part_glues[part_glue_ptr[p] .. part_glue_ptr[p + 1])
   * hold 2 * glue + side (side 1: the part is the glue's second terminal). */
  int *part_glue_ptr, *part_glues;
  jySparseWork *sparse; /* diagonal M; NULL: not applicable */
  jyKktWork *kkt;       /* any M; NULL: dense only */
  /* The rows this evaluator leaves out of every solve (m flags, ndependent set): the
   * model's dependent rows, re-decided when one of them stops being implied by the others
   * (rank_changes counts the re-decisions). */
  unsigned char *dependent;
  int ndependent;
  long rank_changes;
  /* factorizations so far by jy_eval_solve (dense, sparse, KKT: a solve reusing the KKT
   * factor in hand makes none), the measure of a projection's work */
  long factorizations;
  int mass_diagonal; /* the last assembled M has nothing off its diagonal */
  /* mass_constant: every part with mass declares JY_PART_CONSTANT_MASS and its view is its
   * own coordinates or a gather (a constant G), so the M in the store stays as assembled;
   * mass_kept: it is assembled, finite, and no parameter or mode changed since. A store-only
   * assembly of M then leaves it as it is. */
  int mass_constant, mass_kept;
  /* While jy_assemble's first pass runs: the parts' outputs are not checked one by one,
   * the assembled arrays are checked once at the end (a pass that checks every part call
   * follows only when they are not finite, to name the part). */
  int trust_parts;
  int *flags; /* n */
  double *channel_scratch;
  /* A simulation's evaluator reports angle outputs (part.h angle_outputs) continuous:
   * angle_prev (nchannels) holds the last reports once angles_reported. Other evaluators
   * (model:evaluate, jy_eval_channels on one's own) report each state on its own. */
  int continue_angles, angles_reported;
  double *angle_prev;
  double baumgarte_rate; /* > 0: stabilize the constraints at this rate, 1/s */
  double *law_mu;        /* m: row forces of the last fixed-point solve (warm start) */
  double *law_acc;       /* n: the acceleration of the previous fixed-point pass */
  /* projection scratch (int_project.c) */
  double *proj_jac, *proj_rhs, *proj_target; /* m x n, m, m */
  double *proj_zero, *proj_dx;               /* n, n */
  unsigned char *proj_use;                   /* m */
  double *static_nonideal;                   /* n: C without the laws */
  /* Parts with modes (part.h jyPartHybrid; sim_hybrid.c sets them): each part's mode
   * (nparts; NULL: every part in mode 0) and the rows inactive in those modes (m flags,
   * ninactive set; NULL: none). Inactive rows are assembled as zero rows and are also flagged
   * in `dependent`, so every solve, projection and residual leaves them out. */
  int *modes;
  unsigned char *inactive;
  int ninactive;
  double *impulse;   /* nparts: the impulse of each part's last impact, reported once; NULL */
  int keep_impulses; /* set: a row evaluated but not written (every) leaves them pending */
  /* Parameter overrides of this evaluator (jy_eval_set_param): nparts instances, NULL until
   * the first; an overridden part's params and data are owned copies (owned_params). */
  jyPartInstance *insts;
  unsigned char *owned_params;
  jyTreeWork *tree; /* a tree model's recursion; NULL otherwise */
  /* A spatial tree's recursion (dyn_spatial.c): the acceleration without the rows; NULL
   * when the model is none (or tree_recursion is off) */
  jySpatialWork *spatial;
  /* NULL: an assembly of rows makes every part's and glue's; else only those flagged (the
   * parts, then the glues), and the A it leaves is not marked whole (the spatial recursion's
   * rows beside its tree: dyn_spatial.c sets it around its own assembly) */
  const unsigned char *row_filter;
  char part_error[512];
  char error[JY_ERROR_LEN];
};

/* The evaluator's functions, declared in eval.h on the structs above: every stage and stage
 * test that includes this header sees them too. */
/* inputs.c: the system's inputs and controllers freed, copied into a model, freed there; an
 * evaluator's inputs made (held values at their initial ones), their values at t (JY_OK, or
 * a signal's failure in e->error), the segment of the run between breakpoints; the
 * did-you-mean for an unknown input name. */
void jy_system_free_inputs(jySystem *sys);
jyStatus jy_model_copy_inputs(jyModel *md, const jySystem *sys);
void jy_model_free_inputs(jyModel *md);
/* jy_eval_channels computing only what the channels with want[i] set need (want NULL:
 * all); the others are left as they were in out. eval_channels.c says what is skipped. */
jyStatus jy_eval_channels_masked(jyEval *e, const double *q, const double *v, double t, double *out,
                                 const unsigned char *want);
jyStatus jy_eval_inputs_init(jyEval *e);
jyStatus jy_eval_inputs_at(jyEval *e, double t);
/* Sorts the count times in x and keeps each once; returns how many are left. */
int jy_sort_unique(double *x, int count);
/* The inputs at (q, v, t) for an evaluation: jy_eval_inputs_at, then the continuous
 * controllers' values over them. JY_OK, or the failure in e->error. */
jyStatus jy_eval_inputs_state(jyEval *e, const double *q, const double *v, double t);
/* A continuous controller's jy_event_set_input: input k's value for this evaluation. */
jyStatus jy_eval_drive_input(jyEval *e, int k, double value, char *error, size_t len);
void jy_eval_input_segment(jyEval *e, double lo, double hi);
void jy_model_input_hint(const jyModel *model, const char *name, char *out, size_t len);

#include "eval.h"

#endif

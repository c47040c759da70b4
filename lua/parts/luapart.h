/* lua/parts/luapart.h — what the files of the Lua part types share (private to lua/).
 *
 * A part type written in Lua goes through three stages, one file each:
 *   lua/parts/part_type.c   joinery.part_type{...}: parses the definition into an LpType and
 *                     registers it in the module's environment;
 *   lua/parts/part_calls.c  the protocol functions the engine calls (lp_mass, lp_terminal, ...):
 *                     trampolines into the script's functions, with their cache;
 *   lua/parts/jet.c         the joinery.Jet numbers those functions compute with, which give the
 *                     derivatives (and joinery.math's functions on them).
 * lua/parts/eval_part.c (joinery.eval_part) evaluates any registered type, Lua or C, through the
 * public part protocol alone. docs/parts.md is the user's guide.
 */
#ifndef JOINERY_LUA_LUAPART_H
#define JOINERY_LUA_LUAPART_H

#include <pthread.h>
#include <stddef.h>

#include <lua.h>

#include "joinery/part.h"

/* Why a part has at most JY_PART_MAX_COORDS coordinates and JY_PART_MAX_ROWS rows, for the
 * messages that enforce it: each part's block is dense (its mass matrix, Jacobians and
 * derivatives cover all its coordinates at once, so its work grows as their square or
 * cube), and the part protocol's jyPartShape holds them in fixed tables. */
#define JYL_PART_LIMIT_WHY                                                                \
  "a part's coordinates and rows form one dense block, whose work grows as their square " \
  "or cube, held in the part protocol's fixed tables"

/* ---- Jets (lua/parts/jet.c) ------------------------------------------------------------------ */

/* A forward-mode number: the value, the gradient over the evaluation's N variables, R rows
 * of its Hessian and, when dd, the first and second derivatives along one direction. */
typedef struct Jet {
  int N; /* gradient length */
  int R; /* Hessian rows: rows of variables roff .. roff + R - 1, N columns each */
  int roff;
  int dd; /* 1: d1, d2 carry the first and second derivative along a direction */
  double v, d1, d2;
  double g[]; /* N gradient entries, then R * N Hessian entries */
} Jet;

/* Jets of different layouts come from different evaluations and must not be combined. */
static inline int jyl_jet_same_layout(const Jet *a, const Jet *b) {
  return a->N == b->N && a->R == b->R && a->roff == b->roff && a->dd == b->dd;
}

/* Pushes a new Jet of the given layout, every derivative 0 (the joinery.Jet metatable must
 * be registered: jyl_open_jets). */
Jet *jyl_jet_new(lua_State *L, int N, int R, int roff, int dd);

/* Registers the joinery.Jet metatable and teaches the functions of joinery.math (in the
 * module table at mod_idx, after jyl_open_math) to take Jets. */
void jyl_open_jets(lua_State *L, int mod_idx);

/* ---- Lua part type records (filled by lua/parts/part_type.c, used by lua/parts/part_calls.c) -------- */

typedef enum { DYN_NONE, DYN_LAGRANGIAN, DYN_ENERGY, DYN_DIRECT } DynMode;

typedef struct LpFn {
  int slot;    /* the function's index on the type's thread; 0: none */
  char *label; /* "lagrangian (model.lua:12)" */
} LpFn;

typedef struct LpTerminal {
  char *name;
  int dim;
  int coords[JY_TERMINAL_MAX_DIM]; /* a coordinate block when fn.slot == 0 */
  int is_block, offset;
  LpFn fn;
  int cache; /* offset of its cache in the instance data (doubles) */
} LpTerminal;

/* One constraint row. An entry of `constraints` gives `count` consecutive rows with one
 * function (rows = k: the function returns k values); comp is the row's place in it. */
typedef struct LpRow {
  char *name;
  jyRowKind kind;
  LpFn fn;   /* set on every row of the entry (the label is owned by the first) */
  int count; /* rows of the entry (on its first row; 0 on the others) */
  int comp;  /* 0 .. count - 1 */
} LpRow;

typedef struct LpOutput {
  char *name;
  LpFn fn;
} LpOutput;

/* One visual (part protocol 7): its kind and size, and the function placing it. */
typedef struct LpVisual {
  int kind; /* jyVisualKind */
  double size;
  LpFn fn;
} LpVisual;

typedef struct LpType {
  jyPartType type; /* what the engine sees; type.type_data points here */
  lua_State *T;    /* the type's own thread (anchored by ref) */
  pthread_t owner; /* the OS thread that defined it: the only one its Lua may run in */
  int ref;
  int busy;
  char *name, *doc;
  jyParamSpec *params;
  int nparams;
  int n;
  char **coord_names;
  double *coord_defaults;
  int nterm, nrows, nout;
  LpTerminal term[JY_PART_MAX_TERMINALS];
  LpRow rows[JY_PART_MAX_ROWS];
  LpOutput out[JY_PART_MAX_OUTPUTS];
  int nvis;
  LpVisual vis[JY_PART_MAX_VISUALS];
  DynMode mode;
  LpFn lagrangian, kinetic, potential, mass, force, nonideal, law;
  unsigned flags;
  unsigned angle_outputs; /* jyPartShape.angle_outputs */
  int flat;               /* functions get arrays (x[1], ...) and no p (sys:constrain's types) */
  /* Modes (lua/parts/part_modes.c): names, the rows active in each (bit r: row r), the guards'
   * count and the functions; nmodes 0 for a part without modes. */
  int nmodes, nguards;
  /* &jyl_lp_hybrid with modes (set by part_type.c, above both part_calls.c, whose shape
   * function hands it out, and part_modes.c, which defines it), else NULL */
  const jyPartHybrid *hybrid;
  char **mode_names;
  unsigned long long *mode_rows;
  LpFn guards, transition, admissible, initial_mode;
  /* stack slots on T */
  int s_msgh, s_jetmt, s_names, s_p, s_p_proxy, s_grav, s_inputs, s_qn, s_qn_proxy, s_vn,
    s_vn_proxy, s_rowf;
  int s_lawf, s_lawf_proxy, s_acc, s_acc_proxy; /* the law's row forces and accelerations */
  int s_lag_q, s_lag_v, s_lag_t, s_pos_q, s_pos_t, s_vel_q, s_vel_v, s_vel_t;
  Jet **lag_q, **lag_v, *lag_t, **pos_q, *pos_t, **vel_q, **vel_v, *vel_t;
  /* the parameter values and gravity p was last filled with */
  double *p_last;
  int p_filled;
  size_t data_doubles; /* instance cache size */
  int dyn_cache;       /* offset of the dynamics cache */
} LpType;

/* ---- lua/parts/part_calls.c ------------------------------------------------------------------ */

/* Frees the record and everything it owns (not its thread: the registry reference does). */
void jyl_lp_free(LpType *lt);

/* Lays out the instance cache (lt->data_doubles and the offsets) and fills lt->type: the
 * protocol functions the definition needs, release, type_data. Call once parsed. */
void jyl_lp_bind_calls(LpType *lt);

/* The calling conventions part_modes.c shares with part_calls.c. */
int jyl_lp_enter(LpType *lt, const jyPartInstance *self, const jyPartState *s, int *base);
void jyl_lp_leave(LpType *lt, int base);
/* Fills q, v as numbers and f (row forces by row name and number), a (accelerations by
 * coordinate) for the law and the modes' functions; pushes nothing. */
void jyl_lp_fill_law_args(LpType *lt, const jyPartState *s, const double *row_forces,
                          const double *acc);
/* Pushes (q, v, t, p) as numbers (after the function). Returns how many. */
int jyl_lp_push_plain_args(LpType *lt, const jyPartState *s);
/* lua_pcall with the type's message handler and nres results; 1 with "<label>: message" in
 * error on failure. */
int jyl_lp_pcall(LpType *lt, const LpFn *fn, int nargs, int nres, char *error, size_t len);

/* ---- lua/parts/part_modes.c ------------------------------------------------------------------ */

/* The jyPartHybrid every Lua part type with modes uses (it dispatches on the type's record). */
extern const jyPartHybrid jyl_lp_hybrid;

/* ---- lua/parts/eval_part.c ------------------------------------------------------------------- */

/* Pushes joinery.eval_part bound to the environment userdata at env_idx. */
void jyl_push_eval_part(lua_State *L, int env_idx);
/* lua/parts/part_type.c: __newindex of a read-only argument view; upvalue 1 names it ("q"). */
int jyl_read_only_error(lua_State *L);

#endif

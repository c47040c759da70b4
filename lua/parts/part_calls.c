/* lua/parts/part_calls.c — the part protocol functions of a Lua part type: trampolines from the
 * engine into the script's functions (lp_mass, lp_force, lp_terminal, lp_constraints, ...),
 * and their cache. lua/parts/part_type.c builds the record (LpType) they read.
 *
 * Calls into Lua. Every type owns a Lua thread of its own; its stack holds, once and for
 * all, the message handler, the script's functions, the argument tables and the input Jets,
 * so a call pushes only stack copies. Every call goes through lua_pcall with the handler:
 * no Lua error unwinds through engine or CVODE frames. A failure writes
 * "<function> (script:line): message" into state->error; the engine adds the part's name,
 * which protocol function and the time. Lua parts allocate in the Lua heap while the engine
 * evaluates them (the engine's no-allocation rule holds for C parts) and are
 * single-threaded: one lua_State, and a type's own functions cannot run a simulation of it.
 *
 * Caching. An instance's data block (instance_size) holds the last (q, v, t, gravity) the
 * dynamics and each terminal were evaluated at, with the results: mass, force and energy in
 * one right-hand side share one Lua call. The engine treats instance data as read-only while
 * simulating; writing this cache is safe because a Lua part only runs on its lua_State's
 * thread and the cache is keyed by the complete input.
 */
#include "luapart.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define TD JY_TERMINAL_MAX_DIM /* room for the largest terminal */

/* Cache block: [0] valid, then the key q (n), v (n), t, gravity (3), then the results. */
static int key_len(int n) { return 2 * n + 4; }
enum { DYN_L, DYN_T, DYN_V, DYN_M }; /* result offsets after the key; M (n*n) then Q (n) */

void jyl_lp_free(LpType *lt) {
  if (!lt) return;
  free(lt->name);
  free(lt->doc);
  for (int i = 0; i < lt->nparams; i++) {
    free((char *)lt->params[i].name);
    free((char *)lt->params[i].unit);
    free((char *)lt->params[i].doc);
  }
  free(lt->params);
  for (int i = 0; i < lt->n; i++) free(lt->coord_names[i]);
  free(lt->coord_names);
  free(lt->coord_defaults);
  for (int k = 0; k < lt->nterm; k++) {
    free(lt->term[k].name);
    free(lt->term[k].fn.label);
  }
  for (int r = 0; r < lt->nrows; r++) {
    free(lt->rows[r].name);
    if (lt->rows[r].comp == 0) free(lt->rows[r].fn.label);
  }
  for (int o = 0; o < lt->nout; o++) {
    free(lt->out[o].name);
    free(lt->out[o].fn.label);
  }
  for (int i = 0; i < lt->nvis; i++) free(lt->vis[i].fn.label);
  LpFn *fns[] = {&lt->lagrangian, &lt->kinetic,  &lt->potential, &lt->mass,
                 &lt->force,      &lt->nonideal, &lt->law};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) free(fns[i]->label);
  LpFn *mode_fns[] = {&lt->guards, &lt->transition, &lt->admissible, &lt->initial_mode};
  for (size_t i = 0; i < sizeof mode_fns / sizeof mode_fns[0]; i++) free(mode_fns[i]->label);
  for (int k = 0; k < lt->nmodes; k++) free(lt->mode_names[k]);
  free(lt->mode_names);
  free(lt->mode_rows);
  free(lt->lag_q);
  free(lt->p_last);
  free(lt);
}

static void lp_release(const jyPartType *type) {
  LpType *lt = (LpType *)type->type_data;
  if (!lt) return;
  /* The thread is still alive here (even inside lua_close, finalizers run first). */
  if (lt->T && lt->ref != LUA_NOREF) luaL_unref(lt->T, LUA_REGISTRYINDEX, lt->ref);
  jyl_lp_free(lt);
}

/* ---- calling Lua ------------------------------------------------------------------------ */

/* The one way a Lua part's failure is written: into the state's error buffer, naming the
 * script's function (the engine adds the part, the protocol function and the time).
 * Returns 1, the protocol's failure. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *error, size_t len, const char *fmt, ...) {
  if (error && len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, len, fmt, ap);
    va_end(ap);
  }
  return 1;
}

/* Fills p with the instance's parameters and the gravity (when they changed). */
static void fill_params(LpType *lt, const double *params, const double *gravity) {
  lua_State *T = lt->T;
  int np = lt->nparams;
  if (lt->p_filled && memcmp(lt->p_last, params, sizeof(double) * (size_t)np) == 0 &&
      memcmp(lt->p_last + np, gravity, sizeof(double) * 3) == 0)
    return;
  for (int i = 0; i < np; i++) {
    lua_pushnumber(T, params[i]);
    lua_setfield(T, lt->s_p, lt->params[i].name);
  }
  for (int i = 0; i < 3; i++) {
    lua_pushnumber(T, gravity[i]);
    lua_rawseti(T, lt->s_grav, i + 1);
  }
  memcpy(lt->p_last, params, sizeof(double) * (size_t)np);
  memcpy(lt->p_last + np, gravity, sizeof(double) * 3);
  lt->p_filled = 1;
}

/* Fills the plain-number tables q (and v when v != NULL) by coordinate name. */
static void fill_numbers(LpType *lt, const double *q, const double *v) {
  lua_State *T = lt->T;
  for (int i = 0; i < lt->n; i++) {
    lua_rawgeti(T, lt->s_names, i + 1);
    lua_pushnumber(T, q[i]);
    lua_rawset(T, lt->s_qn);
    if (v) {
      lua_rawgeti(T, lt->s_names, i + 1);
      lua_pushnumber(T, v[i]);
      lua_rawset(T, lt->s_vn);
    }
  }
}

/* Pushes p, the instance's parameters, unless the type is flat (its functions get no p). */
static void push_p(LpType *lt) {
  if (!lt->flat) lua_pushvalue(lt->T, lt->s_p_proxy);
}

/* The argument lists, pushed after the function; each returns how many it pushed. */

/* (q, v, t, p) as plain numbers (fill_numbers first); p.inputs[k] the model's input k - 1
 * at t (part protocol 6). */
static int push_plain_args(LpType *lt, const jyPartState *s) {
  if (!lt->flat)
    for (int k = 0; k < s->ninputs; k++) {
      lua_pushnumber(lt->T, s->inputs[k]);
      lua_rawseti(lt->T, lt->s_inputs, k + 1);
    }
  lua_pushvalue(lt->T, lt->s_qn_proxy);
  lua_pushvalue(lt->T, lt->s_vn_proxy);
  lua_pushnumber(lt->T, s->t);
  push_p(lt);
  return 4 - lt->flat;
}

/* (q, [v,] t, p) as LAG Jets: v for the Lagrangian and the kinetic energy. */
static int push_lag_args(LpType *lt, int with_v) {
  lua_pushvalue(lt->T, lt->s_lag_q);
  if (with_v) lua_pushvalue(lt->T, lt->s_lag_v);
  lua_pushvalue(lt->T, lt->s_lag_t);
  push_p(lt);
  return 3 + with_v - lt->flat;
}

/* (q, t, p) as POS Jets (terminals, phi). */
static int push_pos_args(LpType *lt) {
  lua_pushvalue(lt->T, lt->s_pos_q);
  lua_pushvalue(lt->T, lt->s_pos_t);
  push_p(lt);
  return 3 - lt->flat;
}

/* (q, v, t, p) as VEL Jets (psi). */
static int push_vel_args(LpType *lt) {
  lua_pushvalue(lt->T, lt->s_vel_q);
  lua_pushvalue(lt->T, lt->s_vel_v);
  lua_pushvalue(lt->T, lt->s_vel_t);
  push_p(lt);
  return 4 - lt->flat;
}

/* Calls the function fn with nargs arguments already pushed after it; nres results. */
static int lp_pcalln(LpType *lt, const LpFn *fn, int nargs, int nres, char *error, size_t len) {
  int st = lua_pcall(lt->T, nargs, nres, lt->s_msgh);
  if (st == LUA_OK) return 0;
  const char *msg = lua_tostring(lt->T, -1);
  return fail(error, len, "%s: %s", fn->label, msg ? msg : "error (no message)");
}

static int lp_pcall(LpType *lt, const LpFn *fn, int nargs, char *error, size_t len) {
  return lp_pcalln(lt, fn, nargs, 1, error, len);
}

int jyl_lp_enter(LpType *lt, const jyPartInstance *self, const jyPartState *s, int *base) {
  /* A lua_State is not thread-safe: a model of Lua parts simulated in another OS thread
   * (joinery.h's thread contract) would corrupt it. Checked before busy, which is no lock. */
  if (!pthread_equal(pthread_self(), lt->owner))
    return fail(s->error, s->error_len,
                "Lua part type '%s' runs only in the thread whose Lua state defined it: a model "
                "with Lua parts cannot be simulated in another thread (joinery.h, Threads)",
                lt->name);
  if (lt->busy)
    return fail(s->error, s->error_len,
                "Lua part type '%s' was called again from inside one of its own functions "
                "(a simulation of it started from its own code?)",
                lt->name);
  lt->busy = 1;
  *base = lua_gettop(lt->T);
  fill_params(lt, self->params, s->gravity);
  return 0;
}

void jyl_lp_leave(LpType *lt, int base) {
  lua_settop(lt->T, base);
  lt->busy = 0;
}

/* ---- the cache -------------------------------------------------------------------------- */

static double *instance_data(const jyPartInstance *self) {
  /* The engine allocated this block writable and handed it to init; see "Caching" above. */
  return (double *)self->data;
}

static int cache_hit(const double *blk, const jyPartState *s, int n) {
  return blk[0] == 1.0 && memcmp(blk + 1, s->q, sizeof(double) * (size_t)n) == 0 &&
    memcmp(blk + 1 + n, s->v, sizeof(double) * (size_t)n) == 0 &&
    memcmp(blk + 1 + 2 * n, &s->t, sizeof(double)) == 0 &&
    memcmp(blk + 2 + 2 * n, s->gravity, 3 * sizeof(double)) == 0;
}

static void cache_store_key(double *blk, const jyPartState *s, int n) {
  memcpy(blk + 1, s->q, sizeof(double) * (size_t)n);
  memcpy(blk + 1 + n, s->v, sizeof(double) * (size_t)n);
  blk[1 + 2 * n] = s->t;
  memcpy(blk + 2 + 2 * n, s->gravity, 3 * sizeof(double));
}

/* ---- reading results -------------------------------------------------------------------- */

/* The Jet result at idx in layout `like`, or a plain number (NULL, value in *x). Writes an
 * error and returns 1 for anything else. */
static int result_jet(LpType *lt, int idx, const Jet *like, const Jet **out, double *x,
                      const LpFn *fn, char *error, size_t len) {
  lua_State *T = lt->T;
  *out = NULL;
  if (lua_type(T, idx) == LUA_TNUMBER) {
    *x = (double)lua_tonumber(T, idx);
    return 0;
  }
  if (lua_type(T, idx) == LUA_TUSERDATA && lua_getmetatable(T, idx)) {
    int is = lua_rawequal(T, -1, lt->s_jetmt);
    lua_pop(T, 1);
    const Jet *j = (const Jet *)lua_touserdata(T, idx);
    if (is && jyl_jet_same_layout(j, like)) {
      *out = j;
      *x = j->v;
      return 0;
    }
    if (is)
      return fail(error, len, "%s: returned a value computed in another evaluation", fn->label);
  }
  return fail(error, len, "%s: must return a number, got %s", fn->label, luaL_typename(T, idx));
}

/* Reads n numbers keyed by coordinate name from the table at idx (missing: 0). */
static int read_coord_map(LpType *lt, int idx, double *out, const LpFn *fn, char *error,
                          size_t len) {
  lua_State *T = lt->T;
  int n = lt->n;
  for (int i = 0; i < n; i++) out[i] = 0.0;
  lua_pushnil(T);
  while (lua_next(T, idx)) {
    int which = -1;
    if (lua_type(T, -2) == LUA_TSTRING)
      for (int i = 0; i < n; i++)
        if (strcmp(lua_tostring(T, -2), lt->coord_names[i]) == 0) which = i;
    if (which < 0)
      return fail(error, len, "%s: returned key '%s', which is no coordinate", fn->label,
                  lua_type(T, -2) == LUA_TSTRING ? lua_tostring(T, -2) : "?");
    if (lua_type(T, -1) != LUA_TNUMBER)
      return fail(error, len, "%s: entry '%s' is %s, not a number", fn->label,
                  lt->coord_names[which], luaL_typename(T, -1));
    out[which] = (double)lua_tonumber(T, -1);
    lua_pop(T, 1);
  }
  return 0;
}

/* Reads n numbers at idx: an array of n, or a table keyed by coordinate name (missing: 0). */
static int read_coord_vector(LpType *lt, int idx, double *out, const LpFn *fn, char *error,
                             size_t len) {
  lua_State *T = lt->T;
  int n = lt->n;
  if (lua_type(T, idx) != LUA_TTABLE)
    return fail(error, len, "%s: must return a table of %d numbers, got %s", fn->label, n,
                luaL_typename(T, idx));
  lua_Integer count = (lua_Integer)lua_rawlen(T, idx);
  if (count == 0) return read_coord_map(lt, idx, out, fn, error, len);
  if (count != n)
    return fail(error, len, "%s: returned %d entries; the part has %d coordinates", fn->label,
                (int)count, n);
  for (int i = 0; i < n; i++) {
    if (lua_rawgeti(T, idx, i + 1) != LUA_TNUMBER)
      return fail(error, len, "%s: entry %d is %s, not a number", fn->label, i + 1,
                  luaL_typename(T, -1));
    out[i] = (double)lua_tonumber(T, -1);
    lua_pop(T, 1);
  }
  return 0;
}

static int finite_all(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* ---- the dynamics: M, Q, energies --------------------------------------------------------- */

static double kinetic_energy(int n, const double *M, const double *v) {
  double kin = 0.0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) kin += 0.5 * v[i] * M[i + k * n] * v[k];
  return kin;
}

/* Adds sign times L's terms to M (n x n, symmetrized) and Q (n), from a LAG Jet:
 * M = L_vv, Q = L_q - L_vq v - L_vt. */
static void lagrange_terms(int n, const Jet *j, const double *v, double sign, double *M,
                           double *Q) {
  int N = j->N;
  const double *g = j->g, *H = j->g + N;
  for (int i = 0; i < n; i++) {
    double q = g[i] - H[i * N + 2 * n];
    for (int k = 0; k < n; k++) q -= H[i * N + k] * v[k];
    Q[i] += sign * q;
    for (int k = 0; k < n; k++) M[i + k * n] += sign * 0.5 * (H[i * N + n + k] + H[k * N + n + i]);
  }
}

/* Calls a LAG function (lagrangian, kinetic: with v; potential: without); its result stays
 * on the stack: a Jet in *j, or a constant (*j NULL), the value in *x. */
static int call_lag(LpType *lt, const LpFn *fn, int with_v, const jyPartState *s, const Jet **j,
                    double *x) {
  lua_pushvalue(lt->T, fn->slot);
  int nargs = push_lag_args(lt, with_v);
  return lp_pcall(lt, fn, nargs, s->error, s->error_len) ||
    result_jet(lt, -1, lt->lag_t, j, x, fn, s->error, s->error_len);
}

/* out = [L, T, V, M (n x n), Q (n)] from the Lagrangian, or from the kinetic and the
 * potential energy, in one call each on LAG Jets. */
static int lagrangian_dynamics(LpType *lt, const jyPartState *s, double *out) {
  int n = lt->n;
  double *M = out + DYN_M, *Q = M + n * n;
  for (int i = 0; i < n; i++) {
    lt->lag_q[i]->v = s->q[i];
    lt->lag_v[i]->v = s->v[i];
  }
  lt->lag_t->v = s->t;
  const Jet *jl = NULL, *jt = NULL, *jv = NULL;
  double xl = 0.0, xt = 0.0, xv = 0.0;
  const LpFn *what = &lt->lagrangian; /* the function a non-finite result is blamed on */
  if (lt->mode == DYN_LAGRANGIAN) {
    if (call_lag(lt, &lt->lagrangian, 1, s, &jl, &xl)) return 1;
  } else {
    if (lt->kinetic.slot) {
      what = &lt->kinetic;
      if (call_lag(lt, &lt->kinetic, 1, s, &jt, &xt)) return 1;
    }
    if (lt->potential.slot) {
      if (call_lag(lt, &lt->potential, 0, s, &jv, &xv)) return 1;
      if (!lt->kinetic.slot) what = &lt->potential;
    }
  }
  for (int i = 0; i < n * n + n; i++) M[i] = 0.0;
  if (jl) lagrange_terms(n, jl, s->v, 1.0, M, Q);
  if (jt) lagrange_terms(n, jt, s->v, 1.0, M, Q); /* L = T - V */
  if (jv) lagrange_terms(n, jv, s->v, -1.0, M, Q);
  if (lt->mode == DYN_LAGRANGIAN) {
    out[DYN_L] = xl;
    out[DYN_T] = kinetic_energy(n, M, s->v);
    out[DYN_V] = out[DYN_T] - xl;
  } else {
    out[DYN_T] = xt;
    out[DYN_V] = xv;
    out[DYN_L] = xt - xv;
  }
  if (!finite_all(out, 3 + n * n + n))
    return fail(s->error, s->error_len, "%s: the value or a derivative is not finite (value %g)",
                what->label, out[DYN_L]);
  return 0;
}

/* M from `mass` (plain numbers): n rows of n numbers, or the n * n numbers row after row. */
static int direct_mass(LpType *lt, const jyPartState *s, double *M) {
  lua_State *T = lt->T;
  int n = lt->n;
  const char *label = lt->mass.label;
  char *err = s->error;
  size_t len = s->error_len;
  lua_pushvalue(T, lt->mass.slot);
  lua_pushvalue(T, lt->s_qn_proxy);
  lua_pushnumber(T, s->t);
  push_p(lt);
  if (lp_pcall(lt, &lt->mass, 3 - lt->flat, err, len)) return 1;
  int res = lua_gettop(T);
  if (lua_type(T, res) != LUA_TTABLE)
    return fail(err, len, "%s: must return an %d x %d table of numbers, got %s", label, n, n,
                luaL_typename(T, res));
  lua_Integer count = (lua_Integer)lua_rawlen(T, res);
  if (count != n && count != n * n)
    return fail(err, len, "%s: must return %d rows of %d numbers, got %d entries", label, n, n,
                (int)count);
  int one_list = lua_rawgeti(T, res, 1) != LUA_TTABLE;
  lua_pop(T, 1);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      if (one_list) {
        lua_rawgeti(T, res, i * n + k + 1);
      } else {
        if (lua_rawgeti(T, res, i + 1) != LUA_TTABLE)
          return fail(err, len, "%s: row %d is not a table", label, i + 1);
        lua_rawgeti(T, -1, k + 1);
        lua_remove(T, -2);
      }
      int ok = 0;
      M[i + k * n] = (double)lua_tonumberx(T, -1, &ok);
      if (!ok || lua_type(T, -1) != LUA_TNUMBER)
        return fail(err, len, "%s: entry (%d, %d) is %s, not a number", label, i + 1, k + 1,
                    luaL_typename(T, -1));
      lua_pop(T, 1);
    }
  return 0;
}

/* Adds `force` (plain numbers, fill_numbers first) to Q: the whole Q (mass/force given
 * directly) or a non-conservative addition to a Lagrangian's. */
static int add_force(LpType *lt, const jyPartState *s, double *Q) {
  double extra[JY_PART_MAX_COORDS];
  lua_pushvalue(lt->T, lt->force.slot);
  int nargs = push_plain_args(lt, s);
  if (lp_pcall(lt, &lt->force, nargs, s->error, s->error_len) ||
      read_coord_vector(lt, lua_gettop(lt->T), extra, &lt->force, s->error, s->error_len))
    return 1;
  if (!finite_all(extra, lt->n))
    return fail(s->error, s->error_len, "%s: returned a value that is not finite", lt->force.label);
  for (int i = 0; i < lt->n; i++) Q[i] += extra[i];
  return 0;
}

/* Evaluates the dynamics (M, Q, energies) at the state, through the cache. */
static int eval_dynamics(LpType *lt, const jyPartInstance *self, const jyPartState *s,
                         const double **res) {
  int n = lt->n;
  double *blk = instance_data(self) + lt->dyn_cache;
  double *out = blk + 1 + key_len(n), *M = out + DYN_M, *Q = M + n * n;
  *res = out;
  if (cache_hit(blk, s, n)) return 0;
  blk[0] = 0.0;
  int base, bad = 0;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  if (lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) {
    bad = lagrangian_dynamics(lt, s, out);
  } else if (lt->mode == DYN_DIRECT) {
    for (int i = 0; i < n * n + n + 3; i++) out[i] = 0.0;
    fill_numbers(lt, s->q, s->v);
    if (lt->mass.slot) bad = direct_mass(lt, s, M);
    lua_settop(lt->T, base);
    out[DYN_T] = kinetic_energy(n, M, s->v);
    out[DYN_L] = out[DYN_T];
  }
  if (!bad && lt->force.slot) {
    if (lt->mode != DYN_DIRECT) fill_numbers(lt, s->q, s->v);
    bad = add_force(lt, s, Q);
  }
  if (!bad && lt->mode == DYN_DIRECT && !finite_all(M, n * n))
    bad = fail(s->error, s->error_len, "%s: returned a value that is not finite", lt->mass.label);
  jyl_lp_leave(lt, base);
  if (bad) return 1;
  cache_store_key(blk, s, n);
  blk[0] = 1.0;
  return 0;
}

/* Positive semi-definite check by diagonally pivoted LDL^T; 0 when it is. */
static int check_psd(const LpType *lt, const double *Min, char *error, size_t len,
                     const char *label) {
  int n = lt->n;
  double A[JY_PART_MAX_COORDS * JY_PART_MAX_COORDS];
  int perm[JY_PART_MAX_COORDS];
  double scale = 0.0;
  for (int i = 0; i < n * n; i++) {
    A[i] = Min[i];
    if (fabs(A[i]) > scale) scale = fabs(A[i]);
  }
  double tol = 1e-10 * scale;
  for (int i = 0; i < n; i++) {
    perm[i] = i;
    for (int k = 0; k < i; k++)
      if (fabs(A[i + k * n] - A[k + i * n]) > tol)
        return fail(error, len,
                    "%s: the mass matrix is not symmetric (entries (%s, %s) = %g and %g)", label,
                    lt->coord_names[i], lt->coord_names[k], A[i + k * n], A[k + i * n]);
  }
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (A[i + i * n] > A[p + p * n]) p = i;
    if (p != k) {
      for (int i = 0; i < n; i++) { /* swap rows, then columns */
        double t = A[k + i * n];
        A[k + i * n] = A[p + i * n];
        A[p + i * n] = t;
      }
      for (int i = 0; i < n; i++) {
        double t = A[i + k * n];
        A[i + k * n] = A[i + p * n];
        A[i + p * n] = t;
      }
      int t = perm[k];
      perm[k] = perm[p];
      perm[p] = t;
    }
    double d = A[k + k * n];
    if (d <= tol) {
      /* The rest must vanish: a negative diagonal or a coupling with no mass is indefinite. */
      for (int i = k; i < n; i++)
        for (int j = k; j < n; j++)
          if ((i == j && A[i + j * n] < -tol) || (i != j && fabs(A[i + j * n]) > tol))
            return fail(error, len,
                        "%s: the mass matrix (d2L/dv2) is not positive semi-definite (%s; "
                        "coordinate '%s'): the kinetic energy must be >= 0 for every velocity",
                        label, i == j ? "a negative pivot" : "a coupling without mass",
                        lt->coord_names[perm[i]]);
      return 0;
    }
    for (int i = k + 1; i < n; i++)
      for (int j = k + 1; j < n; j++) A[i + j * n] -= A[i + k * n] * A[k + j * n] / d;
  }
  return 0;
}

static int lp_mass(const jyPartInstance *self, const jyPartState *s, double *M) {
  LpType *lt = (LpType *)self->type->type_data;
  const double *res;
  if (eval_dynamics(lt, self, s, &res)) return 1;
  int n = lt->n;
  memcpy(M, res + DYN_M, sizeof(double) * (size_t)(n * n));
  const LpFn *fn = lt->mode == DYN_LAGRANGIAN ? &lt->lagrangian
    : lt->mode == DYN_DIRECT                  ? &lt->mass
    : lt->kinetic.slot                        ? &lt->kinetic
                                              : &lt->potential;
  return check_psd(lt, M, s->error, s->error_len, fn->label);
}

static int lp_force(const jyPartInstance *self, const jyPartState *s, double *Q) {
  LpType *lt = (LpType *)self->type->type_data;
  const double *res;
  if (eval_dynamics(lt, self, s, &res)) return 1;
  memcpy(Q, res + DYN_M + lt->n * lt->n, sizeof(double) * (size_t)lt->n);
  return 0;
}

static int lp_energy(const jyPartInstance *self, const jyPartState *s, double *kinetic,
                     double *potential) {
  LpType *lt = (LpType *)self->type->type_data;
  const double *res;
  if (eval_dynamics(lt, self, s, &res)) return 1;
  *kinetic = res[DYN_T];
  *potential = res[DYN_V];
  return 0;
}

/* Sets the POS input Jets: values q, t; first derivatives along (v, 1). */
static void set_pos_inputs(LpType *lt, const jyPartState *s) {
  for (int i = 0; i < lt->n; i++) {
    lt->pos_q[i]->v = s->q[i];
    lt->pos_q[i]->d1 = s->v[i];
  }
  lt->pos_t->v = s->t;
}

/* ---- terminals -------------------------------------------------------------------------- */

/* Checks the result at res of terminal tm's function: a table of dim components, or a
 * single value when dim = 1. */
static int check_terminal_result(LpType *lt, const LpTerminal *tm, int res, const jyPartState *s) {
  lua_State *T = lt->T;
  if (lua_type(T, res) == LUA_TTABLE) {
    int count = (int)lua_rawlen(T, res);
    if (count != tm->dim)
      return fail(s->error, s->error_len,
                  "%s: returned %d components; terminal '%s' is declared with dim = %d",
                  tm->fn.label, count, tm->name, tm->dim);
  } else if (tm->dim != 1) {
    return fail(s->error, s->error_len,
                "%s: returned a %s; terminal '%s' needs a table of %d components", tm->fn.label,
                luaL_typename(T, res), tm->name, tm->dim);
  }
  return 0;
}

/* Calls terminal tm's function on POS Jets: its value val (dim), Jacobian J (dim x n) and
 * the velocity and acceleration biases vb, ab (dim). */
static int call_terminal(LpType *lt, const LpTerminal *tm, const jyPartState *s, double *val,
                         double *J, double *vb, double *ab) {
  lua_State *T = lt->T;
  int n = lt->n, dim = tm->dim;
  set_pos_inputs(lt, s);
  lua_pushvalue(T, tm->fn.slot);
  int nargs = push_pos_args(lt);
  if (lp_pcall(lt, &tm->fn, nargs, s->error, s->error_len)) return 1;
  int res = lua_gettop(T);
  if (check_terminal_result(lt, tm, res, s)) return 1;
  for (int i = 0; i < dim; i++) {
    int idx = res;
    if (lua_type(T, res) == LUA_TTABLE) {
      lua_rawgeti(T, res, i + 1);
      idx = lua_gettop(T);
    }
    const Jet *j;
    double x;
    if (result_jet(lt, idx, lt->pos_t, &j, &x, &tm->fn, s->error, s->error_len)) return 1;
    val[i] = x;
    for (int c = 0; c < n; c++) J[i + c * dim] = j ? j->g[c] : 0.0;
    vb[i] = j ? j->g[n] : 0.0;
    ab[i] = j ? j->d2 : 0.0;
  }
  if (!finite_all(val, dim) || !finite_all(J, dim * n) || !finite_all(vb, dim) ||
      !finite_all(ab, dim))
    return fail(s->error, s->error_len, "%s: a component or its derivative is not finite",
                tm->fn.label);
  return 0;
}

static int lp_terminal(const jyPartInstance *self, const jyPartState *s, int k, double *value,
                       double *jac, double *vel_bias, double *acc_bias) {
  LpType *lt = (LpType *)self->type->type_data;
  if (k < 0 || k >= lt->nterm)
    return fail(s->error, s->error_len, "no terminal %d (the type has %d)", k, lt->nterm);
  const LpTerminal *tm = &lt->term[k];
  int n = lt->n, dim = tm->dim;
  if (!tm->fn.slot) {
    for (int i = 0; i < dim; i++) {
      value[i] = s->q[tm->coords[i]];
      if (jac) jac[i + tm->coords[i] * dim] = 1.0;
    }
    return 0;
  }
  double *blk = instance_data(self) + tm->cache;
  double *val = blk + 1 + key_len(n), *J = val + TD, *vb = J + TD * n, *ab = vb + TD;
  if (!cache_hit(blk, s, n)) {
    int base;
    blk[0] = 0.0;
    if (jyl_lp_enter(lt, self, s, &base)) return 1;
    int bad = call_terminal(lt, tm, s, val, J, vb, ab);
    jyl_lp_leave(lt, base);
    if (bad) return 1;
    cache_store_key(blk, s, n);
    blk[0] = 1.0;
  }
  memcpy(value, val, sizeof(double) * (size_t)dim);
  if (jac) memcpy(jac, J, sizeof(double) * (size_t)(dim * n));
  if (vel_bias) memcpy(vel_bias, vb, sizeof(double) * (size_t)dim);
  if (acc_bias) memcpy(acc_bias, ab, sizeof(double) * (size_t)dim);
  return 0;
}

/* ---- constraints ------------------------------------------------------------------------ */

/* Pushes value c of a constraint entry's result at idx: the result itself when the entry has
 * one row and returned no table, else entry c + 1 of the table of `count` values it must
 * return. Returns the pushed index, or 0 after writing an error. */
static int push_component(LpType *lt, int idx, const LpRow *first, int c, char *error, size_t len) {
  lua_State *T = lt->T;
  if (lua_type(T, idx) == LUA_TTABLE) {
    int k = (int)lua_rawlen(T, idx);
    if (k != first->count) {
      fail(error, len, "%s: returned %d values; the constraint has %d row%s", first->fn.label, k,
           first->count, first->count == 1 ? "" : "s");
      return 0;
    }
    lua_rawgeti(T, idx, c + 1);
  } else if (first->count > 1) {
    fail(error, len, "%s: must return a table of %d values (one per row), got %s", first->fn.label,
         first->count, luaL_typename(T, idx));
    return 0;
  } else {
    lua_pushvalue(T, idx);
  }
  return lua_gettop(T);
}

/* Row c of an acceleration-level entry's results: A at ia (one row, or a list of `count`
 * rows, each n numbers or keyed by coordinate) and b at ib (a number or a list). */
static int read_accel_row(LpType *lt, int ia, int ib, const LpRow *first, int c, double *a,
                          double *b, char *error, size_t len) {
  lua_State *T = lt->T;
  const char *label = first->fn.label;
  if (lua_type(T, ia) != LUA_TTABLE)
    return fail(error, len, "%s: must return A (a table) and b, got %s for A", label,
                luaL_typename(T, ia));
  int rows_form = lua_rawgeti(T, ia, 1) == LUA_TTABLE; /* a list of rows, not one row */
  lua_pop(T, 1);
  if (!rows_form && first->count > 1)
    return fail(error, len, "%s: A must be a list of %d rows", label, first->count);
  if (rows_form && (int)lua_rawlen(T, ia) != first->count)
    return fail(error, len, "%s: A has %d rows; the constraint has %d", label,
                (int)lua_rawlen(T, ia), first->count);
  if (rows_form) {
    lua_rawgeti(T, ia, c + 1);
    ia = lua_gettop(T);
    if (lua_type(T, ia) != LUA_TTABLE)
      return fail(error, len, "%s: row %d of A is %s, not a table", label, c + 1,
                  luaL_typename(T, ia));
  }
  if (read_coord_vector(lt, ia, a, &first->fn, error, len)) return 1;
  if (lua_type(T, ib) == LUA_TNUMBER && first->count == 1) {
    *b = (double)lua_tonumber(T, ib);
  } else if (lua_type(T, ib) == LUA_TTABLE && (int)lua_rawlen(T, ib) == first->count &&
             lua_rawgeti(T, ib, c + 1) == LUA_TNUMBER) {
    *b = (double)lua_tonumber(T, -1);
  } else {
    return fail(error, len, "%s: b must be %s", label,
                first->count == 1 ? "a number" : "a list of one number per row");
  }
  return 0;
}

/* Calls the function of the constraint entry whose first row is `first`: phi on POS Jets,
 * psi on VEL Jets, accel on plain numbers (two results: A and b). */
static int call_constraint(LpType *lt, const LpRow *first, const jyPartState *s, int *numbers) {
  lua_pushvalue(lt->T, first->fn.slot);
  if (first->kind == JY_ROW_POSITION) {
    int nargs = push_pos_args(lt);
    return lp_pcall(lt, &first->fn, nargs, s->error, s->error_len);
  }
  if (first->kind == JY_ROW_VELOCITY) {
    int nargs = push_vel_args(lt);
    return lp_pcall(lt, &first->fn, nargs, s->error, s->error_len);
  }
  if (!*numbers) fill_numbers(lt, s->q, s->v);
  *numbers = 1;
  int nargs = push_plain_args(lt, s);
  return lp_pcalln(lt, &first->fn, nargs, 2, s->error, s->error_len);
}

/* Row r of A (m x n), b, residual and rate from a phi or psi value j (x when constant):
 * phi: A = phi_q, b = -(second derivative along (v, 1)), rate = phi';
 * psi: A = psi_v, b = -(psi_q v + psi_t) (no rate). */
static void jet_row(const LpType *lt, jyRowKind kind, const Jet *j, double x, const jyPartState *s,
                    int r, double *A, double *b, double *residual, double *rate) {
  int n = lt->n, m = lt->nrows;
  if (kind == JY_ROW_POSITION) {
    for (int k = 0; k < n; k++) A[r + k * m] = j ? j->g[k] : 0.0;
    b[r] = j ? -j->d2 : 0.0;
    if (rate) rate[r] = j ? j->d1 : 0.0;
  } else {
    double rhs = 0.0;
    for (int k = 0; k < n; k++) {
      A[r + k * m] = j ? j->g[n + k] : 0.0;
      rhs -= j ? j->g[k] * s->v[k] : 0.0;
    }
    b[r] = rhs - (j ? j->g[2 * n] : 0.0);
  }
  if (residual) residual[r] = x;
}

/* Row r, component c of the entry `first` whose results end at res: A, b, residual, rate. */
static int constraint_row(LpType *lt, const LpRow *first, int res, int c, int r,
                          const jyPartState *s, double *A, double *b, double *residual,
                          double *rate) {
  int n = lt->n, m = lt->nrows;
  double x = 0.0;
  if (first->kind == JY_ROW_ACCELERATION) {
    double arow[JY_PART_MAX_COORDS];
    if (read_accel_row(lt, res - 1, res, first, c, arow, &b[r], s->error, s->error_len)) return 1;
    for (int k = 0; k < n; k++) A[r + k * m] = arow[k];
    if (residual) residual[r] = 0.0;
    if (rate) rate[r] = 0.0;
  } else {
    const Jet *j;
    int idx = push_component(lt, res, first, c, s->error, s->error_len);
    const Jet *like = first->kind == JY_ROW_POSITION ? lt->pos_t : lt->vel_t;
    if (!idx || result_jet(lt, idx, like, &j, &x, &first->fn, s->error, s->error_len)) return 1;
    jet_row(lt, first->kind, j, x, s, r, A, b, residual, rate);
  }
  int fin = isfinite(b[r]) && isfinite(x);
  for (int k = 0; k < n; k++) fin = fin && isfinite(A[r + k * m]);
  if (fin) return 0;
  if (first->count > 1)
    return fail(s->error, s->error_len,
                "%s: the value or a derivative of row %d is not finite (%g)", first->fn.label,
                c + 1, x);
  return fail(s->error, s->error_len, "%s: the value or a derivative is not finite (%g)",
              first->fn.label, x);
}

static int lp_constraints(const jyPartInstance *self, const jyPartState *s, double *A, double *b,
                          double *residual, double *rate) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad = 0, numbers = 0; /* numbers: q and v as plain numbers filled */
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  if (lt->pos_t) set_pos_inputs(lt, s);
  if (lt->vel_t) {
    for (int i = 0; i < lt->n; i++) {
      lt->vel_q[i]->v = s->q[i];
      lt->vel_v[i]->v = s->v[i];
    }
    lt->vel_t->v = s->t;
  }
  for (int r0 = 0; r0 < lt->nrows && !bad; r0 += lt->rows[r0].count) {
    const LpRow *first = &lt->rows[r0];
    lua_settop(lt->T, base);
    bad = call_constraint(lt, first, s, &numbers);
    int res = lua_gettop(lt->T);
    for (int c = 0; c < first->count && !bad; c++) {
      bad = constraint_row(lt, first, res, c, r0 + c, s, A, b, residual, rate);
      lua_settop(lt->T, res);
    }
  }
  jyl_lp_leave(lt, base);
  return bad;
}

/* ---- non-ideal forces, the non-ideal law, outputs -------------------------------------- */

static int lp_nonideal(const jyPartInstance *self, const jyPartState *s, double *C) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  fill_numbers(lt, s->q, s->v);
  lua_pushvalue(lt->T, lt->nonideal.slot);
  int nargs = push_plain_args(lt, s);
  bad = lp_pcall(lt, &lt->nonideal, nargs, s->error, s->error_len) ||
    read_coord_vector(lt, lua_gettop(lt->T), C, &lt->nonideal, s->error, s->error_len);
  if (!bad && !finite_all(C, lt->n))
    bad =
      fail(s->error, s->error_len, "%s: returned a value that is not finite", lt->nonideal.label);
  jyl_lp_leave(lt, base);
  return bad;
}

void jyl_lp_fill_law_args(LpType *lt, const jyPartState *s, const double *row_forces,
                          const double *acc) {
  lua_State *T = lt->T;
  fill_numbers(lt, s->q, s->v);
  for (int r = 0; r < lt->nrows; r++) {
    double f = row_forces ? row_forces[r] : 0.0;
    lua_pushnumber(T, f);
    lua_rawseti(T, lt->s_lawf, r + 1);
    lua_pushstring(T, lt->rows[r].name);
    lua_pushnumber(T, f);
    lua_rawset(T, lt->s_lawf);
  }
  for (int i = 0; i < lt->n; i++) {
    lua_rawgeti(T, lt->s_names, i + 1);
    lua_pushnumber(T, acc ? acc[i] : 0.0);
    lua_rawset(T, lt->s_acc);
  }
}

int jyl_lp_push_plain_args(LpType *lt, const jyPartState *s) { return push_plain_args(lt, s); }

int jyl_lp_pcall(LpType *lt, const LpFn *fn, int nargs, int nres, char *error, size_t len) {
  return lp_pcalln(lt, fn, nargs, nres, error, len);
}

/* The non-ideal law C(q, v, t, row forces, q'' [, mode]): f holds the part's row forces by
 * row name (and by row number), a the accelerations of the previous iterate by coordinate;
 * a part with modes also gets the name of its mode. */
static int lp_law(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                  const double *acc, double *force) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  jyl_lp_fill_law_args(lt, s, row_forces, acc);
  lua_pushvalue(T, lt->law.slot);
  int nargs = push_plain_args(lt, s) + 2;
  lua_pushvalue(T, lt->s_lawf_proxy);
  lua_pushvalue(T, lt->s_acc_proxy);
  if (lt->nmodes > 0) {
    int mode = s->mode >= 0 && s->mode < lt->nmodes ? s->mode : 0;
    lua_pushstring(T, lt->mode_names[mode]);
    nargs++;
  }
  bad = lp_pcall(lt, &lt->law, nargs, s->error, s->error_len) ||
    read_coord_vector(lt, lua_gettop(T), force, &lt->law, s->error, s->error_len);
  if (!bad && !finite_all(force, lt->n))
    bad = fail(s->error, s->error_len, "%s: returned a value that is not finite", lt->law.label);
  jyl_lp_leave(lt, base);
  return bad;
}

/* The reused q, v tables and the row forces' table f (0 when not given) for fn(q, v, t, p, f). */
static void fill_numbers_and_row_forces(LpType *lt, const jyPartState *s,
                                        const double *row_forces) {
  fill_numbers(lt, s->q, s->v);
  for (int r = 0; r < lt->nrows; r++) {
    lua_pushnumber(lt->T, row_forces ? row_forces[r] : 0.0);
    lua_rawseti(lt->T, lt->s_rowf, r + 1);
  }
}

static int lp_outputs(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                      double *out) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad = 0;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  fill_numbers_and_row_forces(lt, s, row_forces);
  for (int o = 0; o < lt->nout && !bad; o++) {
    const LpFn *fn = &lt->out[o].fn;
    lua_pushvalue(T, fn->slot);
    int nargs = push_plain_args(lt, s) + 1;
    lua_pushvalue(T, lt->s_rowf);
    bad = lp_pcall(lt, fn, nargs, s->error, s->error_len);
    if (!bad && lua_type(T, -1) != LUA_TNUMBER)
      bad = fail(s->error, s->error_len, "%s: must return a number, got %s", fn->label,
                 luaL_typename(T, -1));
    if (!bad) out[o] = (double)lua_tonumber(T, -1);
    if (!bad && !isfinite(out[o]))
      bad = fail(s->error, s->error_len, "%s: returned a value that is not finite", fn->label);
    lua_settop(T, base);
  }
  jyl_lp_leave(lt, base);
  return bad;
}

/* Reads the array at idx on T (from..to numbers, written into x) for a visual; 1 with the
 * reason in error when it is not one. */
static int visual_vector(lua_State *T, int idx, int from, int to, double *x, const LpFn *fn,
                         const char *what, char *error, size_t len) {
  if (lua_type(T, idx) != LUA_TTABLE)
    return fail(error, len, "%s: %s must be an array of %d to %d numbers, got %s", fn->label, what,
                from, to, luaL_typename(T, idx));
  int n = (int)lua_rawlen(T, idx);
  if (n < from || n > to)
    return fail(error, len, "%s: %s has %d numbers (%d to %d)", fn->label, what, n, from, to);
  for (int i = 0; i < n; i++) {
    int isnum = 0;
    lua_rawgeti(T, idx, i + 1);
    x[i] = (double)lua_tonumberx(T, -1, &isnum);
    lua_pop(T, 1);
    if (!isnum || !isfinite(x[i]))
      return fail(error, len, "%s: %s[%d] is not a finite number", fn->label, what, i + 1);
  }
  return 0;
}

/* Each visual's fn(q, v, t, p, f) returns a, then b (rod, spring, damper, rope, arrow; ground's
 * normal, optional) and quat (frame, optional); f: the row forces (0 when not drawn). */
static int lp_visual(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                     jyVisual *out) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad = 0;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  fill_numbers_and_row_forces(lt, s, row_forces);
  for (int i = 0; i < lt->nvis && !bad; i++) {
    const LpVisual *vis = &lt->vis[i];
    lua_pushvalue(T, vis->fn.slot);
    int nargs = push_plain_args(lt, s) + 1;
    lua_pushvalue(T, lt->s_rowf);
    bad = lp_pcalln(lt, &vis->fn, nargs, 3, s->error, s->error_len);
    if (bad) break;
    int k = vis->kind, two = k != JY_VISUAL_POINT && k != JY_VISUAL_FRAME && k != JY_VISUAL_GROUND;
    out[i].kind = k;
    out[i].size = vis->size;
    bad = visual_vector(T, base + 1, 1, 3, out[i].a, &vis->fn, "a", s->error, s->error_len);
    if (!bad && (two || !lua_isnil(T, base + 2)))
      bad = visual_vector(T, base + 2, 1, 3, out[i].b, &vis->fn, "b", s->error, s->error_len);
    if (!bad && k == JY_VISUAL_FRAME && !lua_isnil(T, base + 3))
      bad = visual_vector(T, base + 3, 4, 4, out[i].quat, &vis->fn, "quat", s->error, s->error_len);
    lua_settop(T, base);
  }
  jyl_lp_leave(lt, base);
  return bad;
}

static int lp_shape(const jyPartType *type, const double *params, jyPartShape *shape, char *error,
                    size_t error_len) {
  (void)params;
  (void)error;
  (void)error_len;
  const LpType *lt = (const LpType *)type->type_data;
  shape->ncoords = lt->n;
  for (int i = 0; i < lt->n; i++) {
    shape->coord_names[i] = lt->coord_names[i];
    shape->coord_defaults[i] = lt->coord_defaults[i];
  }
  shape->nterminals = lt->nterm;
  for (int k = 0; k < lt->nterm; k++)
    shape->terminals[k] =
      (jyTerminalSpec){lt->term[k].name, lt->term[k].dim, lt->term[k].is_block, lt->term[k].offset};
  shape->nrows = lt->nrows;
  for (int r = 0; r < lt->nrows; r++) {
    shape->row_names[r] = lt->rows[r].name;
    shape->row_kinds[r] = lt->rows[r].kind;
  }
  shape->noutputs = lt->nout;
  for (int o = 0; o < lt->nout; o++) shape->output_names[o] = lt->out[o].name;
  shape->flags = lt->flags;
  shape->angle_outputs = lt->angle_outputs;
  shape->instance_size = lt->data_doubles * sizeof(double);
  shape->nvisuals = lt->nvis;
  shape->visual = lt->nvis ? lp_visual : NULL;
  if (lt->nmodes > 0) {
    shape->hybrid = lt->hybrid;
    shape->nguards = lt->nguards;
  }
  return 0;
}

/* ---- binding the record to the protocol ------------------------------------------------ */

/* The instance cache: the dynamics, then one block per terminal with a function. */
static void lay_out_cache(LpType *lt) {
  int n = lt->n;
  size_t off = 0;
  lt->dyn_cache = 0;
  if (lt->mode != DYN_NONE) off += 1 + (size_t)key_len(n) + 3 + (size_t)(n * n + n);
  for (int k = 0; k < lt->nterm; k++)
    if (lt->term[k].fn.slot) {
      lt->term[k].cache = (int)off;
      off += 1 + (size_t)key_len(n) + 3 * TD + (size_t)(TD * n);
    }
  lt->data_doubles = off;
}

void jyl_lp_bind_calls(LpType *lt) {
  lay_out_cache(lt);
  jyPartType *ty = &lt->type;
  ty->version = JY_PART_PROTOCOL_VERSION;
  ty->name = lt->name;
  ty->doc = lt->doc;
  ty->params = lt->params;
  ty->nparams = lt->nparams;
  ty->shape = lp_shape;
  ty->terminal = lt->nterm ? lp_terminal : NULL;
  if (lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) {
    ty->mass = lp_mass;
    ty->force = lp_force;
    ty->energy = lp_energy;
  } else if (lt->mode == DYN_DIRECT) {
    ty->mass = lt->mass.slot ? lp_mass : NULL;
    ty->force = lt->force.slot ? lp_force : NULL;
  }
  ty->constraints = lt->nrows ? lp_constraints : NULL;
  ty->nonideal = lt->nonideal.slot ? lp_nonideal : NULL;
  ty->nonideal_law = lt->law.slot ? lp_law : NULL;
  ty->outputs = lt->nout ? lp_outputs : NULL;
  ty->release = lp_release;
  ty->type_data = lt;
}

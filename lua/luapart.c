/* lua/luapart.c — part types written in Lua: joinery.part_type{...}, joinery.eval_part{...}.
 *
 * A Lua part type is registered in the module's environment as an ordinary jyPartType whose
 * functions are C trampolines; sys:add() then uses it by name like a built-in part, with its
 * parameters validated by the engine against the schema the script gave. docs/parts.md is
 * the user's guide; this comment is the implementer's.
 *
 *   joinery.part_type{
 *     name = "my_pendulum", doc = "one line",
 *     params = { { name = "m", default = 1, unit = "kg", doc = "...", domain = "positive" }, ... },
 *     coords = { "px", "py", { name = "theta", default = 0 } },
 *     terminals = { { name = "pivot", coords = { "px", "py" } },          -- a coordinate block
 *                   { name = "bob", dim = 2, fn = function(q, t, p) return { ..., ... } end } },
 *     -- the dynamics, one of:
 *     lagrangian = function(q, v, t, p) return ... end,
 *     kinetic = function(q, v, t, p) ... end, potential = function(q, t, p) ... end,
 *     mass = function(q, t, p) return {{...}, ...} end, force = function(q, v, t, p) ... end,
 *     -- with a Lagrangian or energies, `force` adds a non-conservative generalized force
 *     constraints = { { name = "on_ellipse", phi = function(q, t, p) ... end },
 *                     { name = "rolling", psi = function(q, v, t, p) ... end },
 *                     { name = "servo", accel = function(q, v, t, p) return A, b end },
 *                     { name = "pin", rows = 2, phi = function(q, t, p) return { .., .. } end } },
 *     nonideal = function(q, v, t, p) return { ... } end,
 *     nonideal_law = function(q, v, t, p, f, a) return { ... } end,
 *     outputs = { { name = "tension", fn = function(q, v, t, p, f) ... end },
 *                 { name = "phi", fn = ..., angle = true } },  (angle: known modulo 2 pi,
 *                                                  reported continuous: part.h angle_outputs)
 *     constant_mass = false,
 *     flat = false,
 *   }                                  -> the type name
 *   (terminals, constraints and outputs may also be maps name -> spec, taken in name order.)
 *   A constraint entry gives one row, or with rows = k the k rows <name>1 .. <name>k from one
 *   function returning a table of k values (accel: A a list of k rows, b a list of k). kind =
 *   "position" | "velocity" | "acceleration" may be written and must agree with the function.
 *   nonideal_law gets the row forces f (by row name and by row number) and the accelerations
 *   a of the previous fixed-point iterate (by coordinate) and is jyPartType.nonideal_law.
 *   flat = true: q, v, a are arrays (q[1] ..) and no function gets p — the form
 *   sys:constrain (lua/constrain.c) registers its constraints in.
 *   A type defined by a Lagrangian or energies without `force` is JY_PART_CONSERVATIVE.
 *
 *   joinery.eval_part{ type = name, params = {...}, q = {...}, v = {...}, t = 0,
 *                      gravity = {...} }  -> { M, Q, C, A, b, residual, rate, kinetic,
 *                      potential, terminals = { name = { value, J, vel_bias, acc_bias } },
 *                      outputs = { name = value }, coords }   (any registered type)
 *
 * Derivatives. The functions marked "q, v, t" run on joinery.Jet values: forward-mode
 * numbers that carry, besides the value, the gradient over the evaluation's variables and
 * the second derivatives that evaluation needs, so that ONE call of a Lua function gives
 * everything (the hyper-dual recipe of the platform notes needs n(n+1)/2 + 2n calls for M
 * and Q). Three layouts:
 *   LAG (lagrangian, kinetic, potential): variables (q, v, t), N = 2n + 1, Hessian rows
 *       of the v variables: M = L_vv, Q = L_q - L_vq v - L_vt.
 *   POS (terminals, phi): variables (q, t), N = n + 1, plus the first and second
 *       derivatives along (v, 1): J = p_q, p_t, gamma = v'p_qq v + 2 p_qt v + p_tt.
 *   VEL (psi): variables (q, v, t), gradient only: A = psi_v, b = -(psi_q v + psi_t).
 * accel, mass, force, nonideal, nonideal_law and outputs get plain numbers.
 * joinery.math's functions are wrapped here so that they also take Jets (the hyper-dual
 * derivative rules of joinery/ad.h give f, f', f''; the 2-argument ones three times).
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
#include "binding.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/ad.h"
#include "joinery/joinery.h"
#include "joinery/part.h"
#include "lua_call.h"

#define LP_GUARD "joinery.PartTypeGuard"
#define TD JY_TERMINAL_MAX_DIM /* room for the largest terminal */

/* ==== Jets ============================================================================= */

typedef struct Jet {
  int N;      /* gradient length */
  int R;      /* Hessian rows: rows of variables roff .. roff + R - 1, N columns each */
  int roff;
  int dd;     /* 1: d1, d2 carry the first and second derivative along a direction */
  double v, d1, d2;
  double g[]; /* N gradient entries, then R * N Hessian entries */
} Jet;

static size_t jet_bytes(int N, int R) {
  return sizeof(Jet) + (size_t)(N + R * N) * sizeof(double);
}

static int jet_doubles(const Jet *a) { return a->N + a->R * a->N; }

/* A new Jet laid out like `like` (contents unset). Upvalue 1 of the running C function is
 * the Jet metatable. */
static Jet *jet_push(lua_State *L, const Jet *like) {
  Jet *r = (Jet *)lua_newuserdatauv(L, jet_bytes(like->N, like->R), 0);
  r->N = like->N;
  r->R = like->R;
  r->roff = like->roff;
  r->dd = like->dd;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return r;
}

/* The Jet at index i, or NULL (mt_idx: where the Jet metatable is). */
static const Jet *jet_test(lua_State *L, int i, int mt_idx) {
  if (lua_type(L, i) != LUA_TUSERDATA || !lua_getmetatable(L, i)) return NULL;
  int is = lua_rawequal(L, -1, mt_idx);
  lua_pop(L, 1);
  return is ? (const Jet *)lua_touserdata(L, i) : NULL;
}

static const char *operand_name(lua_State *L, int i) {
  if (jet_test(L, i, lua_upvalueindex(1))) return JYL_JET;
  if (luaL_testudata(L, i, JYL_HYPER)) return JYL_HYPER;
  return luaL_typename(L, i);
}

/* Operand i of an arithmetic metamethod: a Jet (returned) or a number (in *x). */
static const Jet *operand(lua_State *L, int i, double *x, const char *op) {
  const Jet *j = jet_test(L, i, lua_upvalueindex(1));
  if (j) {
    *x = j->v;
    return j;
  }
  int ok = 0;
  *x = (double)lua_tonumberx(L, i, &ok);
  if (!ok)
    luaL_error(L, "attempt to perform arithmetic (%s) on a %s value and a %s value", op,
               operand_name(L, 1), operand_name(L, 2));
  return NULL;
}

static void same_layout(lua_State *L, const Jet *a, const Jet *b) {
  if (a->N != b->N || a->R != b->R || a->roff != b->roff || a->dd != b->dd)
    luaL_error(L, "values of two different part evaluations were combined (a " JYL_JET
                  " kept from another call?)");
}

/* r = f(a) from f(a.v) = f0, f' = f1, f'' = f2. */
static void jet_chain(Jet *r, const Jet *a, double f0, double f1, double f2) {
  int N = a->N;
  const double *g = a->g, *H = a->g + N;
  double *rg = r->g, *rH = r->g + N;
  r->v = f0;
  for (int k = 0; k < N; k++) rg[k] = f1 * g[k];
  for (int i = 0; i < a->R; i++) {
    double s = f2 * g[a->roff + i];
    for (int k = 0; k < N; k++) rH[i * N + k] = f1 * H[i * N + k] + s * g[k];
  }
  r->d1 = f1 * a->d1;
  r->d2 = f1 * a->d2 + f2 * a->d1 * a->d1;
}

/* r = f(x, y) from the value, gradient and Hessian of f at (x.v, y.v); x, y both Jets. */
static void jet_chain2(Jet *r, const Jet *x, const Jet *y, const double f[6]) {
  double fx = f[1], fy = f[2], fxx = f[3], fxy = f[4], fyy = f[5];
  int N = x->N;
  const double *gx = x->g, *gy = y->g, *Hx = x->g + N, *Hy = y->g + N;
  double *rg = r->g, *rH = r->g + N;
  r->v = f[0];
  for (int k = 0; k < N; k++) rg[k] = fx * gx[k] + fy * gy[k];
  for (int i = 0; i < x->R; i++) {
    double ax = gx[x->roff + i], ay = gy[x->roff + i];
    double sx = fxx * ax + fxy * ay, sy = fxy * ax + fyy * ay;
    for (int k = 0; k < N; k++)
      rH[i * N + k] = fx * Hx[i * N + k] + fy * Hy[i * N + k] + sx * gx[k] + sy * gy[k];
  }
  r->d1 = fx * x->d1 + fy * y->d1;
  r->d2 = fx * x->d2 + fy * y->d2 + fxx * x->d1 * x->d1 + 2.0 * fxy * x->d1 * y->d1 +
          fyy * y->d1 * y->d1;
}

/* f, f', f'' of a one-argument function, from its hyper-dual rule in joinery/ad.h. */
static void derivs1(jyHyper (*f)(jyHyper), double x, double d[3]) {
  jyHyper h = f(jy_hd_var(x, 1.0, 1.0));
  d[0] = h.v;
  d[1] = h.e1;
  d[2] = h.e12;
}

/* f, fx, fy, fxx, fxy, fyy of a two-argument function, from three hyper-dual evaluations. */
static void derivs2(jyHyper (*f)(jyHyper, jyHyper), double x, double y, double d[6]) {
  jyHyper a = f(jy_hd_var(x, 1.0, 1.0), jy_hd_const(y));
  jyHyper b = f(jy_hd_const(x), jy_hd_var(y, 1.0, 1.0));
  jyHyper c = f(jy_hd_var(x, 1.0, 0.0), jy_hd_var(y, 0.0, 1.0));
  d[0] = a.v;
  d[1] = a.e1;
  d[2] = b.e1;
  d[3] = a.e12;
  d[4] = c.e12;
  d[5] = b.e12;
}

/* Pushes f(a, b) for a two-argument rule; either may be a plain number (NULL Jet). */
static void push_binary(lua_State *L, jyHyper (*f)(jyHyper, jyHyper), const Jet *a, double x,
                        const Jet *b, double y) {
  double d[6];
  derivs2(f, x, y, d);
  if (a && b) {
    same_layout(L, a, b);
    jet_chain2(jet_push(L, a), a, b, d);
  } else if (a) {
    jet_chain(jet_push(L, a), a, d[0], d[1], d[3]);
  } else {
    jet_chain(jet_push(L, b), b, d[0], d[2], d[5]);
  }
}

static jyHyper hd_div(jyHyper a, jyHyper b) { return jy_hd_div(a, b); }
static jyHyper hd_logb(jyHyper x, jyHyper b) { return jy_hd_div(jy_hd_log(x), jy_hd_log(b)); }

static int jet_add(lua_State *L) {
  double x, y;
  const Jet *a = operand(L, 1, &x, "+"), *b = operand(L, 2, &y, "+");
  if (a && b) {
    same_layout(L, a, b);
    Jet *r = jet_push(L, a);
    int n = jet_doubles(a);
    for (int k = 0; k < n; k++) r->g[k] = a->g[k] + b->g[k];
    r->v = a->v + b->v;
    r->d1 = a->d1 + b->d1;
    r->d2 = a->d2 + b->d2;
  } else {
    const Jet *j = a ? a : b;
    Jet *r = jet_push(L, j);
    memcpy(r->g, j->g, sizeof(double) * (size_t)jet_doubles(j));
    r->v = x + y;
    r->d1 = j->d1;
    r->d2 = j->d2;
  }
  return 1;
}

static int jet_sub(lua_State *L) {
  double x, y;
  const Jet *a = operand(L, 1, &x, "-"), *b = operand(L, 2, &y, "-");
  const Jet *j = a ? a : b;
  if (a && b) same_layout(L, a, b);
  Jet *r = jet_push(L, j);
  int n = jet_doubles(j);
  for (int k = 0; k < n; k++) r->g[k] = (a ? a->g[k] : 0.0) - (b ? b->g[k] : 0.0);
  r->v = x - y;
  r->d1 = (a ? a->d1 : 0.0) - (b ? b->d1 : 0.0);
  r->d2 = (a ? a->d2 : 0.0) - (b ? b->d2 : 0.0);
  return 1;
}

static void jet_scale(Jet *r, const Jet *a, double s) {
  int n = jet_doubles(a);
  for (int k = 0; k < n; k++) r->g[k] = s * a->g[k];
  r->v = s * a->v;
  r->d1 = s * a->d1;
  r->d2 = s * a->d2;
}

static int jet_mul(lua_State *L) {
  double x, y;
  const Jet *a = operand(L, 1, &x, "*"), *b = operand(L, 2, &y, "*");
  if (a && b) {
    same_layout(L, a, b);
    Jet *r = jet_push(L, a);
    int N = a->N;
    const double *ga = a->g, *gb = b->g, *Ha = a->g + N, *Hb = b->g + N;
    double *rg = r->g, *rH = r->g + N;
    for (int k = 0; k < N; k++) rg[k] = x * gb[k] + y * ga[k];
    for (int i = 0; i < a->R; i++) {
      double ai = ga[a->roff + i], bi = gb[a->roff + i];
      for (int k = 0; k < N; k++)
        rH[i * N + k] = x * Hb[i * N + k] + y * Ha[i * N + k] + ai * gb[k] + bi * ga[k];
    }
    r->v = x * y;
    r->d1 = x * b->d1 + y * a->d1;
    r->d2 = x * b->d2 + y * a->d2 + 2.0 * a->d1 * b->d1;
  } else if (a) {
    jet_scale(jet_push(L, a), a, y);
  } else {
    jet_scale(jet_push(L, b), b, x);
  }
  return 1;
}

static int jet_div(lua_State *L) {
  double x, y;
  const Jet *a = operand(L, 1, &x, "/"), *b = operand(L, 2, &y, "/");
  if (!b)
    jet_scale(jet_push(L, a), a, 1.0 / y);
  else
    push_binary(L, hd_div, a, x, b, y);
  return 1;
}

static int jet_unm(lua_State *L) {
  double x;
  const Jet *a = operand(L, 1, &x, "-");
  jet_scale(jet_push(L, a), a, -1.0);
  return 1;
}

static int jet_pow(lua_State *L) {
  double x, y;
  const Jet *a = operand(L, 1, &x, "^"), *b = operand(L, 2, &y, "^");
  if (!b) {
    jyHyper h = jy_hd_pow(jy_hd_var(x, 1.0, 1.0), y);
    jet_chain(jet_push(L, a), a, h.v, h.e1, h.e12);
  } else {
    push_binary(L, jy_hd_pow_hd, a, x, b, y);
  }
  return 1;
}

static void compared(lua_State *L, double *x, double *y) {
  int ok1 = 1, ok2 = 1;
  const Jet *a = jet_test(L, 1, lua_upvalueindex(1)), *b = jet_test(L, 2, lua_upvalueindex(1));
  *x = a ? a->v : (double)lua_tonumberx(L, 1, &ok1);
  *y = b ? b->v : (double)lua_tonumberx(L, 2, &ok2);
  if (!ok1 || !ok2 || lua_type(L, 1) == LUA_TSTRING || lua_type(L, 2) == LUA_TSTRING)
    luaL_error(L, "attempt to compare %s with %s", operand_name(L, 1), operand_name(L, 2));
}

static int jet_lt(lua_State *L) {
  double x, y;
  compared(L, &x, &y);
  lua_pushboolean(L, x < y);
  return 1;
}

static int jet_le(lua_State *L) {
  double x, y;
  compared(L, &x, &y);
  lua_pushboolean(L, x <= y);
  return 1;
}

static int jet_eq(lua_State *L) {
  const Jet *a = jet_test(L, 1, lua_upvalueindex(1)), *b = jet_test(L, 2, lua_upvalueindex(1));
  lua_pushboolean(L, a && b && a->v == b->v);
  return 1;
}

static int jet_tostring(lua_State *L) {
  const Jet *a = jet_test(L, 1, lua_upvalueindex(1));
  lua_pushfstring(L, JYL_JET "(%f)", a ? (lua_Number)a->v : (lua_Number)0);
  return 1;
}

/* x.v is the plain value (to print or branch on); nothing else is readable. */
static int jet_index(lua_State *L) {
  const Jet *a = jet_test(L, 1, lua_upvalueindex(1));
  const char *k = lua_tostring(L, 2);
  if (a && k && strcmp(k, "v") == 0) {
    lua_pushnumber(L, a->v);
    return 1;
  }
  return luaL_error(L, JYL_JET " has no field '%s' (x.v is its value)", k ? k : "?");
}

static const luaL_Reg jet_meta[] = {
  {"__add", jet_add}, {"__sub", jet_sub}, {"__mul", jet_mul},
  {"__div", jet_div}, {"__unm", jet_unm}, {"__pow", jet_pow},
  {"__lt", jet_lt},   {"__le", jet_le},   {"__eq", jet_eq},
  {"__tostring", jet_tostring},           {"__index", jet_index},
  {NULL, NULL}};

/* ---- joinery.math on Jets ---- */

typedef struct MathRule {
  const char *name;
  jyHyper (*f1)(jyHyper);          /* one argument */
  jyHyper (*f2)(jyHyper, jyHyper); /* two arguments (or the 2-argument form of f1's name) */
} MathRule;

static const MathRule math_rules[] = {
  {"sqrt", jy_hd_sqrt, NULL},   {"exp", jy_hd_exp, NULL},   {"sin", jy_hd_sin, NULL},
  {"cos", jy_hd_cos, NULL},     {"tan", jy_hd_tan, NULL},   {"asin", jy_hd_asin, NULL},
  {"acos", jy_hd_acos, NULL},   {"sinh", jy_hd_sinh, NULL}, {"cosh", jy_hd_cosh, NULL},
  {"tanh", jy_hd_tanh, NULL},   {"abs", jy_hd_abs, NULL},   {"log", jy_hd_log, hd_logb},
  {"atan", jy_hd_atan, jy_hd_atan2}, {"atan2", NULL, jy_hd_atan2},
  {"hypot", NULL, jy_hd_hypot},
};

/* joinery.math.<f> with Jets; upvalues: 1 Jet metatable, 2 the original function (numbers
 * and Hypers), 3 the rule's index. */
static int math_on_jets(lua_State *L) {
  const MathRule *rule = &math_rules[lua_tointeger(L, lua_upvalueindex(3))];
  int nargs = lua_gettop(L);
  const Jet *a = jet_test(L, 1, lua_upvalueindex(1));
  const Jet *b = nargs >= 2 ? jet_test(L, 2, lua_upvalueindex(1)) : NULL;
  int two = rule->f2 && (!rule->f1 || (nargs >= 2 && !lua_isnil(L, 2)));
  if (!a && (!b || !two)) { /* numbers or Hypers (a 1-argument function ignores argument 2) */
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    if (lua_pcall(L, nargs, LUA_MULTRET, 0) != LUA_OK) {
      /* The original located its error at this C frame: locate it at the script's line. */
      luaL_where(L, 1);
      lua_insert(L, -2);
      lua_concat(L, 2);
      return lua_error(L);
    }
    return lua_gettop(L);
  }
  double x = 0.0, y = 0.0;
  if (a) {
    x = a->v;
  } else if (lua_type(L, 1) == LUA_TNUMBER) {
    x = (double)lua_tonumber(L, 1);
  } else {
    return luaL_error(L, "bad argument #1 to 'joinery.math.%s' (number expected, got %s)",
                      rule->name, operand_name(L, 1));
  }
  if (!two) {
    double d[3];
    derivs1(rule->f1, x, d);
    jet_chain(jet_push(L, a), a, d[0], d[1], d[2]);
    return 1;
  }
  if (b) {
    y = b->v;
  } else {
    int ok = 0;
    y = (double)lua_tonumberx(L, 2, &ok);
    if (!ok || lua_type(L, 2) != LUA_TNUMBER)
      return luaL_error(L, "bad argument #2 to 'joinery.math.%s' (number expected, got %s)",
                        rule->name, operand_name(L, 2));
  }
  push_binary(L, rule->f2, a, x, b, y);
  return 1;
}

/* ==== Lua part types ==================================================================== */

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
  int table; /* the entry said rows = k: the function returns a table */
} LpRow;

typedef struct LpOutput {
  char *name;
  LpFn fn;
} LpOutput;

typedef struct LpType {
  jyPartType type; /* what the engine sees; type.type_data points here */
  lua_State *T;    /* the type's own thread (anchored by ref) */
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
  DynMode mode;
  LpFn lagrangian, kinetic, potential, mass, force, nonideal, law;
  unsigned flags;
  unsigned angle_outputs; /* jyPartShape.angle_outputs */
  int flat; /* functions get arrays (x[1], ...) and no p (sys:constrain's types) */
  /* stack slots on T */
  int s_msgh, s_jetmt, s_names, s_p, s_p_proxy, s_grav, s_qn, s_qn_proxy, s_vn, s_vn_proxy, s_rowf;
  int s_lawf, s_lawf_proxy, s_acc, s_acc_proxy; /* the law's row forces and accelerations */
  int s_lag_q, s_lag_v, s_lag_t, s_pos_q, s_pos_t, s_vel_q, s_vel_v, s_vel_t;
  Jet **lag_q, **lag_v, *lag_t, **pos_q, *pos_t, **vel_q, **vel_v, *vel_t;
  /* the parameter values and gravity p was last filled with */
  double *p_last;
  int p_filled;
  size_t data_doubles; /* instance cache size */
  int dyn_cache;       /* offset of the dynamics cache */
} LpType;

/* Cache block: [0] valid, then the key q (n), v (n), t, gravity (3), then the results. */
static int key_len(int n) { return 2 * n + 4; }
enum { DYN_L, DYN_T, DYN_V, DYN_M }; /* result offsets after the key; M (n*n) then Q (n) */

static void lp_free(LpType *lt) {
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
  LpFn *fns[] = {&lt->lagrangian, &lt->kinetic, &lt->potential,
                 &lt->mass,       &lt->force,   &lt->nonideal, &lt->law};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) free(fns[i]->label);
  free(lt->lag_q);
  free(lt->p_last);
  free(lt);
}

static void lp_release(const jyPartType *type) {
  LpType *lt = (LpType *)type->type_data;
  if (!lt) return;
  /* The thread is still alive here (even inside lua_close, finalizers run first). */
  if (lt->T && lt->ref != LUA_NOREF) luaL_unref(lt->T, LUA_REGISTRYINDEX, lt->ref);
  lp_free(lt);
}

/* ---- calling Lua ---- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *error, size_t len, const char *fmt, ...) {
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

static int enter(LpType *lt, const jyPartInstance *self, const jyPartState *s, int *base) {
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

static void leave(LpType *lt, int base) {
  lua_settop(lt->T, base);
  lt->busy = 0;
}

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

/* The Jet result at idx in layout `like`, or a plain number (NULL, value in *x). Writes an
 * error and returns -1 for anything else. */
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
    if (is && j->N == like->N && j->R == like->R && j->roff == like->roff && j->dd == like->dd) {
      *out = j;
      *x = j->v;
      return 0;
    }
    if (is) {
      fail(error, len, "%s: returned a value computed in another evaluation", fn->label);
      return -1;
    }
  }
  fail(error, len, "%s: must return a number, got %s", fn->label, luaL_typename(T, idx));
  return -1;
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
  if (count == n) {
    for (int i = 0; i < n; i++) {
      if (lua_rawgeti(T, idx, i + 1) != LUA_TNUMBER)
        return fail(error, len, "%s: entry %d is %s, not a number", fn->label, i + 1,
                    luaL_typename(T, -1));
      out[i] = (double)lua_tonumber(T, -1);
      lua_pop(T, 1);
    }
    return 0;
  }
  if (count != 0)
    return fail(error, len, "%s: returned %d entries; the part has %d coordinates", fn->label,
                (int)count, n);
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

static int finite_all(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
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
    for (int k = 0; k < n; k++)
      M[i + k * n] += sign * 0.5 * (H[i * N + n + k] + H[k * N + n + i]);
  }
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
  if (enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  char *err = s->error;
  size_t len = s->error_len;
  const LpFn *what = &lt->lagrangian;
  if (lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) {
    for (int i = 0; i < n; i++) {
      lt->lag_q[i]->v = s->q[i];
      lt->lag_v[i]->v = s->v[i];
    }
    lt->lag_t->v = s->t;
    const Jet *jl = NULL, *jt = NULL, *jv = NULL;
    double xl = 0.0, xt = 0.0, xv = 0.0;
    if (lt->mode == DYN_LAGRANGIAN) {
      lua_pushvalue(T, lt->lagrangian.slot);
      lua_pushvalue(T, lt->s_lag_q);
      lua_pushvalue(T, lt->s_lag_v);
      lua_pushvalue(T, lt->s_lag_t);
      push_p(lt);
      bad = lp_pcall(lt, &lt->lagrangian, 4 - lt->flat, err, len) ||
            result_jet(lt, -1, lt->lag_t, &jl, &xl, &lt->lagrangian, err, len);
    } else {
      if (!bad && lt->kinetic.slot) {
        what = &lt->kinetic;
        lua_pushvalue(T, lt->kinetic.slot);
        lua_pushvalue(T, lt->s_lag_q);
        lua_pushvalue(T, lt->s_lag_v);
        lua_pushvalue(T, lt->s_lag_t);
        push_p(lt);
        bad = lp_pcall(lt, &lt->kinetic, 4 - lt->flat, err, len) ||
              result_jet(lt, -1, lt->lag_t, &jt, &xt, &lt->kinetic, err, len);
      }
      if (!bad && lt->potential.slot) {
        lua_pushvalue(T, lt->potential.slot);
        lua_pushvalue(T, lt->s_lag_q);
        lua_pushvalue(T, lt->s_lag_t);
        push_p(lt);
        bad = lp_pcall(lt, &lt->potential, 3 - lt->flat, err, len) ||
              result_jet(lt, -1, lt->lag_t, &jv, &xv, &lt->potential, err, len);
        if (!bad && !lt->kinetic.slot) what = &lt->potential;
      }
    }
    if (!bad) {
      for (int i = 0; i < n * n + n; i++) M[i] = 0.0;
      if (jl) lagrange_terms(n, jl, s->v, 1.0, M, Q);
      if (jt) lagrange_terms(n, jt, s->v, 1.0, M, Q); /* L = T - V */
      if (jv) lagrange_terms(n, jv, s->v, -1.0, M, Q);
      double kin = 0.0;
      for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) kin += 0.5 * s->v[i] * M[i + k * n] * s->v[k];
      if (lt->mode == DYN_LAGRANGIAN) {
        out[DYN_L] = xl;
        out[DYN_T] = kin;
        out[DYN_V] = kin - xl;
      } else {
        out[DYN_T] = lt->kinetic.slot ? xt : 0.0;
        out[DYN_V] = lt->potential.slot ? xv : 0.0;
        out[DYN_L] = out[DYN_T] - out[DYN_V];
      }
      if (!finite_all(out, 3 + n * n + n))
        bad = fail(err, len, "%s: the value or a derivative is not finite (value %g)",
                   what->label, lt->mode == DYN_LAGRANGIAN ? xl : out[DYN_L]);
    }
  } else if (lt->mode == DYN_DIRECT) {
    for (int i = 0; i < n * n + n + 3; i++) out[i] = 0.0;
    fill_numbers(lt, s->q, s->v);
    if (lt->mass.slot) {
      what = &lt->mass;
      lua_pushvalue(T, lt->mass.slot);
      lua_pushvalue(T, lt->s_qn_proxy);
      lua_pushnumber(T, s->t);
      push_p(lt);
      bad = lp_pcall(lt, &lt->mass, 3 - lt->flat, err, len);
      if (!bad && lua_type(T, -1) != LUA_TTABLE)
        bad = fail(err, len, "%s: must return an %d x %d table of numbers, got %s",
                   lt->mass.label, n, n, luaL_typename(T, -1));
      if (!bad && (lua_Integer)lua_rawlen(T, -1) != n && (lua_Integer)lua_rawlen(T, -1) != n * n)
        bad = fail(err, len, "%s: must return %d rows of %d numbers, got %d entries",
                   lt->mass.label, n, n, (int)lua_rawlen(T, -1));
      int flat = !bad && lua_rawgeti(T, -1, 1) != LUA_TTABLE;
      if (!bad) lua_pop(T, 1);
      for (int i = 0; i < n && !bad; i++)
        for (int k = 0; k < n && !bad; k++) {
          int ok = 0;
          if (flat) {
            lua_rawgeti(T, -1, i * n + k + 1);
          } else {
            lua_rawgeti(T, -1, i + 1);
            if (lua_type(T, -1) != LUA_TTABLE) {
              bad = fail(err, len, "%s: row %d is not a table", lt->mass.label, i + 1);
              break;
            }
            lua_rawgeti(T, -1, k + 1);
            lua_remove(T, -2);
          }
          M[i + k * n] = (double)lua_tonumberx(T, -1, &ok);
          if (!ok || lua_type(T, -1) != LUA_TNUMBER)
            bad = fail(err, len, "%s: entry (%d, %d) is %s, not a number", lt->mass.label, i + 1,
                       k + 1, luaL_typename(T, -1));
          lua_pop(T, 1);
        }
      lua_settop(T, base);
    }
    double kin = 0.0;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) kin += 0.5 * s->v[i] * M[i + k * n] * s->v[k];
    out[DYN_T] = kin;
    out[DYN_L] = kin;
  }
  /* The generalized force: the whole Q (mass/force given directly) or a non-conservative
   * addition to a Lagrangian's. */
  if (!bad && lt->force.slot) {
    double extra[JY_PART_MAX_COORDS];
    if (lt->mode != DYN_DIRECT) fill_numbers(lt, s->q, s->v);
    lua_pushvalue(T, lt->force.slot);
    lua_pushvalue(T, lt->s_qn_proxy);
    lua_pushvalue(T, lt->s_vn_proxy);
    lua_pushnumber(T, s->t);
    push_p(lt);
    bad = lp_pcall(lt, &lt->force, 4 - lt->flat, err, len) ||
          read_coord_vector(lt, lua_gettop(T), extra, &lt->force, err, len);
    if (!bad && !finite_all(extra, n))
      bad = fail(err, len, "%s: returned a value that is not finite", lt->force.label);
    for (int i = 0; i < n && !bad; i++) Q[i] += extra[i];
  }
  if (!bad && lt->mode == DYN_DIRECT && !finite_all(M, n * n))
    bad = fail(err, len, "%s: returned a value that is not finite", lt->mass.label);
  leave(lt, base);
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
                    "%s: the mass matrix is not symmetric (entries (%s, %s) = %g and %g)",
                    label, lt->coord_names[i], lt->coord_names[k], A[i + k * n], A[k + i * n]);
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
                   : lt->mode == DYN_DIRECT   ? &lt->mass
                   : lt->kinetic.slot         ? &lt->kinetic
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
    blk[0] = 0.0;
    int base, bad = 0;
    if (enter(lt, self, s, &base)) return 1;
    lua_State *T = lt->T;
    set_pos_inputs(lt, s);
    lua_pushvalue(T, tm->fn.slot);
    lua_pushvalue(T, lt->s_pos_q);
    lua_pushvalue(T, lt->s_pos_t);
    push_p(lt);
    bad = lp_pcall(lt, &tm->fn, 3 - lt->flat, s->error, s->error_len);
    int res = lua_gettop(T), count = 1;
    if (!bad && lua_type(T, res) == LUA_TTABLE) {
      count = (int)lua_rawlen(T, res);
      if (count != dim)
        bad = fail(s->error, s->error_len,
                   "%s: returned %d components; terminal '%s' is declared with dim = %d",
                   tm->fn.label, count, tm->name, dim);
    } else if (!bad && dim != 1) {
      bad = fail(s->error, s->error_len,
                 "%s: returned a %s; terminal '%s' needs a table of %d components", tm->fn.label,
                 luaL_typename(T, res), tm->name, dim);
    }
    for (int i = 0; i < dim && !bad; i++) {
      int idx = res;
      if (lua_type(T, res) == LUA_TTABLE) {
        lua_rawgeti(T, res, i + 1);
        idx = lua_gettop(T);
      }
      const Jet *j;
      double x;
      if (result_jet(lt, idx, lt->pos_t, &j, &x, &tm->fn, s->error, s->error_len)) {
        bad = 1;
        break;
      }
      val[i] = x;
      for (int c = 0; c < n; c++) J[i + c * dim] = j ? j->g[c] : 0.0;
      vb[i] = j ? j->g[n] : 0.0;
      ab[i] = j ? j->d2 : 0.0;
    }
    if (!bad && (!finite_all(val, dim) || !finite_all(J, dim * n) || !finite_all(vb, dim) ||
                 !finite_all(ab, dim)))
      bad = fail(s->error, s->error_len, "%s: a component or its derivative is not finite",
                 tm->fn.label);
    leave(lt, base);
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

/* Pushes value c of a constraint entry's result at idx: the result itself when the entry has
 * one row and returned no table, else entry c + 1 of the table of `count` values it must
 * return. Returns the pushed index, or 0 after writing an error. */
static int push_component(LpType *lt, int idx, const LpRow *first, int c, char *error,
                          size_t len) {
  lua_State *T = lt->T;
  if (lua_type(T, idx) == LUA_TTABLE) {
    int k = (int)lua_rawlen(T, idx);
    if (k != first->count) {
      fail(error, len, "%s: returned %d values; the constraint has %d row%s", first->fn.label,
           k, first->count, first->count == 1 ? "" : "s");
      return 0;
    }
    lua_rawgeti(T, idx, c + 1);
  } else if (first->count > 1) {
    fail(error, len, "%s: must return a table of %d values (one per row), got %s",
         first->fn.label, first->count, luaL_typename(T, idx));
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

static int lp_constraints(const jyPartInstance *self, const jyPartState *s, double *A,
                          double *b, double *residual, double *rate) {
  LpType *lt = (LpType *)self->type->type_data;
  int n = lt->n, m = lt->nrows, base, bad = 0;
  if (enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  if (lt->pos_t) set_pos_inputs(lt, s);
  if (lt->vel_t) {
    for (int i = 0; i < n; i++) {
      lt->vel_q[i]->v = s->q[i];
      lt->vel_v[i]->v = s->v[i];
    }
    lt->vel_t->v = s->t;
  }
  int numbers = 0; /* q and v as plain numbers (acceleration-level rows) filled */
  for (int r0 = 0; r0 < m && !bad;) {
    const LpRow *first = &lt->rows[r0];
    int count = first->count;
    lua_settop(T, base);
    lua_pushvalue(T, first->fn.slot);
    if (first->kind == JY_ROW_POSITION) {
      lua_pushvalue(T, lt->s_pos_q);
      lua_pushvalue(T, lt->s_pos_t);
      push_p(lt);
      bad = lp_pcall(lt, &first->fn, 3 - lt->flat, s->error, s->error_len);
    } else if (first->kind == JY_ROW_VELOCITY) {
      lua_pushvalue(T, lt->s_vel_q);
      lua_pushvalue(T, lt->s_vel_v);
      lua_pushvalue(T, lt->s_vel_t);
      push_p(lt);
      bad = lp_pcall(lt, &first->fn, 4 - lt->flat, s->error, s->error_len);
    } else {
      if (!numbers) fill_numbers(lt, s->q, s->v);
      numbers = 1;
      lua_pushvalue(T, lt->s_qn_proxy);
      lua_pushvalue(T, lt->s_vn_proxy);
      lua_pushnumber(T, s->t);
      push_p(lt);
      bad = lp_pcalln(lt, &first->fn, 4 - lt->flat, 2, s->error, s->error_len);
    }
    if (bad) break;
    int res = lua_gettop(T);
    for (int c = 0; c < count && !bad; c++) {
      int r = r0 + c, top = lua_gettop(T);
      double x = 0.0;
      if (first->kind == JY_ROW_ACCELERATION) {
        double arow[JY_PART_MAX_COORDS];
        bad = read_accel_row(lt, res - 1, res, first, c, arow, &b[r], s->error, s->error_len);
        if (bad) break;
        for (int k = 0; k < n; k++) A[r + k * m] = arow[k];
        if (residual) residual[r] = 0.0;
        if (rate) rate[r] = 0.0;
      } else {
        const Jet *j;
        int idx = push_component(lt, res, first, c, s->error, s->error_len);
        const Jet *like = first->kind == JY_ROW_POSITION ? lt->pos_t : lt->vel_t;
        if (!idx || result_jet(lt, idx, like, &j, &x, &first->fn, s->error, s->error_len)) {
          bad = 1;
          break;
        }
        if (first->kind == JY_ROW_POSITION) {
          for (int k = 0; k < n; k++) A[r + k * m] = j ? j->g[k] : 0.0;
          b[r] = j ? -j->d2 : 0.0;
          if (residual) residual[r] = x;
          if (rate) rate[r] = j ? j->d1 : 0.0;
        } else {
          double rhs = 0.0;
          for (int k = 0; k < n; k++) {
            A[r + k * m] = j ? j->g[n + k] : 0.0;
            rhs -= j ? j->g[k] * s->v[k] : 0.0;
          }
          b[r] = rhs - (j ? j->g[2 * n] : 0.0);
          if (residual) residual[r] = x;
        }
      }
      int fin = isfinite(b[r]) && isfinite(x);
      for (int k = 0; k < n; k++) fin = fin && isfinite(A[r + k * m]);
      if (!fin && count > 1)
        bad = fail(s->error, s->error_len,
                   "%s: the value or a derivative of row %d is not finite (%g)",
                   first->fn.label, c + 1, x);
      else if (!fin)
        bad = fail(s->error, s->error_len, "%s: the value or a derivative is not finite (%g)",
                   first->fn.label, x);
      lua_settop(T, top);
    }
    r0 += count;
  }
  leave(lt, base);
  return bad;
}

static int lp_nonideal(const jyPartInstance *self, const jyPartState *s, double *C) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad;
  if (enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  fill_numbers(lt, s->q, s->v);
  lua_pushvalue(T, lt->nonideal.slot);
  lua_pushvalue(T, lt->s_qn_proxy);
  lua_pushvalue(T, lt->s_vn_proxy);
  lua_pushnumber(T, s->t);
  push_p(lt);
  bad = lp_pcall(lt, &lt->nonideal, 4 - lt->flat, s->error, s->error_len) ||
        read_coord_vector(lt, lua_gettop(T), C, &lt->nonideal, s->error, s->error_len);
  if (!bad && !finite_all(C, lt->n))
    bad = fail(s->error, s->error_len, "%s: returned a value that is not finite",
               lt->nonideal.label);
  leave(lt, base);
  return bad;
}

/* The non-ideal law C(q, v, t, row forces, q''): f holds the part's row forces by row name
 * (and by row number), a the accelerations of the previous iterate by coordinate. */
static int lp_law(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                  const double *acc, double *force) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad;
  if (enter(lt, self, s, &base)) return 1;
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
  lua_pushvalue(T, lt->law.slot);
  lua_pushvalue(T, lt->s_qn_proxy);
  lua_pushvalue(T, lt->s_vn_proxy);
  lua_pushnumber(T, s->t);
  push_p(lt);
  lua_pushvalue(T, lt->s_lawf_proxy);
  lua_pushvalue(T, lt->s_acc_proxy);
  bad = lp_pcall(lt, &lt->law, 6 - lt->flat, s->error, s->error_len) ||
        read_coord_vector(lt, lua_gettop(T), force, &lt->law, s->error, s->error_len);
  if (!bad && !finite_all(force, lt->n))
    bad = fail(s->error, s->error_len, "%s: returned a value that is not finite",
               lt->law.label);
  leave(lt, base);
  return bad;
}

static int lp_outputs(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                      double *out) {
  LpType *lt = (LpType *)self->type->type_data;
  int base, bad = 0;
  if (enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  fill_numbers(lt, s->q, s->v);
  for (int r = 0; r < lt->nrows; r++) {
    lua_pushnumber(T, row_forces ? row_forces[r] : 0.0);
    lua_rawseti(T, lt->s_rowf, r + 1);
  }
  for (int o = 0; o < lt->nout && !bad; o++) {
    const LpFn *fn = &lt->out[o].fn;
    lua_pushvalue(T, fn->slot);
    lua_pushvalue(T, lt->s_qn_proxy);
    lua_pushvalue(T, lt->s_vn_proxy);
    lua_pushnumber(T, s->t);
    push_p(lt);
    lua_pushvalue(T, lt->s_rowf);
    bad = lp_pcall(lt, fn, 5 - lt->flat, s->error, s->error_len);
    if (!bad && lua_type(T, -1) != LUA_TNUMBER)
      bad = fail(s->error, s->error_len, "%s: must return a number, got %s", fn->label,
                 luaL_typename(T, -1));
    if (!bad) out[o] = (double)lua_tonumber(T, -1);
    if (!bad && !isfinite(out[o]))
      bad = fail(s->error, s->error_len, "%s: returned a value that is not finite", fn->label);
    lua_settop(T, base);
  }
  leave(lt, base);
  return bad;
}

static int lp_shape(const jyPartType *type, const double *params, jyPartShape *shape,
                    char *error, size_t error_len) {
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
  return 0;
}

/* ---- registration ---- */

static int guard_gc(lua_State *L) {
  LpType **p = (LpType **)luaL_checkudata(L, 1, LP_GUARD);
  lp_free(*p);
  *p = NULL;
  return 0;
}

static char *dup(lua_State *L, const char *s) {
  size_t len = strlen(s);
  char *d = (char *)malloc(len + 1);
  if (!d) luaL_error(L, "out of memory registering a Lua part type");
  memcpy(d, s, len + 1);
  return d;
}

static int is_identifier(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
  for (s++; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

/* Moves the value on top of L to the type's thread; returns its slot. */
static int to_slot(lua_State *L, LpType *lt) {
  if (!lua_checkstack(lt->T, 2)) luaL_error(L, "out of memory registering a Lua part type");
  lua_xmove(L, lt->T, 1);
  return lua_gettop(lt->T);
}

/* The function at idx becomes fn (role names it in messages); nil leaves it empty. */
static void take_fn(lua_State *L, LpType *lt, int idx, const char *role, LpFn *fn) {
  idx = lua_absindex(L, idx);
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TFUNCTION)
    luaL_error(L, "part type '%s': %s must be a function, got %s", lt->name, role,
               luaL_typename(L, idx));
  lua_Debug ar;
  lua_pushvalue(L, idx);
  lua_getinfo(L, ">S", &ar);
  const char *label = lua_pushfstring(L, "%s (%s:%d)", role, ar.short_src, ar.linedefined);
  fn->label = dup(L, label);
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  fn->slot = to_slot(L, lt);
}

static int coord_index(const LpType *lt, const char *name) {
  for (int i = 0; i < lt->n; i++)
    if (strcmp(lt->coord_names[i], name) == 0) return i;
  return -1;
}

/* Pushes the entries of the list-or-map field at idx as an array of {name = key, ...}
 * tables (a map's keys in name order); a map's values may be functions (fkey: the field the
 * function goes to). */
static void push_entries(lua_State *L, int idx, const char *what, const char *fkey,
                         const LpType *lt) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "part type '%s': %s must be a table, got %s", lt->name, what,
               luaL_typename(L, idx));
  lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
  lua_newtable(L);
  int out = lua_gettop(L);
  if (len > 0) {
    for (lua_Integer i = 1; i <= len; i++) {
      if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
        luaL_error(L, "part type '%s': %s[%d] must be a table, got %s", lt->name, what, (int)i,
                   luaL_typename(L, -1));
      lua_rawseti(L, out, i);
    }
    return;
  }
  /* A map: sort the names. */
  int count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "part type '%s': %s must be a list or a map keyed by name", lt->name, what);
    lua_pop(L, 1);
    count++;
  }
  for (int placed = 0; placed < count; placed++) {
    const char *best = NULL;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      const char *k = lua_tostring(L, -2);
      int used = 0;
      for (int j = 1; j <= placed && !used; j++) {
        lua_rawgeti(L, out, j);
        lua_getfield(L, -1, "name");
        used = strcmp(lua_tostring(L, -1), k) == 0;
        lua_pop(L, 2);
      }
      if (!used && (!best || strcmp(k, best) < 0)) best = k;
      lua_pop(L, 1);
    }
    lua_pushstring(L, best);
    lua_gettable(L, idx);
    if (lua_type(L, -1) == LUA_TFUNCTION) {
      lua_newtable(L);
      lua_insert(L, -2);
      lua_setfield(L, -2, fkey);
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      lua_newtable(L); /* a copy, so the name can be set without touching the script's */
      lua_pushnil(L);
      while (lua_next(L, -3)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
      }
      lua_remove(L, -2);
    } else {
      luaL_error(L, "part type '%s': %s.%s must be a table or a function, got %s", lt->name,
                 what, best, luaL_typename(L, -1));
    }
    lua_pushstring(L, best);
    lua_setfield(L, -2, "name");
    lua_rawseti(L, out, placed + 1);
  }
}

/* The string field key of the table at idx (NULL when absent; raises when not a string). */
static const char *opt_string(lua_State *L, int idx, const char *key, const char *what,
                              const LpType *lt) {
  lua_getfield(L, idx, key);
  const char *s = NULL;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "part type '%s': %s.%s must be a string, got %s", lt ? lt->name : "?", what,
                 key, luaL_typename(L, -1));
    s = lua_tostring(L, -1);
  }
  lua_pop(L, 1); /* the string stays alive in the table */
  return s;
}

static void check_keys(lua_State *L, int idx, const char *what, const char *const *names, int n,
                       const char *tname) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      if (lua_type(L, -2) == LUA_TNUMBER) { /* list parts are checked by the caller */
        lua_pop(L, 1);
        continue;
      }
      luaL_error(L, "part type '%s': %s has a %s key", tname, what, luaL_typename(L, -2));
    }
    const char *k = lua_tostring(L, -2);
    int found = 0;
    for (int i = 0; i < n; i++) found |= strcmp(k, names[i]) == 0;
    if (!found) {
      const char *near = jy_nearest_name(k, names, n);
      luaL_error(L, "part type '%s': unknown field '%s' in %s%s%s%s", tname, k, what,
                 near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    lua_pop(L, 1);
  }
}

static void parse_params(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"name", "default", "unit", "doc", "domain"};
  static const char *const domains[] = {"real", "positive", "nonnegative", "dimension"};
  if (lua_getfield(L, 1, "params") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE)
    luaL_error(L, "part type '%s': params must be a list of tables", lt->name);
  int idx = lua_gettop(L), np = (int)lua_rawlen(L, idx);
  lt->params = (jyParamSpec *)calloc((size_t)(np > 0 ? np : 1), sizeof *lt->params);
  if (!lt->params) luaL_error(L, "out of memory registering a Lua part type");
  for (int i = 0; i < np; i++) {
    if (lua_rawgeti(L, idx, i + 1) != LUA_TTABLE)
      luaL_error(L, "part type '%s': params[%d] must be a table {name=, default=, unit=, doc=}",
                 lt->name, i + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "a parameter", keys, 5, lt->name);
    const char *name = opt_string(L, e, "name", "params[i]", lt);
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': params[%d] needs a name (an identifier)", lt->name, i + 1);
    if (!strcmp(name, "init") || !strcmp(name, "vel") || !strcmp(name, "gravity"))
      luaL_error(L, "part type '%s': '%s' cannot be a parameter name (it is reserved)",
                 lt->name, name);
    for (int j = 0; j < i; j++)
      if (strcmp(lt->params[j].name, name) == 0)
        luaL_error(L, "part type '%s': parameter '%s' is listed twice", lt->name, name);
    lua_getfield(L, e, "default");
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "part type '%s': parameter '%s' needs a numeric default, got %s", lt->name,
                 name, luaL_typename(L, -1));
    double def = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    const char *unit = opt_string(L, e, "unit", name, lt);
    if (!unit)
      luaL_error(L, "part type '%s': parameter '%s' needs a unit (\"1\" when dimensionless)",
                 lt->name, name);
    const char *doc = opt_string(L, e, "doc", name, lt);
    const char *dom = opt_string(L, e, "domain", name, lt);
    jyParamDomain d = JY_PARAM_REAL;
    if (dom) {
      int which = -1;
      for (int k = 0; k < 4; k++)
        if (strcmp(dom, domains[k]) == 0) which = k;
      if (which < 0)
        luaL_error(L, "part type '%s': parameter '%s' has domain '%s' (valid: real, positive, "
                      "nonnegative, dimension)", lt->name, name, dom);
      d = (jyParamDomain)which;
    }
    int ok = isfinite(def) && (d != JY_PARAM_POSITIVE || def > 0) &&
             (d != JY_PARAM_NONNEGATIVE || def >= 0) &&
             (d != JY_PARAM_DIMENSION || def == 1 || def == 2 || def == 3);
    if (!ok)
      luaL_error(L, "part type '%s': the default of parameter '%s' (%f) is outside its domain "
                    "'%s'", lt->name, name, def, dom ? dom : "real");
    lt->params[i].name = dup(L, name);
    lt->nparams = i + 1;
    lt->params[i].unit = dup(L, unit);
    lt->params[i].doc = dup(L, doc ? doc : "");
    lt->params[i].default_value = def;
    lt->params[i].domain = d;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void parse_coords(lua_State *L, LpType *lt) {
  if (lua_getfield(L, 1, "coords") != LUA_TTABLE)
    luaL_error(L, "part type '%s': coords must be a list of coordinate names, got %s",
               lt->name, luaL_typename(L, -1));
  int idx = lua_gettop(L), n = (int)lua_rawlen(L, idx);
  if (n < 1 || n > JY_PART_MAX_COORDS)
    luaL_error(L, "part type '%s': coords must list 1 to %d names", lt->name,
               JY_PART_MAX_COORDS);
  lt->coord_names = (char **)calloc((size_t)n, sizeof *lt->coord_names);
  lt->coord_defaults = (double *)calloc((size_t)n, sizeof *lt->coord_defaults);
  if (!lt->coord_names || !lt->coord_defaults)
    luaL_error(L, "out of memory registering a Lua part type");
  for (int i = 0; i < n; i++) {
    const char *name = NULL;
    double def = 0.0;
    int t = lua_rawgeti(L, idx, i + 1);
    if (t == LUA_TSTRING) {
      name = lua_tostring(L, -1);
    } else if (t == LUA_TTABLE) {
      static const char *const keys[] = {"name", "default"};
      check_keys(L, -1, "a coordinate", keys, 2, lt->name);
      name = opt_string(L, lua_gettop(L), "name", "coords[i]", lt);
      lua_getfield(L, -1, "default");
      if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "part type '%s': the default of coordinate '%s' must be a number",
                   lt->name, name ? name : "?");
      def = (double)lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': coords[%d] must be a name (an identifier) or "
                    "{name=, default=}", lt->name, i + 1);
    if (coord_index(lt, name) >= 0)
      luaL_error(L, "part type '%s': coordinate '%s' is listed twice", lt->name, name);
    lt->coord_names[i] = dup(L, name);
    lt->coord_defaults[i] = def;
    lt->n = i + 1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void parse_terminals(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"name", "dim", "fn", "coords"};
  if (lua_getfield(L, 1, "terminals") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  push_entries(L, -1, "terminals", "fn", lt);
  int list = lua_gettop(L), nt = (int)lua_rawlen(L, list);
  if (nt > JY_PART_MAX_TERMINALS)
    luaL_error(L, "part type '%s': at most %d terminals", lt->name, JY_PART_MAX_TERMINALS);
  for (int k = 0; k < nt; k++) {
    lua_rawgeti(L, list, k + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "a terminal", keys, 4, lt->name);
    LpTerminal *tm = &lt->term[k];
    const char *name = opt_string(L, e, "name", "terminals[i]", lt);
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': terminals[%d] needs a name (an identifier)", lt->name,
                 k + 1);
    for (int j = 0; j < k; j++)
      if (strcmp(lt->term[j].name, name) == 0)
        luaL_error(L, "part type '%s': terminal '%s' is listed twice", lt->name, name);
    tm->name = dup(L, name);
    lt->nterm = k + 1;
    lua_getfield(L, e, "dim");
    int dim = lua_isnil(L, -1) ? 0 : (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, e, "coords") == LUA_TTABLE) {
      int c = lua_gettop(L), nc = (int)lua_rawlen(L, c);
      if (nc < 1 || nc > JY_TERMINAL_MAX_DIM || (dim && dim != nc))
        luaL_error(L, "part type '%s': terminal '%s' lists %d coordinates (1 to %d, = dim)",
                   lt->name, name, nc, JY_TERMINAL_MAX_DIM);
      tm->dim = nc;
      tm->is_block = 1;
      for (int i = 0; i < nc; i++) {
        lua_rawgeti(L, c, i + 1);
        const char *cn = lua_tostring(L, -1);
        int ci = cn ? coord_index(lt, cn) : -1;
        if (ci < 0)
          luaL_error(L, "part type '%s': terminal '%s': '%s' is no coordinate", lt->name, name,
                     cn ? cn : luaL_typename(L, -1));
        tm->coords[i] = ci;
        if (i > 0 && ci != tm->coords[i - 1] + 1) tm->is_block = 0;
        lua_pop(L, 1);
      }
      tm->offset = tm->is_block ? tm->coords[0] : 0;
      lua_getfield(L, e, "fn");
      if (!lua_isnil(L, -1))
        luaL_error(L, "part type '%s': terminal '%s' has both coords and fn", lt->name, name);
      lua_pop(L, 1);
    } else {
      if (!lua_isnil(L, -1))
        luaL_error(L, "part type '%s': terminal '%s': coords must be a list of names", lt->name,
                   name);
      if (dim < 1 || dim > JY_TERMINAL_MAX_DIM)
        luaL_error(L, "part type '%s': terminal '%s' needs dim = 1 to %d", lt->name, name,
                   JY_TERMINAL_MAX_DIM);
      tm->dim = dim;
      lua_getfield(L, e, "fn");
      if (lua_type(L, -1) != LUA_TFUNCTION)
        luaL_error(L, "part type '%s': terminal '%s' needs fn = function(q, t, p) (or coords)",
                   lt->name, name);
      char role[96];
      snprintf(role, sizeof role, "terminal '%s'", name);
      take_fn(L, lt, -1, role, &tm->fn);
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 2);
}

/* Row c of a constraint entry is named after it, numbered from 1 when it gave rows = k. */
static void row_name(char *out, size_t len, const char *name, int numbered, int c) {
  if (numbered)
    snprintf(out, len, "%s%d", name, c + 1);
  else
    snprintf(out, len, "%s", name);
}

static void parse_constraints(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"name", "kind", "phi", "psi", "accel", "rows"};
  static const char *const fields[] = {"phi", "psi", "accel"};
  static const char *const kinds[] = {"position", "velocity", "acceleration"};
  static const char *const what[] = {"phi (a position constraint)", "psi (a velocity constraint)",
                                     "accel (an acceleration-level constraint)"};
  if (lua_getfield(L, 1, "constraints") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  push_entries(L, -1, "constraints", "phi", lt);
  int list = lua_gettop(L), ne = (int)lua_rawlen(L, list);
  for (int r = 0; r < ne; r++) {
    lua_rawgeti(L, list, r + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "a constraint", keys, 6, lt->name);
    const char *name = opt_string(L, e, "name", "constraints[i]", lt);
    char fallback[32];
    if (!name) {
      snprintf(fallback, sizeof fallback, "c%d", r + 1);
      name = fallback;
    }
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': constraint name '%s' is no identifier", lt->name, name);
    int count = 1, numbered = 0;
    if (lua_getfield(L, e, "rows") != LUA_TNIL) {
      int isint = 0;
      lua_Integer k = lua_tointegerx(L, -1, &isint);
      if (!isint || k < 1 || k > JY_PART_MAX_ROWS)
        luaL_error(L, "part type '%s': constraint '%s': rows must be a whole number from 1 to %d",
                   lt->name, name, JY_PART_MAX_ROWS);
      count = (int)k;
      numbered = 1;
    }
    lua_pop(L, 1);
    if (lt->nrows + count > JY_PART_MAX_ROWS)
      luaL_error(L, "part type '%s': at most %d constraint rows", lt->name, JY_PART_MAX_ROWS);
    const char *kind = opt_string(L, e, "kind", name, lt);
    int which = -1, given = 0;
    for (int f = 0; f < 3; f++) {
      lua_getfield(L, e, fields[f]);
      if (!lua_isnil(L, -1)) {
        which = f;
        given++;
      }
      lua_pop(L, 1);
    }
    if (given != 1)
      luaL_error(L, "part type '%s': constraint '%s' needs exactly one of phi = function(q, t, "
                    "p) (position), psi = function(q, v, t, p) (velocity) and accel = "
                    "function(q, v, t, p) (acceleration level: returns A, b)", lt->name, name);
    if (kind) {
      int k = -1;
      for (int f = 0; f < 3; f++)
        if (strcmp(kind, kinds[f]) == 0) k = f;
      if (k < 0)
        luaL_error(L, "part type '%s': constraint '%s' has kind '%s' (valid: position, "
                      "velocity, acceleration)", lt->name, name, kind);
      if (k != which)
        luaL_error(L, "part type '%s': constraint '%s' has kind '%s' but gives %s%s", lt->name,
                   name, kind, what[which],
                   k == 0 && which == 1 ? ": a position constraint must be a function "
                                          "phi(q, t) of the coordinates and time only" : "");
    }
    char rname[96];
    for (int c = 0; c < count; c++) {
      row_name(rname, sizeof rname, name, numbered, c);
      for (int j = 0; j < lt->nrows; j++)
        if (strcmp(lt->rows[j].name, rname) == 0)
          luaL_error(L, "part type '%s': constraint row '%s' is listed twice", lt->name, rname);
    }
    /* The first row owns the function's label; the others share it. */
    LpRow *first = &lt->rows[lt->nrows];
    first->kind = (jyRowKind)which;
    first->count = count;
    lt->nrows++;
    char role[96];
    snprintf(role, sizeof role, "constraint '%s' %s", name, fields[which]);
    lua_getfield(L, e, fields[which]);
    take_fn(L, lt, -1, role, &first->fn);
    lua_pop(L, 1);
    for (int c = 0; c < count; c++) {
      LpRow *row = first + c;
      if (c > 0) {
        row->kind = first->kind;
        row->fn = first->fn;
        row->comp = c;
        lt->nrows++;
      }
      row_name(rname, sizeof rname, name, numbered, c);
      row->name = dup(L, rname);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

static void parse_outputs(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"name", "fn", "angle"};
  if (lua_getfield(L, 1, "outputs") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  push_entries(L, -1, "outputs", "fn", lt);
  int list = lua_gettop(L), no = (int)lua_rawlen(L, list);
  if (no > JY_PART_MAX_OUTPUTS)
    luaL_error(L, "part type '%s': at most %d outputs", lt->name, JY_PART_MAX_OUTPUTS);
  for (int o = 0; o < no; o++) {
    lua_rawgeti(L, list, o + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "an output", keys, 3, lt->name);
    const char *name = opt_string(L, e, "name", "outputs[i]", lt);
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': outputs[%d] needs a name (an identifier)", lt->name, o + 1);
    lt->out[o].name = dup(L, name);
    lt->nout = o + 1;
    lua_getfield(L, e, "fn");
    if (lua_type(L, -1) != LUA_TFUNCTION)
      luaL_error(L, "part type '%s': output '%s' needs fn = function(q, v, t, p, f)", lt->name,
                 name);
    char role[96];
    snprintf(role, sizeof role, "output '%s'", name);
    take_fn(L, lt, -1, role, &lt->out[o].fn);
    int angle = lua_getfield(L, e, "angle");
    if (angle != LUA_TNIL && angle != LUA_TBOOLEAN)
      luaL_error(L, "part type '%s': output '%s': angle must be true or false, got %s", lt->name,
                 name, luaL_typename(L, -1));
    if (lua_toboolean(L, -1)) lt->angle_outputs |= 1u << o;
    lua_pop(L, 3);
  }
  lua_pop(L, 2);
}

/* A read-only view of the table at slot real: a proxy whose __index is it. */
static int readonly_error(lua_State *L) {
  return luaL_error(L, "%s is read-only inside a part function", lua_tostring(L,
                    lua_upvalueindex(1)));
}

/* #x of a proxy: the length of the table behind it (a flat type's arrays). */
static int proxy_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
  return 1;
}

static int make_proxy(lua_State *L, LpType *lt, int real, const char *what) {
  lua_State *T = lt->T;
  lua_checkstack(T, 4);
  lua_newtable(T);              /* proxy */
  lua_createtable(T, 0, 3);     /* its metatable */
  lua_pushvalue(T, real);
  lua_setfield(T, -2, "__index");
  lua_pushstring(T, what);
  lua_pushcclosure(T, readonly_error, 1);
  lua_setfield(T, -2, "__newindex");
  lua_pushvalue(T, real);
  lua_pushcclosure(T, proxy_len, 1);
  lua_setfield(T, -2, "__len");
  lua_pushboolean(T, 0);
  lua_setfield(T, -2, "__metatable");
  lua_setmetatable(T, -2);
  (void)L;
  return lua_gettop(T);
}

/* A table of input Jets by coordinate name (slot returned) for layout (N, R, roff, dd);
 * seeds: variable index of coordinate i is first + i. */
static int make_jets(lua_State *L, LpType *lt, int N, int R, int roff, int dd, int first,
                     Jet **jets, const char *what) {
  lua_State *T = lt->T;
  lua_checkstack(T, 6);
  lua_createtable(T, 0, lt->n);
  int real = lua_gettop(T);
  for (int i = 0; i < lt->n; i++) {
    Jet *j = (Jet *)lua_newuserdatauv(T, jet_bytes(N, R), 0);
    memset(j, 0, jet_bytes(N, R));
    j->N = N;
    j->R = R;
    j->roff = roff;
    j->dd = dd;
    j->g[first + i] = 1.0;
    luaL_setmetatable(T, JYL_JET);
    lua_rawgeti(T, lt->s_names, i + 1);
    lua_insert(T, -2);
    lua_rawset(T, real);
    jets[i] = j;
  }
  int proxy = make_proxy(L, lt, real, what);
  (void)proxy;
  return lua_gettop(T);
}

static Jet *make_time_jet(LpType *lt, int N, int R, int roff, int dd, int var, int *slot) {
  lua_State *T = lt->T;
  lua_checkstack(T, 2);
  Jet *j = (Jet *)lua_newuserdatauv(T, jet_bytes(N, R), 0);
  memset(j, 0, jet_bytes(N, R));
  j->N = N;
  j->R = R;
  j->roff = roff;
  j->dd = dd;
  j->g[var] = 1.0;
  j->d1 = dd ? 1.0 : 0.0;
  luaL_setmetatable(T, JYL_JET);
  *slot = lua_gettop(T);
  return j;
}

/* joinery.part_type(def); upvalue 1 = the env userdata. */
static int l_part_type(lua_State *L) {
  static const char *const keys[] = {
    "name",      "doc",      "params",      "coords",   "terminals", "lagrangian",
    "kinetic",   "potential", "mass",       "force",    "constraints", "nonideal",
    "outputs",   "constant_mass", "nonideal_law", "flat"};
  jyEnv *env = jyl_env_of(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  LpType **guard = (LpType **)lua_newuserdatauv(L, sizeof *guard, 0); /* 2 */
  *guard = NULL;
  luaL_setmetatable(L, LP_GUARD);
  LpType *lt = (LpType *)calloc(1, sizeof *lt);
  if (!lt) return luaL_error(L, "out of memory registering a Lua part type");
  *guard = lt;
  lt->ref = LUA_NOREF;
  const char *name = opt_string(L, 1, "name", "the definition", NULL);
  if (!is_identifier(name))
    return luaL_error(L, "joinery.part_type: name must be an identifier (letters, digits, _)");
  lt->name = dup(L, name);
  check_keys(L, 1, "the definition", keys, (int)(sizeof keys / sizeof keys[0]), name);
  if (jy_env_find_type(env, name))
    return luaL_error(L, "a part type named '%s' is already registered", name);
  const char *doc = opt_string(L, 1, "doc", "the definition", lt);
  lt->doc = dup(L, doc ? doc : "");

  lt->T = lua_newthread(L); /* 3: anchored by ref once registered */
  lua_State *T = lt->T;
  lua_checkstack(T, 16);
  jyl_push_msgh(T, JYL_MSGH_LOCATE);
  lt->s_msgh = lua_gettop(T);
  luaL_getmetatable(T, JYL_JET);
  lt->s_jetmt = lua_gettop(T);

  parse_params(L, lt);
  parse_coords(L, lt);
  int n = lt->n;
  lt->p_last = (double *)calloc((size_t)lt->nparams + 3, sizeof(double));
  lt->lag_q = (Jet **)calloc(5 * (size_t)n, sizeof(Jet *));
  if (!lt->p_last || !lt->lag_q) return luaL_error(L, "out of memory registering a part type");
  lt->lag_v = lt->lag_q + n;
  lt->pos_q = lt->lag_q + 2 * n;
  lt->vel_q = lt->lag_q + 3 * n;
  lt->vel_v = lt->lag_q + 4 * n;

  /* The dynamics. */
  lua_getfield(L, 1, "lagrangian");
  take_fn(L, lt, -1, "lagrangian", &lt->lagrangian);
  lua_getfield(L, 1, "kinetic");
  take_fn(L, lt, -1, "kinetic", &lt->kinetic);
  lua_getfield(L, 1, "potential");
  take_fn(L, lt, -1, "potential", &lt->potential);
  lua_getfield(L, 1, "mass");
  take_fn(L, lt, -1, "mass", &lt->mass);
  lua_getfield(L, 1, "force");
  take_fn(L, lt, -1, "force", &lt->force);
  lua_getfield(L, 1, "nonideal");
  take_fn(L, lt, -1, "nonideal", &lt->nonideal);
  lua_getfield(L, 1, "nonideal_law");
  take_fn(L, lt, -1, "nonideal_law", &lt->law);
  lua_pop(L, 7);
  int energies = lt->kinetic.slot || lt->potential.slot;
  if ((lt->lagrangian.slot != 0) + (energies != 0) + (lt->mass.slot != 0) > 1)
    return luaL_error(L, "part type '%s': give the dynamics one way: lagrangian, or "
                         "kinetic/potential, or mass/force", name);
  lt->mode = lt->lagrangian.slot ? DYN_LAGRANGIAN
             : energies          ? DYN_ENERGY
             : (lt->mass.slot || lt->force.slot) ? DYN_DIRECT
                                                 : DYN_NONE;
  lua_getfield(L, 1, "constant_mass");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    return luaL_error(L, "part type '%s': constant_mass must be true or false", name);
  if (lua_toboolean(L, -1)) lt->flags |= JY_PART_CONSTANT_MASS;
  lua_pop(L, 1);
  lua_getfield(L, 1, "flat");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    return luaL_error(L, "part type '%s': flat must be true or false", name);
  lt->flat = lua_toboolean(L, -1);
  lua_pop(L, 1);
  /* Q comes from L = T - V alone: the conformance suite may check it against the energy. */
  if ((lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) && !lt->force.slot)
    lt->flags |= JY_PART_CONSERVATIVE;

  parse_terminals(L, lt);
  parse_constraints(L, lt);
  parse_outputs(L, lt);

  /* Argument tables and input Jets on the thread. */
  lua_newtable(T);
  lt->s_names = lua_gettop(T);
  for (int i = 0; i < n; i++) {
    /* The keys of q, v and a: coordinate names, or 1 .. n for a flat type. */
    if (lt->flat)
      lua_pushinteger(T, i + 1);
    else
      lua_pushstring(T, lt->coord_names[i]);
    lua_rawseti(T, lt->s_names, i + 1);
  }
  lua_createtable(T, 0, lt->nparams + 1);
  lt->s_p = lua_gettop(T);
  lua_createtable(T, 3, 0);
  lt->s_grav = lua_gettop(T);
  make_proxy(L, lt, lt->s_grav, "p.gravity");
  lua_setfield(T, lt->s_p, "gravity"); /* the proxy; the table stays at s_grav */
  lt->s_p_proxy = make_proxy(L, lt, lt->s_p, "p");
  lua_createtable(T, 0, n);
  lt->s_qn = lua_gettop(T);
  lt->s_qn_proxy = make_proxy(L, lt, lt->s_qn, "q");
  lua_createtable(T, 0, n);
  lt->s_vn = lua_gettop(T);
  lt->s_vn_proxy = make_proxy(L, lt, lt->s_vn, "v");
  lua_createtable(T, lt->nrows, 0);
  lt->s_rowf = lua_gettop(T);
  if (lt->law.slot) {
    lua_createtable(T, lt->nrows, lt->nrows);
    lt->s_lawf = lua_gettop(T);
    lt->s_lawf_proxy = make_proxy(L, lt, lt->s_lawf, "f");
    lua_createtable(T, lt->flat ? n : 0, lt->flat ? 0 : n);
    lt->s_acc = lua_gettop(T);
    lt->s_acc_proxy = make_proxy(L, lt, lt->s_acc, "a");
  }
  int npos = 0, nvel = 0, nfnterm = 0;
  for (int r = 0; r < lt->nrows; r++) {
    npos += lt->rows[r].kind == JY_ROW_POSITION;
    nvel += lt->rows[r].kind == JY_ROW_VELOCITY;
  }
  for (int k = 0; k < lt->nterm; k++) nfnterm += lt->term[k].fn.slot != 0;
  if (lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) {
    int N = 2 * n + 1;
    lt->s_lag_q = make_jets(L, lt, N, n, n, 0, 0, lt->lag_q, "q");
    lt->s_lag_v = make_jets(L, lt, N, n, n, 0, n, lt->lag_v, "v");
    lt->lag_t = make_time_jet(lt, N, n, n, 0, 2 * n, &lt->s_lag_t);
  }
  if (npos || nfnterm) {
    lt->s_pos_q = make_jets(L, lt, n + 1, 0, 0, 1, 0, lt->pos_q, "q");
    lt->pos_t = make_time_jet(lt, n + 1, 0, 0, 1, n, &lt->s_pos_t);
  }
  if (nvel) {
    int N = 2 * n + 1;
    lt->s_vel_q = make_jets(L, lt, N, 0, 0, 0, 0, lt->vel_q, "q");
    lt->s_vel_v = make_jets(L, lt, N, 0, 0, 0, n, lt->vel_v, "v");
    lt->vel_t = make_time_jet(lt, N, 0, 0, 0, 2 * n, &lt->s_vel_t);
  }
  if (!lua_checkstack(T, 32)) return luaL_error(L, "out of memory registering a part type");

  /* The instance cache: dynamics, then one block per terminal with a function. */
  size_t off = 0;
  lt->dyn_cache = 0;
  if (lt->mode != DYN_NONE) off += 1 + (size_t)key_len(n) + 3 + (size_t)(n * n + n);
  for (int k = 0; k < lt->nterm; k++)
    if (lt->term[k].fn.slot) {
      lt->term[k].cache = (int)off;
      off += 1 + (size_t)key_len(n) + 3 * TD + (size_t)(TD * n);
    }
  lt->data_doubles = off;

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

  jyStatus st = jy_env_register(env, ty);
  if (st != JY_OK) {
    const char *why = jy_env_error(env);
    return luaL_error(L, "%s", why && *why ? why : jy_status_text(st));
  }
  *guard = NULL; /* the environment owns it now; release() frees it */
  lua_pushvalue(L, 3);
  lt->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushstring(L, lt->name);
  return 1;
}

/* ---- joinery.eval_part ---- */

static void push_matrix(lua_State *L, const double *A, int rows, int cols) {
  lua_createtable(L, rows, 0);
  for (int i = 0; i < rows; i++) {
    lua_createtable(L, cols, 0);
    for (int j = 0; j < cols; j++) {
      lua_pushnumber(L, A[i + j * rows]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

static void push_vector(lua_State *L, const double *x, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, x[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* A state vector from field key of the table at 1: an array of n, or keyed by name. */
static void read_state(lua_State *L, const char *key, const jyPartShape *sh, double *x) {
  int t = lua_getfield(L, 1, key);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (t != LUA_TTABLE) luaL_error(L, "eval_part: %s must be a table", key);
  int n = sh->ncoords, len = (int)lua_rawlen(L, -1);
  if (len > 0) {
    if (len != n) luaL_error(L, "eval_part: %s has %d entries; the part has %d", key, len, n);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, -1, i + 1);
      x[i] = luaL_checknumber(L, -1);
      lua_pop(L, 1);
    }
  } else {
    for (int i = 0; i < n; i++) {
      if (lua_getfield(L, -1, sh->coord_names[i]) != LUA_TNIL) x[i] = luaL_checknumber(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* joinery.eval_part{type=, params=, q=, v=, t=, gravity=}; upvalue 1 = env userdata. */
static int l_eval_part(lua_State *L) {
  jyEnv *env = jyl_env_of(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_getfield(L, 1, "type");
  const char *tname = luaL_checkstring(L, -1);
  const jyPartType *type = jy_env_find_type(env, tname);
  if (!type) return luaL_error(L, "eval_part: unknown part type '%s'", tname);
  lua_pop(L, 1);
  int np = type->nparams;
  double *params = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)(np + 1), 0);
  for (int i = 0; i < np; i++) params[i] = type->params[i].default_value;
  if (lua_getfield(L, 1, "params") == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      int found = -1;
      for (int i = 0; i < np; i++)
        if (strcmp(type->params[i].name, k) == 0) found = i;
      if (found < 0) return luaL_error(L, "eval_part: '%s' has no parameter '%s'", tname, k);
      params[found] = luaL_checknumber(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  jyPartShape *sh = (jyPartShape *)lua_newuserdatauv(L, sizeof *sh, 0);
  memset(sh, 0, sizeof *sh);
  char err[1024] = "";
  if (type->shape(type, params, sh, err, sizeof err) != 0)
    return luaL_error(L, "eval_part: shape: %s", err);
  int n = sh->ncoords, m = sh->nrows;
  double *data = (double *)lua_newuserdatauv(L, sh->instance_size + sizeof(double), 0);
  memset(data, 0, sh->instance_size + sizeof(double));
  jyPartInstance inst = {type, "eval_part", params, sh->instance_size ? data : NULL, n, m};
  if (type->init && type->init(&inst, data, err, sizeof err) != 0)
    return luaL_error(L, "eval_part: init: %s", err);
  size_t nbuf = (size_t)(4 * n + 2 * n * n + m * n + 4 * m + 3 * TD + TD * n + sh->noutputs);
  double *buf = (double *)lua_newuserdatauv(L, sizeof(double) * nbuf, 0);
  memset(buf, 0, sizeof(double) * nbuf);
  double *q = buf, *v = q + n, *M = v + n, *Q = M + n * n, *C = Q + n, *A = C + n;
  double *b = A + m * n, *res = b + m, *rate = res + m, *rowf = rate + m, *J = rowf + m;
  double *tv = J + TD * n, *out = tv + 3 * TD, grav[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) q[i] = sh->coord_defaults[i];
  read_state(L, "q", sh, q);
  read_state(L, "v", sh, v);
  lua_getfield(L, 1, "t");
  double t = luaL_optnumber(L, -1, 0.0);
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "gravity") == LUA_TTABLE)
    for (int i = 0; i < 3; i++) {
      lua_rawgeti(L, -1, i + 1);
      grav[i] = luaL_optnumber(L, -1, 0.0);
      lua_pop(L, 1);
    }
  lua_pop(L, 1);
  jyPartState s = {q, v, t, grav, err, sizeof err};
  lua_createtable(L, 0, 12);
  int r = lua_gettop(L);
#define CALL(what, expr)                                                            \
  do {                                                                              \
    err[0] = '\0';                                                                  \
    if ((expr) != 0)                                                                \
      return luaL_error(L, "part type '%s', %s: %s", tname, what, err[0] ? err : "failed"); \
  } while (0)
  if (type->mass) CALL("mass", type->mass(&inst, &s, M));
  push_matrix(L, M, n, n);
  lua_setfield(L, r, "M");
  if (type->force) CALL("force", type->force(&inst, &s, Q));
  push_vector(L, Q, n);
  lua_setfield(L, r, "Q");
  if (type->nonideal) CALL("nonideal", type->nonideal(&inst, &s, C));
  push_vector(L, C, n);
  lua_setfield(L, r, "C");
  if (m > 0 && type->constraints) CALL("constraints", type->constraints(&inst, &s, A, b, res, rate));
  push_matrix(L, A, m, n);
  lua_setfield(L, r, "A");
  push_vector(L, b, m);
  lua_setfield(L, r, "b");
  push_vector(L, res, m);
  lua_setfield(L, r, "residual");
  push_vector(L, rate, m);
  lua_setfield(L, r, "rate");
  double kin = 0.0, pot = 0.0;
  if (type->energy) {
    CALL("energy", type->energy(&inst, &s, &kin, &pot));
  } else {
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) kin += 0.5 * v[i] * M[i + k * n] * v[k];
  }
  lua_pushnumber(L, kin);
  lua_setfield(L, r, "kinetic");
  lua_pushnumber(L, pot);
  lua_setfield(L, r, "potential");
  lua_createtable(L, 0, sh->nterminals);
  for (int k = 0; k < sh->nterminals; k++) {
    int dim = sh->terminals[k].dim;
    memset(J, 0, sizeof(double) * TD * (size_t)n);
    memset(tv, 0, sizeof(double) * 3 * TD);
    if (type->terminal) CALL("terminal", type->terminal(&inst, &s, k, tv, J, tv + TD, tv + 2 * TD));
    lua_createtable(L, 0, 4);
    push_vector(L, tv, dim);
    lua_setfield(L, -2, "value");
    push_matrix(L, J, dim, n);
    lua_setfield(L, -2, "J");
    push_vector(L, tv + TD, dim);
    lua_setfield(L, -2, "vel_bias");
    push_vector(L, tv + 2 * TD, dim);
    lua_setfield(L, -2, "acc_bias");
    lua_setfield(L, -2, sh->terminals[k].name);
  }
  lua_setfield(L, r, "terminals");
  if (sh->noutputs && type->outputs) CALL("outputs", type->outputs(&inst, &s, rowf, out));
  lua_createtable(L, 0, sh->noutputs);
  for (int o = 0; o < sh->noutputs; o++) {
    lua_pushnumber(L, out[o]);
    lua_setfield(L, -2, sh->output_names[o]);
  }
  lua_setfield(L, r, "outputs");
#undef CALL
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, sh->coord_names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, r, "coords");
  return 1;
}

/* Pushes joinery.part_type bound to the environment userdata at env_idx. */
void jyl_push_part_type(lua_State *L, int env_idx) {
  lua_pushvalue(L, env_idx);
  lua_pushcclosure(L, l_part_type, 1);
}

/* ---- opening ---- */

void jyl_open_parts(lua_State *L, int env_idx) {
  env_idx = lua_absindex(L, env_idx);
  int mod = lua_gettop(L);
  if (luaL_newmetatable(L, LP_GUARD)) {
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  /* The Jet metatable: every metamethod has it as upvalue 1 (new Jets get it from there). */
  if (luaL_newmetatable(L, JYL_JET)) {
    for (const luaL_Reg *r = jet_meta; r->name; r++) {
      lua_pushvalue(L, -1);
      lua_pushcclosure(L, r->func, 1);
      lua_setfield(L, -2, r->name);
    }
  }
  int mt = lua_gettop(L);
  /* joinery.math's functions learn Jets. */
  if (lua_getfield(L, mod, "math") == LUA_TTABLE) {
    int math = lua_gettop(L);
    for (size_t i = 0; i < sizeof math_rules / sizeof math_rules[0]; i++) {
      lua_pushvalue(L, mt);
      lua_getfield(L, math, math_rules[i].name);
      lua_pushinteger(L, (lua_Integer)i);
      lua_pushcclosure(L, math_on_jets, 3);
      lua_setfield(L, math, math_rules[i].name);
    }
  }
  lua_settop(L, mod);
  lua_pushvalue(L, env_idx);
  lua_pushcclosure(L, l_part_type, 1);
  lua_setfield(L, mod, "part_type");
  lua_pushvalue(L, env_idx);
  lua_pushcclosure(L, l_eval_part, 1);
  lua_setfield(L, mod, "eval_part");
}

/* lua/parts/jet.c — joinery.Jet: the numbers a Lua part's functions compute with, and joinery.math
 * on them.
 *
 * A Jet is a forward-mode number that carries, besides the value, the gradient over the
 * evaluation's variables and the second derivatives that evaluation needs, so that ONE call
 * of a Lua function gives everything (the hyper-dual recipe of the platform notes needs
 * n(n+1)/2 + 2n calls for M and Q). lua/parts/part_calls.c seeds them in three layouts:
 *   LAG (lagrangian, kinetic, potential): variables (q, v, t), N = 2n + 1, Hessian rows
 *       of the v variables: M = L_vv, Q = L_q - L_vq v - L_vt.
 *   POS (terminals, phi): variables (q, t), N = n + 1, plus the first and second
 *       derivatives along (v, 1): J = p_q, p_t, gamma = v'p_qq v + 2 p_qt v + p_tt.
 *   VEL (psi): variables (q, v, t), gradient only: A = psi_v, b = -(psi_q v + psi_t).
 * joinery.math's functions are wrapped here so that they also take Jets (the hyper-dual
 * derivative rules of joinery/ad.h give f, f', f''; the 2-argument ones three times).
 * Every metamethod and wrapped function has the Jet metatable as upvalue 1.
 */
#include "luapart.h"

#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "joinery/ad.h"

static size_t jet_bytes(int N, int R) { return sizeof(Jet) + (size_t)(N + R * N) * sizeof(double); }

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
  if (!jyl_jet_same_layout(a, b))
    luaL_error(L,
               "values of two different part evaluations were combined (a " JYL_JET
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
  r->d2 =
    fx * x->d2 + fy * y->d2 + fxx * x->d1 * x->d1 + 2.0 * fxy * x->d1 * y->d1 + fyy * y->d1 * y->d1;
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
  {"__add", jet_add}, {"__sub", jet_sub},           {"__mul", jet_mul},     {"__div", jet_div},
  {"__unm", jet_unm}, {"__pow", jet_pow},           {"__lt", jet_lt},       {"__le", jet_le},
  {"__eq", jet_eq},   {"__tostring", jet_tostring}, {"__index", jet_index}, {NULL, NULL}};

/* ---- joinery.math on Jets ---- */

typedef struct MathRule {
  const char *name;
  jyHyper (*f1)(jyHyper);          /* one argument */
  jyHyper (*f2)(jyHyper, jyHyper); /* two arguments (or the 2-argument form of f1's name) */
} MathRule;

static const MathRule math_rules[] = {
  {"sqrt", jy_hd_sqrt, NULL},        {"exp", jy_hd_exp, NULL},     {"sin", jy_hd_sin, NULL},
  {"cos", jy_hd_cos, NULL},          {"tan", jy_hd_tan, NULL},     {"asin", jy_hd_asin, NULL},
  {"acos", jy_hd_acos, NULL},        {"sinh", jy_hd_sinh, NULL},   {"cosh", jy_hd_cosh, NULL},
  {"tanh", jy_hd_tanh, NULL},        {"abs", jy_hd_abs, NULL},     {"log", jy_hd_log, hd_logb},
  {"atan", jy_hd_atan, jy_hd_atan2}, {"atan2", NULL, jy_hd_atan2}, {"hypot", NULL, jy_hd_hypot},
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

Jet *jyl_jet_new(lua_State *L, int N, int R, int roff, int dd) {
  Jet *j = (Jet *)lua_newuserdatauv(L, jet_bytes(N, R), 0);
  memset(j, 0, jet_bytes(N, R));
  j->N = N;
  j->R = R;
  j->roff = roff;
  j->dd = dd;
  luaL_setmetatable(L, JYL_JET);
  return j;
}

void jyl_open_jets(lua_State *L, int mod_idx) {
  mod_idx = lua_absindex(L, mod_idx);
  int top = lua_gettop(L);
  if (luaL_newmetatable(L, JYL_JET)) {
    for (const luaL_Reg *r = jet_meta; r->name; r++) {
      lua_pushvalue(L, -1);
      lua_pushcclosure(L, r->func, 1);
      lua_setfield(L, -2, r->name);
    }
  }
  int mt = lua_gettop(L);
  if (lua_getfield(L, mod_idx, "math") == LUA_TTABLE) {
    int math = lua_gettop(L);
    for (size_t i = 0; i < sizeof math_rules / sizeof math_rules[0]; i++) {
      lua_pushvalue(L, mt);
      lua_getfield(L, math, math_rules[i].name);
      lua_pushinteger(L, (lua_Integer)i);
      lua_pushcclosure(L, math_on_jets, 3);
      lua_setfield(L, math, math_rules[i].name);
    }
  }
  lua_settop(L, top);
}

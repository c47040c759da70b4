/* lua/ad.c — hyper-dual numbers (joinery/ad.h) for Lua: joinery.math.
 *
 *   local M = require("joinery").math
 *   M.hyper(v[, e1[, e2[, e12]]])   -> Hyper (missing parts 0)
 *   M.pi
 *   M.sqrt exp log sin cos tan atan asin acos sinh cosh tanh abs   (one argument)
 *   M.atan2(y, x), M.hypot(x, y), M.atan(y[, x]), M.log(x[, base])
 *
 * Every function takes plain numbers or Hypers. With plain numbers only it returns a plain
 * number as Lua's math library would (abs keeps integers integer); with any Hyper argument
 * it returns a Hyper.
 *
 * Hyper (joinery.Hyper): h.v, h.e1, h.e2, h.e12; + - * / unary- ^ with numbers or Hypers on
 * either side (h ^ number is the real power; a Hyper exponent uses exp(b log a), so the base
 * must be > 0); == < <= compare the real parts (Lua calls == only between two Hypers:
 * h == 1 is always false); tostring(h) -> "hyper(v, e1, e2, e12)".
 *
 * No allocation beyond each Hyper's userdata, no mutable state. */
#include "binding.h"

#include <math.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/ad.h"

static jyHyper *push_hyper(lua_State *L, jyHyper h) {
  jyHyper *p = (jyHyper *)lua_newuserdatauv(L, sizeof *p, 0);
  *p = h;
  luaL_setmetatable(L, JYL_HYPER);
  return p;
}

/* Argument i as a hyper-dual: 1 when it is a Hyper, 0 when it is a number (stored as a
 * constant), -1 when it is neither. */
static int to_hyper(lua_State *L, int i, jyHyper *out) {
  const jyHyper *p = (const jyHyper *)luaL_testudata(L, i, JYL_HYPER);
  if (p) {
    *out = *p;
    return 1;
  }
  int isnum = 0;
  lua_Number x = lua_tonumberx(L, i, &isnum);
  if (!isnum) return -1;
  *out = jy_hd_const((double)x);
  return 0;
}

void jyl_push_hyper(lua_State *L, double v, double e1, double e2, double e12) {
  push_hyper(L, (jyHyper){v, e1, e2, e12});
}

int jyl_to_hyper(lua_State *L, int i, double out[4]) {
  jyHyper h = {0, 0, 0, 0};
  int kind = to_hyper(L, i, &h);
  out[0] = h.v, out[1] = h.e1, out[2] = h.e2, out[3] = h.e12;
  return kind;
}

/* Argument i of joinery.math.<fname>: a number or a Hyper, else an error naming fname. */
static int arg_hyper(lua_State *L, int i, const char *fname, jyHyper *out) {
  int r = to_hyper(L, i, out);
  if (r < 0)
    return luaL_error(
      L, "bad argument #%d to 'joinery.math.%s' (number or " JYL_HYPER " expected, got %s)", i,
      fname, luaL_typename(L, i));
  return r;
}

/* ---- metamethods ---- */

static const char *operand_type(lua_State *L, int i) {
  return luaL_testudata(L, i, JYL_HYPER) ? JYL_HYPER : luaL_typename(L, i);
}

/* Both operands of a binary metamethod; raises a Lua-style arithmetic error otherwise. The
 * callers zero-initialize them: gcc -O3 cannot see that luaL_error does not return, and
 * would otherwise warn (an error under -Werror) that they may be used uninitialized. */
static void operands(lua_State *L, const char *op, jyHyper *a, jyHyper *b, int *ha, int *hb) {
  *ha = to_hyper(L, 1, a);
  *hb = to_hyper(L, 2, b);
  if (*ha < 0 || *hb < 0)
    luaL_error(L, "attempt to perform arithmetic (%s) on a %s value and a %s value", op,
               operand_type(L, 1), operand_type(L, 2));
}

static int hyper_add(lua_State *L) {
  jyHyper a = {0}, b = {0};
  int ha, hb;
  operands(L, "+", &a, &b, &ha, &hb);
  push_hyper(L, jy_hd_add(a, b));
  return 1;
}

static int hyper_sub(lua_State *L) {
  jyHyper a = {0}, b = {0};
  int ha, hb;
  operands(L, "-", &a, &b, &ha, &hb);
  push_hyper(L, jy_hd_sub(a, b));
  return 1;
}

static int hyper_mul(lua_State *L) {
  jyHyper a = {0}, b = {0};
  int ha, hb;
  operands(L, "*", &a, &b, &ha, &hb);
  push_hyper(L, ha && hb ? jy_hd_mul(a, b) : ha ? jy_hd_scale(a, b.v) : jy_hd_scale(b, a.v));
  return 1;
}

static int hyper_div(lua_State *L) {
  jyHyper a = {0}, b = {0};
  int ha, hb;
  operands(L, "/", &a, &b, &ha, &hb);
  push_hyper(L, hb ? jy_hd_div(a, b) : jy_hd_scale(a, 1.0 / b.v));
  return 1;
}

static int hyper_pow(lua_State *L) {
  jyHyper a = {0}, b = {0};
  int ha, hb;
  operands(L, "^", &a, &b, &ha, &hb);
  push_hyper(L, hb ? jy_hd_pow_hd(a, b) : jy_hd_pow(a, b.v));
  return 1;
}

static int hyper_unm(lua_State *L) {
  push_hyper(L, jy_hd_neg(*(const jyHyper *)luaL_checkudata(L, 1, JYL_HYPER)));
  return 1;
}

static int hyper_eq(lua_State *L) {
  const jyHyper *a = (const jyHyper *)luaL_testudata(L, 1, JYL_HYPER);
  const jyHyper *b = (const jyHyper *)luaL_testudata(L, 2, JYL_HYPER);
  lua_pushboolean(L, a && b && a->v == b->v);
  return 1;
}

static void compared(lua_State *L, jyHyper *a, jyHyper *b) {
  if (to_hyper(L, 1, a) < 0 || to_hyper(L, 2, b) < 0)
    luaL_error(L, "attempt to compare %s with %s", operand_type(L, 1), operand_type(L, 2));
}

static int hyper_lt(lua_State *L) {
  jyHyper a = {0}, b = {0};
  compared(L, &a, &b);
  lua_pushboolean(L, a.v < b.v);
  return 1;
}

static int hyper_le(lua_State *L) {
  jyHyper a = {0}, b = {0};
  compared(L, &a, &b);
  lua_pushboolean(L, a.v <= b.v);
  return 1;
}

static int hyper_tostring(lua_State *L) {
  const jyHyper *h = (const jyHyper *)luaL_checkudata(L, 1, JYL_HYPER);
  lua_pushfstring(L, "hyper(%f, %f, %f, %f)", (lua_Number)h->v, (lua_Number)h->e1,
                  (lua_Number)h->e2, (lua_Number)h->e12);
  return 1;
}

static int hyper_index(lua_State *L) {
  const jyHyper *h = (const jyHyper *)luaL_checkudata(L, 1, JYL_HYPER);
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (k[0] == 'v' && k[1] == '\0')
    lua_pushnumber(L, h->v);
  else if (k[0] == 'e' && k[1] == '1' && k[2] == '\0')
    lua_pushnumber(L, h->e1);
  else if (k[0] == 'e' && k[1] == '2' && k[2] == '\0')
    lua_pushnumber(L, h->e2);
  else if (k[0] == 'e' && k[1] == '1' && k[2] == '2' && k[3] == '\0')
    lua_pushnumber(L, h->e12);
  else
    return luaL_error(L, JYL_HYPER " has no field '%s' (fields: v, e1, e2, e12)",
                      lua_type(L, 2) == LUA_TSTRING ? k : luaL_typename(L, 2));
  return 1;
}

static const luaL_Reg hyper_meta[] = {{"__add", hyper_add},     {"__sub", hyper_sub},
                                      {"__mul", hyper_mul},     {"__div", hyper_div},
                                      {"__unm", hyper_unm},     {"__pow", hyper_pow},
                                      {"__eq", hyper_eq},       {"__lt", hyper_lt},
                                      {"__le", hyper_le},       {"__tostring", hyper_tostring},
                                      {"__index", hyper_index}, {NULL, NULL}};

/* ---- joinery.math ---- */

static int m_hyper(lua_State *L) {
  jyHyper h = {luaL_optnumber(L, 1, 0.0), luaL_optnumber(L, 2, 0.0), luaL_optnumber(L, 3, 0.0),
               luaL_optnumber(L, 4, 0.0)};
  push_hyper(L, h);
  return 1;
}

typedef struct UnaryFn {
  const char *name;
  double (*num)(double);
  jyHyper (*hd)(jyHyper);
} UnaryFn;

static const UnaryFn unary_fns[] = {
  {"sqrt", sqrt, jy_hd_sqrt}, {"exp", exp, jy_hd_exp},    {"sin", sin, jy_hd_sin},
  {"cos", cos, jy_hd_cos},    {"tan", tan, jy_hd_tan},    {"asin", asin, jy_hd_asin},
  {"acos", acos, jy_hd_acos}, {"sinh", sinh, jy_hd_sinh}, {"cosh", cosh, jy_hd_cosh},
  {"tanh", tanh, jy_hd_tanh},
};

/* The function is unary_fns[upvalue 1]. */
static int m_unary(lua_State *L) {
  const UnaryFn *f = &unary_fns[lua_tointeger(L, lua_upvalueindex(1))];
  jyHyper a;
  if (arg_hyper(L, 1, f->name, &a))
    push_hyper(L, f->hd(a));
  else
    lua_pushnumber(L, (lua_Number)f->num(a.v));
  return 1;
}

/* abs: integers stay integers, as in math.abs. */
static int m_abs(lua_State *L) {
  jyHyper a;
  if (lua_isinteger(L, 1)) {
    lua_Integer n = lua_tointeger(L, 1);
    if (n < 0) n = (lua_Integer)(0u - (lua_Unsigned)n);
    lua_pushinteger(L, n);
  } else if (arg_hyper(L, 1, "abs", &a))
    push_hyper(L, jy_hd_abs(a));
  else
    lua_pushnumber(L, (lua_Number)fabs(a.v));
  return 1;
}

/* log(x[, base]) as math.log. */
static int m_log(lua_State *L) {
  jyHyper x, b;
  int hx = arg_hyper(L, 1, "log", &x);
  if (lua_isnoneornil(L, 2)) {
    if (hx)
      push_hyper(L, jy_hd_log(x));
    else
      lua_pushnumber(L, (lua_Number)log(x.v));
  } else if (arg_hyper(L, 2, "log", &b) || hx)
    push_hyper(L, jy_hd_div(jy_hd_log(x), jy_hd_log(b)));
  else
    lua_pushnumber(L,
                   (lua_Number)(b.v == 2.0      ? log2(x.v)
                                  : b.v == 10.0 ? log10(x.v)
                                                : log(x.v) / log(b.v)));
  return 1;
}

static int atan2_named(lua_State *L, const char *fname) {
  jyHyper y, x;
  int hy = arg_hyper(L, 1, fname, &y);
  int hx = arg_hyper(L, 2, fname, &x);
  if (hy || hx)
    push_hyper(L, jy_hd_atan2(y, x));
  else
    lua_pushnumber(L, (lua_Number)atan2(y.v, x.v));
  return 1;
}

static int m_atan2(lua_State *L) { return atan2_named(L, "atan2"); }

/* atan(y[, x]) as math.atan: with x it is atan2(y, x). */
static int m_atan(lua_State *L) {
  if (!lua_isnoneornil(L, 2)) return atan2_named(L, "atan");
  jyHyper y;
  if (arg_hyper(L, 1, "atan", &y))
    push_hyper(L, jy_hd_atan(y));
  else
    lua_pushnumber(L, (lua_Number)atan(y.v));
  return 1;
}

static int m_hypot(lua_State *L) {
  jyHyper x, y;
  int hx = arg_hyper(L, 1, "hypot", &x);
  int hy = arg_hyper(L, 2, "hypot", &y);
  if (hx || hy)
    push_hyper(L, jy_hd_hypot(x, y));
  else
    lua_pushnumber(L, (lua_Number)hypot(x.v, y.v));
  return 1;
}

static const luaL_Reg math_funcs[] = {{"hyper", m_hyper}, {"abs", m_abs},     {"log", m_log},
                                      {"atan", m_atan},   {"atan2", m_atan2}, {"hypot", m_hypot},
                                      {NULL, NULL}};

void jyl_open_math(lua_State *L) {
  luaL_newmetatable(L, JYL_HYPER);
  luaL_setfuncs(L, hyper_meta, 0);
  lua_pop(L, 1);

  lua_createtable(L, 0, (int)(sizeof unary_fns / sizeof unary_fns[0]) + 8);
  luaL_setfuncs(L, math_funcs, 0);
  for (size_t i = 0; i < sizeof unary_fns / sizeof unary_fns[0]; i++) {
    lua_pushinteger(L, (lua_Integer)i);
    lua_pushcclosure(L, m_unary, 1);
    lua_setfield(L, -2, unary_fns[i].name);
  }
  lua_pushnumber(L, (lua_Number)3.141592653589793238462643383279502884);
  lua_setfield(L, -2, "pi");
  lua_setfield(L, -2, "math");
}

/* lua/parts/eval_part.c — joinery.eval_part{...}: one evaluation of any registered part type (Lua
 * or C) at a given state, through the public part protocol alone, returned as Lua tables. It
 * is how a script (or a test) looks at what a part gives the engine.
 *
 *   joinery.eval_part{ type = name, params = {...}, q = {...}, v = {...}, t = 0,
 *                      gravity = {...} }  -> { M, Q, C, A, b, residual, rate, kinetic,
 *                      potential, terminals = { name = { value, J, vel_bias, acc_bias } },
 *                      outputs = { name = value }, coords }
 *
 * q and v are arrays or keyed by coordinate name (q defaults to the type's coordinate
 * defaults, v to 0); params go through the engine's parameter door (jy_params_fill), which
 * applies the schema's defaults and refuses what sys:add refuses. Every buffer is a Lua userdata, so an
 * error leaks nothing.
 */
#include "luapart.h"

#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "joinery/joinery.h"

#define TD JY_TERMINAL_MAX_DIM /* room for the largest terminal */

/* One evaluation: the instance, the state, where failures are written. */
typedef struct Eval {
  lua_State *L;
  const char *tname;
  const jyPartType *type;
  const jyPartShape *sh;
  jyPartInstance inst;
  jyPartState s;
  int result; /* the result table's index */
  char err[1024];
} Eval;

/* Raises a failed protocol call ("part type 'T', what: message"), the one form eval_part
 * reports them in; clears the message buffer for the next call otherwise. */
static void check(Eval *e, int status, const char *what) {
  if (status != 0)
    luaL_error(e->L, "part type '%s', %s: %s", e->tname, what, e->err[0] ? e->err : "failed");
  e->err[0] = '\0';
}

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

/* Pushes the parameter values (a userdata): params (the table's field) through the engine's
 * parameter door, which applies the schema's defaults and checks every value's domain. */
static double *read_params(lua_State *L, const jyPartType *type) {
  int t = lua_getfield(L, 1, "params"), n = 0;
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
  } else if (t != LUA_TTABLE) {
    luaL_error(L, "eval_part: params must be a table {name = value, ...}, got %s",
               luaL_typename(L, -1));
  }
  for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) n++;
  jyParamSetting *set = (jyParamSetting *)lua_newuserdatauv(L, sizeof *set * (size_t)(n + 1), 0);
  int k = 0;
  for (lua_pushnil(L); lua_next(L, -3); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "eval_part: params are keyed by name (got a %s key)", luaL_typename(L, -2));
    set[k].name = lua_tostring(L, -2); /* a string key: kept alive by the table */
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "eval_part: part type '%s': parameter '%s' must be a number, got %s",
                 type->name, set[k].name, luaL_typename(L, -1));
    set[k++].value = lua_tonumber(L, -1);
  }
  double *params = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)(type->nparams + 1), 0);
  char why[1024];
  if (jy_params_fill(type, NULL, set, k, params, why, sizeof why) != JY_OK)
    luaL_error(L, "eval_part: %s", why);
  lua_replace(L, -3); /* params over the params table; the settings go next */
  lua_pop(L, 1);
  return params;
}

/* t and gravity from the table at 1 (0 when absent). */
static double read_time_gravity(lua_State *L, double grav[3]) {
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
  return t;
}

/* M, Q, C, A, b, residual, rate, kinetic, potential into the result table. */
static void push_dynamics(Eval *e, double *M, double *Q, double *C, double *A, double *b,
                          double *res, double *rate) {
  lua_State *L = e->L;
  const jyPartType *type = e->type;
  int n = e->sh->ncoords, m = e->sh->nrows, r = e->result;
  if (type->mass) check(e, type->mass(&e->inst, &e->s, M), "mass");
  push_matrix(L, M, n, n);
  lua_setfield(L, r, "M");
  if (type->force) check(e, type->force(&e->inst, &e->s, Q), "force");
  push_vector(L, Q, n);
  lua_setfield(L, r, "Q");
  if (type->nonideal) check(e, type->nonideal(&e->inst, &e->s, C), "nonideal");
  push_vector(L, C, n);
  lua_setfield(L, r, "C");
  if (m > 0 && type->constraints)
    check(e, type->constraints(&e->inst, &e->s, A, b, res, rate), "constraints");
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
    check(e, type->energy(&e->inst, &e->s, &kin, &pot), "energy");
  } else {
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) kin += 0.5 * e->s.v[i] * M[i + k * n] * e->s.v[k];
  }
  lua_pushnumber(L, kin);
  lua_setfield(L, r, "kinetic");
  lua_pushnumber(L, pot);
  lua_setfield(L, r, "potential");
}

/* terminals = { name = { value, J, vel_bias, acc_bias } }; J (TD x n), tv (3 TD): scratch. */
static void push_terminals(Eval *e, double *J, double *tv) {
  lua_State *L = e->L;
  int n = e->sh->ncoords;
  lua_createtable(L, 0, e->sh->nterminals);
  for (int k = 0; k < e->sh->nterminals; k++) {
    int dim = e->sh->terminals[k].dim;
    memset(J, 0, sizeof(double) * TD * (size_t)n);
    memset(tv, 0, sizeof(double) * 3 * TD);
    if (e->type->terminal)
      check(e, e->type->terminal(&e->inst, &e->s, k, tv, J, tv + TD, tv + 2 * TD), "terminal");
    lua_createtable(L, 0, 4);
    push_vector(L, tv, dim);
    lua_setfield(L, -2, "value");
    push_matrix(L, J, dim, n);
    lua_setfield(L, -2, "J");
    push_vector(L, tv + TD, dim);
    lua_setfield(L, -2, "vel_bias");
    push_vector(L, tv + 2 * TD, dim);
    lua_setfield(L, -2, "acc_bias");
    lua_setfield(L, -2, e->sh->terminals[k].name);
  }
  lua_setfield(L, e->result, "terminals");
}

/* outputs = { name = value } (row forces rowf: zero) and coords = { names }. */
static void push_outputs_coords(Eval *e, const double *rowf, double *out) {
  lua_State *L = e->L;
  const jyPartShape *sh = e->sh;
  if (sh->noutputs && e->type->outputs)
    check(e, e->type->outputs(&e->inst, &e->s, rowf, out), "outputs");
  lua_createtable(L, 0, sh->noutputs);
  for (int o = 0; o < sh->noutputs; o++) {
    lua_pushnumber(L, out[o]);
    lua_setfield(L, -2, sh->output_names[o]);
  }
  lua_setfield(L, e->result, "outputs");
  lua_createtable(L, sh->ncoords, 0);
  for (int i = 0; i < sh->ncoords; i++) {
    lua_pushstring(L, sh->coord_names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, e->result, "coords");
}

/* The shape and the initialized instance data (userdata) of the type with these params. */
static void set_up_instance(Eval *e, const double *params) {
  lua_State *L = e->L;
  jyPartShape *sh = (jyPartShape *)lua_newuserdatauv(L, sizeof *sh, 0);
  memset(sh, 0, sizeof *sh);
  if (jy_part_shape_checked(e->type, params, sh, e->err, sizeof e->err) != 0)
    luaL_error(L, "eval_part: part type '%s': %s", e->type->name, e->err);
  double *data = (double *)lua_newuserdatauv(L, sh->instance_size + sizeof(double), 0);
  memset(data, 0, sh->instance_size + sizeof(double));
  e->sh = sh;
  e->inst = (jyPartInstance){e->type,     "eval_part", params, sh->instance_size ? data : NULL,
                             sh->ncoords, sh->nrows};
  if (e->type->init && e->type->init(&e->inst, data, e->err, sizeof e->err) != 0)
    luaL_error(L, "eval_part: init: %s", e->err);
  e->err[0] = '\0';
}

/* joinery.eval_part{type=, params=, q=, v=, t=, gravity=}; upvalue 1 = env userdata. */
static int l_eval_part(lua_State *L) {
  jyEnv *env = jyl_env_of(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  Eval e = {.L = L};
  lua_getfield(L, 1, "type");
  e.tname = luaL_checkstring(L, -1);
  e.type = jy_env_find_type(env, e.tname);
  if (!e.type) return luaL_error(L, "eval_part: unknown part type '%s'", e.tname);
  lua_pop(L, 1);
  set_up_instance(&e, read_params(L, e.type));
  int n = e.sh->ncoords, m = e.sh->nrows;
  size_t nbuf = (size_t)(4 * n + 2 * n * n + m * n + 4 * m + 3 * TD + TD * n + e.sh->noutputs);
  double *buf = (double *)lua_newuserdatauv(L, sizeof(double) * nbuf, 0);
  memset(buf, 0, sizeof(double) * nbuf);
  double *q = buf, *v = q + n, *M = v + n, *Q = M + n * n, *C = Q + n, *A = C + n;
  double *b = A + m * n, *res = b + m, *rate = res + m, *rowf = rate + m, *J = rowf + m;
  double *tv = J + TD * n, *out = tv + 3 * TD, grav[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) q[i] = e.sh->coord_defaults[i];
  read_state(L, "q", e.sh, q);
  read_state(L, "v", e.sh, v);
  double t = read_time_gravity(L, grav);
  e.s = (jyPartState){q, v, t, grav, e.err, sizeof e.err, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL};
  lua_createtable(L, 0, 12);
  e.result = lua_gettop(L);
  push_dynamics(&e, M, Q, C, A, b, res, rate);
  push_terminals(&e, J, tv);
  push_outputs_coords(&e, rowf, out);
  return 1;
}

void jyl_push_eval_part(lua_State *L, int env_idx) {
  lua_pushvalue(L, env_idx);
  lua_pushcclosure(L, l_eval_part, 1);
}

/* lua/result_file.c — joinery.read_h5(path [, names]): a table an HDF5 output file holds
 * (engine: jy_result_*), shaped as sys:simulate's result: res.channels (the names, "t"
 * first), res[<name>] (an array per column), res.units ({[name] = unit}, "" when unknown),
 * res.rows, res.report, res.incomplete (the failed run's message, nil for a complete file).
 * `names` (a list) reads only those columns. A file that cannot be read gives nil and the
 * reason, naming it; an unknown name is an error. Refused in the sandbox: libhdf5 parses a
 * binary format, and a model script should not hand it a file crafted to break it. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding_private.h"
#include "sandbox.h"

/* The open file, closed by __gc or at the end of read_h5 (an error in between must not leak
 * it: the handle lives in a userdata). */
#define JYL_RESULT_FILE "joinery.ResultFile"

static int result_file_gc(lua_State *L) {
  jyResultFile **f = (jyResultFile **)luaL_checkudata(L, 1, JYL_RESULT_FILE);
  jy_result_close(*f);
  *f = NULL;
  return 0;
}

/* Pushes column k as an array under its name in the table at res (a buffer of rows doubles
 * at buf). */
static void push_column(lua_State *L, jyResultFile *f, int k, double *buf, int res) {
  long rows = jy_result_num_rows(f);
  if (jy_result_read_column(f, k, buf) != JY_OK)
    luaL_error(L, "joinery.read_h5: %s", jy_result_error(f));
  lua_createtable(L, rows < 0x7fffffff ? (int)rows : 0, 0);
  for (long r = 0; r < rows; r++) {
    lua_pushnumber(L, buf[r]);
    lua_rawseti(L, -2, (lua_Integer)r + 1);
  }
  lua_setfield(L, res, jy_result_column_name(f, k));
}

static int l_read_h5(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int have_names = !lua_isnoneornil(L, 2);
  if (have_names) luaL_checktype(L, 2, LUA_TTABLE);
  jyl_sandbox_refuse(L, "joinery.read_h5");
  jyResultFile **f = (jyResultFile **)lua_newuserdatauv(L, sizeof *f, 0);
  *f = NULL;
  luaL_setmetatable(L, JYL_RESULT_FILE);
  char error[512];
  *f = jy_result_open(path, error, sizeof error);
  if (!*f) {
    luaL_pushfail(L);
    lua_pushstring(L, error);
    return 2;
  }
  long rows = jy_result_num_rows(*f);
  double *buf = (double *)lua_newuserdatauv(L, sizeof(double) * (size_t)(rows ? rows : 1), 0);
  lua_newtable(L);
  int res = lua_gettop(L);
  lua_newtable(L); /* channels */
  lua_newtable(L); /* units */
  int ncols = jy_result_num_columns(*f), count = 0;
  for (int k = 0; k < ncols; k++) {
    lua_pushstring(L, jy_result_column_unit(*f, k));
    lua_setfield(L, -2, jy_result_column_name(*f, k));
  }
  if (have_names) {
    for (lua_Integer i = 1; lua_geti(L, 2, i) != LUA_TNIL; i++) {
      const char *name = lua_tostring(L, -1);
      int k = name ? jy_result_find_column(*f, name) : -1;
      if (k < 0)
        return luaL_error(L, "joinery.read_h5: %s has no column '%s'", path,
                          name ? name : luaL_typename(L, -1));
      lua_pop(L, 1);
      lua_pushstring(L, jy_result_column_name(*f, k));
      lua_rawseti(L, res + 1, ++count);
      push_column(L, *f, k, buf, res);
    }
    lua_pop(L, 1);
  } else {
    for (int k = 0; k < ncols; k++) {
      lua_pushstring(L, jy_result_column_name(*f, k));
      lua_rawseti(L, res + 1, ++count);
      push_column(L, *f, k, buf, res);
    }
  }
  lua_setfield(L, res, "units");
  lua_setfield(L, res, "channels");
  lua_pushinteger(L, rows);
  lua_setfield(L, res, "rows");
  const char *report = jy_result_attribute(*f, "report");
  lua_pushstring(L, report ? report : "");
  lua_setfield(L, res, "report");
  if (jy_result_incomplete(*f)) {
    lua_pushstring(L, jy_result_incomplete(*f));
    lua_setfield(L, res, "incomplete");
  }
  jy_result_close(*f);
  *f = NULL;
  lua_pushvalue(L, res);
  return 1;
}

void jyl_open_result_file(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", result_file_gc}, {NULL, NULL}};
  if (luaL_newmetatable(L, JYL_RESULT_FILE)) luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, l_read_h5);
  lua_setfield(L, -2, "read_h5");
}

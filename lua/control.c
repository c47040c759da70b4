/* lua/control.c — joinery.lqr(A, B, Q, R) -> K, P: the continuous-time LQR gain and the
 * stabilizing Riccati solution by jy_lqr (engine/src/lqr.c), matrices as Lua tables of rows.
 * docs/lua-api.md, docs/control-examples.md. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding_private.h"
#include "joinery/joinery.h"

/* The number of rows and columns of the table of rows at idx (a matrix argument named
 * what); raises when it is not a nonempty table of equally long nonempty rows of numbers. */
static void matrix_shape(lua_State *L, int idx, const char *what, int *rows, int *cols) {
  if (!lua_istable(L, idx))
    luaL_error(L, "joinery.lqr: %s must be a table of rows ({{a, b}, {c, d}}), got %s", what,
               luaL_typename(L, idx));
  int r = (int)luaL_len(L, idx), c = -1;
  if (r < 1) luaL_error(L, "joinery.lqr: %s has no rows", what);
  for (int i = 1; i <= r; i++) {
    if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
      luaL_error(L, "joinery.lqr: row %d of %s must be a table of numbers, got %s", i, what,
                 luaL_typename(L, -1));
    int len = (int)luaL_len(L, -1);
    lua_pop(L, 1);
    if (len < 1) luaL_error(L, "joinery.lqr: row %d of %s is empty", i, what);
    if (c >= 0 && len != c)
      luaL_error(L, "joinery.lqr: row %d of %s has %d entries, row 1 has %d", i, what, len, c);
    c = len;
  }
  *rows = r;
  *cols = c;
}

/* Reads the rows x cols matrix at idx into out (column-major). A number s for a square
 * argument (Q, R) is s times the identity. */
static void read_matrix(lua_State *L, int idx, const char *what, int rows, int cols, double *out) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double s = lua_tonumber(L, idx);
    for (int j = 0; j < cols; j++)
      for (int i = 0; i < rows; i++) out[i + j * rows] = i == j ? s : 0;
    return;
  }
  int r, c;
  matrix_shape(L, idx, what, &r, &c);
  if (r != rows || c != cols)
    luaL_error(L, "joinery.lqr: %s is %d x %d, must be %d x %d", what, r, c, rows, cols);
  for (int i = 0; i < rows; i++) {
    lua_rawgeti(L, idx, i + 1);
    for (int j = 0; j < cols; j++) {
      lua_rawgeti(L, -1, j + 1);
      int isnum = 0;
      double x = lua_tonumberx(L, -1, &isnum);
      if (!isnum)
        luaL_error(L, "joinery.lqr: %s[%d][%d] must be a number, got %s", what, i + 1, j + 1,
                   luaL_typename(L, -1));
      out[i + j * rows] = x;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

/* Pushes the rows x cols column-major matrix M as a table of rows. */
static void push_matrix(lua_State *L, const double *M, int rows, int cols) {
  lua_createtable(L, rows, 0);
  for (int i = 0; i < rows; i++) {
    lua_createtable(L, cols, 0);
    for (int j = 0; j < cols; j++) {
      lua_pushnumber(L, M[i + j * rows]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

/* joinery.lqr(A, B, Q, R) -> K, P */
static int l_lqr(lua_State *L) {
  int n, na, nb, m;
  matrix_shape(L, 1, "A", &n, &na);
  if (na != n) luaL_error(L, "joinery.lqr: A is %d x %d, must be square", n, na);
  matrix_shape(L, 2, "B", &nb, &m);
  if (nb != n) luaL_error(L, "joinery.lqr: B has %d rows, A has %d", nb, n);
  if (lua_type(L, 3) != LUA_TNUMBER && !lua_istable(L, 3))
    luaL_error(L,
               "joinery.lqr: Q must be a table of rows or a number (times the identity), "
               "got %s",
               luaL_typename(L, 3));
  if (lua_type(L, 4) != LUA_TNUMBER && !lua_istable(L, 4))
    luaL_error(L,
               "joinery.lqr: R must be a table of rows or a number (times the identity), "
               "got %s",
               luaL_typename(L, 4));
  size_t nn = (size_t)n, mm = (size_t)m;
  double *A = jyl_scratch(L, nn * nn), *B = jyl_scratch(L, nn * mm);
  double *Q = jyl_scratch(L, nn * nn), *R = jyl_scratch(L, mm * mm);
  double *K = jyl_scratch(L, mm * nn), *P = jyl_scratch(L, nn * nn);
  read_matrix(L, 1, "A", n, n, A);
  read_matrix(L, 2, "B", n, m, B);
  read_matrix(L, 3, "Q", n, n, Q);
  read_matrix(L, 4, "R", m, m, R);
  char error[512];
  jyStatus st = jy_lqr(n, m, A, B, Q, R, K, P, error, sizeof error);
  if (st != JY_OK) {
    const char *msg = jyl_msg_or(error, st);
    if (strncmp(msg, "lqr: ", 5) == 0) msg += 5;
    return luaL_error(L, "joinery.lqr: %s", msg);
  }
  push_matrix(L, K, m, n);
  push_matrix(L, P, n, n);
  return 2;
}

void jyl_open_control(lua_State *L, int module_idx) {
  module_idx = lua_absindex(L, module_idx);
  lua_pushcfunction(L, l_lqr);
  lua_setfield(L, module_idx, "lqr");
}

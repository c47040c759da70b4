/* lua/sandbox.c — the sandbox the joinery command runs model scripts in (lua/binding.h,
 * jyl_sandbox). A model script is a program someone else may have written: in the sandbox it
 * loads as text only (Lua does not check bytecode, and a damaged chunk can crash the
 * process), runs no other program, loads no native code, and writes no file but the ones the
 * user named. Reading files stays possible: a model may read data next to it.
 *
 * The standard library is changed in place in the state's tables (_G, io, os, package,
 * debug), so that `require "os"` sees the same: refused functions raise "<name> is disabled
 * for model scripts; <how to allow it>"; io.open and io.output check the path when they
 * would write; load, loadfile, dofile and require's Lua searcher load text only; require's C
 * searchers are gone; debug keeps only traceback and getinfo without "f" (the rest reaches
 * the registry and the upvalues that hold the original functions, and "f" the function of
 * any frame). The files a script reads are noted, so that a run never writes over one. The binding asks jyl_sandboxed for the
 * rest: joinery.load_plugin and the "out" setting of a run.
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif

#include "sandbox.h"
#include "binding.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>

/* registry[JYL_SANDBOX] = {hint = how to allow a refused thing, [1..n] = writable paths} */
#define JYL_SANDBOX "joinery.sandbox"
#define DEFAULT_HINT "the program running the script enabled joinery's sandbox"

/* Pushes the sandbox table, or nil; returns whether it is there. */
static int push_sandbox(lua_State *L) {
  return lua_getfield(L, LUA_REGISTRYINDEX, JYL_SANDBOX) == LUA_TTABLE;
}

int jyl_sandboxed(lua_State *L) {
  int on = push_sandbox(L);
  lua_pop(L, 1);
  return on;
}

/* Pushes the hint of the sandbox table at idx (or the default one). */
static const char *push_hint(lua_State *L, int idx) {
  if (!lua_istable(L, idx))
    lua_pushliteral(L, DEFAULT_HINT);
  else if (lua_getfield(L, idx, "hint") != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushliteral(L, DEFAULT_HINT);
  }
  return lua_tostring(L, -1);
}

/* Pushes "file:line: " of the innermost script line running (or ""): a refusal inside
 * require's searchers is raised by C functions only. */
static void push_where(lua_State *L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  lua_pushliteral(L, "");
}

void jyl_sandbox_refuse(lua_State *L, const char *what) {
  if (!push_sandbox(L)) {
    lua_pop(L, 1);
    return;
  }
  int box = lua_gettop(L);
  push_where(L);
  lua_pushfstring(L, "%s is disabled for model scripts; %s", what, push_hint(L, box));
  lua_remove(L, -2);
  lua_concat(L, 2);
  lua_error(L);
}

/* Whether a and b name the same file: the same string, or the same base name in directories
 * that resolve to the same one ("out.csv" and "./out.csv"). */
static int same_file(const char *a, const char *b) {
  if (strcmp(a, b) == 0) return 1;
  const char *base_a = strrchr(a, '/'), *base_b = strrchr(b, '/');
  base_a = base_a ? base_a + 1 : a;
  base_b = base_b ? base_b + 1 : b;
  if (strcmp(base_a, base_b) != 0 || !*base_a) return 0;
  char *dir_a = base_a == a ? strdup(".") : strndup(a, (size_t)(base_a - a));
  char *dir_b = base_b == b ? strdup(".") : strndup(b, (size_t)(base_b - b));
  char *real_a = dir_a ? realpath(dir_a, NULL) : NULL;
  char *real_b = dir_b ? realpath(dir_b, NULL) : NULL;
  int same = real_a && real_b && strcmp(real_a, real_b) == 0;
  free(real_a);
  free(real_b);
  free(dir_a);
  free(dir_b);
  return same;
}

void jyl_sandbox_check_write(lua_State *L, const char *path, const char *what) {
  if (!push_sandbox(L)) {
    lua_pop(L, 1);
    return;
  }
  int box = lua_gettop(L);
  lua_Integer n = luaL_len(L, box);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, box, i);
    int same = same_file(path, lua_tostring(L, -1));
    lua_pop(L, 1);
    if (same) {
      lua_pop(L, 1);
      return;
    }
  }
  lua_pushliteral(L, "");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, box, i);
    lua_pushfstring(L, "%s'%s'", i == 1 ? "" : i == n ? " and " : ", ", lua_tostring(L, -1));
    lua_remove(L, -2);
    lua_concat(L, 2);
  }
  const char *allowed = lua_tostring(L, -1);
  const char *hint = push_hint(L, box);
  if (n == 0)
    luaL_error(L,
               "%s: writing '%s' is disabled for model scripts (they may write no file here); %s",
               what, path, hint);
  luaL_error(L, "%s: writing '%s' is disabled for model scripts (they may write only %s); %s", what,
             path, allowed, hint);
}

/* ---- refused functions ------------------------------------------------------------------ */

/* upvalue 1: the function's name ("io.popen") */
static int refused(lua_State *L) {
  jyl_sandbox_refuse(L, lua_tostring(L, lua_upvalueindex(1)));
  return 0;
}

/* Replaces lib.name (in the global table lib) with a function that refuses. */
static void refuse_field(lua_State *L, const char *lib, const char *name) {
  if (lua_getglobal(L, lib) == LUA_TTABLE) {
    lua_pushfstring(L, "%s.%s", lib, name);
    lua_pushcclosure(L, refused, 1);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

/* ---- guards ----------------------------------------------------------------------------
 * A guard checks its arguments and then runs the original C function in its own frame,
 * called as a C function, never through lua_call: a frame of the original would be visible
 * to whatever Lua code runs while it is live (a message handler of xpcall, a reader given
 * to load, a finalizer of a collection inside it), and debug.getinfo's "f" used to hand that
 * code the unguarded function. The original is kept as upvalue 1 only to be called. */

/* Whether the value on the top is a C function without upvalues. */
static int is_plain_cfunction(lua_State *L) {
  if (!lua_tocfunction(L, -1)) return 0;
  if (lua_getupvalue(L, -1, 1) == NULL) return 1;
  lua_pop(L, 1);
  return 0;
}

/* Runs the original (upvalue 1) on the guard's own stack; returns its result count. */
static int call_original(lua_State *L) {
  lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(1));
  return original(L);
}

/* Records that the script read path (registry[JYL_INPUTS][path] = true): a run may not
 * write its output over a file the script read (jyl_check_output). */
#define JYL_INPUTS "joinery.inputs"
void jyl_note_input(lua_State *L, const char *path) {
  if (!path) return;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, JYL_INPUTS);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, path);
  lua_pop(L, 1);
}

/* io.open(path[, mode]) */
static int guarded_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *mode = luaL_optstring(L, 2, "r");
  if (mode[0] == 'w' || mode[0] == 'a' || strchr(mode, '+'))
    jyl_sandbox_check_write(L, path, "io.open");
  else
    jyl_note_input(L, path);
  return call_original(L);
}

/* io.output([file]) and io.input([file]): a name (a string, or a number Lua converts) opens
 * that file, for writing or for reading. */
static int guarded_output(lua_State *L) {
  if (!lua_isnoneornil(L, 1) && lua_isstring(L, 1))
    jyl_sandbox_check_write(L, lua_tostring(L, 1), "io.output");
  return call_original(L);
}

static int guarded_input(lua_State *L) {
  if (!lua_isnoneornil(L, 1) && lua_isstring(L, 1)) jyl_note_input(L, lua_tostring(L, 1));
  return call_original(L);
}

/* io.lines([file, ...]) */
static int guarded_lines(lua_State *L) {
  if (!lua_isnoneornil(L, 1) && lua_isstring(L, 1)) jyl_note_input(L, lua_tostring(L, 1));
  return call_original(L);
}

/* debug.getinfo([thread,] f [, what]) without option "f" (and without it by default): the
 * function of a frame is the one thing getinfo gives that could reach past a guard (the
 * command's own main function, a C host's, an original should one ever run in a frame). */
static int guarded_getinfo(lua_State *L) {
  int what_at = lua_type(L, 1) == LUA_TTHREAD ? 3 : 2;
  if (lua_isnoneornil(L, what_at)) {
    if (lua_gettop(L) < what_at) lua_settop(L, what_at);
    lua_pushliteral(L, "lnSrtu");
    lua_replace(L, what_at);
  } else if (strchr(luaL_checkstring(L, what_at), 'f')) {
    jyl_sandbox_refuse(L, "debug.getinfo with option 'f' (the function of a frame)");
  }
  return call_original(L);
}

/* Replaces lib.name with guard, which gets the original as upvalue 1. The original must be
 * a C function without upvalues of its own (what Lua's standard library registers): the
 * guard calls it in its own frame. Anything else (a host replaced it) is refused outright. */
static void guard_field(lua_State *L, const char *lib, const char *name, lua_CFunction guard) {
  if (lua_getglobal(L, lib) == LUA_TTABLE) {
    lua_getfield(L, -1, name);
    if (is_plain_cfunction(L)) {
      lua_pushcclosure(L, guard, 1);
    } else {
      lua_pop(L, 1);
      lua_pushfstring(L, "%s.%s", lib, name);
      lua_pushcclosure(L, refused, 1);
    }
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

/* ---- text only -------------------------------------------------------------------------- */

void jyl_sandbox_explain_binary(lua_State *L, const char *chunk) {
  const char *msg = lua_tostring(L, -1);
  if (!msg || !strstr(msg, "attempt to load a binary chunk")) return;
  push_sandbox(L);
  const char *hint = push_hint(L, lua_gettop(L));
  lua_pushfstring(L,
                  "%s is precompiled Lua bytecode, which model scripts may not load (Lua does "
                  "not check bytecode: a damaged chunk can crash the program); give its "
                  "source, or %s",
                  chunk, hint);
  lua_replace(L, -4);
  lua_pop(L, 2);
}

/* load(chunk[, name[, mode[, env]]]) and loadfile([file[, mode[, env]]]) with mode "t";
 * upvalue 1: the original, upvalue 2: where its mode argument is (3 or 2). The env argument
 * keeps its absence (an explicit nil env is not a missing one). The original leaves the
 * arguments below its results (load's reader slot included), so the chunk's name is read
 * from argument 1 afterwards. */
static int text_load(lua_State *L) {
  int mode_at = (int)lua_tointeger(L, lua_upvalueindex(2));
  if (lua_gettop(L) < mode_at) lua_settop(L, mode_at);
  lua_pushliteral(L, "t");
  lua_replace(L, mode_at);
  if (mode_at == 2 && lua_isstring(L, 1)) jyl_note_input(L, lua_tostring(L, 1));
  int nresults = call_original(L);
  if (nresults == 2 && lua_isnil(L, -2)) {
    if (mode_at == 2)
      lua_pushfstring(L, "'%s'", lua_isstring(L, 1) ? lua_tostring(L, 1) : "stdin");
    else
      lua_pushliteral(L, "the chunk");
    lua_insert(L, -2); /* below the message */
    jyl_sandbox_explain_binary(L, lua_tostring(L, -2));
    lua_remove(L, -2);
  }
  return nresults;
}

/* dofile([file]) reading text only */
static int text_dofile(lua_State *L) {
  const char *path = luaL_optstring(L, 1, NULL);
  lua_settop(L, 1);
  const char *chunk = lua_pushfstring(L, "'%s'", path ? path : "stdin");
  jyl_note_input(L, path);
  if (luaL_loadfilex(L, path, "t") != LUA_OK) {
    jyl_sandbox_explain_binary(L, chunk);
    return lua_error(L);
  }
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 2;
}

static void set_text_loader(lua_State *L, const char *name, int mode_at) {
  lua_getglobal(L, name);
  if (is_plain_cfunction(L)) {
    lua_pushinteger(L, mode_at);
    lua_pushcclosure(L, text_load, 2);
  } else {
    lua_pop(L, 1);
    lua_pushstring(L, name);
    lua_pushcclosure(L, refused, 1);
  }
  lua_setglobal(L, name);
}

/* ---- require ---------------------------------------------------------------------------- */

/* Calls package.searchpath(name, package[field]) (package at upvalue 1): leaves the file name,
 * or nil and the list of the places tried. */
static void search_path(lua_State *L, const char *name, const char *field) {
  int package = lua_upvalueindex(1);
  lua_getfield(L, package, "searchpath");
  lua_pushstring(L, name);
  if (lua_getfield(L, package, field) != LUA_TSTRING)
    luaL_error(L, "package.%s must be a string", field);
  lua_call(L, 2, 2);
}

/* require's searcher of Lua modules on package.path, loading text only. */
static int search_lua_text(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  search_path(L, name, "path");
  if (lua_isnil(L, -2)) return 1; /* the places tried */
  lua_pop(L, 1);
  const char *file = lua_tostring(L, -1);
  const char *chunk = lua_pushfstring(L, "'%s'", file);
  jyl_note_input(L, file);
  if (luaL_loadfilex(L, file, "t") != LUA_OK) {
    jyl_sandbox_explain_binary(L, chunk);
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file,
                      lua_tostring(L, -1));
  }
  lua_pushstring(L, file);
  return 2;
}

/* In place of require's C searchers: a C module found on package.cpath is refused by name. */
static int search_c_refused(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  search_path(L, name, "cpath");
  if (lua_isnil(L, -2)) {
    lua_pushliteral(L, "no C module (C modules are disabled for model scripts)");
    return 1;
  }
  const char *what =
    lua_pushfstring(L, "require '%s' (the C module %s)", name, lua_tostring(L, -2));
  jyl_sandbox_refuse(L, what);
  return 0;
}

/* package.searchers = {preload, Lua text only, C refused}. */
static void guard_require(lua_State *L) {
  if (lua_getglobal(L, "package") != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  int package = lua_gettop(L);
  if (lua_getfield(L, package, "searchers") == LUA_TTABLE) {
    lua_pushvalue(L, package);
    lua_pushcclosure(L, search_lua_text, 1);
    lua_rawseti(L, -2, 2);
    lua_pushvalue(L, package);
    lua_pushcclosure(L, search_c_refused, 1);
    lua_rawseti(L, -2, 3);
    lua_pushnil(L);
    lua_rawseti(L, -2, 4);
  }
  lua_settop(L, package - 1);
}

/* ---- debug ------------------------------------------------------------------------------ */

/* debug keeps traceback and getinfo without "f"; package.loaded.debug is the same table. */
static void reduce_debug(lua_State *L) {
  if (lua_getglobal(L, "debug") != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_createtable(L, 0, 2);
  lua_getfield(L, -2, "traceback");
  lua_setfield(L, -2, "traceback");
  lua_getfield(L, -2, "getinfo");
  if (is_plain_cfunction(L)) {
    lua_pushcclosure(L, guarded_getinfo, 1);
    lua_setfield(L, -2, "getinfo");
  } else {
    lua_pop(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setglobal(L, "debug");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_insert(L, -2);
  lua_setfield(L, -2, "debug");
  lua_pop(L, 2);
}

/* ---- the switch ------------------------------------------------------------------------- */

int jyl_sandbox(lua_State *L, const char *const *writable, int nwritable, const char *hint) {
  lua_createtable(L, nwritable, 1);
  for (int i = 0; i < nwritable; i++) {
    lua_pushstring(L, writable[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushstring(L, hint ? hint : DEFAULT_HINT);
  lua_setfield(L, -2, "hint");
  lua_setfield(L, LUA_REGISTRYINDEX, JYL_SANDBOX);

  static const char *const refusals[][2] = {
    {"os", "execute"},
    {"os", "remove"},
    {"os", "rename"},
    {"os", "exit"},
    {"os", "tmpname"},
    {"io", "popen"},
    {"io", "tmpfile"},
    {"package", "loadlib"},
    /* process-wide: LC_NUMERIC "de_DE" would write the CSV's numbers with decimal commas */
    {"os", "setlocale"},
  };
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
    refuse_field(L, refusals[i][0], refusals[i][1]);
  guard_field(L, "io", "open", guarded_open);
  guard_field(L, "io", "output", guarded_output);
  guard_field(L, "io", "input", guarded_input);
  guard_field(L, "io", "lines", guarded_lines);
  set_text_loader(L, "load", 3);
  set_text_loader(L, "loadfile", 2);
  lua_pushcfunction(L, text_dofile);
  lua_setglobal(L, "dofile");
  guard_require(L);
  reduce_debug(L);
  return 0;
}

/* ---- outputs over inputs ---------------------------------------------------------------- */

void jyl_note_script(lua_State *L, const char *path) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, JYL_INPUTS);
  lua_pushliteral(L, "script");
  lua_setfield(L, -2, path);
  lua_pop(L, 1);
}

void jyl_check_output_not_input(lua_State *L, const char *path) {
  struct stat out;
  if (stat(path, &out) != 0 || !S_ISREG(out.st_mode)) return; /* nothing there to destroy */
  if (lua_getfield(L, LUA_REGISTRYINDEX, JYL_INPUTS) != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  int inputs = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, inputs)) {
    struct stat in;
    const char *input = lua_tostring(L, -2);
    if (lua_type(L, -2) == LUA_TSTRING && stat(input, &in) == 0 && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino) {
      if (lua_type(L, -1) == LUA_TSTRING)
        luaL_error(L,
                   "output file '%s' is the model script '%s': writing the rows there would "
                   "destroy it; choose another output file",
                   path, input);
      luaL_error(L,
                 "output file '%s' is '%s', which the model script read: writing the rows "
                 "there would destroy it; choose another output file",
                 path, input);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

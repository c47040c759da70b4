/* lua/settings.c — the run settings (jySimDef) and solver settings (jySolverDef) as Lua
 * tables, read through the engine's schema (jy_sim_setting, jy_solver_setting: joinery.h's
 * lists). The bindings (sys:settings, sys:compile, sys:simulate, model:simulate, model:sim)
 * and `joinery run`'s flags (lua/main.c) all go through here, so a new setting or choice is
 * one line in joinery.h's lists and nothing here. */
#include "settings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding_private.h"
#include "sandbox.h"

enum { MAX_CHOICES = 16, MAX_SETTINGS = 64 };

static const jySettingInfo out_info = {"out",
                                       JY_DOMAIN_FINITE,
                                       0,
                                       0,
                                       "a file name",
                                       "FILE",
                                       "output file: CSV, or HDF5 when it ends in .h5 or .hdf5 "
                                       "(default: the script's name with .csv, here)",
                                       NULL,
                                       NULL,
                                       0};

static const jySettingInfo columns_info = {
  "columns",
  JY_DOMAIN_FINITE,
  0,
  0,
  "glob patterns",
  "PATTERNS",
  "output channels: comma-separated globs (* any run, ? one character), t always first; "
  "default: every channel but the eliminated copies, the eliminated glues' forces and the "
  "springs' and dampers' outputs",
  NULL,
  NULL,
  0};

/* ---- the schema ------------------------------------------------------------------------ */

static int num_run(void) {
  int n = 0;
  while (jy_sim_setting(n)) n++;
  return n;
}

int jyl_setting_at(int i, jylSetting *s) {
  if (i == 0) {
    *s = (jylSetting){JYL_SETTING_OUT, 0, &out_info};
    return 1;
  }
  if (i == 1) {
    *s = (jylSetting){JYL_SETTING_COLUMNS, 0, &columns_info};
    return 1;
  }
  int nrun = num_run();
  if (i - 2 < nrun) {
    *s = (jylSetting){JYL_SETTING_RUN, i - 2, jy_sim_setting(i - 2)};
    return 1;
  }
  const jySettingInfo *info = jy_solver_setting(i - 2 - nrun);
  if (!info) return 0;
  *s = (jylSetting){JYL_SETTING_SOLVER, i - 2 - nrun, info};
  return 1;
}

int jyl_find_setting(const char *name, jylSetting *s) {
  for (int i = 0; jyl_setting_at(i, s); i++)
    if (strcmp(name, s->info->name) == 0) return 1;
  return 0;
}

const jyChoiceInfo *jyl_find_choice(const jySettingInfo *s, const char *name) {
  for (int i = 0; i < s->nchoices; i++)
    if (strcmp(name, s->choices[i].name) == 0) return &s->choices[i];
  return NULL;
}

static int choice_index(const jySettingInfo *s, double value) {
  for (int i = 0; i < s->nchoices; i++)
    if (s->choices[i].value == value) return i;
  return -1;
}

int jyl_default_choice(const jySettingInfo *s) { return choice_index(s, s->default_value); }

int jyl_setting_is_integer(const jySettingInfo *s) {
  return s->domain == JY_DOMAIN_COUNT || s->domain == JY_DOMAIN_COUNT_POSITIVE;
}

void jyl_format_default(char *buf, size_t len, const jySettingInfo *s) {
  if (s == &out_info || s == &columns_info)
    snprintf(buf, len, "%s", "");
  else if (s->domain == JY_DOMAIN_CHOICE)
    snprintf(buf, len, "%s", s->choices[jyl_default_choice(s)].name);
  else if (s->domain == JY_DOMAIN_FLAG)
    snprintf(buf, len, "%s", s->default_value != 0 ? "true" : "false");
  else
    snprintf(buf, len, "%g", s->default_value);
}

/* ---- reading and pushing --------------------------------------------------------------- */

/* Raises "unknown setting" listing them all (out only where a run writes a file). */
static void unknown_setting(lua_State *L, const char *key, int with_out) {
  const char *names[MAX_SETTINGS];
  int n = 0;
  jylSetting s;
  for (int i = 0; jyl_setting_at(i, &s) && n < MAX_SETTINGS; i++)
    if (s.kind != JYL_SETTING_OUT || with_out) names[n++] = s.info->name;
  jyl_unknown_name(L, "setting", key, names, n);
}

/* The value of setting s on top of the stack, checked as far as the binding checks it: its
 * type always, its range for a solver setting (a run setting's range is jy_sim_create's). */
static double read_value(lua_State *L, const jylSetting *s) {
  const jySettingInfo *info = s->info;
  const char *solver = s->kind == JYL_SETTING_SOLVER ? "solver " : "";
  if (info->domain == JY_DOMAIN_CHOICE) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "setting '%s' must be a string, got %s", info->name, luaL_typename(L, -1));
    const jyChoiceInfo *choice = jyl_find_choice(info, lua_tostring(L, -1));
    if (!choice) {
      const char *names[MAX_CHOICES];
      int n = info->nchoices < MAX_CHOICES ? info->nchoices : MAX_CHOICES;
      for (int i = 0; i < n; i++) names[i] = info->choices[i].name;
      jyl_unknown_name(L, info->what, lua_tostring(L, -1), names, n);
    }
    return choice->value;
  }
  if (info->domain == JY_DOMAIN_FLAG) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      luaL_error(L, "%ssetting '%s' must be true or false, got %s", solver, info->name,
                 luaL_typename(L, -1));
    return lua_toboolean(L, -1);
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "%ssetting '%s' must be a number, got %s", solver, info->name,
               luaL_typename(L, -1));
  double x = lua_tonumber(L, -1);
  int unbounded = info->domain == JY_DOMAIN_AT_LEAST_0 && x == INFINITY; /* max_step */
  if (!isfinite(x) && !unbounded && s->kind == JYL_SETTING_RUN)
    luaL_error(L, "setting '%s' must be finite, got %f", info->name, x);
  if (jyl_setting_is_integer(info)) {
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, -1, &isint);
    if (!isint || (double)k > info->max)
      luaL_error(L, "%ssetting '%s' must be %s, got %f", solver, info->name,
                 s->kind == JYL_SETTING_RUN ? "an integer" : "a whole number", x);
    x = (double)k;
  }
  if (s->kind == JYL_SETTING_SOLVER && !jy_setting_admits(info, x))
    luaL_error(L, "solver setting '%s' must be %s, got %f", info->name, info->must_be, x);
  return x;
}

/* The registry table that keeps the selections' strings alive (jySimDef holds a pointer). */
static const char columns_key = 'c';

void jyl_read_columns(lua_State *L, int idx, jySimDef *d, const char *what) {
  idx = lua_absindex(L, idx);
  if (lua_isnil(L, idx)) {
    d->columns = NULL;
    return;
  }
  luaL_Buffer b;
  if (lua_type(L, idx) == LUA_TSTRING) {
    lua_pushvalue(L, idx);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, idx);
    luaL_buffinit(L, &b);
    for (lua_Integer k = 1; k <= n; k++) {
      if (lua_rawgeti(L, idx, k) != LUA_TSTRING)
        luaL_error(L, "%s: pattern %d must be a string, got %s", what, (int)k,
                   luaL_typename(L, -1));
      const char *p = lua_tostring(L, -1);
      if (strchr(p, ',')) luaL_error(L, "%s: pattern '%s' has a comma (one pattern each)", what, p);
      lua_pop(L, 1);
      if (k > 1) luaL_addchar(&b, ',');
      lua_rawgeti(L, idx, k);
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
  } else {
    luaL_error(L, "%s must be a string of patterns or a list of them, got %s", what,
               luaL_typename(L, idx));
  }
  /* anchored: registry[columns_key][string] = true */
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &columns_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &columns_key);
  }
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  const char *str = lua_tostring(L, -1);
  d->columns = *str ? str : NULL;
  lua_pop(L, 1);
}

void jyl_read_solver(lua_State *L, int idx, jySolverDef *d) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "solver settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    jylSetting s;
    if (!jyl_find_setting(key, &s) || s.kind != JYL_SETTING_SOLVER) {
      const char *names[MAX_SETTINGS];
      int n = 0;
      for (const jySettingInfo *info; n < MAX_SETTINGS && (info = jy_solver_setting(n));)
        names[n++] = info->name;
      jyl_unknown_name(L, "solver setting", key, names, n);
    }
    jy_solver_def_set(d, s.index, read_value(L, &s));
    lua_pop(L, 1);
  }
}

void jyl_read_settings(lua_State *L, int idx, jySimDef *d, jySolverDef *solver, const char **out) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    jylSetting s;
    if (!jyl_find_setting(key, &s) || (s.kind == JYL_SETTING_OUT && !out))
      unknown_setting(L, key, out != NULL);
    if (s.kind == JYL_SETTING_OUT) {
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "setting 'out' must be a string, got %s", luaL_typename(L, -1));
      jyl_sandbox_check_write(L, lua_tostring(L, -1), "setting 'out'");
      *out = lua_tostring(L, -1);
    } else if (s.kind == JYL_SETTING_COLUMNS) {
      jyl_read_columns(L, -1, d, "setting 'columns'");
    } else if (s.kind == JYL_SETTING_RUN) {
      jy_sim_def_set(d, s.index, read_value(L, &s));
    } else {
      if (!solver)
        luaL_error(L,
                   "solver setting '%s' belongs to the model, which is compiled already: set "
                   "it with sys:settings or sys:compile{...} before compiling",
                   key);
      jy_solver_def_set(solver, s.index, read_value(L, &s));
    }
    lua_pop(L, 1);
  }
}

/* Pushes setting s's value x as a script writes it. */
static void push_value(lua_State *L, const jySettingInfo *s, double x) {
  if (s->domain == JY_DOMAIN_CHOICE) {
    int k = choice_index(s, x);
    lua_pushstring(L, k >= 0 ? s->choices[k].name : "?");
  } else if (s->domain == JY_DOMAIN_FLAG) {
    lua_pushboolean(L, x != 0);
  } else if (jyl_setting_is_integer(s)) {
    lua_pushinteger(L, (lua_Integer)x);
  } else {
    lua_pushnumber(L, x);
  }
}

void jyl_push_settings(lua_State *L, const jySimDef *d, const jySolverDef *solver) {
  lua_createtable(L, 0, MAX_SETTINGS / 2);
  jylSetting s;
  for (int i = 0; jyl_setting_at(i, &s); i++) {
    if (s.kind == JYL_SETTING_OUT) continue;
    if (s.kind == JYL_SETTING_COLUMNS) {
      if (d->columns)
        lua_pushstring(L, d->columns);
      else
        lua_pushliteral(L, "");
      lua_setfield(L, -2, s.info->name);
      continue;
    }
    push_value(L, s.info,
               s.kind == JYL_SETTING_RUN ? jy_sim_def_get(d, s.index)
                                         : jy_solver_def_get(solver, s.index));
    lua_setfield(L, -2, s.info->name);
  }
}

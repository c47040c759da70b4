/* python/joinery_lua.c — the Python binding's C half (python/joinery_lua.h): a Lua model
 * script loaded and compiled in a Lua state of its own, as `joinery run` loads one (lua/main.c),
 * and a row sink that appends a run's rows to one growing buffer. */
#include "joinery_lua.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "binding.h"
#include "binding_private.h"
#include "lua_call.h"
#include "sandbox.h"
#include "settings.h"

struct jypScript {
  lua_State *L;
  const jyModel *model; /* owned by the Lua model userdata, kept in the registry */
  jySimDef def;         /* the script's run settings, then jyp_load's */
  long nsims;           /* open simulations of jyp_sim_create */
  int closed;           /* jyp_close was called: freed when nsims reaches 0 */
};

/* What pmain_load reads and fills (a light userdata: no Lua error may skip its cleanup). */
typedef struct LoadArgs {
  jypScript *s;
  const char *path;
  const char *const *args;
  int nargs, trust;
  const jypSetting *settings;
  int nsettings;
} LoadArgs;

static void copy_message(char *error, size_t len, const char *msg) {
  if (error && len) snprintf(error, len, "%s", msg ? msg : "unknown error");
}

/* Pushes a table {name = value} of the settings. */
static void push_settings(lua_State *L, const jypSetting *settings, int n) {
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    const jypSetting *st = &settings[i];
    if (!st->name) luaL_error(L, "a setting without a name");
    if (st->kind == 1) {
      lua_pushboolean(L, st->x != 0);
    } else if (st->kind == 2) {
      lua_pushstring(L, st->text ? st->text : "");
    } else if (st->x == floor(st->x) && fabs(st->x) < 9e15) { /* a count reads as a whole */
      lua_pushinteger(L, (lua_Integer)st->x);
    } else {
      lua_pushnumber(L, st->x);
    }
    lua_setfield(L, -2, st->name);
  }
}

/* Calls the function below narg arguments under the script's message handler (file:line). */
static void call_located(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  jyl_push_msgh(L, JYL_MSGH_LOCATE);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  if (status != LUA_OK) lua_error(L);
}

/* Under lua_pcall: everything that may raise. Argument 1: the LoadArgs. */
static int pmain_load(lua_State *L) {
  LoadArgs *a = (LoadArgs *)lua_touserdata(L, 1);
  lua_settop(L, 0);
  luaL_checkversion(L);
  jyl_open_libs(L);
  push_settings(L, a->settings, a->nsettings); /* 1 */
  if (!a->trust) jyl_sandbox(L, NULL, 0, "load it with joinery.load(..., trust=True) to allow it");

  lua_createtable(L, a->nargs, 1); /* the global arg, as joinery run sets it */
  lua_pushstring(L, a->path);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < a->nargs; i++) {
    lua_pushstring(L, a->args[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");

  jyl_note_script(L, a->path);
  if (luaL_loadfilex(L, a->path, jyl_sandboxed(L) ? "t" : NULL) != LUA_OK) {
    jyl_sandbox_explain_binary(L, a->path);
    return lua_error(L);
  }
  luaL_checkstack(L, a->nargs, "too many arguments to the script");
  for (int i = 0; i < a->nargs; i++) lua_pushstring(L, a->args[i]);
  call_located(L, a->nargs, 1); /* 2: the script's result */
  if (!luaL_testudata(L, 2, JYL_SYSTEM))
    return luaL_error(L, "%s must return a system (end it with `return sys`), but it returned %s",
                      a->path, lua_isnil(L, 2) ? "nothing" : luaL_typename(L, 2));
  LSystem *sys = jyl_check_system(L, 2);
  jySimDef def = sys->def;
  jySolverDef solver = sys->solver;
  jyl_read_settings(L, 1, &def, &solver, NULL);
  LModel *m = jyl_compile_system(L, 2, &solver); /* 3 */
  lua_rawsetp(L, LUA_REGISTRYINDEX, a->s);       /* the model lives as long as the state */
  a->s->model = m->model;
  a->s->def = def; /* its columns string is kept for the state's life (lua/settings.h) */
  return 0;
}

static void free_script(jypScript *s) {
  if (s->L) lua_close(s->L); /* collects the model, which frees the engine's model */
  free(s);
}

jypScript *jyp_load(const char *path, const char *const *args, int nargs, int trust,
                    const jypSetting *settings, int nsettings, char *error, size_t error_len) {
  if (!path || nargs < 0 || nsettings < 0 || (nargs && !args) || (nsettings && !settings)) {
    copy_message(error, error_len, "jyp_load: invalid arguments");
    return NULL;
  }
  jypScript *s = (jypScript *)calloc(1, sizeof *s);
  if (!s || !(s->L = luaL_newstate())) {
    free(s);
    copy_message(error, error_len, "cannot create the Lua state (out of memory)");
    return NULL;
  }
  LoadArgs a = {s, path, args, nargs, trust, settings, nsettings};
  lua_pushcfunction(s->L, pmain_load);
  lua_pushlightuserdata(s->L, &a);
  if (lua_pcall(s->L, 1, 0, 0) != LUA_OK) {
    const char *msg = lua_tostring(s->L, -1);
    copy_message(error, error_len, msg ? msg : "(error object is not a string)");
    free_script(s);
    return NULL;
  }
  lua_settop(s->L, 0);
  return s;
}

void jyp_close(jypScript *s) {
  if (!s) return;
  s->closed = 1;
  if (s->nsims == 0) free_script(s);
}

jySim *jyp_sim_create(jypScript *s, const jySimDef *def, jyStatus *status) {
  if (!s || s->closed) {
    if (status) *status = JY_ERR_INVALID;
    return NULL;
  }
  jySim *sim = jy_sim_create(s->model, def, status);
  if (sim) s->nsims++;
  return sim;
}

void jyp_sim_destroy(jypScript *s, jySim *sim) {
  if (!sim) return;
  jy_sim_destroy(sim);
  if (s && --s->nsims == 0 && s->closed) free_script(s);
}

const jyModel *jyp_model(const jypScript *s) { return s ? s->model : NULL; }

/* Under lua_pcall: argument 1 the settings (light userdata of a LoadArgs), 2 the def. */
static int pmain_sim_def(lua_State *L) {
  const LoadArgs *a = (const LoadArgs *)lua_touserdata(L, 1);
  jySimDef *d = (jySimDef *)lua_touserdata(L, 2);
  lua_settop(L, 0);
  push_settings(L, a->settings, a->nsettings);
  jyl_read_settings(L, 1, d, NULL, NULL);
  return 0;
}

jySimDef *jyp_sim_def(jypScript *s, const jypSetting *settings, int nsettings, char *error,
                      size_t error_len) {
  if (!s || nsettings < 0 || (nsettings && !settings)) {
    copy_message(error, error_len, "jyp_sim_def: invalid arguments");
    return NULL;
  }
  jySimDef *d = (jySimDef *)malloc(sizeof *d);
  if (!d) {
    copy_message(error, error_len, "out of memory");
    return NULL;
  }
  *d = s->def;
  LoadArgs a = {s, NULL, NULL, 0, 0, settings, nsettings};
  lua_pushcfunction(s->L, pmain_sim_def);
  lua_pushlightuserdata(s->L, &a);
  lua_pushlightuserdata(s->L, d);
  if (lua_pcall(s->L, 2, 0, 0) != LUA_OK) {
    copy_message(error, error_len, lua_tostring(s->L, -1));
    lua_settop(s->L, 0);
    free(d);
    return NULL;
  }
  return d;
}

void jyp_sim_def_free(jySimDef *d) { free(d); }

double jyp_sim_def_get(const jySimDef *d, int i) { return jy_sim_def_get(d, i); }

jypRows *jyp_rows_new(void) { return (jypRows *)calloc(1, sizeof(jypRows)); }

void jyp_rows_free(jypRows *r) {
  if (!r) return;
  free(r->data);
  free(r);
}

double *jyp_rows_take(jypRows *r) {
  if (!r) return NULL;
  double *data = r->data;
  if (data && r->nrows && r->nrows < r->cap) { /* the room left over goes back */
    double *fit = (double *)realloc(data, r->nrows * (size_t)r->ncols * sizeof(double));
    if (fit) data = fit;
  }
  r->data = NULL;
  r->nrows = r->cap = 0;
  return data;
}

void jyp_free(void *p) { free(p); }

typedef struct RowSink {
  jypRows *rows;
  jySim *sim;
} RowSink;

static int append_row(void *ud, const double *row, int nchannels) {
  RowSink *k = (RowSink *)ud;
  jypRows *r = k->rows;
  if (r->nrows == r->cap) {
    /* from about 512 KB, doubling: a copy of each row at most once on average */
    size_t first = 65536 / (size_t)nchannels;
    size_t cap = r->cap ? 2 * r->cap : (first > 16 ? first : 16);
    double *data = NULL;
    if (cap <= ((size_t)-1) / sizeof(double) / (size_t)nchannels)
      data = (double *)realloc(r->data, cap * (size_t)nchannels * sizeof(double));
    if (!data) {
      r->failed = 1;
      jy_sim_set_stop_reason(k->sim, "out of memory for the output rows");
      return 1;
    }
    r->data = data;
    r->cap = cap;
  }
  memcpy(r->data + r->nrows * (size_t)nchannels, row, (size_t)nchannels * sizeof(double));
  r->nrows++;
  return 0;
}

jyStatus jyp_run(jySim *sim, jypRows *r) {
  if (!sim || !r) return JY_ERR_INVALID;
  r->nrows = 0;
  r->failed = 0;
  r->ncols = jy_sim_num_columns(sim);
  if (r->ncols < 1) return JY_ERR_INVALID;
  if (r->cap) { /* a buffer sized for another width holds fewer rows of this one */
    free(r->data);
    r->data = NULL;
    r->cap = 0;
  }
  RowSink k = {r, sim};
  return jy_sim_run(sim, append_row, &k);
}

size_t jyp_sizeof(int which) {
  switch (which) {
  case 0:
    return sizeof(jySimStats);
  case 1:
    return sizeof(jySettingInfo);
  case 2:
    return sizeof(jyChoiceInfo);
  case 3:
    return sizeof(jyEventSummary);
  default:
    return 0;
  }
}

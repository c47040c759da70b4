/* lua/parts/part_modes.c — the modes of a Lua part type (joinery/part.h, jyPartHybrid): trampolines
 * from the engine into the script's guards, transition, admissible and initial_mode
 * functions, which lua/parts/part_type.c parsed. The script names its modes; the engine numbers
 * them by their place in the definition's `modes` list. Calls go through the same thread,
 * message handler and argument tables as lua/parts/part_calls.c's, so a failure reads
 * "<function> (script:line): message". */
#include "luapart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

static LpType *record_of(const jyPartInstance *self) { return (LpType *)self->type->type_data; }

static int valid_mode(const LpType *lt, int mode) { return mode >= 0 && mode < lt->nmodes; }

static unsigned long long active_rows(const jyPartInstance *self, int mode) {
  const LpType *lt = record_of(self);
  return valid_mode(lt, mode) ? lt->mode_rows[mode] : 0;
}

static const char *mode_name(const jyPartInstance *self, int mode) {
  const LpType *lt = record_of(self);
  return valid_mode(lt, mode) ? lt->mode_names[mode] : "?";
}

static int failed(char *error, size_t len, const char *what, const LpFn *fn) {
  snprintf(error, len, "%s: %s", fn->label, what);
  return 1;
}

/* The mode named by the result at idx into *mode (nil: left as it is). */
static int read_mode(LpType *lt, int idx, const LpFn *fn, int *mode, const jyPartState *s) {
  lua_State *T = lt->T;
  if (lua_isnil(T, idx)) return 0;
  const char *name = lua_type(T, idx) == LUA_TSTRING ? lua_tostring(T, idx) : NULL;
  for (int k = 0; name && k < lt->nmodes; k++)
    if (strcmp(lt->mode_names[k], name) == 0) return *mode = k, 0;
  char names[160] = "", why[320];
  size_t used = 0;
  for (int k = 0; k < lt->nmodes && used < sizeof names; k++) {
    int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", lt->mode_names[k]);
    used += w > 0 ? (size_t)w : 0;
  }
  snprintf(why, sizeof why, "must return the name of one of the part's modes (%s), got %s", names,
           name ? name : luaL_typename(T, idx));
  return failed(s->error, s->error_len, why, fn);
}

/* Calls fn with (q, v, t, p, f, a, mode) (a when acc is not NULL) and nres results. */
static int call_with_forces(LpType *lt, const LpFn *fn, const jyPartState *s,
                            const double *row_forces, const double *acc, int nres) {
  lua_State *T = lt->T;
  jyl_lp_fill_law_args(lt, s, row_forces, acc);
  lua_pushvalue(T, fn->slot);
  int nargs = jyl_lp_push_plain_args(lt, s) + 1;
  lua_pushvalue(T, lt->s_lawf_proxy);
  if (acc) {
    lua_pushvalue(T, lt->s_acc_proxy);
    nargs++;
  }
  lua_pushstring(T, lt->mode_names[valid_mode(lt, s->mode) ? s->mode : 0]);
  return jyl_lp_pcall(lt, fn, nargs + 1, nres, s->error, s->error_len);
}

static int initial_mode(const jyPartInstance *self, const jyPartState *s, int *mode) {
  LpType *lt = record_of(self);
  if (!lt->initial_mode.slot) return 0;
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  jyl_lp_fill_law_args(lt, s, NULL, NULL);
  lua_pushvalue(lt->T, lt->initial_mode.slot);
  int nargs = jyl_lp_push_plain_args(lt, s);
  bad = jyl_lp_pcall(lt, &lt->initial_mode, nargs, 1, s->error, s->error_len) ||
    read_mode(lt, lua_gettop(lt->T), &lt->initial_mode, mode, s);
  jyl_lp_leave(lt, base);
  return bad;
}

/* The guard values: a list of nguards numbers (or one number when nguards is 1). */
static int read_guards(LpType *lt, int idx, double *g, const jyPartState *s) {
  lua_State *T = lt->T;
  const LpFn *fn = &lt->guards;
  if (lt->nguards == 1 && lua_type(T, idx) == LUA_TNUMBER) {
    g[0] = (double)lua_tonumber(T, idx);
  } else {
    if (lua_type(T, idx) != LUA_TTABLE || (int)lua_rawlen(T, idx) != lt->nguards) {
      char why[128];
      snprintf(why, sizeof why, "must return a list of nguards = %d numbers", lt->nguards);
      return failed(s->error, s->error_len, why, fn);
    }
    for (int k = 0; k < lt->nguards; k++) {
      int isnum = 0;
      lua_rawgeti(T, idx, k + 1);
      g[k] = (double)lua_tonumberx(T, -1, &isnum);
      lua_pop(T, 1);
      if (!isnum) return failed(s->error, s->error_len, "returned a guard that is no number", fn);
    }
  }
  for (int k = 0; k < lt->nguards; k++)
    if (!isfinite(g[k]))
      return failed(s->error, s->error_len, "returned a guard that is not finite", fn);
  return 0;
}

static int guards(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                  const double *acc, double *g) {
  LpType *lt = record_of(self);
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  bad = call_with_forces(lt, &lt->guards, s, row_forces, acc, 1) ||
    read_guards(lt, lua_gettop(lt->T), g, s);
  jyl_lp_leave(lt, base);
  return bad;
}

/* The restitution table { row = e, ... } at idx (rows by name or number), e in [0, 1]. */
static int read_restitution(LpType *lt, int idx, double *restitution, const jyPartState *s) {
  lua_State *T = lt->T;
  const LpFn *fn = &lt->transition;
  if (lua_isnil(T, idx)) return 0;
  if (lua_type(T, idx) != LUA_TTABLE)
    return failed(s->error, s->error_len,
                  "must return the new mode and optionally { row = restitution, ... }", fn);
  for (int r = 0; r < lt->nrows; r++) {
    lua_getfield(T, idx, lt->rows[r].name);
    if (lua_isnil(T, -1)) {
      lua_pop(T, 1);
      lua_rawgeti(T, idx, r + 1);
    }
    if (!lua_isnil(T, -1)) {
      int isnum = 0;
      double e = (double)lua_tonumberx(T, -1, &isnum);
      if (!isnum || !(e >= 0 && e <= 1)) {
        char why[256];
        snprintf(why, sizeof why, "restitution of row '%s' must be a number in [0, 1]",
                 lt->rows[r].name);
        lua_pop(T, 1);
        return failed(s->error, s->error_len, why, fn);
      }
      restitution[r] = e;
    }
    lua_pop(T, 1);
  }
  return 0;
}

static int transition(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                      int guard, int direction, int *mode, double *restitution) {
  LpType *lt = record_of(self);
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  lua_State *T = lt->T;
  jyl_lp_fill_law_args(lt, s, row_forces, NULL);
  lua_pushvalue(T, lt->transition.slot);
  int nargs = jyl_lp_push_plain_args(lt, s);
  lua_pushvalue(T, lt->s_lawf_proxy);
  lua_pushinteger(T, guard + 1);
  lua_pushinteger(T, direction);
  lua_pushstring(T, lt->mode_names[valid_mode(lt, s->mode) ? s->mode : 0]);
  bad = jyl_lp_pcall(lt, &lt->transition, nargs + 4, 2, s->error, s->error_len) ||
    read_mode(lt, lua_gettop(T) - 1, &lt->transition, mode, s) ||
    read_restitution(lt, lua_gettop(T), restitution, s);
  jyl_lp_leave(lt, base);
  return bad;
}

static int admissible(const jyPartInstance *self, const jyPartState *s, const double *row_forces,
                      const double *acc, int *mode) {
  LpType *lt = record_of(self);
  if (!lt->admissible.slot) return 0;
  int base, bad;
  if (jyl_lp_enter(lt, self, s, &base)) return 1;
  bad = call_with_forces(lt, &lt->admissible, s, row_forces, acc, 1) ||
    read_mode(lt, lua_gettop(lt->T), &lt->admissible, mode, s);
  jyl_lp_leave(lt, base);
  return bad;
}

const jyPartHybrid jyl_lp_hybrid = {
  .active_rows = active_rows,
  .initial_mode = initial_mode,
  .guards = guards,
  .transition = transition,
  .admissible = admissible,
  .mode_name = mode_name,
};

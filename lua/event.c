/* lua/event.c — sys:event{...}: a user event located by the integrator's root finding
 * (jy_system_add_event, docs/events.md).
 *
 *   sys:event { name = "floor", when = function(s) return s["ball.y"] end, direction = "down",
 *               action = function(s) s:set("der(ball.y)", -0.8 * s["der(ball.y)"]) end }
 *
 * name: unique, no '.'. when(s) returns a finite number whose zero crossing is the event.
 * direction: "up", "down" or "both" (the default). action: "stop", a function(s), or absent
 * (the crossing is only located, counted and written as rows). s reads s.t,
 * s["part.coord"], s["der(part.coord)"] and every channel by name (the channels computed on
 * the first read of one that is not the state); in an action only, s:set("part.coord" or
 * "der(part.coord)", value), s:set_param("part", "param", value) and s:stop().
 *
 * How: as sys:channel (lua/channel.c): each event has a context userdata whose user value 1
 * is a Lua thread holding the message handler, the two functions and the proxy s (user
 * value 3: a cache of channel indices); the engine's callbacks lua_pcall on that thread, so a Lua error never
 * unwinds through engine frames; the contexts are anchored in the system's user value 2.
 */
#include "binding.h"
#include "lua_call.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/joinery.h"

#define JYL_EVENT "joinery.Event"

enum { SLOT_WHEN = 2, SLOT_ACTION = 3, SLOT_PROXY = 4 };

typedef struct EventCtx {
  lua_State *T;      /* stack: 1 message handler, 2 when, 3 action or false, 4 s */
  const char *name;  /* anchored by user value 2 */
  jyEventCall *call; /* during a call; NULL otherwise */
  int in_action;     /* the call is the action's (s:stop and the setters allowed) */
  char when_at[160]; /* "file:line" where the when function is defined */
} EventCtx;

/* The channel index of `key`, or -1; the context (upvalue 1 of the calling C function)
 * caches them in its user value 3 (a function runs on the event's own thread, whose base
 * slots its frame cannot reach). */
static int channel_index(lua_State *L, EventCtx *c, const char *key) {
  lua_getiuservalue(L, lua_upvalueindex(1), 3);
  int i = -1;
  if (lua_getfield(L, -1, key) == LUA_TNUMBER) {
    i = (int)lua_tointeger(L, -1);
  } else {
    i = jy_model_find_channel(jy_event_model(c->call), key);
    if (i >= 0) {
      lua_pushinteger(L, i);
      lua_setfield(L, -3, key);
    }
  }
  lua_pop(L, 2);
  return i;
}

static int no_channel(lua_State *L, const jyModel *model, const char *key) {
  int n = jy_model_num_channels(model);
  const char **names = (const char **)lua_newuserdatauv(L, sizeof *names * (size_t)(n + 1), 0);
  for (int k = 0; k < n; k++) names[k] = jy_model_channel_name(model, k);
  const char *near = jy_nearest_name(key, names, n);
  if (near) return luaL_error(L, "no channel '%s'; did you mean '%s'?", key, near);
  return luaL_error(L, "no channel '%s' (model:channels() lists them)", key);
}

static EventCtx *active_ctx(lua_State *L, const char *what) {
  EventCtx *c = (EventCtx *)lua_touserdata(L, lua_upvalueindex(1));
  if (!c->call) luaL_error(L, "event '%s': %s only while the event's function runs", c->name, what);
  return c;
}

/* s:set(name, value): a coordinate or its velocity (an action only). */
static int s_set(lua_State *L) {
  EventCtx *c = active_ctx(L, "s:set works");
  const char *key = luaL_checkstring(L, 2);
  double value = luaL_checknumber(L, 3);
  const jyModel *model = jy_event_model(c->call);
  int i = channel_index(L, c, key), velocity = 0;
  if (i < 0) return no_channel(L, model, key);
  int j = jy_model_channel_coord(model, i, &velocity);
  if (j == -2)
    return luaL_error(L,
                      "s:set: '%s' follows the terminal its part is glued to (glue elimination "
                      "substituted it away): set what it is glued to",
                      key);
  if (j < 0)
    return luaL_error(L,
                      "s:set sets a coordinate \"part.coord\" or a velocity "
                      "\"der(part.coord)\", not '%s'",
                      key);
  jyStatus st = velocity ? jy_event_set_v(c->call, j, value) : jy_event_set_q(c->call, j, value);
  if (st != JY_OK) return luaL_error(L, "%s", jy_event_error(c->call));
  return 0;
}

/* s:set_param(part, param, value) (an action only). */
static int s_set_param(lua_State *L) {
  EventCtx *c = active_ctx(L, "s:set_param works");
  const char *part = luaL_checkstring(L, 2), *param = luaL_checkstring(L, 3);
  double value = luaL_checknumber(L, 4);
  if (jy_event_set_param(c->call, part, param, value) != JY_OK)
    return luaL_error(L, "%s", jy_event_error(c->call));
  return 0;
}

/* s:set_input(name, value) (an action or a controller). */
static int s_set_input(lua_State *L) {
  EventCtx *c = active_ctx(L, "s:set_input works");
  const char *name = luaL_checkstring(L, 2);
  double value = luaL_checknumber(L, 3);
  int k = jyl_input_index(L, jy_event_model(c->call), name, "s:set_input");
  if (jy_event_set_input(c->call, k, value) != JY_OK)
    return luaL_error(L, "s:set_input: %s", jy_event_error(c->call));
  return 0;
}

/* s:apply(coord, value): the generalized force on a coordinate the controller's forces
 * named (an input its actuator reads). */
static int s_apply(lua_State *L) {
  EventCtx *c = active_ctx(L, "s:apply works");
  const char *key = luaL_checkstring(L, 2);
  double value = luaL_checknumber(L, 3);
  int k = -1;
  if (lua_getiuservalue(L, lua_upvalueindex(1), 4) == LUA_TTABLE &&
      lua_getfield(L, -1, key) == LUA_TNUMBER)
    k = (int)lua_tointeger(L, -1);
  if (k < 0)
    return luaL_error(L,
                      "s:apply('%s'): applies a force on a coordinate the controller lists in "
                      "forces = { \"%s\", ... }",
                      key, key);
  if (jy_event_set_input(c->call, k, value) != JY_OK)
    return luaL_error(L, "s:apply: %s", jy_event_error(c->call));
  return 0;
}

/* s:stop() (an action only). */
static int s_stop(lua_State *L) {
  EventCtx *c = active_ctx(L, "s:stop works");
  if (!c->in_action)
    return luaL_error(L, "s:stop() is for the event's action, not its `when` function");
  jy_event_stop(c->call);
  return 0;
}

/* s[key]; upvalue 1 = the context userdata. */
static int proxy_index(lua_State *L) {
  EventCtx *c = (EventCtx *)lua_touserdata(L, lua_upvalueindex(1));
  const char *key = lua_tostring(L, 2);
  static const struct {
    const char *name;
    lua_CFunction fn;
  } methods[] = {{"set", s_set},
                 {"set_param", s_set_param},
                 {"stop", s_stop},
                 {"set_input", s_set_input},
                 {"apply", s_apply}};
  if (lua_type(L, 2) == LUA_TSTRING)
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
      if (strcmp(key, methods[k].name) == 0) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushcclosure(L, methods[k].fn, 1);
        return 1;
      }
  if (!c->call)
    return luaL_error(L, "event '%s': s is readable only while the event's function runs", c->name);
  if (lua_type(L, 2) != LUA_TSTRING)
    return luaL_error(L, "s is read by channel name (s[\"part.coord\"]), not by a %s",
                      luaL_typename(L, 2));
  const jyModel *model = jy_event_model(c->call);
  int i = channel_index(L, c, key), velocity = 0;
  if (i < 0) return no_channel(L, model, key);
  int j = jy_model_channel_coord(model, i, &velocity);
  int input = strncmp(key, "input.", 6) == 0 ? jy_model_find_input(model, key + 6) : -1;
  if (i == 0) {
    lua_pushnumber(L, jy_event_time(c->call));
  } else if (input >= 0) { /* an input: its value now, no output row needed */
    lua_pushnumber(L, jy_event_input(c->call, input));
  } else if (j >= 0) { /* a coordinate of the state: no output row needed */
    lua_pushnumber(L, (velocity ? jy_event_v(c->call) : jy_event_q(c->call))[j]);
  } else {
    const double *row = NULL;
    if (jy_event_channels(c->call, &row) != JY_OK)
      return luaL_error(L, "%s", jy_event_error(c->call));
    lua_pushnumber(L, row[i]);
  }
  return 1;
}

static int proxy_newindex(lua_State *L) {
  return luaL_error(L, "s is read-only: an action changes the state with s:set(name, value)");
}

/* Calls slot (when or action) with s on the event's thread: LUA_OK or the error in `error`. */
static int call_lua(EventCtx *c, jyEventCall *call, int slot, int nresults, char *error,
                    size_t error_len) {
  lua_State *T = c->T;
  if (c->call) { /* the function started a simulation that fires this event again */
    snprintf(error, error_len, "the event's function was called again from inside itself");
    return LUA_ERRRUN;
  }
  c->call = call;
  c->in_action = slot == SLOT_ACTION;
  lua_settop(T, SLOT_PROXY);
  lua_pushvalue(T, slot);
  lua_pushvalue(T, SLOT_PROXY);
  int st = lua_pcall(T, 1, nresults, 1);
  c->call = NULL;
  if (st != LUA_OK) {
    const char *msg = lua_tostring(T, -1);
    snprintf(error, error_len, "%s", msg ? msg : "error in the event's function");
    lua_settop(T, SLOT_PROXY);
  }
  return st;
}

static int ev_when(void *ud, jyEventCall *call, double *value, char *error, size_t error_len) {
  EventCtx *c = (EventCtx *)ud;
  lua_State *T = c->T;
  if (call_lua(c, call, SLOT_WHEN, 1, error, error_len) != LUA_OK) return 1;
  int failed = 1;
  if (lua_type(T, -1) != LUA_TNUMBER)
    snprintf(error, error_len, "its when function (%s) returned %s, not a number", c->when_at,
             luaL_typename(T, -1));
  else if (isnan(lua_tonumber(T, -1)))
    snprintf(error, error_len, "its when function (%s) returned NaN", c->when_at);
  else
    *value = lua_tonumber(T, -1), failed = 0;
  lua_settop(T, SLOT_PROXY);
  return failed;
}

static int ev_action(void *ud, jyEventCall *call, char *error, size_t error_len) {
  EventCtx *c = (EventCtx *)ud;
  if (!lua_isfunction(c->T, SLOT_ACTION)) return 0; /* no action: located and counted only */
  if (call_lua(c, call, SLOT_ACTION, 0, error, error_len) != LUA_OK) return 1;
  lua_settop(c->T, SLOT_PROXY);
  return 0;
}

/* Every key of the table is one sys:event knows. */
static void check_keys(lua_State *L, int tbl) {
  static const char *const keys[] = {"name", "when", "direction", "action"};
  lua_pushnil(L);
  while (lua_next(L, tbl)) {
    lua_pop(L, 1);
    int known = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        known |= strcmp(lua_tostring(L, -1), keys[k]) == 0;
    if (!known) {
      const char *bad = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)";
      const char *near = jy_nearest_name(bad, keys, 4);
      luaL_error(L, "sys:event: unknown key '%s'%s%s%s (its keys: name, when, direction, action)",
                 bad, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
  }
}

static jyEventDirection direction_of(lua_State *L, int tbl, const char *name) {
  lua_getfield(L, tbl, "direction");
  jyEventDirection d = JY_EVENT_BOTH;
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (lua_isnil(L, -1) || (s && strcmp(s, "both") == 0))
    d = JY_EVENT_BOTH;
  else if (s && strcmp(s, "up") == 0)
    d = JY_EVENT_UP;
  else if (s && strcmp(s, "down") == 0)
    d = JY_EVENT_DOWN;
  else
    luaL_error(L, "event '%s': direction must be \"up\", \"down\" or \"both\", got %s%s%s", name,
               s ? "'" : "", s ? s : luaL_typename(L, -1), s ? "'" : "");
  lua_pop(L, 1);
  return d;
}

/* Pushes the action (a function, or false) and says whether it is "stop". */
static int push_action(lua_State *L, int tbl, const char *name) {
  int type = lua_getfield(L, tbl, "action");
  if (type == LUA_TFUNCTION) return 0;
  if (type == LUA_TSTRING && strcmp(lua_tostring(L, -1), "stop") == 0) {
    lua_pop(L, 1);
    lua_pushboolean(L, 0);
    return 1;
  }
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushboolean(L, 0);
    return 0;
  }
  return luaL_error(L, "event '%s': action must be \"stop\" or a function(s), got %s%s%s", name,
                    type == LUA_TSTRING ? "'" : "",
                    type == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1),
                    type == LUA_TSTRING ? "'" : "");
}

/* The context's thread: message handler, when, action, proxy s (ctx at ctx_idx,
 * when and action on L's top two slots, popped). */
static void fill_thread(lua_State *L, EventCtx *c, int ctx_idx) {
  c->T = lua_newthread(L);
  lua_setiuservalue(L, ctx_idx, 1);
  lua_State *T = c->T;
  jyl_push_msgh(T, JYL_MSGH_LOCATE);
  lua_xmove(L, T, 2);       /* when, action */
  lua_createtable(T, 0, 0); /* s */
  lua_createtable(T, 0, 2); /* its metatable */
  lua_pushvalue(L, ctx_idx);
  lua_xmove(L, T, 1);
  lua_pushcclosure(T, proxy_index, 1);
  lua_setfield(T, -2, "__index");
  lua_pushcfunction(T, proxy_newindex);
  lua_setfield(T, -2, "__newindex");
  lua_setmetatable(T, -2);
}

/* Anchors the context at 4 in the system's (at 1) user value 2, which models share, so
 * that it lives as long as any of them: leaves that table of contexts on the top and returns
 * the context's slot in it. */
static lua_Integer anchor_context(lua_State *L) {
  lua_getiuservalue(L, 1, 2);
  if (lua_getfield(L, -1, "events") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "events");
  }
  lua_Integer slot = (lua_Integer)lua_rawlen(L, -1) + 1;
  lua_pushvalue(L, 4);
  lua_rawseti(L, -2, slot);
  return slot;
}

/* After registering the anchored context (the table of contexts on the top): on failure
 * it is let go and the system's error raised. */
static void registered(lua_State *L, jySystem *sys, jyStatus st, lua_Integer slot) {
  if (st == JY_OK) return;
  lua_pushnil(L);
  lua_rawseti(L, -2, slot);
  const char *msg = jy_system_error(sys);
  luaL_error(L, "%s", msg && *msg ? msg : jy_status_text(st));
}

/* sys:event{ name = ..., when = ..., direction = ..., action = ... } */
static int sys_event(lua_State *L) {
  jySystem *sys = jyl_system_of(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE)
    return luaL_error(L,
                      "sys:event takes a table: sys:event { name = \"...\", when = "
                      "function(s) return g end, direction = \"up\"|\"down\"|\"both\", "
                      "action = \"stop\" | function(s) ... end }");
  lua_settop(L, 2);
  check_keys(L, 2);
  if (lua_getfield(L, 2, "name") != LUA_TSTRING)
    return luaL_error(L, "sys:event needs name = \"...\" (a string), got %s", luaL_typename(L, -1));
  const char *name = lua_tostring(L, 3); /* 3 */
  jyEventDirection direction = direction_of(L, 2, name);
  EventCtx *c = (EventCtx *)lua_newuserdatauv(L, sizeof *c, 3); /* 4 */
  memset(c, 0, sizeof *c);
  luaL_setmetatable(L, JYL_EVENT);
  lua_createtable(L, 0, 8); /* the channel index cache */
  lua_setiuservalue(L, 4, 3);
  lua_pushvalue(L, 3);
  c->name = lua_tostring(L, -1);
  lua_setiuservalue(L, 4, 2);
  if (lua_getfield(L, 2, "when") != LUA_TFUNCTION) /* 5 */
    return luaL_error(L, "event '%s': when must be a function(s) returning a number, got %s", name,
                      luaL_typename(L, -1));
  lua_Debug ar;
  lua_pushvalue(L, 5);
  lua_getinfo(L, ">S", &ar);
  snprintf(c->when_at, sizeof c->when_at, "%s:%d", ar.short_src, ar.linedefined);
  int stop = push_action(L, 2, name); /* 6 */
  fill_thread(L, c, 4);
  lua_Integer slot = anchor_context(L);
  registered(L, sys, jy_system_add_event(sys, name, ev_when, direction, stop ? NULL : ev_action, c),
             slot);
  return 0;
}

static int ctl_fn(void *ud, jyEventCall *call, char *error, size_t error_len) {
  return ev_action(ud, call, error, error_len);
}

/* forces = { "part.coord", ... } of the controller table at 2 (called with the context at
 * ctx): each coordinate gets an input "<controller>_<part>_<coord>" (0 N or N m) and an
 * actuator of that name applying it, and the context's user value 4 maps the coordinate's
 * name to the input's index for s:apply. Every name is checked before anything is added. */
static void add_forces(lua_State *L, jySystem *sys, const char *name, int ctx) {
  lua_newtable(L);
  int map = lua_gettop(L);
  if (lua_getfield(L, 2, "forces") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_setiuservalue(L, ctx, 4);
    return;
  }
  int list = lua_gettop(L);
  if (!lua_istable(L, list))
    luaL_error(L, "controller '%s': forces must be an array of coordinate names (\"part.coord\")",
               name);
  int count = (int)lua_rawlen(L, list);
  jyTerminalId *terms =
    (jyTerminalId *)lua_newuserdatauv(L, sizeof *terms * (size_t)(count + 1), 0);
  for (int pass = 0; pass < 2; pass++) /* pass 0 checks, pass 1 adds */
    for (int i = 0; i < count; i++) {
      lua_rawgeti(L, list, i + 1);
      const char *full = lua_tostring(L, -1);
      const char *dot = full ? strrchr(full, '.') : NULL;
      if (!dot || lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "controller '%s': forces[%d] must name a coordinate \"part.coord\", got %s",
                   name, i + 1, full ? full : luaL_typename(L, -1));
      char part[128], input[300];
      snprintf(part, sizeof part, "%.*s", (int)(dot - full), full);
      snprintf(input, sizeof input, "%s_%s_%s", name, part, dot + 1);
      if (pass == 0) {
        jyPartId id = jy_system_find_part(sys, part);
        terms[i] =
          id.index >= 0 ? jy_system_coord_terminal(sys, id, dot + 1) : (jyTerminalId){-1, -1};
        if (terms[i].part < 0)
          luaL_error(L, "controller '%s': forces[%d] = '%s' is no coordinate of this system", name,
                     i + 1, full);
        if (jy_system_find_input(sys, input) >= 0 || jy_system_find_part(sys, input).index >= 0)
          luaL_error(L, "controller '%s': the input and actuator '%s' for '%s' exist already", name,
                     input, full);
      } else {
        int k = jy_system_add_input(sys, input, 0, NULL);
        jyParamSetting params[] = {{"mode", 2}, {"input", k}};
        jyPartId act =
          k >= 0 ? jy_system_add_part(sys, "actuator", input, params, 2) : (jyPartId){-1};
        if (act.index < 0 ||
            jy_system_glue(sys, jy_system_terminal(sys, act, "coord"), terms[i], NULL) != JY_OK)
          luaL_error(L, "controller '%s': %s", name, jy_system_error(sys));
        lua_pushinteger(L, k);
        lua_setfield(L, map, full);
      }
      lua_pop(L, 1);
    }
  lua_settop(L, map);
  lua_setiuservalue(L, ctx, 4);
}

/* sys:controller{ name = ..., period = dt, fn = function(s) ... end } */
static int sys_controller(lua_State *L) {
  jySystem *sys = jyl_system_of(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE)
    return luaL_error(L,
                      "sys:controller takes a table: sys:controller { name = \"...\", period = "
                      "dt, fn = function(s) s:set_input(\"u\", ...) end }");
  lua_settop(L, 2);
  static const char *const keys[] = {"name", "period", "fn", "forces"};
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pop(L, 1);
    const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)";
    if (strcmp(key, "name") && strcmp(key, "period") && strcmp(key, "fn") &&
        strcmp(key, "forces")) {
      const char *near = jy_nearest_name(key, keys, 4);
      return luaL_error(
        L, "sys:controller: unknown key '%s'%s%s%s (its keys: name, period, fn, forces)", key,
        near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
  }
  if (lua_getfield(L, 2, "name") != LUA_TSTRING)
    return luaL_error(L, "sys:controller needs name = \"...\" (a string), got %s",
                      luaL_typename(L, -1));
  const char *name = lua_tostring(L, 3); /* 3 */
  lua_getfield(L, 2, "period");          /* absent: continuous, run inside every evaluation */
  int isnum = 0;
  double period = lua_isnil(L, -1) ? 0.0 : lua_tonumberx(L, -1, &isnum);
  if (isnum && !(period > 0))
    return luaL_error(L,
                      "controller '%s': period %f is not > 0 (s: it runs at t_start + k "
                      "period); leave it out for a continuous controller",
                      name, period);
  if (!isnum && !lua_isnil(L, -1))
    return luaL_error(L,
                      "controller '%s': period must be a number dt > 0 (s: it runs at t_start "
                      "+ k dt), or absent (continuous), got %s",
                      name, luaL_typename(L, -1));
  lua_pop(L, 1);
  EventCtx *c = (EventCtx *)lua_newuserdatauv(L, sizeof *c, 4); /* 4 */
  memset(c, 0, sizeof *c);
  luaL_setmetatable(L, JYL_EVENT);
  lua_createtable(L, 0, 8);
  lua_setiuservalue(L, 4, 3);
  lua_pushvalue(L, 3);
  c->name = lua_tostring(L, -1);
  lua_setiuservalue(L, 4, 2);
  add_forces(L, sys, name, 4); /* user value 4: coordinate name -> the input it drives */
  lua_pushboolean(L, 0);       /* 5: no `when` */
  if (lua_getfield(L, 2, "fn") != LUA_TFUNCTION) /* 6 */
    return luaL_error(L, "controller '%s': fn must be a function(s), got %s", name,
                      luaL_typename(L, -1));
  lua_Debug ar;
  lua_pushvalue(L, 6);
  lua_getinfo(L, ">S", &ar);
  snprintf(c->when_at, sizeof c->when_at, "%s:%d", ar.short_src, ar.linedefined);
  fill_thread(L, c, 4);
  lua_Integer slot = anchor_context(L);
  registered(L, sys, jy_system_add_controller(sys, name, period, ctl_fn, c), slot);
  return 0;
}

void jyl_open_event(lua_State *L) {
  int top = lua_gettop(L);
  luaL_newmetatable(L, JYL_EVENT);
  lua_pop(L, 1);
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_pushcfunction(L, sys_event);
  lua_setfield(L, -2, "event");
  lua_pushcfunction(L, sys_controller);
  lua_setfield(L, -2, "controller");
  lua_settop(L, top);
}

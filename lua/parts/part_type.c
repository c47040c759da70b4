/* lua/parts/part_type.c — joinery.part_type{...}: a part type written in Lua, parsed into an
 * LpType (lua/parts/luapart.h) and registered in the module's environment as an ordinary
 * jyPartType whose functions are the trampolines of lua/parts/part_calls.c; sys:add() then uses it
 * by name like a built-in part, with its parameters validated by the engine against the
 * schema the script gave. docs/parts.md is the user's guide; this comment is the
 * implementer's.
 *
 *   joinery.part_type{
 *     name = "my_pendulum", doc = "one line",
 *     params = { { name = "m", default = 1, unit = "kg", doc = "...", domain = "positive" }, ... },
 *     coords = { "px", "py", { name = "theta", default = 0 } },
 *     terminals = { { name = "pivot", coords = { "px", "py" } },          -- a coordinate block
 *                   { name = "bob", dim = 2, fn = function(q, t, p) return { ..., ... } end } },
 *     -- the dynamics, one of:
 *     lagrangian = function(q, v, t, p) return ... end,
 *     kinetic = function(q, v, t, p) ... end, potential = function(q, t, p) ... end,
 *     mass = function(q, t, p) return {{...}, ...} end, force = function(q, v, t, p) ... end,
 *     -- with a Lagrangian or energies, `force` adds a non-conservative generalized force
 *     constraints = { { name = "on_ellipse", phi = function(q, t, p) ... end },
 *                     { name = "rolling", psi = function(q, v, t, p) ... end },
 *                     { name = "servo", accel = function(q, v, t, p) return A, b end },
 *                     { name = "pin", rows = 2, phi = function(q, t, p) return { .., .. } end } },
 *     nonideal = function(q, v, t, p) return { ... } end,
 *     nonideal_law = function(q, v, t, p, f, a) return { ... } end,
 *     outputs = { { name = "tension", fn = function(q, v, t, p, f) ... end },
 *                 { name = "phi", fn = ..., angle = true } },  (angle: known modulo 2 pi,
 *                                                  reported continuous: part.h angle_outputs)
 *     constant_mass = false,
 *     follows_glue = false,   (true: its coordinate-block terminals carry no mass of their
 *                              own, so a glue on them may be eliminated: JY_PART_FOLLOWS_GLUE)
 *     outputs_on_request = false, (true: its outputs are not in the default output selection:
 *                              JY_PART_OUTPUTS_ON_REQUEST)
 *     flat = false,
 *     modes = { { name = "open", rows = {} }, { name = "closed", rows = { "gap" } } },
 *     nguards = 1, guards = ..., transition = ..., admissible = ..., initial_mode = ...,
 *                                      (a part with modes: parse_modes, lua/parts/part_modes.c)
 *   }                                  -> the type name
 *   (terminals, constraints and outputs may also be maps name -> spec, taken in name order.)
 *   A constraint entry gives one row, or with rows = k the k rows <name>1 .. <name>k from one
 *   function returning a table of k values (accel: A a list of k rows, b a list of k). kind =
 *   "position" | "velocity" | "acceleration" may be written and must agree with the function.
 *   nonideal_law gets the row forces f (by row name and by row number) and the accelerations
 *   a of the previous fixed-point iterate (by coordinate) and is jyPartType.nonideal_law.
 *   flat = true: q, v, a are arrays (q[1] ..) and no function gets p — the form
 *   sys:constrain (lua/constrain.c) registers its constraints in.
 *   A type defined by a Lagrangian or energies without `force` is JY_PART_CONSERVATIVE.
 *
 * A definition error is raised at the script's call, naming the type and the field. Until
 * the environment owns the record, a guard userdata frees it if an error unwinds.
 */
#include "luapart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "joinery/joinery.h"
#include "lua_call.h"

#define LP_GUARD "joinery.PartTypeGuard"

/* ---- definition helpers --------------------------------------------------------------- */

static int guard_gc(lua_State *L) {
  LpType **p = (LpType **)luaL_checkudata(L, 1, LP_GUARD);
  jyl_lp_free(*p);
  *p = NULL;
  return 0;
}

static char *dup(lua_State *L, const char *s) {
  size_t len = strlen(s);
  char *d = (char *)malloc(len + 1);
  if (!d) luaL_error(L, "out of memory registering a Lua part type");
  memcpy(d, s, len + 1);
  return d;
}

static int is_identifier(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
  for (s++; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

/* Moves the value on top of L to the type's thread; returns its slot. */
static int to_slot(lua_State *L, LpType *lt) {
  if (!lua_checkstack(lt->T, 2)) luaL_error(L, "out of memory registering a Lua part type");
  lua_xmove(L, lt->T, 1);
  return lua_gettop(lt->T);
}

/* The function at idx becomes fn (role names it in messages); nil leaves it empty. */
static void take_fn(lua_State *L, LpType *lt, int idx, const char *role, LpFn *fn) {
  idx = lua_absindex(L, idx);
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TFUNCTION)
    luaL_error(L, "part type '%s': %s must be a function, got %s", lt->name, role,
               luaL_typename(L, idx));
  lua_Debug ar;
  lua_pushvalue(L, idx);
  lua_getinfo(L, ">S", &ar);
  const char *label = lua_pushfstring(L, "%s (%s:%d)", role, ar.short_src, ar.linedefined);
  fn->label = dup(L, label);
  lua_pop(L, 1);
  lua_pushvalue(L, idx);
  fn->slot = to_slot(L, lt);
}

static int coord_index(const LpType *lt, const char *name) {
  for (int i = 0; i < lt->n; i++)
    if (strcmp(lt->coord_names[i], name) == 0) return i;
  return -1;
}

/* The key of the map at idx that comes first in name order among those not yet placed in
 * the list at out (1 .. placed). The string stays alive as a key of the map. */
static const char *next_key(lua_State *L, int idx, int out, int placed) {
  const char *best = NULL;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k = lua_tostring(L, -2);
    int used = 0;
    for (int j = 1; j <= placed && !used; j++) {
      lua_rawgeti(L, out, j);
      lua_getfield(L, -1, "name");
      used = strcmp(lua_tostring(L, -1), k) == 0;
      lua_pop(L, 2);
    }
    if (!used && (!best || strcmp(k, best) < 0)) best = k;
    lua_pop(L, 1);
  }
  return best;
}

/* Pushes map entry `key` of the table at idx as a spec table with name = key: a copy of a
 * table (the script's stays untouched), or {[fkey] = the function}. */
static void push_map_entry(lua_State *L, int idx, const char *key, const char *what,
                           const char *fkey, const LpType *lt) {
  lua_pushstring(L, key);
  lua_gettable(L, idx);
  if (lua_type(L, -1) == LUA_TFUNCTION) {
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, fkey);
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, -3)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_settable(L, -4);
    }
    lua_remove(L, -2);
  } else {
    luaL_error(L, "part type '%s': %s.%s must be a table or a function, got %s", lt->name, what,
               key, luaL_typename(L, -1));
  }
  lua_pushstring(L, key);
  lua_setfield(L, -2, "name");
}

/* Pushes the entries of the list-or-map field at idx as an array of {name = key, ...}
 * tables (a map's keys in name order); a map's values may be functions (fkey: the field the
 * function goes to). */
static void push_entries(lua_State *L, int idx, const char *what, const char *fkey,
                         const LpType *lt) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "part type '%s': %s must be a table, got %s", lt->name, what,
               luaL_typename(L, idx));
  lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
  lua_newtable(L);
  int out = lua_gettop(L);
  if (len > 0) {
    for (lua_Integer i = 1; i <= len; i++) {
      if (lua_rawgeti(L, idx, i) != LUA_TTABLE)
        luaL_error(L, "part type '%s': %s[%d] must be a table, got %s", lt->name, what, (int)i,
                   luaL_typename(L, -1));
      lua_rawseti(L, out, i);
    }
    return;
  }
  int count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "part type '%s': %s must be a list or a map keyed by name", lt->name, what);
    lua_pop(L, 1);
    count++;
  }
  for (int placed = 0; placed < count; placed++) {
    push_map_entry(L, idx, next_key(L, idx, out, placed), what, fkey, lt);
    lua_rawseti(L, out, placed + 1);
  }
}

/* The string field key of the table at idx (NULL when absent; raises when not a string). */
static const char *opt_string(lua_State *L, int idx, const char *key, const char *what,
                              const LpType *lt) {
  lua_getfield(L, idx, key);
  const char *s = NULL;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "part type '%s': %s.%s must be a string, got %s", lt ? lt->name : "?", what,
                 key, luaL_typename(L, -1));
    s = lua_tostring(L, -1);
  }
  lua_pop(L, 1); /* the string stays alive in the table */
  return s;
}

static void check_keys(lua_State *L, int idx, const char *what, const char *const *names, int n,
                       const char *tname) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      if (lua_type(L, -2) == LUA_TNUMBER) { /* list parts are checked by the caller */
        lua_pop(L, 1);
        continue;
      }
      luaL_error(L, "part type '%s': %s has a %s key", tname, what, luaL_typename(L, -2));
    }
    const char *k = lua_tostring(L, -2);
    int found = 0;
    for (int i = 0; i < n; i++) found |= strcmp(k, names[i]) == 0;
    if (!found) {
      const char *near = jy_nearest_name(k, names, n);
      luaL_error(L, "part type '%s': unknown field '%s' in %s%s%s%s", tname, k, what,
                 near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    lua_pop(L, 1);
  }
}

/* The keys sys:add reads itself (lua/system.c), and `gravity`, which the functions' p holds
 * beside the parameters: none may name a parameter, or sys:add could not tell them apart. */
static const char *const reserved_keys[] = {"init", "vel", "guess", "gravity"};

static void check_not_reserved(lua_State *L, const LpType *lt, const char *name) {
  for (size_t i = 0; i < sizeof reserved_keys / sizeof reserved_keys[0]; i++)
    if (strcmp(name, reserved_keys[i]) == 0)
      luaL_error(L,
                 "part type '%s': '%s' cannot be a parameter name: it is reserved (sys:add reads "
                 "init, vel and guess as initial-value tables; p.gravity is the gravity field)",
                 lt->name, name);
}

/* A parameter may not share a name with a terminal: sys:add reads `<terminal> = Terminal` in
 * the same table as the parameters. */
static void check_params_not_terminals(lua_State *L, const LpType *lt) {
  for (int i = 0; i < lt->nparams; i++)
    for (int k = 0; k < lt->nterm; k++)
      if (strcmp(lt->params[i].name, lt->term[k].name) == 0)
        luaL_error(L,
                   "part type '%s': '%s' names both a parameter and a terminal; rename one "
                   "(sys:add reads both from one table: %s = number sets the parameter, %s = "
                   "Terminal glues the terminal)",
                   lt->name, lt->term[k].name, lt->term[k].name, lt->term[k].name);
}

static void parse_params(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"name", "default", "unit", "doc", "domain"};
  static const char *const domains[] = {"real", "positive", "nonnegative", "dimension", "bound"};
  if (lua_getfield(L, 1, "params") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE)
    luaL_error(L, "part type '%s': params must be a list of tables", lt->name);
  int idx = lua_gettop(L), np = (int)lua_rawlen(L, idx);
  lt->params = (jyParamSpec *)calloc((size_t)(np > 0 ? np : 1), sizeof *lt->params);
  if (!lt->params) luaL_error(L, "out of memory registering a Lua part type");
  for (int i = 0; i < np; i++) {
    if (lua_rawgeti(L, idx, i + 1) != LUA_TTABLE)
      luaL_error(L, "part type '%s': params[%d] must be a table {name=, default=, unit=, doc=}",
                 lt->name, i + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "a parameter", keys, 5, lt->name);
    const char *name = opt_string(L, e, "name", "params[i]", lt);
    if (!is_identifier(name))
      luaL_error(L, "part type '%s': params[%d] needs a name (an identifier)", lt->name, i + 1);
    check_not_reserved(L, lt, name);
    for (int j = 0; j < i; j++)
      if (strcmp(lt->params[j].name, name) == 0)
        luaL_error(L, "part type '%s': parameter '%s' is listed twice", lt->name, name);
    lua_getfield(L, e, "default");
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "part type '%s': parameter '%s' needs a numeric default, got %s", lt->name,
                 name, luaL_typename(L, -1));
    double def = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    const char *unit = opt_string(L, e, "unit", name, lt);
    if (!unit)
      luaL_error(L, "part type '%s': parameter '%s' needs a unit (\"1\" when dimensionless)",
                 lt->name, name);
    const char *doc = opt_string(L, e, "doc", name, lt);
    const char *dom = opt_string(L, e, "domain", name, lt);
    jyParamDomain d = JY_PARAM_REAL;
    if (dom) {
      int which = -1;
      for (int k = 0; k < (int)(sizeof domains / sizeof domains[0]); k++)
        if (strcmp(dom, domains[k]) == 0) which = k;
      if (which < 0)
        luaL_error(L,
                   "part type '%s': parameter '%s' has domain '%s' (valid: real, positive, "
                   "nonnegative, dimension, bound)",
                   lt->name, name, dom);
      d = (jyParamDomain)which;
    }
    char why[256];
    if (jy_param_check(&(jyParamSpec){name, def, d, unit, ""}, def, why, sizeof why) != 0)
      luaL_error(L, "part type '%s': the default of parameter '%s' is outside its domain '%s': %s",
                 lt->name, name, dom ? dom : "real", why);
    lt->params[i].name = dup(L, name);
    lt->nparams = i + 1;
    lt->params[i].unit = dup(L, unit);
    lt->params[i].doc = dup(L, doc ? doc : "");
    lt->params[i].default_value = def;
    lt->params[i].domain = d;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static void parse_coords(lua_State *L, LpType *lt) {
  if (lua_getfield(L, 1, "coords") != LUA_TTABLE)
    luaL_error(L, "part type '%s': coords must be a list of coordinate names, got %s", lt->name,
               luaL_typename(L, -1));
  int idx = lua_gettop(L), n = (int)lua_rawlen(L, idx);
  if (n < 1 || n > JY_PART_MAX_COORDS)
    luaL_error(L,
               "part type '%s': coords must list 1 to %d names, got %d (" JYL_PART_LIMIT_WHY
               "; build a larger mechanism from several parts glued together)",
               lt->name, JY_PART_MAX_COORDS, n);
  lt->coord_names = (char **)calloc((size_t)n, sizeof *lt->coord_names);
  lt->coord_defaults = (double *)calloc((size_t)n, sizeof *lt->coord_defaults);
  if (!lt->coord_names || !lt->coord_defaults)
    luaL_error(L, "out of memory registering a Lua part type");
  for (int i = 0; i < n; i++) {
    const char *name = NULL;
    double def = 0.0;
    int t = lua_rawgeti(L, idx, i + 1);
    if (t == LUA_TSTRING) {
      name = lua_tostring(L, -1);
    } else if (t == LUA_TTABLE) {
      static const char *const keys[] = {"name", "default"};
      check_keys(L, -1, "a coordinate", keys, 2, lt->name);
      name = opt_string(L, lua_gettop(L), "name", "coords[i]", lt);
      lua_getfield(L, -1, "default");
      if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "part type '%s': the default of coordinate '%s' must be a number", lt->name,
                   name ? name : "?");
      def = (double)lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    if (!is_identifier(name))
      luaL_error(L,
                 "part type '%s': coords[%d] must be a name (an identifier) or "
                 "{name=, default=}",
                 lt->name, i + 1);
    if (coord_index(lt, name) >= 0)
      luaL_error(L, "part type '%s': coordinate '%s' is listed twice", lt->name, name);
    lt->coord_names[i] = dup(L, name);
    lt->coord_defaults[i] = def;
    lt->n = i + 1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* One entry of a list-or-map field of the definition: the entry at e, number i + 1. */
typedef void (*EntryParser)(lua_State *L, LpType *lt, int e, int i);

/* Runs parse on each entry of the list-or-map field `field` of the definition (map values
 * that are functions go to fkey); max > 0: at most max entries. */
static void parse_entries(lua_State *L, LpType *lt, const char *field, const char *fkey, int max,
                          EntryParser parse) {
  if (lua_getfield(L, 1, field) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  push_entries(L, -1, field, fkey, lt);
  int list = lua_gettop(L), count = (int)lua_rawlen(L, list);
  if (max > 0 && count > max) luaL_error(L, "part type '%s': at most %d %s", lt->name, max, field);
  for (int i = 0; i < count; i++) {
    lua_rawgeti(L, list, i + 1);
    parse(L, lt, list + 1, i);
    lua_settop(L, list);
  }
  lua_pop(L, 2);
}

/* Terminal tm given as a list of coordinates (the table at c). */
static void terminal_coords(lua_State *L, LpType *lt, LpTerminal *tm, int c, int dim) {
  int nc = (int)lua_rawlen(L, c);
  if (nc < 1 || nc > JY_TERMINAL_MAX_DIM || (dim && dim != nc))
    luaL_error(L, "part type '%s': terminal '%s' lists %d coordinates (1 to %d, = dim)", lt->name,
               tm->name, nc, JY_TERMINAL_MAX_DIM);
  tm->dim = nc;
  tm->is_block = 1;
  for (int i = 0; i < nc; i++) {
    lua_rawgeti(L, c, i + 1);
    const char *cn = lua_tostring(L, -1);
    int ci = cn ? coord_index(lt, cn) : -1;
    if (ci < 0)
      luaL_error(L, "part type '%s': terminal '%s': '%s' is no coordinate", lt->name, tm->name,
                 cn ? cn : luaL_typename(L, -1));
    tm->coords[i] = ci;
    if (i > 0 && ci != tm->coords[i - 1] + 1) tm->is_block = 0;
    lua_pop(L, 1);
  }
  tm->offset = tm->is_block ? tm->coords[0] : 0;
}

static void parse_terminal(lua_State *L, LpType *lt, int e, int k) {
  static const char *const keys[] = {"name", "dim", "fn", "coords"};
  check_keys(L, e, "a terminal", keys, 4, lt->name);
  LpTerminal *tm = &lt->term[k];
  const char *name = opt_string(L, e, "name", "terminals[i]", lt);
  if (!is_identifier(name))
    luaL_error(L, "part type '%s': terminals[%d] needs a name (an identifier)", lt->name, k + 1);
  for (int j = 0; j < k; j++)
    if (strcmp(lt->term[j].name, name) == 0)
      luaL_error(L, "part type '%s': terminal '%s' is listed twice", lt->name, name);
  tm->name = dup(L, name);
  lt->nterm = k + 1;
  lua_getfield(L, e, "dim");
  int dim = lua_isnil(L, -1) ? 0 : (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  int coords = lua_getfield(L, e, "coords");
  lua_getfield(L, e, "fn");
  if (coords == LUA_TTABLE) {
    terminal_coords(L, lt, tm, e + 1, dim);
    if (!lua_isnil(L, -1))
      luaL_error(L, "part type '%s': terminal '%s' has both coords and fn", lt->name, name);
    return;
  }
  if (coords != LUA_TNIL)
    luaL_error(L, "part type '%s': terminal '%s': coords must be a list of names", lt->name, name);
  if (dim < 1 || dim > JY_TERMINAL_MAX_DIM)
    luaL_error(L, "part type '%s': terminal '%s' needs dim = 1 to %d", lt->name, name,
               JY_TERMINAL_MAX_DIM);
  tm->dim = dim;
  if (lua_type(L, -1) != LUA_TFUNCTION)
    luaL_error(L, "part type '%s': terminal '%s' needs fn = function(q, t, p) (or coords)",
               lt->name, name);
  char role[96];
  snprintf(role, sizeof role, "terminal '%s'", name);
  take_fn(L, lt, -1, role, &tm->fn);
}

/* Row c of a constraint entry is named after it, numbered from 1 when it gave rows = k. */
static void row_name(char *out, size_t len, const char *name, int numbered, int c) {
  if (numbered)
    snprintf(out, len, "%s%d", name, c + 1);
  else
    snprintf(out, len, "%s", name);
}

/* The number of rows of the constraint entry at e (rows = k, else 1); *numbered: rows = k
 * was given (its rows are named <name>1 .. <name>k). */
static int entry_rows(lua_State *L, LpType *lt, int e, const char *name, int *numbered) {
  int count = 1;
  *numbered = 0;
  if (lua_getfield(L, e, "rows") != LUA_TNIL) {
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, -1, &isint);
    if (!isint || k < 1 || k > JY_PART_MAX_ROWS)
      luaL_error(L,
                 "part type '%s': constraint '%s': rows must be a whole number from 1 to %d (a "
                 "part's rows are at most %d: " JYL_PART_LIMIT_WHY ")",
                 lt->name, name, JY_PART_MAX_ROWS, JY_PART_MAX_ROWS);
    count = (int)k;
    *numbered = 1;
  }
  lua_pop(L, 1);
  if (lt->nrows + count > JY_PART_MAX_ROWS)
    luaL_error(L,
               "part type '%s': at most %d constraint rows, got %d (" JYL_PART_LIMIT_WHY
               "; give the rows to several parts glued together)",
               lt->name, JY_PART_MAX_ROWS, lt->nrows + count);
  return count;
}

static const char *const row_fields[] = {"phi", "psi", "accel"}; /* by jyRowKind */

/* The kind of the constraint entry at e: which one of phi, psi and accel it gives, checked
 * against its `kind` when written. */
static jyRowKind entry_kind(lua_State *L, LpType *lt, int e, const char *name) {
  static const char *const kinds[] = {"position", "velocity", "acceleration"};
  static const char *const what[] = {"phi (a position constraint)", "psi (a velocity constraint)",
                                     "accel (an acceleration-level constraint)"};
  const char *kind = opt_string(L, e, "kind", name, lt);
  int which = -1, given = 0;
  for (int f = 0; f < 3; f++) {
    lua_getfield(L, e, row_fields[f]);
    if (!lua_isnil(L, -1)) {
      which = f;
      given++;
    }
    lua_pop(L, 1);
  }
  if (given != 1)
    luaL_error(L,
               "part type '%s': constraint '%s' needs exactly one of phi = function(q, t, "
               "p) (position), psi = function(q, v, t, p) (velocity) and accel = "
               "function(q, v, t, p) (acceleration level: returns A, b)",
               lt->name, name);
  if (kind) {
    int k = -1;
    for (int f = 0; f < 3; f++)
      if (strcmp(kind, kinds[f]) == 0) k = f;
    if (k < 0)
      luaL_error(L,
                 "part type '%s': constraint '%s' has kind '%s' (valid: position, "
                 "velocity, acceleration)",
                 lt->name, name, kind);
    if (k != which)
      luaL_error(L, "part type '%s': constraint '%s' has kind '%s' but gives %s%s", lt->name, name,
                 kind, what[which],
                 k == 0 && which == 1 ? ": a position constraint must be a function "
                                        "phi(q, t) of the coordinates and time only"
                                      : "");
  }
  return (jyRowKind)which;
}

/* Adds the rows of the constraint entry at e (number r + 1 of the list). */
static void parse_constraint(lua_State *L, LpType *lt, int e, int r) {
  static const char *const keys[] = {"name", "kind", "phi", "psi", "accel", "rows"};
  check_keys(L, e, "a constraint", keys, 6, lt->name);
  const char *name = opt_string(L, e, "name", "constraints[i]", lt);
  char fallback[32];
  if (!name) {
    snprintf(fallback, sizeof fallback, "c%d", r + 1);
    name = fallback;
  }
  if (!is_identifier(name))
    luaL_error(L, "part type '%s': constraint name '%s' is no identifier", lt->name, name);
  int numbered, count = entry_rows(L, lt, e, name, &numbered);
  jyRowKind kind = entry_kind(L, lt, e, name);
  char rname[96];
  for (int c = 0; c < count; c++) {
    row_name(rname, sizeof rname, name, numbered, c);
    for (int j = 0; j < lt->nrows; j++)
      if (strcmp(lt->rows[j].name, rname) == 0)
        luaL_error(L, "part type '%s': constraint row '%s' is listed twice", lt->name, rname);
  }
  /* The first row owns the function's label; the others share it. */
  LpRow *first = &lt->rows[lt->nrows];
  first->kind = kind;
  first->count = count;
  lt->nrows++;
  char role[96];
  snprintf(role, sizeof role, "constraint '%s' %s", name, row_fields[kind]);
  lua_getfield(L, e, row_fields[kind]);
  take_fn(L, lt, -1, role, &first->fn);
  lua_pop(L, 1);
  for (int c = 0; c < count; c++) {
    LpRow *row = first + c;
    if (c > 0) {
      row->kind = first->kind;
      row->fn = first->fn;
      row->comp = c;
      lt->nrows++;
    }
    row_name(rname, sizeof rname, name, numbered, c);
    row->name = dup(L, rname);
  }
}

static void parse_output(lua_State *L, LpType *lt, int e, int o) {
  static const char *const keys[] = {"name", "fn", "angle"};
  check_keys(L, e, "an output", keys, 3, lt->name);
  const char *name = opt_string(L, e, "name", "outputs[i]", lt);
  if (!is_identifier(name))
    luaL_error(L, "part type '%s': outputs[%d] needs a name (an identifier)", lt->name, o + 1);
  lt->out[o].name = dup(L, name);
  lt->nout = o + 1;
  lua_getfield(L, e, "fn");
  if (lua_type(L, -1) != LUA_TFUNCTION)
    luaL_error(L, "part type '%s': output '%s' needs fn = function(q, v, t, p, f)", lt->name, name);
  char role[96];
  snprintf(role, sizeof role, "output '%s'", name);
  take_fn(L, lt, -1, role, &lt->out[o].fn);
  int angle = lua_getfield(L, e, "angle");
  if (angle != LUA_TNIL && angle != LUA_TBOOLEAN)
    luaL_error(L, "part type '%s': output '%s': angle must be true or false, got %s", lt->name,
               name, luaL_typename(L, -1));
  if (lua_toboolean(L, -1)) lt->angle_outputs |= 1u << o;
}

/* ---- the type's thread: argument tables and input Jets ---------------------------------- */

/* The __newindex of a read-only view of a part function's arguments (here and in
 * lua/prelude.c); a C function, so that the message's position is the script's line. */
int jyl_read_only_error(lua_State *L) {
  return luaL_error(L, "%s is read-only inside a part function",
                    lua_tostring(L, lua_upvalueindex(1)));
}

/* #x of a proxy: the length of the table behind it (a flat type's arrays). */
static int proxy_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
  return 1;
}

/* Pushes on the type's thread a read-only proxy of the table at slot real; returns its slot. */
static int make_proxy(LpType *lt, int real, const char *what) {
  lua_State *T = lt->T;
  lua_checkstack(T, 4);
  lua_newtable(T);          /* proxy */
  lua_createtable(T, 0, 3); /* its metatable */
  lua_pushvalue(T, real);
  lua_setfield(T, -2, "__index");
  lua_pushstring(T, what);
  lua_pushcclosure(T, jyl_read_only_error, 1);
  lua_setfield(T, -2, "__newindex");
  lua_pushvalue(T, real);
  lua_pushcclosure(T, proxy_len, 1);
  lua_setfield(T, -2, "__len");
  lua_pushboolean(T, 0);
  lua_setfield(T, -2, "__metatable");
  lua_setmetatable(T, -2);
  return lua_gettop(T);
}

/* A table of input Jets by coordinate name (its proxy's slot returned) for layout (N, R,
 * roff, dd); seeds: variable index of coordinate i is first + i. */
static int make_jets(LpType *lt, int N, int R, int roff, int dd, int first, Jet **jets,
                     const char *what) {
  lua_State *T = lt->T;
  lua_checkstack(T, 6);
  lua_createtable(T, 0, lt->n);
  int real = lua_gettop(T);
  for (int i = 0; i < lt->n; i++) {
    Jet *j = jyl_jet_new(T, N, R, roff, dd);
    j->g[first + i] = 1.0;
    lua_rawgeti(T, lt->s_names, i + 1);
    lua_insert(T, -2);
    lua_rawset(T, real);
    jets[i] = j;
  }
  return make_proxy(lt, real, what);
}

/* The time Jet t (variable var; along the direction (v, 1), dt = 1). */
static Jet *make_time_jet(LpType *lt, int N, int R, int roff, int dd, int var, int *slot) {
  lua_checkstack(lt->T, 2);
  Jet *j = jyl_jet_new(lt->T, N, R, roff, dd);
  j->g[var] = 1.0;
  j->d1 = dd ? 1.0 : 0.0;
  *slot = lua_gettop(lt->T);
  return j;
}

/* The argument tables on the thread: the coordinate keys, p (with p.gravity), q and v as
 * numbers, the row forces, and the law's f and a. */
static void make_argument_tables(LpType *lt) {
  lua_State *T = lt->T;
  int n = lt->n;
  lua_newtable(T);
  lt->s_names = lua_gettop(T);
  for (int i = 0; i < n; i++) {
    /* The keys of q, v and a: coordinate names, or 1 .. n for a flat type. */
    if (lt->flat)
      lua_pushinteger(T, i + 1);
    else
      lua_pushstring(T, lt->coord_names[i]);
    lua_rawseti(T, lt->s_names, i + 1);
  }
  lua_createtable(T, 0, lt->nparams + 1);
  lt->s_p = lua_gettop(T);
  lua_createtable(T, 3, 0);
  lt->s_grav = lua_gettop(T);
  make_proxy(lt, lt->s_grav, "p.gravity");
  lua_setfield(T, lt->s_p, "gravity"); /* the proxy; the table stays at s_grav */
  lua_createtable(T, 4, 0); /* p.inputs: the model's inputs by index, filled at each call */
  lt->s_inputs = lua_gettop(T);
  lua_pushvalue(T, lt->s_inputs);
  lua_setfield(T, lt->s_p, "inputs");
  lt->s_p_proxy = make_proxy(lt, lt->s_p, "p");
  lua_createtable(T, 0, n);
  lt->s_qn = lua_gettop(T);
  lt->s_qn_proxy = make_proxy(lt, lt->s_qn, "q");
  lua_createtable(T, 0, n);
  lt->s_vn = lua_gettop(T);
  lt->s_vn_proxy = make_proxy(lt, lt->s_vn, "v");
  lua_createtable(T, lt->nrows, 0);
  lt->s_rowf = lua_gettop(T);
  if (lt->law.slot || lt->nmodes > 0) {
    lua_createtable(T, lt->nrows, lt->nrows);
    lt->s_lawf = lua_gettop(T);
    lt->s_lawf_proxy = make_proxy(lt, lt->s_lawf, "f");
    lua_createtable(T, lt->flat ? n : 0, lt->flat ? 0 : n);
    lt->s_acc = lua_gettop(T);
    lt->s_acc_proxy = make_proxy(lt, lt->s_acc, "a");
  }
}

/* The input Jets of the layouts the definition uses (lua/parts/jet.c: LAG, POS, VEL). */
static void make_input_jets(LpType *lt) {
  int n = lt->n, npos = 0, nvel = 0, nfnterm = 0;
  for (int r = 0; r < lt->nrows; r++) {
    npos += lt->rows[r].kind == JY_ROW_POSITION;
    nvel += lt->rows[r].kind == JY_ROW_VELOCITY;
  }
  for (int k = 0; k < lt->nterm; k++) nfnterm += lt->term[k].fn.slot != 0;
  if (lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) {
    int N = 2 * n + 1;
    lt->s_lag_q = make_jets(lt, N, n, n, 0, 0, lt->lag_q, "q");
    lt->s_lag_v = make_jets(lt, N, n, n, 0, n, lt->lag_v, "v");
    lt->lag_t = make_time_jet(lt, N, n, n, 0, 2 * n, &lt->s_lag_t);
  }
  if (npos || nfnterm) {
    lt->s_pos_q = make_jets(lt, n + 1, 0, 0, 1, 0, lt->pos_q, "q");
    lt->pos_t = make_time_jet(lt, n + 1, 0, 0, 1, n, &lt->s_pos_t);
  }
  if (nvel) {
    int N = 2 * n + 1;
    lt->s_vel_q = make_jets(lt, N, 0, 0, 0, 0, lt->vel_q, "q");
    lt->s_vel_v = make_jets(lt, N, 0, 0, 0, n, lt->vel_v, "v");
    lt->vel_t = make_time_jet(lt, N, 0, 0, 0, 2 * n, &lt->s_vel_t);
  }
}

/* ---- joinery.part_type ------------------------------------------------------------------ */

/* A boolean field of the definition (nil: false). */
static int opt_flag(lua_State *L, LpType *lt, const char *key) {
  lua_getfield(L, 1, key);
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_error(L, "part type '%s': %s must be true or false", lt->name, key);
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

/* The dynamics: one of lagrangian, kinetic/potential, mass/force (force may add to the
 * first two), the non-ideal force and law, and the flags they imply. */
static void parse_dynamics(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"lagrangian", "kinetic",  "potential",   "mass",
                                     "force",      "nonideal", "nonideal_law"};
  LpFn *fns[] = {&lt->lagrangian, &lt->kinetic,  &lt->potential, &lt->mass,
                 &lt->force,      &lt->nonideal, &lt->law};
  for (int i = 0; i < 7; i++) {
    lua_getfield(L, 1, keys[i]);
    take_fn(L, lt, -1, keys[i], fns[i]);
    lua_pop(L, 1);
  }
  int energies = lt->kinetic.slot || lt->potential.slot;
  if ((lt->lagrangian.slot != 0) + (energies != 0) + (lt->mass.slot != 0) > 1)
    luaL_error(L,
               "part type '%s': give the dynamics one way: lagrangian, or "
               "kinetic/potential, or mass/force",
               lt->name);
  lt->mode = lt->lagrangian.slot        ? DYN_LAGRANGIAN
    : energies                          ? DYN_ENERGY
    : (lt->mass.slot || lt->force.slot) ? DYN_DIRECT
                                        : DYN_NONE;
  if (opt_flag(L, lt, "constant_mass")) lt->flags |= JY_PART_CONSTANT_MASS;
  if (opt_flag(L, lt, "follows_glue")) lt->flags |= JY_PART_FOLLOWS_GLUE;
  if (opt_flag(L, lt, "outputs_on_request")) lt->flags |= JY_PART_OUTPUTS_ON_REQUEST;
  lt->flat = opt_flag(L, lt, "flat");
  /* Q comes from L = T - V alone: the conformance suite may check it against the energy. */
  if ((lt->mode == DYN_LAGRANGIAN || lt->mode == DYN_ENERGY) && !lt->force.slot)
    lt->flags |= JY_PART_CONSERVATIVE;
}

/* Row r's index by name, or -1. */
static int row_index(const LpType *lt, const char *name) {
  for (int r = 0; r < lt->nrows; r++)
    if (strcmp(lt->rows[r].name, name) == 0) return r;
  return -1;
}

/* One entry of `modes` (the table at e): { name = "closed", rows = { "gap", ... } }. */
static void parse_mode(lua_State *L, LpType *lt, int e, int k) {
  static const char *const keys[] = {"name", "rows"};
  if (lua_type(L, e) != LUA_TTABLE)
    luaL_error(L, "part type '%s': modes[%d] must be a table { name = ..., rows = {...} }",
               lt->name, k + 1);
  check_keys(L, e, "a mode", keys, 2, lt->name);
  const char *name = opt_string(L, e, "name", "a mode", lt);
  if (!is_identifier(name))
    luaL_error(L, "part type '%s': modes[%d] needs a name (letters, digits, _)", lt->name, k + 1);
  for (int j = 0; j < k; j++)
    if (strcmp(lt->mode_names[j], name) == 0)
      luaL_error(L, "part type '%s': two modes are named '%s'", lt->name, name);
  lt->mode_names[k] = dup(L, name);
  lua_getfield(L, e, "rows");
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TTABLE)
    luaL_error(L, "part type '%s': mode '%s': rows must be a list of row names", lt->name, name);
  int nr = lua_isnil(L, -1) ? 0 : (int)lua_rawlen(L, -1);
  for (int i = 0; i < nr; i++) {
    lua_rawgeti(L, -1, i + 1);
    const char *rn = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int r = rn ? row_index(lt, rn) : -1;
    if (r < 0)
      luaL_error(L, "part type '%s': mode '%s': '%s' is not one of its constraint rows", lt->name,
                 name, rn ? rn : luaL_typename(L, -1));
    lt->mode_rows[k] |= 1ull << r;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The modes and their functions (lua/parts/part_modes.c calls them):
 *   modes = { { name = "open", rows = {} }, { name = "closed", rows = { "gap" } } },
 *   nguards = 1, guards = function(q, v, t, p, f, a, mode) return { g } end,
 *   transition = function(q, v, t, p, f, guard, direction, mode) return "closed", { gap = e } end,
 *   admissible = function(q, v, t, p, f, a, mode) return nil or "open" end,
 *   initial_mode = function(q, v, t, p) return "closed" end.
 * A simulation starts in the first mode unless initial_mode names another. */
static void parse_modes(lua_State *L, LpType *lt) {
  static const char *const keys[] = {"guards", "transition", "admissible", "initial_mode"};
  LpFn *fns[] = {&lt->guards, &lt->transition, &lt->admissible, &lt->initial_mode};
  for (int i = 0; i < 4; i++) {
    lua_getfield(L, 1, keys[i]);
    take_fn(L, lt, -1, keys[i], fns[i]);
    lua_pop(L, 1);
  }
  lua_getfield(L, 1, "nguards");
  int isnum = 0;
  lua_Integer ng = lua_tointegerx(L, -1, &isnum);
  if (!lua_isnil(L, -1) && (!isnum || ng < 0 || ng > JY_PART_MAX_GUARDS))
    luaL_error(L, "part type '%s': nguards must be a whole number from 0 to %d", lt->name,
               JY_PART_MAX_GUARDS);
  lt->nguards = (int)ng;
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "modes") == LUA_TNIL) {
    lua_pop(L, 1);
    if (lt->nguards || lt->guards.slot || lt->transition.slot || lt->admissible.slot ||
        lt->initial_mode.slot)
      luaL_error(L, "part type '%s': guards, transition, admissible and initial_mode need modes",
                 lt->name);
    return;
  }
  int list = lua_gettop(L), count = lua_istable(L, list) ? (int)lua_rawlen(L, list) : 0;
  if (count < 1)
    luaL_error(L, "part type '%s': modes must be a list of { name = ..., rows = {...} }", lt->name);
  if ((lt->nguards > 0) != (lt->guards.slot != 0) || (lt->nguards > 0 && !lt->transition.slot))
    luaL_error(L,
               "part type '%s': a part with modes gives nguards > 0 with guards and transition "
               "functions (a guard's zero crossing is where its mode may change)",
               lt->name);
  lt->mode_names = (char **)calloc((size_t)count, sizeof *lt->mode_names);
  lt->mode_rows = (unsigned long long *)calloc((size_t)count, sizeof *lt->mode_rows);
  if (!lt->mode_names || !lt->mode_rows) luaL_error(L, "out of memory registering a part type");
  lt->nmodes = count;
  for (int k = 0; k < count; k++) {
    lua_rawgeti(L, list, k + 1);
    parse_mode(L, lt, lua_gettop(L), k);
    lua_settop(L, list);
  }
  lua_pop(L, 1);
}

/* A new record for the definition at 1, guarded at 2 (freed if an error unwinds), with its
 * name, doc and thread (at 3; the message handler and the Jet metatable on its stack). */
static LpType *new_record(lua_State *L, jyEnv *env) {
  static const char *const keys[] = {
    "name",       "doc",           "params",       "coords",
    "terminals",  "lagrangian",    "kinetic",      "potential",
    "mass",       "force",         "constraints",  "nonideal",
    "outputs",    "constant_mass", "nonideal_law", "flat",
    "modes",      "nguards",       "guards",       "transition",
    "admissible", "initial_mode",  "follows_glue", "outputs_on_request"};
  LpType **guard = (LpType **)lua_newuserdatauv(L, sizeof *guard, 0); /* 2 */
  *guard = NULL;
  luaL_setmetatable(L, LP_GUARD);
  LpType *lt = (LpType *)calloc(1, sizeof *lt);
  if (!lt) luaL_error(L, "out of memory registering a Lua part type");
  *guard = lt;
  lt->ref = LUA_NOREF;
  lt->owner = pthread_self();
  const char *name = opt_string(L, 1, "name", "the definition", NULL);
  if (!is_identifier(name))
    luaL_error(L, "joinery.part_type: name must be an identifier (letters, digits, _)");
  lt->name = dup(L, name);
  check_keys(L, 1, "the definition", keys, (int)(sizeof keys / sizeof keys[0]), name);
  if (jy_env_find_type(env, name))
    luaL_error(L, "a part type named '%s' is already registered", name);
  const char *doc = opt_string(L, 1, "doc", "the definition", lt);
  lt->doc = dup(L, doc ? doc : "");
  lt->T = lua_newthread(L); /* 3: anchored by ref once registered */
  lua_checkstack(lt->T, 16);
  jyl_push_msgh(lt->T, JYL_MSGH_LOCATE);
  lt->s_msgh = lua_gettop(lt->T);
  luaL_getmetatable(lt->T, JYL_JET);
  lt->s_jetmt = lua_gettop(lt->T);
  return lt;
}

/* Room for the parameters and gravity p was filled with, and the input Jets' pointers. */
static void alloc_inputs(lua_State *L, LpType *lt) {
  int n = lt->n;
  lt->p_last = (double *)calloc((size_t)lt->nparams + 3, sizeof(double));
  lt->lag_q = (Jet **)calloc(5 * (size_t)n, sizeof(Jet *));
  if (!lt->p_last || !lt->lag_q) luaL_error(L, "out of memory registering a part type");
  lt->lag_v = lt->lag_q + n;
  lt->pos_q = lt->lag_q + 2 * n;
  lt->vel_q = lt->lag_q + 3 * n;
  lt->vel_v = lt->lag_q + 4 * n;
}

/* joinery.part_type(def); upvalue 1 = the env userdata. */
static int l_part_type(lua_State *L) {
  jyEnv *env = jyl_env_of(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  LpType *lt = new_record(L, env);
  parse_params(L, lt);
  parse_coords(L, lt);
  alloc_inputs(L, lt);
  parse_dynamics(L, lt);
  parse_entries(L, lt, "terminals", "fn", JY_PART_MAX_TERMINALS, parse_terminal);
  check_params_not_terminals(L, lt);
  parse_entries(L, lt, "constraints", "phi", 0, parse_constraint); /* rows counted by each */
  parse_modes(L, lt);
  parse_entries(L, lt, "outputs", "fn", JY_PART_MAX_OUTPUTS, parse_output);
  make_argument_tables(lt);
  make_input_jets(lt);
  if (!lua_checkstack(lt->T, 32)) return luaL_error(L, "out of memory registering a part type");
  jyl_lp_bind_calls(lt);
  lt->hybrid = lt->nmodes > 0 ? &jyl_lp_hybrid : NULL;
  jyStatus st = jy_env_register(env, &lt->type);
  if (st != JY_OK) {
    const char *why = jy_env_error(env);
    return luaL_error(L, "%s", why && *why ? why : jy_status_text(st));
  }
  *(LpType **)lua_touserdata(L, 2) = NULL; /* the environment owns it now; release frees it */
  lua_pushvalue(L, 3);
  lt->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushstring(L, lt->name);
  return 1;
}

/* Pushes joinery.part_type bound to the environment userdata at env_idx. */
void jyl_push_part_type(lua_State *L, int env_idx) {
  lua_pushvalue(L, env_idx);
  lua_pushcclosure(L, l_part_type, 1);
}

void jyl_open_parts(lua_State *L, int env_idx) {
  env_idx = lua_absindex(L, env_idx);
  int mod = lua_gettop(L);
  if (luaL_newmetatable(L, LP_GUARD)) {
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  jyl_open_jets(L, mod);
  jyl_push_part_type(L, env_idx);
  lua_setfield(L, mod, "part_type");
  jyl_push_eval_part(L, env_idx);
  lua_setfield(L, mod, "eval_part");
}

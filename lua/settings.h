/* lua/settings.h — the run settings (jySimDef) and solver settings (jySolverDef) as the
 * script and the command line name them. Every name, kind, default, range and choice comes
 * from the engine's lists (joinery.h, JY_RUN_SETTINGS and JY_SOLVER_SETTINGS, through
 * jy_sim_setting / jy_solver_setting); this file adds only the run's output file, "out", and
 * the output selection, "columns" (jySimDef.columns, a string the number schema cannot
 * describe).
 * sys:settings, sys:compile, sys:simulate, model:simulate and model:sim read them through
 * jyl_read_settings / jyl_read_solver; `joinery run` (lua/main.c) builds its flags, its usage
 * text, its checks of a flag's value and `joinery settings` from the same schema. */
#ifndef JOINERY_LUA_SETTINGS_H
#define JOINERY_LUA_SETTINGS_H

#include <stddef.h>

#include <lua.h>

#include "joinery/joinery.h"

typedef enum jylSettingKind {
  JYL_SETTING_OUT,     /* the file a run writes (sys:simulate, model:simulate, joinery run) */
  JYL_SETTING_COLUMNS, /* the output selection, jySimDef.columns (a string, not a number) */
  JYL_SETTING_RUN,     /* a run setting: jy_sim_setting(index) */
  JYL_SETTING_SOLVER,  /* a solver setting: jy_solver_setting(index) */
} jylSettingKind;

typedef struct jylSetting {
  jylSettingKind kind;
  int index;                 /* in its list */
  const jySettingInfo *info; /* name, domain, default, ARG, doc (out has one of its own) */
} jylSetting;

/* Setting i of all a run reads, in the order --help lists them: out, columns, the run settings, the
 * solver settings. Returns 0 when i is past the last. */
int jyl_setting_at(int i, jylSetting *s);
/* The setting named name (the Lua key), or 0. */
int jyl_find_setting(const char *name, jylSetting *s);

/* The choice of setting s named name, or NULL. */
const jyChoiceInfo *jyl_find_choice(const jySettingInfo *s, const char *name);
/* The index in s->choices of the default value, or -1. */
int jyl_default_choice(const jySettingInfo *s);
/* Whether s takes a whole number (a count) or true/false (a flag). */
int jyl_setting_is_integer(const jySettingInfo *s);
/* s's default as a script writes it: "1e-11", "bdf", "true" ("" for out). */
void jyl_format_default(char *buf, size_t len, const jySettingInfo *s);

/* Applies the settings table at idx to *d, and its solver keys to *solver (NULL where the
 * model is compiled already: a solver key is then an error); *out receives "out" when
 * out != NULL (the string lives in the table). Raises on an unknown name or a bad value
 * before changing anything the caller keeps (callers pass copies). */
void jyl_read_settings(lua_State *L, int idx, jySimDef *d, jySolverDef *solver, const char **out);
/* Applies the solver settings table at idx (sys:compile's argument) to *d. */
void jyl_read_solver(lua_State *L, int idx, jySolverDef *d);
/* Sets d->columns from the value at idx: a string of comma-separated patterns or an array
 * of patterns (nil or {}: the default); the string is kept alive for the state's life. */
void jyl_read_columns(lua_State *L, int idx, jySimDef *d, const char *what);
/* Pushes a table of both kinds of settings (sys:settings()). */
void jyl_push_settings(lua_State *L, const jySimDef *d, const jySolverDef *solver);

#endif

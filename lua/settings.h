/* lua/settings.h — the run settings (jySimDef) and solver settings (jySolverDef) as the
 * script and the command line name them: every name, kind and choice written once, in
 * lua/settings.c. sys:settings, sys:compile, sys:simulate, model:simulate and model:sim read
 * them through jyl_read_settings / jyl_read_solver; `joinery run` (lua/main.c) builds its
 * flags, its usage text and its checks of a flag's value from the same table. */
#ifndef JOINERY_LUA_SETTINGS_H
#define JOINERY_LUA_SETTINGS_H

#include <lua.h>

#include "joinery/joinery.h"

/* The run settings, in the order messages list them. */
typedef enum jylSettingId {
  JYL_SET_T_START,
  JYL_SET_T_END,
  JYL_SET_DT_OUT,
  JYL_SET_RTOL,
  JYL_SET_ATOL,
  JYL_SET_ATOL_VELOCITY,
  JYL_SET_MAX_STEP,
  JYL_SET_MAX_STEPS,
  JYL_SET_BAUMGARTE_RATE,
  JYL_SET_METHOD,
  JYL_SET_FORMULATION,
  JYL_SET_DRIFT,
  JYL_SET_NEWTON,
  JYL_SET_OUT, /* last: only where a run writes a file (sys:simulate, model:simulate) */
  JYL_NUM_SETTINGS
} jylSettingId;

typedef enum jylSettingKind {
  JYL_SETTING_NUMBER,  /* a finite number */
  JYL_SETTING_INTEGER, /* a whole number */
  JYL_SETTING_CHOICE,  /* one of the names in choices */
  JYL_SETTING_PATH     /* a file name */
} jylSettingKind;

/* One value of a choice setting. */
typedef struct jylChoice {
  const char *name;  /* "bdf" */
  int value;         /* the engine's enum value (jyMethod, jyFormulation, jyDrift,
                      jyNewtonSolver) */
  const char *usage; /* what `joinery --help` adds in parentheses, or NULL */
} jylChoice;

typedef struct jylSetting {
  /* The key in sys:settings{...}; joinery run's flag is "--" + name with '-' for '_'. */
  const char *name;
  jylSettingKind kind;
  const char *what;         /* a choice setting's noun in "unknown <what> 'x'" ("drift control") */
  const jylChoice *choices; /* in the engine's enum order */
  int nchoices;
} jylSetting;

/* The run settings, indexed by jylSettingId. */
extern const jylSetting jyl_settings[JYL_NUM_SETTINGS];

/* The choice of setting s named name, or NULL. */
const jylChoice *jyl_find_choice(const jylSetting *s, const char *name);
/* The index in s->choices of the value jy_default_sim_def() gives, or -1. */
int jyl_default_choice(jylSettingId id);

/* Applies the settings table at idx to *d, and its solver keys to *solver (NULL where the
 * model is compiled already: a solver key is then an error); *out receives "out" when
 * out != NULL (the string lives in the table). Raises on an unknown name or a bad value
 * before changing anything the caller keeps (callers pass copies). */
void jyl_read_settings(lua_State *L, int idx, jySimDef *d, jySolverDef *solver, const char **out);
/* Applies the solver settings table at idx (sys:compile's argument) to *d. */
void jyl_read_solver(lua_State *L, int idx, jySolverDef *d);
/* Pushes a table of both kinds of settings (sys:settings()). */
void jyl_push_settings(lua_State *L, const jySimDef *d, const jySolverDef *solver);

#endif

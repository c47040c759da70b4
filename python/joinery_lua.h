/* python/joinery_lua.h — what the Python binding (python/joinery/) needs beyond joinery.h:
 * loading a Lua model script into a model, the way `joinery run` does, and collecting a run's
 * rows in one C buffer. Built with the Lua front end's sources (lua/) into the shared module
 * _joinery_lua.so, which the Python package opens with cffi (docs/python.md says why).
 *
 * Threads: a jypScript owns a Lua state; the model's Lua parts, channels, inputs, events and
 * controllers call into it, so one thread at a time may use the script, its model and every
 * simulation of it (python/joinery/__init__.py holds one lock per script around each call).
 * The library's own contract (joinery.h) is unchanged: another script is another state. */
#ifndef JOINERY_PYTHON_JOINERY_LUA_H
#define JOINERY_PYTHON_JOINERY_LUA_H

#include <stddef.h>

#include "joinery/joinery.h"

#if defined(__GNUC__)
#define JYP_EXPORT __attribute__((visibility("default")))
#else
#define JYP_EXPORT
/* Hands r's rows over to the caller (trimmed to nrows x ncols), who frees them with jyp_free
 * (r is left empty). */
JYP_EXPORT double *jyp_rows_take(jypRows *r);
JYP_EXPORT void jyp_free(void *p);

/* sizeof of the engine's structs the binding reads field by field (jySimStats,
 * jySettingInfo, jyChoiceInfo, jyEventSummary): the package compares them with its own
 * declarations when it opens the library, so that a changed header fails at import rather
 * than read the wrong fields. which: 0, 1, 2, 3 in that order; 0 past the last. */
JYP_EXPORT size_t jyp_sizeof(int which);

#endif

/* One setting as Python passes it: kind 0 a number (x), 1 true/false (x != 0), 2 a string
 * (text: a choice's name, "columns"'s patterns). */
typedef struct jypSetting {
  const char *name;
  int kind;
  double x;
  const char *text;
} jypSetting;

typedef struct jypScript jypScript;

/* Loads the model script at path as `joinery run` does: a fresh Lua state with the standard
 * libraries and the module "joinery", the sandbox (unless trust is non-zero; a refusal says
 * to pass trust=True), the global `arg` (arg[0] the path, arg[1..nargs] the arguments, also
 * passed to the script as `...`), the script run under the same message handler (an error
 * names file:line), which must return a system; then the settings (run and solver settings,
 * over the script's sys:settings, as joinery run's flags) and the compile. Returns NULL with
 * the message in error (at most error_len bytes with its NUL). */
JYP_EXPORT jypScript *jyp_load(const char *path, const char *const *args, int nargs, int trust,
                               const jypSetting *settings, int nsettings, char *error,
                               size_t error_len);
/* Closes the Lua state and frees the model, at once or, while simulations made by
 * jyp_sim_create are open, when the last of them is destroyed: whatever order a garbage
 * collector frees the host's objects in, a simulation never outlives its model. NULL is
 * accepted. */
JYP_EXPORT void jyp_close(jypScript *s);
JYP_EXPORT const jyModel *jyp_model(const jypScript *s);

/* jy_sim_create on the script's model, counted (a NULL return or a simulation with
 * *status != JY_OK is as there: the latter still goes to jyp_sim_destroy). */
JYP_EXPORT jySim *jyp_sim_create(jypScript *s, const jySimDef *def, jyStatus *status);
/* jy_sim_destroy, then the deferred jyp_close when this was the script's last simulation. */
JYP_EXPORT void jyp_sim_destroy(jypScript *s, jySim *sim);

/* A run definition (freed by jyp_sim_def_free): the model's settings (the script's, then
 * jyp_load's), then these run settings, checked as model:sim{...} checks them (a solver
 * setting is an error: it belongs to the compile). NULL with the message in error. */
JYP_EXPORT jySimDef *jyp_sim_def(jypScript *s, const jypSetting *settings, int nsettings,
                                 char *error, size_t error_len);
JYP_EXPORT void jyp_sim_def_free(jySimDef *d);
/* Setting i of a definition (jy_sim_setting's order), read back. */
JYP_EXPORT double jyp_sim_def_get(const jySimDef *d, int i);

/* A run's output rows, row after row (nrows x ncols doubles from data), in memory that the
 * buffer owns until jyp_rows_free. failed: 1 when memory ran out. */
typedef struct jypRows {
  double *data;
  size_t nrows, cap; /* rows held, rows room */
  int ncols;
  int failed;
} jypRows;

JYP_EXPORT jypRows *jyp_rows_new(void);
JYP_EXPORT void jyp_rows_free(jypRows *r);
/* jy_sim_run(sim) with a sink appending every row to r (emptied first). Returns the run's
 * status; out of memory for the rows stops the run with that reason. */
JYP_EXPORT jyStatus jyp_run(jySim *sim, jypRows *r);

/* Hands r's rows over to the caller (trimmed to nrows x ncols), who frees them with jyp_free
 * (r is left empty). */
JYP_EXPORT double *jyp_rows_take(jypRows *r);
JYP_EXPORT void jyp_free(void *p);

/* sizeof of the engine's structs the binding reads field by field (jySimStats,
 * jySettingInfo, jyChoiceInfo, jyEventSummary): the package compares them with its own
 * declarations when it opens the library, so that a changed header fails at import rather
 * than read the wrong fields. which: 0, 1, 2, 3 in that order; 0 past the last. */
JYP_EXPORT size_t jyp_sizeof(int which);

#endif

/* lua/binding_private.h — what the files of the binding share: lua/helpers.c (small helpers,
 * the checks of the userdata), module.c (the module, its environment), system.c (System,
 * Part, Terminal), model.c (Model), simulation.c (Sim and runs) and settings.c. The userdata blocks behind the metatables of
 * lua/binding.h are defined here; the other Lua-side files see only binding.h.
 *
 * References between objects are user values, never registry references, so unreachable
 * groups are collected: system -> env (1) and its table of part types (2), model -> env (1)
 * and the system's table (2: keeps its sys:channel functions), sim -> model (1),
 * part/terminal -> system (1). Every userdata is created before the C resource it owns, so a
 * failed allocation never leaks. */
#ifndef JOINERY_LUA_BINDING_PRIVATE_H
#define JOINERY_LUA_BINDING_PRIVATE_H

#include <lauxlib.h>
#include <lua.h>
#include <signal.h>

#include "joinery/joinery.h"

#define JYL_ENV "joinery.Env"
#define JYL_ROWS "joinery.Rows"
#define JYL_SCRATCH "joinery.Scratch"

/* The environment userdata; its block begins with the jyEnv pointer (lua/plugin.c relies
 * on that; the others use jyl_env_of). */
typedef struct LEnv {
  jyEnv *env;
} LEnv;

/* user values: 1 = env userdata, 2 = table part index + 1 -> type name. The other files
 * reach its jySystem through jyl_system_of. */
typedef struct LSystem {
  jySystem *sys;
  jySimDef def;       /* sys:settings */
  jySolverDef solver; /* sys:settings' solver keys: the base of sys:compile */
} LSystem;

/* user value 1 = system userdata */
typedef struct LPart {
  int part;
} LPart;

/* user value 1 = system userdata */
typedef struct LTerminal {
  int part, terminal;
} LTerminal;

/* user values: 1 = env userdata, 2 = the system's user value 2 */
typedef struct LModel {
  jyModel *model;
  jyEval *eval; /* made on first evaluation */
  jySimDef def; /* the system's settings when compiled */
  int nsims;    /* open sims of this model */
  int closed;   /* closed by the script; released when nsims reaches 0 */
} LModel;

/* user value 1 = model userdata */
typedef struct LSim {
  jySim *sim;
  int busy; /* inside sim:advance: the functions it calls may not close or step it */
} LSim;

/* ---- lua/module.c: helpers --------------------------------------------------------------- */

/* msg when it says something, else the status's text. */
const char *jyl_msg_or(const char *msg, jyStatus status);
/* Pushes "a, b, c". */
void jyl_push_list(lua_State *L, const char *const *names, int n);
/* Raises "unknown <what> 'name'; did you mean 'x'? (valid: a, b, c)". */
int jyl_unknown_name(lua_State *L, const char *what, const char *name, const char *const *names,
                     int n);
/* Pushes an array of n numbers. */
void jyl_push_array(lua_State *L, const double *x, int n);
/* Reads an array of exactly n numbers at argument idx. */
void jyl_read_vector(lua_State *L, int idx, int n, double *out, const char *what);
/* A scratch array of n doubles that the garbage collector frees (left on the stack). */
double *jyl_scratch(lua_State *L, size_t n);
/* The jyEnv of the env userdata in upvalue 1. */
jyEnv *jyl_upvalue_env(lua_State *L);
/* Creates metatable `name` with the metamethods meta and (when methods != NULL) an __index
 * table of methods; nothing when it exists already in this state. */
void jyl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* The userdata one file hands another. */
LSystem *jyl_check_system(lua_State *L, int idx);
/* Sets field of the table on top to an array of the model doctor's items, each {name =,
 * part =, glue =, part_b =, terminal =} with the fields the item has (lua/model.c). */
void jyl_push_check_items(lua_State *L, const jyCheckItem *items, int count, const char *field);
LModel *jyl_check_model(lua_State *L, int idx);
/* Frees the model's engine objects (its last sim is gone, or it never had one). */
void jyl_model_release(LModel *m);
/* Pushes the array of the n names fn gives; returns 1. */
typedef const char *(*jylNameFn)(const jyModel *, int);
int jyl_push_names(lua_State *L, const jyModel *model, int n, jylNameFn fn);
/* Pushes {channel name = value} of the channel values in x. */
void jyl_push_channel_table(lua_State *L, const jyModel *model, const double *x);

/* ---- lua/control.c ----------------------------------------------------------------------- */

/* Sets joinery.lqr in the module table at module_idx. */
void jyl_open_control(lua_State *L, int module_idx);

/* ---- lua/system.c ------------------------------------------------------------------------ */

/* joinery.system([{gravity = {...}}]); upvalue 1 = env userdata */
/* The prelude's host.part_param, host.glued_to and host.find_input (lua/system.c). */
int jyl_host_part_param(lua_State *L);
int jyl_host_glued_to(lua_State *L);
int jyl_host_last_glue(lua_State *L);
int jyl_host_find_input(lua_State *L);
int jyl_system_new(lua_State *L);
/* The metatables of System, Part, Terminal and the scratch system of sys:add. */
void jyl_open_system(lua_State *L);

/* ---- lua/model.c ------------------------------------------------------------------------- */

/* Compiles the system at sys_idx with the solver settings; pushes the model. */
LModel *jyl_compile_system(lua_State *L, int sys_idx, const jySolverDef *solver);
void jyl_open_model(lua_State *L);

/* ---- lua/simulation.c -------------------------------------------------------------------- */

/* Pushes a Sim of the model at model_idx (raises with the engine's message). */
LSim *jyl_new_sim(lua_State *L, int model_idx, const jySimDef *def);
/* How a run hands out its rows. */
typedef struct jylRunOpts {
  const char *out; /* the CSV file to write, or NULL */
  /* 0: the result's channel arrays hold every row; 1 (joinery run): only rows 1..3 and the
   * last (res.streamed = true), so memory stays flat however many rows go to `out`. */
  int streamed;
  /* Non-NULL: a run stops at the next output row once *stop is non-zero (the number of the
   * signal a handler caught) with the error "interrupted by SIGINT ...". */
  const volatile sig_atomic_t *stop;
  /* 1: no progress line when stderr is not a terminal (joinery run --quiet). */
  int quiet;
} jylRunOpts;

/* Whether an output path names an HDF5 file (".h5", ".hdf5"): written by jy_sim_write_hdf5,
 * any other by jy_sim_write_csv. */
int jyl_is_hdf5_path(const char *path);
/* Runs a fresh simulation of the model at model_idx and pushes the result table. */
int jyl_run_simulation(lua_State *L, int model_idx, const jySimDef *def, const jylRunOpts *opts);
/* The metatables of Sim and of the row buffer of a run. */
void jyl_open_simulation(lua_State *L);
/* joinery.read_h5 into the module table on the top of the stack (lua/result_file.c). */
void jyl_open_result_file(lua_State *L);

#endif

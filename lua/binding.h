/* lua/binding.h — the Lua 5.4 module "joinery": what its files share. The Lua API is documented
 * at the head of lua/module.c (module functions), lua/system.c (System, Part, Terminal),
 * lua/model.c (Model) and lua/simulation.c (Sim, results). Shared by the loadable module
 * (joinery.so) and the `joinery` command. */
#ifndef JOINERY_LUA_BINDING_H
#define JOINERY_LUA_BINDING_H

#include <signal.h>

#include <lua.h>

/* Metatable names (luaL_checkudata / luaL_testudata). */
#define JYL_SYSTEM "joinery.System"
#define JYL_PART "joinery.Part"
#define JYL_TERMINAL "joinery.Terminal"
#define JYL_MODEL "joinery.Model"
#define JYL_SIM "joinery.Sim"
#define JYL_HYPER "joinery.Hyper"
#define JYL_JET "joinery.Jet"

#if defined(__GNUC__)
#define JYL_EXPORT __attribute__((visibility("default")))
#else
#define JYL_EXPORT
#endif

/* Opens the module: creates this instance's environment (every built-in part type
 * registered) and leaves the module table on the stack. */
JYL_EXPORT int luaopen_joinery(lua_State *L);

/* A host's fresh state made ready for model scripts: the standard libraries opened and
 * require "joinery" preloaded (luaopen_joinery), as the joinery command does. */
JYL_EXPORT void jyl_open_libs(lua_State *L);

/* lua/sandbox.c: the sandbox for scripts the host did not write. The joinery command calls it
 * before it runs a model script unless given --trust; a host program that opens the module
 * itself (luaopen_joinery, or require "joinery" from lua5.4) gets the full Lua library unless
 * it calls this, after luaL_openlibs and before it loads the script. In place, in L's own
 * tables: load, loadfile, dofile and require load text only (no bytecode); os.execute,
 * io.popen, io.tmpfile, package.loadlib, os.remove, os.rename, os.exit, os.tmpname,
 * os.setlocale, C
 * modules (require's C searchers) and joinery.load_plugin are refused; io.open, io.output
 * and a run's "out" setting may write only the nwritable files in writable; debug keeps
 * traceback and getinfo without option "f" (the guards run the originals in their own C
 * frame, and no frame's function is handed out). Reading files stays possible; a run's
 * output may not be the script or a file it read. A refusal says "<what> is disabled
 * for model scripts; <hint>" (hint NULL: a generic one). It cannot be undone in that state,
 * and it limits neither CPU time nor memory. Returns 0. */
JYL_EXPORT int jyl_sandbox(lua_State *L, const char *const *writable, int nwritable,
                           const char *hint);

/* lua/simulation.c: every run of this state that writes a file (sys:simulate{out = ...},
 * model:simulate, joinery run) stops at its next output row once *flag is non-zero (a
 * host's signal handler sets it to the signal's number): the temporary file is removed and
 * the run raises "interrupted by SIGINT ..." (or SIGTERM). NULL removes it. The flag must
 * outlive the state. */
JYL_EXPORT void jyl_set_stop_flag(lua_State *L, const volatile sig_atomic_t *flag);

/* lua/ad.c: registers the joinery.Hyper metatable and sets field "math" (hyper-dual numbers
 * and the elementary functions on them) in the table on the top of the stack. */
void jyl_open_math(lua_State *L);
/* A Hyper v + e1 ε1 + e2 ε2 + e12 ε1ε2 pushed; value i read as one into out (v, e1, e2, e12):
 * 1 a Hyper, 0 a number (a constant), -1 neither (out unset). */
void jyl_push_hyper(lua_State *L, double v, double e1, double e2, double e12);
int jyl_to_hyper(lua_State *L, int i, double out[4]);

/* The index of input `name` of model, or a Lua error "<what>: no input ..." with the
 * nearest name (lua/simulation.c). */
struct jyModel;
int jyl_input_index(lua_State *L, const struct jyModel *model, const char *name, const char *what);

/* lua/input.c: sys:input{...} (jy_system_add_input and its signals). */
void jyl_open_input(lua_State *L);

/* lua/parts/part_type.c: sets part_type and eval_part (Lua-defined part types) in the module table
 * on the top of the stack and teaches joinery.math's functions the joinery.Jet values Lua
 * parts compute with (call after jyl_open_math). env_idx: the environment userdata. */
void jyl_open_parts(lua_State *L, int env_idx);

/* lua/parts/part_type.c: pushes joinery.part_type bound to the environment userdata at env_idx (a
 * system's user value 1), so that a type registered through it lands where the system looks. */
void jyl_push_part_type(lua_State *L, int env_idx);

/* lua/channel.c: adds sys:channel(name, fn) (user output channels computed in Lua). */
void jyl_open_channel(lua_State *L);

/* lua/event.c: adds sys:event{...} (events located by the integrator's root finding). */
void jyl_open_event(lua_State *L);

/* sys:constrain, sys:load, the body helpers: lua/prelude.h. */

/* lua/plugin.c: sets load_plugin (C plugins) and check_part (the conformance suite) in the
 * module table on the top of the stack. env_index: the module's environment userdata;
 * env_slot: where that userdata keeps its jyEnv * (a plugin's code stays loaded until
 * after the environment is destroyed). */
struct jyEnv;
void jyl_open_plugin(lua_State *L, int env_index, struct jyEnv **env_slot);

/* lua/helpers.c: the jyEnv of the environment userdata at idx (upvalue 1 of the module's
 * functions, a system's user value 1); NULL when idx holds no environment. */
struct jyEnv *jyl_env_of(lua_State *L, int idx);
/* lua/helpers.c: the jySystem of the System at idx (raises a Lua error if it is none). */
struct jySystem *jyl_system_of(lua_State *L, int idx);

#endif

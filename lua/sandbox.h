/* lua/sandbox.h — what the binding's files ask of the sandbox (lua/sandbox.c). The switch
 * itself, jyl_sandbox, is public: lua/binding.h. */
#ifndef JOINERY_LUA_SANDBOX_H
#define JOINERY_LUA_SANDBOX_H

#include <lua.h>

/* Whether jyl_sandbox has been applied to this Lua state. */
int jyl_sandboxed(lua_State *L);

/* Raises "<what> is disabled for model scripts; <how to allow it>" when the state is
 * sandboxed; returns otherwise. */
void jyl_sandbox_refuse(lua_State *L, const char *what);

/* Raises, when the state is sandboxed and path is none of the files the sandbox lets scripts
 * write, an error naming what tried (e.g. "io.open"), the path and the writable files. */
void jyl_sandbox_check_write(lua_State *L, const char *path, const char *what);

/* When the message on the top of the stack says Lua refused a binary chunk (load mode "t"),
 * replaces it with one that names the chunk, says why, and what to do instead. */
void jyl_sandbox_explain_binary(lua_State *L, const char *chunk);

/* Records that the script read the file at path (in a sandboxed state, the guards of io.open,
 * io.lines, io.input, loadfile, dofile and require do), or that path is the model script
 * itself (jyl_note_script, sandboxed or not). */
void jyl_note_input(lua_State *L, const char *path);
void jyl_note_script(lua_State *L, const char *path);

/* Raises when path is an existing regular file that is one of those inputs (the same file,
 * whatever its spelling): a run would destroy its own input by writing its rows there. */
void jyl_check_output_not_input(lua_State *L, const char *path);

#endif

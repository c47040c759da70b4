/* lua/lua_call.h — the message handler of every protected call into Lua (lua/lua_call.c). */
#ifndef JOINERY_LUA_CALL_H
#define JOINERY_LUA_CALL_H

#include <lua.h>

/* What the handler adds to the error message. */
typedef enum {
  JYL_MSGH_LOCATE,   /* the innermost script line, when the message lacks it (calls from the
                        engine into a Lua part or channel: the engine adds the rest; the
                        joinery command's script: "file:line: message" is what a model
                        writer needs) */
  JYL_MSGH_TRACEBACK /* a traceback, as lua.c does (the joinery command with --traceback) */
} jylMsghKind;

/* Pushes the message handler for lua_pcall's msgh argument. A message that is not a string
 * becomes its __tostring, else "(error object is a <type> value)", as in lua.c. */
void jyl_push_msgh(lua_State *L, jylMsghKind kind);

#endif

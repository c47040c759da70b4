/* lua/prelude.h — the module's Lua halves (the .lua files of lua/prelude/, embedded at
 * build time) and the C functions they call. */
#ifndef JOINERY_LUA_PRELUDE_H
#define JOINERY_LUA_PRELUDE_H

#include <lua.h>

/* Runs the prelude chunks once for this module instance: sys:constrain, sys:load, sys:pin,
 * sys:weld, sys:ball and body:marker/point/frame_at. module_idx: the module table; call
 * after jyl_open_parts (they register Lua part types). Errors are raised. */
void jyl_open_prelude(lua_State *L, int module_idx);

/* lua/constrain.c: installs sys:constrain, calling the Lua half impl (at impl_idx). */
void jyl_install_constrain(lua_State *L, int impl_idx);

/* lua/loads.c: quaternion_maps(sys) -> rate, torque: torque3d's maps of sys's environment
 * (rate(q0..q3, q0'..q3') -> wx, wy, wz; torque(q0..q3, tx, ty, tz) -> Q_q0 .. Q_q3). */
int jyl_quaternion_maps(lua_State *L);

#endif

/* lua/loads.c — the C half of sys:load (lua/prelude/loads.lua is the rest; docs/bodies3d.md
 * the user's guide): the quaternion maps a load on a spatial frame needs, taken from the
 * torque3d part itself (components/torque3d.c) so that there is one implementation:
 *
 *   rate(q0, q1, q2, q3, q0', q1', q2', q3') -> wx, wy, wz   w = 2 E(q) q' / |q|^2
 *   torque(q0, q1, q2, q3, tx, ty, tz) -> Q_q0 .. Q_q3       Q_q = 2 E(q)^T tau / |q|^2
 *
 * torque is torque3d's force with the torque tau; rate is its `power` output (f.x' + tau.w)
 * for the unit torques along x, y and z, which are the components of w. */
#include "binding.h"
#include "prelude.h"

#include <lauxlib.h>
#include <lua.h>

#include "joinery/joinery.h"
#include "joinery/part.h"

enum { FRAME_DIM = 7, FRAME_Q = 3, TORQUE3D_PARAMS = 6 }; /* (x, y, z, q0..q3); tx ty tz fx fy fz */

/* Upvalue 1: torque3d's jyPartType (light userdata); upvalue 2: the environment userdata
 * that owns it (kept alive by the closure). */
static const jyPartType *torque3d(lua_State *L) {
  return (const jyPartType *)lua_touserdata(L, lua_upvalueindex(1));
}

/* Arguments first .. first + 3 into the quaternion entries of the frame vector x. */
static void read_quaternion(lua_State *L, int first, double *x) {
  for (int i = 0; i < 4; i++) x[FRAME_Q + i] = luaL_checknumber(L, first + i);
}

static int torque(lua_State *L) {
  const jyPartType *type = torque3d(L);
  double p[TORQUE3D_PARAMS] = {0}, q[FRAME_DIM] = {0}, v[FRAME_DIM] = {0}, Q[FRAME_DIM] = {0};
  double gravity[3] = {0};
  char error[256] = "";
  read_quaternion(L, 1, q);
  for (int i = 0; i < 3; i++) p[i] = luaL_checknumber(L, 5 + i);
  jyPartInstance self = {type, "load", p, NULL, FRAME_DIM, 0};
  jyPartState state = {q, v, 0.0,  gravity, error, sizeof error, 0,   NULL,
                       0, 0, NULL, 0,       NULL,  NULL,         NULL};
  if (type->force(&self, &state, Q)) return luaL_error(L, "%s", error);
  for (int i = 0; i < 4; i++) lua_pushnumber(L, Q[FRAME_Q + i]);
  return 4;
}

static int rate(lua_State *L) {
  const jyPartType *type = torque3d(L);
  double q[FRAME_DIM] = {0}, v[FRAME_DIM] = {0}, gravity[3] = {0};
  char error[256] = "";
  read_quaternion(L, 1, q);
  read_quaternion(L, 5, v);
  for (int axis = 0; axis < 3; axis++) {
    double p[TORQUE3D_PARAMS] = {0}, power = 0.0;
    p[axis] = 1.0;
    jyPartInstance self = {type, "load", p, NULL, FRAME_DIM, 0};
    jyPartState state = {q, v, 0.0,  gravity, error, sizeof error, 0,   NULL,
                         0, 0, NULL, 0,       NULL,  NULL,         NULL};
    if (type->outputs(&self, &state, NULL, &power)) return luaL_error(L, "%s", error);
    lua_pushnumber(L, power);
  }
  return 3;
}

int jyl_quaternion_maps(lua_State *L) {
  luaL_checkudata(L, 1, JYL_SYSTEM);
  lua_getiuservalue(L, 1, 1); /* the environment userdata */
  const jyEnv *env = jyl_env_of(L, -1);
  const jyPartType *type = env ? jy_env_find_type(env, "torque3d") : NULL;
  if (!type || !type->force || !type->outputs)
    return luaL_error(L, "sys:load: the torque3d part type is not registered");
  for (int i = 0; i < 2; i++) {
    lua_pushlightuserdata(L, (void *)type);
    lua_pushvalue(L, -2 - i);
    lua_pushcclosure(L, i == 0 ? rate : torque, 2);
  }
  return 2;
}

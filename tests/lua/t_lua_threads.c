/* tests/lua/t_lua_threads.c — joinery.h's thread contract for Lua parts: a model with parts
 * written in Lua runs only on the thread that defined them. examples/spring_chain_lua.lua
 * (two Lua part types) is compiled in the main thread; a simulation of it created and run in
 * another thread must fail with JY_ERR_PART naming the rule, not call into the lua_State
 * (before this check it raced the main thread's state); run in the main thread, it works. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "binding.h"
#include "binding_private.h"
#include "joinery/joinery.h"
#include "tap.h"

typedef struct attempt {
  const jyModel *model;
  jyStatus status;
  char error[1024];
} attempt;

static void *simulate(void *arg) {
  attempt *a = arg;
  jySimDef def = jy_default_sim_def();
  def.t_end = 0.1;
  jySim *sim = jy_sim_create(a->model, &def, &a->status);
  if (sim && a->status == JY_OK) a->status = jy_sim_advance(sim, 0.1);
  snprintf(a->error, sizeof a->error, "%s", sim ? jy_sim_error(sim) : "no simulation");
  jy_sim_destroy(sim);
  return NULL;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  plan(3);
  lua_State *L = luaL_newstate();
  jyl_open_libs(L);
  char code[1200];
  snprintf(code, sizeof code, "return dofile('%s/examples/spring_chain_lua.lua'):compile()", root);
  if (luaL_dostring(L, code) != LUA_OK) {
    ok(0, "the example compiles: %s", lua_tostring(L, -1));
    lua_close(L);
    return done();
  }
  attempt other = {.model = jyl_check_model(L, -1)->model};
  pthread_t thread;
  ok(pthread_create(&thread, NULL, simulate, &other) == 0 && pthread_join(thread, NULL) == 0,
     "a simulation of the Lua-part model ran in another thread");
  ok(other.status == JY_ERR_PART &&
       strstr(other.error, "runs only in the thread whose Lua state defined it"),
     "... and failed with JY_ERR_PART naming the rule: %s", other.error);
  attempt own = {.model = other.model};
  simulate(&own);
  ok(own.status == JY_OK, "the same simulation in the defining thread runs: %s",
     jy_status_text(own.status));
  lua_close(L);
  return done();
}

/* The environment: allocator and part registry, owned by the caller. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int jy_protocol_supported(unsigned version) {
  return version >= JY_PART_PROTOCOL_OLDEST && version <= JY_PART_PROTOCOL_VERSION;
}

jyEnv *jy_env_create(const jyAllocator *alloc) {
  jyAllocator a = alloc ? *alloc : (jyAllocator){0};
  jyEnv *env = jy_calloc(&a, 1, sizeof *env);
  if (env) env->alloc = a;
  return env;
}

void jy_env_destroy(jyEnv *env) {
  if (!env) return;
  for (int i = env->ntypes - 1; i >= 0; i--)
    if (env->types[i]->release) env->types[i]->release(env->types[i]);
  jyAllocator a = env->alloc;
  jy_free(&a, env->types);
  jy_free(&a, env);
}

jyStatus jy_env_register(jyEnv *env, const jyPartType *type) {
  if (!env || !type || !type->name) return JY_ERR_INVALID;
  if (!jy_protocol_supported(type->version)) {
    jy_set_error(env->error,
                 "part type '%s' was built for part protocol version %u; this joinery speaks "
                 "version %u: rebuild it against this joinery's joinery/part.h",
                 type->name, type->version, (unsigned)JY_PART_PROTOCOL_VERSION);
    return JY_ERR_PROTOCOL;
  }
  if (!type->shape) {
    jy_set_error(env->error, "part type '%s' has no shape function", type->name);
    return JY_ERR_INVALID;
  }
  if (jy_param_names_check(type, env->error, sizeof env->error) != 0) return JY_ERR_INVALID;
  if (jy_env_find_type(env, type->name)) {
    jy_set_error(env->error, "a part type named '%s' is already registered", type->name);
    return JY_ERR_INVALID;
  }
  if (env->ntypes == env->cap) {
    int cap = env->cap ? 2 * env->cap : 16;
    const jyPartType **types = jy_calloc(&env->alloc, (size_t)cap, sizeof *types);
    if (!types) return JY_ERR_NOMEM;
    if (env->ntypes) memcpy(types, env->types, sizeof *types * (size_t)env->ntypes);
    jy_free(&env->alloc, env->types);
    env->types = types;
    env->cap = cap;
  }
  env->types[env->ntypes++] = type;
  return JY_OK;
}

const jyPartType *jy_env_find_type(const jyEnv *env, const char *name) {
  if (!env || !name) return NULL;
  for (int i = 0; i < env->ntypes; i++)
    if (strcmp(env->types[i]->name, name) == 0) return env->types[i];
  return NULL;
}

int jy_env_num_types(const jyEnv *env) { return env ? env->ntypes : 0; }

const jyPartType *jy_env_type(const jyEnv *env, int index) {
  return env && index >= 0 && index < env->ntypes ? env->types[index] : NULL;
}

const char *jy_env_error(const jyEnv *env) { return env ? env->error : ""; }

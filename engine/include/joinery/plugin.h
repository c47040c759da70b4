/* joinery/plugin.h — part types in a shared library, loaded at run time.
 *
 * A plugin is a shared library (built against this joinery's headers and linked with
 * libjoinery) that defines one entry point,
 *
 *   int jy_plugin_init(jyEnv *env, unsigned host_protocol_version, char *error,
 *                      size_t error_len);
 *
 * which registers its part types with jy_env_register() and returns 0, or writes one line
 * into error and returns non-zero. A plugin built with protocol version 2 or later also
 * exports the version it was built for (JY_PLUGIN_VERSION_SYMBOL; JY_PLUGIN_ENTRY defines
 * it). The host passes the version it speaks to this plugin, jy_plugin_host_version():
 * its own JY_PART_PROTOCOL_VERSION to a plugin that exports its version, which refuses a
 * host older than itself (JY_PLUGIN_ENTRY does); 1 to a plugin that exports none (built
 * for version 1, whose entry point accepts only a host that says 1), whose types then
 * register as version 1 types. jy_env_register refuses any type whose `version` the host
 * does not read (joinery/part.h: JY_PART_PROTOCOL_OLDEST .. JY_PART_PROTOCOL_VERSION).
 *
 * The part types (and everything their functions use) must stay valid until the
 * environment is destroyed: a host loads a plugin with dlopen(path, RTLD_NOW |
 * RTLD_LOCAL) and keeps it loaded until after jy_env_destroy(env) (the Lua binding's
 * joinery.load_plugin does so).
 *
 * The shortest plugin:
 *
 *   #include <joinery/plugin.h>
 *   static const jyPartType my_type = { .version = JY_PART_PROTOCOL_VERSION, ... };
 *   JY_PLUGIN_ENTRY(env, error, error_len) {
 *     return jy_plugin_register(env, &my_type, error, error_len);
 *   }
 */
#ifndef JOINERY_PLUGIN_H
#define JOINERY_PLUGIN_H

#include <stddef.h>
#include <stdio.h>

#include "joinery/joinery.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The symbol a host looks up, and its type. */
#define JY_PLUGIN_INIT_SYMBOL "jy_plugin_init"
typedef int (*jyPluginInit)(jyEnv *env, unsigned host_protocol_version, char *error,
                            size_t error_len);

/* The `const unsigned` a plugin of protocol version 2 or later exports: its version. */
#define JY_PLUGIN_VERSION_SYMBOL "jy_plugin_protocol_version"

/* The protocol version a host passes to a plugin's entry point, given what
 * dlsym(handle, JY_PLUGIN_VERSION_SYMBOL) returned: the host's own version, or 1 for a
 * plugin built before plugins exported their version (a version 1 plugin). */
static inline unsigned jy_plugin_host_version(const void *plugin_version_symbol) {
  return plugin_version_symbol ? (unsigned)JY_PART_PROTOCOL_VERSION : 1u;
}

#if defined(__GNUC__)
#define JY_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define JY_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define JY_PLUGIN_EXTERN_C extern "C"
#else
#define JY_PLUGIN_EXTERN_C
#endif

/* Registers one type; on failure copies the environment's message into error and returns
 * non-zero (so an entry point can `return jy_plugin_register(...)`). */
static inline int jy_plugin_register(jyEnv *env, const jyPartType *type, char *error,
                                     size_t error_len) {
  jyStatus status = jy_env_register(env, type);
  if (status == JY_OK) return 0;
  if (error && error_len > 0) {
    const char *msg = jy_env_error(env);
    snprintf(error, error_len, "%s", msg && *msg ? msg : jy_status_text(status));
  }
  return 1;
}

/* Defines jy_plugin_protocol_version and jy_plugin_init: it refuses a host older than the
 * protocol version the plugin was built for with a clear message, then runs the body that
 * follows, with env, error and error_len in scope under the names given. (A newer host
 * decides itself whether it still reads the plugin's types.) */
#define JY_PLUGIN_ENTRY(env, error, error_len)                                             \
  JY_PLUGIN_EXTERN_C JY_PLUGIN_EXPORT extern const unsigned jy_plugin_protocol_version;    \
  JY_PLUGIN_EXTERN_C JY_PLUGIN_EXPORT const unsigned jy_plugin_protocol_version =          \
    JY_PART_PROTOCOL_VERSION;                                                              \
  static int jy_plugin_body_(jyEnv *env, char *error, size_t error_len);                   \
  JY_PLUGIN_EXTERN_C JY_PLUGIN_EXPORT int jy_plugin_init(                                  \
    jyEnv *env, unsigned host_protocol_version, char *error, size_t error_len);            \
  JY_PLUGIN_EXTERN_C JY_PLUGIN_EXPORT int jy_plugin_init(                                  \
    jyEnv *env, unsigned host_protocol_version, char *error, size_t error_len) {           \
    if (host_protocol_version < JY_PART_PROTOCOL_VERSION) {                                \
      if (error && error_len > 0)                                                          \
        snprintf(error, error_len,                                                         \
                 "the plugin was built for part protocol version %u; this joinery speaks " \
                 "version %u: rebuild the plugin against this joinery's headers",          \
                 (unsigned)JY_PART_PROTOCOL_VERSION, host_protocol_version);               \
      return 1;                                                                            \
    }                                                                                      \
    return jy_plugin_body_(env, error, error_len);                                         \
  }                                                                                        \
  static int jy_plugin_body_(jyEnv *env, char *error, size_t error_len)

#ifdef __cplusplus
}
#endif
#endif

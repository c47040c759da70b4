/* tests/plugins/bad_version.c — a plugin whose part type claims another protocol version,
 * as one compiled against an older or newer joinery/part.h would: loading it must fail
 * with a message that names the type and both versions. */
#include <joinery/plugin.h>

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)p, (void)s, (void)error, (void)error_len;
  return 0;
}

static const jyPartType stale = {
  .version = JY_PART_PROTOCOL_VERSION + 1,
  .name = "stale_part",
  .doc = "a part type built for another protocol version",
  .shape = shape,
};

JY_PLUGIN_ENTRY(env, error, error_len) { return jy_plugin_register(env, &stale, error, error_len); }

/* tests/plugins/no_entry.c — a shared library without jy_plugin_init: loading it as a
 * plugin must fail, naming the missing entry point. */
int jy_not_a_plugin(void);
int jy_not_a_plugin(void) { return 42; }

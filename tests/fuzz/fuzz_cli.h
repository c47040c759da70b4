/* tests/fuzz/fuzz_cli.h — what the two libFuzzer harnesses share: the `joinery run` command
 * itself (lua/main.c, its main renamed jyl_cli_main) run on a script text, in a fresh Lua
 * state whose memory and instruction count are capped (fuzz_cli.c). */
#ifndef JOINERY_FUZZ_CLI_H
#define JOINERY_FUZZ_CLI_H

#include <stddef.h>

/* lua/main.c's main, compiled with -Dmain=jyl_cli_main. */
int jyl_cli_main(int argc, char **argv);
/* lua/main.c's luaL_newstate, compiled with -DluaL_newstate=jyl_fuzz_newstate. */
struct lua_State *jyl_fuzz_newstate(void);

/* Creates the scratch directory the script and its CSV go to and sends stdout to /dev/null;
 * once per process (LLVMFuzzerInitialize). */
void fuzz_cli_init(void);

/* Writes text[0..len) as <scratch>/model.lua and runs
 *   joinery run <scratch>/model.lua --out <scratch>/model.csv --t-end 0.02 --dt-out 0.01 EXTRA...
 * (the run's flags override the script's settings, so no run is long); returns its exit
 * status. The script runs sandboxed, as every `joinery run` does. */
int fuzz_cli_run(const char *text, size_t len, const char *const *extra, int nextra);

#endif

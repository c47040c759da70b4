/* tests/fuzz/fuzz_script.c — libFuzzer harness: the input bytes are a model script, run by
 * `joinery run` (the CLI's own path: sandbox, compile, simulate, CSV) with t_end, the output
 * interval and the Lua state's memory and instructions capped (fuzz_cli.c). Any crash, leak
 * or undefined behaviour the sanitizers see is a finding; an error message is not.
 * Seeds: tests/fuzz/corpus/script and examples/ (tests/fuzz/run.sh). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_cli_init();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_cli_run((const char *)data, size, NULL, 0);
  return 0;
}

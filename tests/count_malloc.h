/* tests/count_malloc.h — counts every malloc, calloc and realloc of the process (the C
 * library's are wrapped; include this in exactly one file of a test program). Under
 * AddressSanitizer, which owns malloc, nothing is wrapped and WRAP_MALLOC is 0: tests then
 * skip the process-wide count. RAW_MALLOC/RAW_REALLOC reach the real allocator. */
#ifndef JY_TESTS_COUNT_MALLOC_H
#define JY_TESTS_COUNT_MALLOC_H

#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define WRAP_MALLOC 0
#else
#define WRAP_MALLOC 1
#endif

static long process_allocations;
/* >= 0: malloc, calloc and realloc return NULL once process_allocations reaches it (the
 * allocations of libraries such as LAPACKE, which do not use the environment's allocator). */
static long process_fail_after __attribute__((unused)) = -1;
/* >= 0: the address malloc's caller returns to is written there at the first failure (a test
 * that forks learns which library's allocation failed before a crash). */
static int process_fail_fd __attribute__((unused)) = -1;

#if WRAP_MALLOC
#include <unistd.h>
#define PROCESS_FAILS() (process_fail_after >= 0 && process_allocations >= process_fail_after)
static void *process_failed(void *caller) {
  if (process_fail_fd >= 0) {
    ssize_t put = write(process_fail_fd, &caller, sizeof caller);
    (void)put;
    process_fail_fd = -1;
  }
  return NULL;
}
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t size) {
  if (PROCESS_FAILS()) return process_failed(__builtin_return_address(0));
  process_allocations++;
  return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
  if (PROCESS_FAILS()) return process_failed(__builtin_return_address(0));
  process_allocations++;
  return __libc_calloc(count, size);
}
void *realloc(void *p, size_t size) {
  if (PROCESS_FAILS()) return process_failed(__builtin_return_address(0));
  process_allocations++;
  return __libc_realloc(p, size);
}
#define RAW_MALLOC __libc_malloc
#define RAW_REALLOC __libc_realloc
#else
#define RAW_MALLOC malloc
#define RAW_REALLOC realloc
#endif

#endif

/* tests/fail_in_child.h — one failing-malloc point in a child process, so that a crash is
 * counted rather than fatal, and the crash sites inside SUNDIALS (which does not check every
 * malloc of its own: joinery cannot catch those) recorded once each. A crash inside the C
 * library (SUNDIALS freeing a vector twice after CVodeInit failed ends in free) is put on
 * the first caller outside it, so that only SUNDIALS's own code is excused. Include after
 * count_malloc.h, in one file of a test program built with _GNU_SOURCE (dladdr, REG_RIP);
 * it means something only where WRAP_MALLOC is 1. */
#ifndef JY_TESTS_FAIL_IN_CHILD_H
#define JY_TESTS_FAIL_IN_CHILD_H

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

enum { MAX_SITES = 16 };

/* Crashes inside SUNDIALS after one of its own allocations failed, each site once. */
typedef struct crash_sites {
  int n;
  char site[MAX_SITES][256];
} crash_sites;

/* The file name of the library holding code address pc (info filled), or NULL. */
static const char *code_library(void *pc, Dl_info *info) {
  if (!pc || !dladdr(pc, info) || !info->dli_fname) return NULL;
  const char *slash = strrchr(info->dli_fname, '/');
  return slash ? slash + 1 : info->dli_fname;
}

/* The function (nearest exported symbol) and library holding code address pc; 1 when the
 * library is SUNDIALS. */
static int code_site(void *pc, char *site, size_t len) {
  Dl_info info;
  const char *file = code_library(pc, &info);
  if (!file) return snprintf(site, len, "?"), 0;
  snprintf(site, len, "%s in %s", info.dli_sname ? info.dli_sname : "a static function", file);
  return strstr(file, "libsundials") != NULL;
}

/* Records a crash inside SUNDIALS after an allocation failed, each site once; 0 when the
 * crash was not in SUNDIALS's code. */
static int sundials_crash_site(void *const where[2], crash_sites *out) {
  char crash[96], alloc[96], site[256];
  if (!code_site(where[0], crash, sizeof crash)) return 0;
  code_site(where[1], alloc, sizeof alloc);
  snprintf(site, sizeof site, "%s (the failed malloc: %s)", crash, alloc);
  for (int k = 0; k < out->n; k++)
    if (strcmp(out->site[k], site) == 0) return 1;
  if (out->n < MAX_SITES) snprintf(out->site[out->n++], sizeof out->site[0], "%s", site);
  return 1;
}

enum { POINT_FINE, POINT_WRONG, POINT_NOT_REACHED };

static int in_c_library(void *pc) {
  Dl_info info;
  const char *file = code_library(pc, &info);
  return file && strncmp(file, "libc.so", 7) == 0;
}

/* The crashing instruction pc, or when it lies in the C library (free given a pointer freed
 * before), the first return address on the stack above it outside the C library: the code
 * that called it. backtrace() unwinds through the signal frame; it was warmed up before the
 * run, so it allocates nothing here. */
static void *crashing_caller(void *pc) {
  void *frames[64];
  int n = backtrace(frames, 64), k = 0;
  while (k < n && frames[k] != pc) k++; /* the frames of this handler and the signal return */
  while (k < n && in_c_library(frames[k])) k++;
  return k < n ? frames[k] : pc;
}

/* In the child: the crashing code's address goes to the pipe after malloc's caller. */
static int crash_fd = -1; /* the child's own, set once before it runs */
static void report_crash(int sig, siginfo_t *info, void *context) {
  void *pc = NULL;
#if defined(__x86_64__)
  pc = crashing_caller((void *)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP]);
#else
  (void)context;
#endif
  (void)info;
  ssize_t put = write(crash_fd, &pc, sizeof pc);
  (void)put;
  signal(sig, SIG_DFL);
  raise(sig);
}

/* What the child runs with every malloc of the process failing from allocation `fail` of
 * the run on: POINT_FINE, POINT_WRONG or POINT_NOT_REACHED (the run made fewer). */
typedef int (*failing_run)(long fail, void *ctx);

/* Runs run(fail, ctx) in a child process with the crash reporter and the failed malloc's
 * caller wired to a pipe: its POINT_* status, or -signal when it crashed; where[0] is the
 * crashing code (crashing_caller), where[1] the failed malloc's caller. */
static int fail_malloc_in_child(long fail, failing_run run, void *ctx, void *where[2]) {
  int fds[2];
  where[0] = where[1] = NULL;
  if (pipe(fds) != 0) return POINT_WRONG;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    void *warm[1];
    backtrace(warm, 1); /* loads the unwinder now, while malloc still works */
    crash_fd = fds[1];
    struct sigaction sa = {.sa_sigaction = report_crash, .sa_flags = SA_SIGINFO};
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    process_fail_fd = fds[1];
    int status = run(fail, ctx);
    fflush(stdout);
    _exit(status);
  }
  close(fds[1]);
  int wstatus = 0;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) wstatus = POINT_WRONG << 8;
  void *got[2] = {NULL, NULL};
  ssize_t n = read(fds[0], got, sizeof got);
  if (n >= (ssize_t)sizeof got[0]) where[1] = got[0];
  if (n == (ssize_t)sizeof got) where[0] = got[1];
  close(fds[0]);
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -WTERMSIG(wstatus);
}

#endif

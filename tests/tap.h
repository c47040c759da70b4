/* tests/tap.h — the Test Anything Protocol, enough for our tests.
 * plan(n); ok(cond, fmt, ...); is_near(got, want, tol, why); diag(fmt, ...); done(). */
#ifndef JY_TESTS_TAP_H
#define JY_TESTS_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static inline void plan(int n) { printf("1..%d\n", n); }

static inline void diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static inline int ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!cond) tap_failed++;
  fflush(stdout);
  return cond;
}

/* Passes when |got - want| <= tol; prints both and the difference either way. */
static inline int is_near(double got, double want, double tol, const char *why) {
  double diff = fabs(got - want);
  int good = diff <= tol; /* NaN fails */
  ok(good, "%s", why);
  printf("#   got %.17g want %.17g diff %.3g tol %.3g\n", got, want, diff, tol);
  return good;
}

/* Exit status for main: non-zero when anything failed or the plan was not met. */
static inline int done(void) { return tap_failed ? 1 : 0; }

#endif

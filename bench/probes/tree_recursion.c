/* bench/probes/tree_recursion.c — what an O(N) recursive solve over eliminated links would
 * cost on W1's pendulum-part chain. Not part of joinery: a measurement for the design.
 *
 * Every pendulum's pivot follows the bob above it (glue elimination without a depth limit:
 * no rows, the chain's angles are the state). Every quantity comes from the pendulum part's
 * own functions (terminal, mass, force) at its local state (px, py, theta), as the engine
 * calls them. Leaves to root, each part's local M, Q plus its follower's articulated inertia
 * on the bob (J^T M^ J, J^T (Q^ - M^ gamma)) is reduced to the 2 x 2 articulated inertia M^
 * and force Q^ on its own pivot by eliminating theta; root to leaves, the pivot's
 * acceleration comes from the bob above and theta'' from the theta row. Checked against the
 * dense minimal-coordinate solve M(theta) theta'' = Q (LAPACK dposv).
 *
 *   meson compile -C build tree_recursion && OPENBLAS_NUM_THREADS=1 taskset -c 1 build/bench/tree_recursion
 */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "joinery/part.h"

const jyPartType *jy_part_pendulum(void);

enum { SCRATCH = 256 }; /* bytes of part scratch each (the pendulum keeps its bob there) */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  int n;
  const jyPartType *type;
  jyPartInstance inst;
  double params[2];
  double *q, *v;     /* local states, 3 per part */
  double *jac, *gam; /* each bob terminal: J (2 x 3), gamma (2) */
  double *mt, *qt;   /* each part's M (3 x 3) and Q (3) with its follower's on the bob */
  double *acc;       /* local accelerations, 3 per part */
  unsigned char *scratch;
  double gravity[3];
  char error[128];
} Chain;

static jyPartState state_of(Chain *c, int p) {
  return (jyPartState){c->q + 3 * p,
                       c->v + 3 * p,
                       0.0,
                       c->gravity,
                       c->error,
                       sizeof c->error,
                       0,
                       c->scratch + SCRATCH * (size_t)p,
                       0,
                       0,
                       NULL,
                       0,
                       NULL,
                       NULL,
                       NULL};
}

static void recursive_accel(Chain *c, const double *th, const double *w, double *out) {
  int n = c->n;
  double bob[2] = {0, 0};       /* the bob above: the first pivot is the ground */
  for (int p = 0; p < n; p++) { /* root to leaves: local states and bob terminals */
    double *q = c->q + 3 * p, *v = c->v + 3 * p, rate[2];
    q[0] = bob[0], q[1] = bob[1], v[0] = v[1] = 0;
    if (p > 0) { /* the pivot's rate: J v of the part above */
      const double *j = c->jac + 6 * (p - 1), *vs = c->v + 3 * (p - 1);
      v[0] = j[0] * vs[0] + j[2] * vs[1] + j[4] * vs[2];
      v[1] = j[1] * vs[0] + j[3] * vs[1] + j[5] * vs[2];
    }
    q[2] = th[p], v[2] = w[p];
    jyPartState s = state_of(c, p);
    c->type->terminal(&c->inst, &s, 1, bob, c->jac + 6 * p, rate, c->gam + 2 * p);
  }
  double mhat[4] = {0}, qhat[2] = {0};
  for (int p = n - 1; p >= 0; p--) { /* leaves to root: articulated inertia on the pivot */
    double *m = c->mt + 9 * p, *f = c->qt + 3 * p;
    memset(m, 0, 9 * sizeof *m);
    memset(f, 0, 3 * sizeof *f);
    jyPartState s = state_of(c, p);
    c->type->mass(&c->inst, &s, m);
    c->type->force(&c->inst, &s, f);
    if (p < n - 1) {
      const double *j = c->jac + 6 * p, *ga = c->gam + 2 * p;
      double mj[6];
      for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++) mj[i + 2 * k] = mhat[i] * j[2 * k] + mhat[i + 2] * j[1 + 2 * k];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          m[a + 3 * b] += j[2 * a] * mj[2 * b] + j[1 + 2 * a] * mj[1 + 2 * b];
      double f0 = qhat[0] - (mhat[0] * ga[0] + mhat[2] * ga[1]);
      double f1 = qhat[1] - (mhat[1] * ga[0] + mhat[3] * ga[1]);
      for (int a = 0; a < 3; a++) f[a] += j[2 * a] * f0 + j[1 + 2 * a] * f1;
    }
    double inv = 1.0 / m[8]; /* theta eliminated */
    for (int a = 0; a < 2; a++) {
      for (int b = 0; b < 2; b++) mhat[a + 2 * b] = m[a + 3 * b] - m[a + 6] * inv * m[2 + 3 * b];
      qhat[a] = f[a] - m[a + 6] * inv * f[2];
    }
  }
  for (int p = 0; p < n; p++) { /* root to leaves: the pivot's acceleration, then theta'' */
    double *a = c->acc + 3 * p, *m = c->mt + 9 * p, *f = c->qt + 3 * p;
    if (p == 0) {
      a[0] = a[1] = 0;
    } else {
      const double *j = c->jac + 6 * (p - 1), *ga = c->gam + 2 * (p - 1),
                   *as = c->acc + 3 * (p - 1);
      a[0] = j[0] * as[0] + j[2] * as[1] + j[4] * as[2] + ga[0];
      a[1] = j[1] * as[0] + j[3] * as[1] + j[5] * as[2] + ga[1];
    }
    a[2] = (f[2] - m[2] * a[0] - m[5] * a[1]) / m[8];
    out[p] = a[2];
  }
}

/* The dense minimal-coordinate solve: bob k = sum over i <= k of (sin th_i, -cos th_i). */
static void dense_accel(int n, const double *th, const double *w, double *out) {
  double *m = calloc((size_t)n * n, sizeof *m), *f = calloc((size_t)n, sizeof *f);
  for (int k = 0; k < n; k++) {
    double gx = 0, gy = 0; /* bob k's acceleration at theta'' = 0 */
    for (int i = 0; i <= k; i++) gx -= sin(th[i]) * w[i] * w[i], gy += cos(th[i]) * w[i] * w[i];
    for (int i = 0; i <= k; i++) {
      f[i] += cos(th[i]) * -gx + sin(th[i]) * (-9.81 - gy);
      for (int j = 0; j <= k; j++) m[i + (size_t)j * n] += cos(th[i] - th[j]);
    }
  }
  LAPACKE_dposv(LAPACK_COL_MAJOR, 'U', n, 1, m, n, f, n);
  memcpy(out, f, (size_t)n * sizeof *out);
  free(m);
  free(f);
}

int main(void) {
  const int sizes[] = {10, 50, 100, 500, 1000};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    int n = sizes[si];
    Chain c = {.n = n, .type = jy_part_pendulum(), .params = {1, 1}, .gravity = {0, -9.81, 0}};
    c.inst = (jyPartInstance){c.type, "p", c.params, NULL, 3, 0};
    size_t un = (size_t)n;
    c.q = calloc(3 * un, 8), c.v = calloc(3 * un, 8), c.jac = calloc(6 * un, 8);
    c.gam = calloc(2 * un, 8), c.mt = calloc(9 * un, 8), c.qt = calloc(3 * un, 8);
    c.acc = calloc(3 * un, 8), c.scratch = calloc(SCRATCH * un, 1);
    double *th = malloc(un * 8), *w = malloc(un * 8), *fast = malloc(un * 8),
           *slow = malloc(un * 8);
    srand(1);
    for (int i = 0; i < n; i++) {
      th[i] = 6.28 * rand() / RAND_MAX;
      w[i] = 2.0 * rand() / RAND_MAX - 1;
    }
    recursive_accel(&c, th, w, fast);
    dense_accel(n, th, w, slow);
    double diff = 0, size = 0;
    for (int i = 0; i < n; i++)
      diff = fmax(diff, fabs(fast[i] - slow[i])), size = fmax(size, fabs(slow[i]));
    int reps = 2000000 / n;
    double t0 = seconds();
    for (int r = 0; r < reps; r++) {
      th[r % n] += 1e-9; /* a new state each call (the parts' scratch does not answer) */
      recursive_accel(&c, th, w, fast);
    }
    double per = (seconds() - t0) / reps;
    printf("N %5d  %8.2f us a right-hand side (%3.0f ns a link); against the dense solve %.1e\n", n,
           per * 1e6, per / n * 1e9, diff / size);
    free(c.q), free(c.v), free(c.jac), free(c.gam), free(c.mt), free(c.qt), free(c.acc);
    free(c.scratch), free(th), free(w), free(fast), free(slow);
  }
  return 0;
}

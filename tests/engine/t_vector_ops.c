/* tests/engine/t_vector_ops.c — the engine's vector kernels (engine/src/vector_ops.c) against
 * SUNDIALS' serial ones, bit for bit. The engine promises that its kernels change no number
 * of a run, only the time: each operation is run on two copies of the same data, one vector
 * with SUNDIALS' serial operations (fused ones on), one with the engine's, and the results
 * are compared with memcmp:
 *   - lengths 1, 7, 196 and 1001, data over twenty orders of magnitude and both signs;
 *   - every coefficient case the serial kernels tell apart (1, -1, a = b, a = -b, 0, others);
 *   - every aliasing the integrators use: the output a distinct vector, or the same as an
 *     input (z = x, z = y; X_0 = z in a linear combination; Y = Z in the multi operations);
 *   - the reductions (norms, dot products, minimum), whose sums must keep index order.
 * A kernel with a different case split (c (x + y) for a x + b y) or a reassociated sum
 * differs in the last bit for some of these and fails here. */
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "vector_ops.h"

#define NVEC 6

typedef struct pair {
  N_Vector ref[NVEC], mine[NVEC]; /* SUNDIALS' kernels, the engine's; the same data */
  sunindextype n;
} pair;

typedef struct tally {
  long checked, wrong;
  char first[160];
} tally;

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A value in +-[1e-10, 1e10], a few exact zeros and ones among them */
static double sample(uint64_t *state) {
  uint64_t r = splitmix(state);
  if (r % 37 == 0) return 0.0;
  if (r % 41 == 0) return 1.0;
  double u = (double)(r >> 11) / 9007199254740992.0;
  double mag = pow(10.0, -10.0 + 20.0 * u);
  return (r & 1) ? -mag : mag;
}

static void fill(pair *p, uint64_t *state) {
  for (int k = 0; k < NVEC; k++) {
    double *r = N_VGetArrayPointer(p->ref[k]), *m = N_VGetArrayPointer(p->mine[k]);
    for (sunindextype i = 0; i < p->n; i++) r[i] = m[i] = sample(state);
  }
  /* weights are positive, as error weights are */
  double *wr = N_VGetArrayPointer(p->ref[NVEC - 1]), *wm = N_VGetArrayPointer(p->mine[NVEC - 1]);
  for (sunindextype i = 0; i < p->n; i++) wr[i] = wm[i] = fabs(wr[i]) + 1e-3;
}

static void compare_vectors(tally *t, const pair *p, const char *what) {
  t->checked++;
  for (int k = 0; k < NVEC; k++) {
    if (memcmp(N_VGetArrayPointer(p->ref[k]), N_VGetArrayPointer(p->mine[k]),
               sizeof(double) * (size_t)p->n) != 0) {
      if (!t->wrong++)
        snprintf(t->first, sizeof t->first, "%s, n = %ld: vector %d differs", what, (long)p->n, k);
      return;
    }
  }
}

static void compare_values(tally *t, double ref, double mine, const char *what, long n) {
  t->checked++;
  if (memcmp(&ref, &mine, sizeof ref) != 0 && !t->wrong++)
    snprintf(t->first, sizeof t->first, "%s, n = %ld: %.17g against %.17g", what, n, mine, ref);
}

static const double coefficients[] = {1.0, -1.0, 0.5, -0.5, 2.0, 1.0 / 3.0, -1.0 / 3.0, 0.0, 3e7};
#define NCOEF ((int)(sizeof coefficients / sizeof coefficients[0]))

/* z = a x + b y with z distinct, z = x and z = y */
static void linear_sums(tally *t, pair *p, uint64_t *state) {
  for (int i = 0; i < NCOEF; i++)
    for (int j = 0; j < NCOEF; j++)
      for (int alias = 0; alias < 3; alias++) {
        double a = coefficients[i], b = coefficients[j];
        fill(p, state);
        int z = alias == 0 ? 2 : alias == 1 ? 0 : 1;
        N_VLinearSum(a, p->ref[0], b, p->ref[1], p->ref[z]);
        N_VLinearSum(a, p->mine[0], b, p->mine[1], p->mine[z]);
        compare_vectors(t, p, "N_VLinearSum");
        fill(p, state); /* a == b and a == -b with the same magnitudes */
        N_VLinearSum(a, p->ref[0], -a, p->ref[1], p->ref[z]);
        N_VLinearSum(a, p->mine[0], -a, p->mine[1], p->mine[z]);
        compare_vectors(t, p, "N_VLinearSum, a = -b");
      }
}

static void elementwise(tally *t, pair *p, uint64_t *state) {
  for (int i = 0; i < NCOEF; i++)
    for (int alias = 0; alias < 2; alias++) {
      double c = coefficients[i];
      int z = alias ? 0 : 2;
      fill(p, state);
      N_VScale(c, p->ref[0], p->ref[z]);
      N_VScale(c, p->mine[0], p->mine[z]);
      compare_vectors(t, p, "N_VScale");
      N_VAddConst(p->ref[1], c, p->ref[z]);
      N_VAddConst(p->mine[1], c, p->mine[z]);
      compare_vectors(t, p, "N_VAddConst");
      N_VCompare(fabs(c), p->ref[3], p->ref[z]);
      N_VCompare(fabs(c), p->mine[3], p->mine[z]);
      compare_vectors(t, p, "N_VCompare");
      N_VConst(c, p->ref[z]);
      N_VConst(c, p->mine[z]);
      compare_vectors(t, p, "N_VConst");
      fill(p, state);
      N_VProd(p->ref[0], p->ref[1], p->ref[z]);
      N_VProd(p->mine[0], p->mine[1], p->mine[z]);
      N_VDiv(p->ref[3], p->ref[NVEC - 1], p->ref[alias ? 3 : 4]);
      N_VDiv(p->mine[3], p->mine[NVEC - 1], p->mine[alias ? 3 : 4]);
      N_VAbs(p->ref[1], p->ref[alias ? 1 : 2]);
      N_VAbs(p->mine[1], p->mine[alias ? 1 : 2]);
      N_VInv(p->ref[NVEC - 1], p->ref[4]);
      N_VInv(p->mine[NVEC - 1], p->mine[4]);
      compare_vectors(t, p, "N_VProd, N_VDiv, N_VAbs, N_VInv");
      fill(p, state);
      sunbooleantype r = N_VInvTest(p->ref[0], p->ref[2]), m = N_VInvTest(p->mine[0], p->mine[2]);
      compare_vectors(t, p, "N_VInvTest");
      compare_values(t, r, m, "N_VInvTest's answer", (long)p->n);
    }
}

static void reductions(tally *t, pair *p, uint64_t *state) {
  for (int round = 0; round < 20; round++) {
    fill(p, state);
    long n = (long)p->n;
    N_Vector *r = p->ref, *m = p->mine;
    compare_values(t, N_VWrmsNorm(r[0], r[NVEC - 1]), N_VWrmsNorm(m[0], m[NVEC - 1]), "N_VWrmsNorm",
                   n);
    compare_values(t, N_VWL2Norm(r[1], r[NVEC - 1]), N_VWL2Norm(m[1], m[NVEC - 1]), "N_VWL2Norm",
                   n);
    compare_values(t, N_VWSqrSumLocal(r[2], r[NVEC - 1]), N_VWSqrSumLocal(m[2], m[NVEC - 1]),
                   "N_VWSqrSumLocal", n);
    compare_values(t, N_VDotProd(r[0], r[1]), N_VDotProd(m[0], m[1]), "N_VDotProd", n);
    compare_values(t, N_VMaxNorm(r[2]), N_VMaxNorm(m[2]), "N_VMaxNorm", n);
    compare_values(t, N_VMin(r[3]), N_VMin(m[3]), "N_VMin", n);
    compare_values(t, N_VL1Norm(r[4]), N_VL1Norm(m[4]), "N_VL1Norm", n);
    double dr[3], dm[3];
    N_VDotProdMulti(3, r[0], r + 1, dr);
    N_VDotProdMulti(3, m[0], m + 1, dm);
    for (int k = 0; k < 3; k++) compare_values(t, dr[k], dm[k], "N_VDotProdMulti", n);
    double nr[2], nm[2];
    N_Vector wr[2] = {r[NVEC - 1], r[NVEC - 1]}, wm[2] = {m[NVEC - 1], m[NVEC - 1]};
    N_VWrmsNormVectorArray(2, r, wr, nr);
    N_VWrmsNormVectorArray(2, m, wm, nm);
    for (int k = 0; k < 2; k++) compare_values(t, nr[k], nm[k], "N_VWrmsNormVectorArray", n);
  }
}

/* The fused operations: stages and Nordsieck updates */
static void fused(tally *t, pair *p, uint64_t *state) {
  double c[5];
  for (int nvec = 1; nvec <= 5; nvec++)
    for (int lead = 0; lead < NCOEF; lead++)
      for (int alias = 0; alias < 2; alias++) {
        fill(p, state);
        c[0] = coefficients[lead];
        for (int k = 1; k < nvec; k++) c[k] = coefficients[(lead + 3 * k) % NCOEF] + 0.25 * k;
        N_Vector *r = p->ref, *m = p->mine;
        N_Vector zr = alias ? r[0] : r[5 - 1], zm = alias ? m[0] : m[5 - 1];
        N_VLinearCombination(nvec, c, r, zr);
        N_VLinearCombination(nvec, c, m, zm);
        compare_vectors(t, p, "N_VLinearCombination");
        fill(p, state);
        if (nvec <= 2) {
          N_Vector yr[2] = {r[1], r[2]}, ym[2] = {m[1], m[2]};
          N_Vector zr2[2] = {r[3], r[4]}, zm2[2] = {m[3], m[4]};
          N_VScaleAddMulti(nvec, c, r[0], yr, alias ? yr : zr2);
          N_VScaleAddMulti(nvec, c, m[0], ym, alias ? ym : zm2);
          compare_vectors(t, p, "N_VScaleAddMulti");
          fill(p, state);
          N_VScaleVectorArray(nvec, c, yr, alias ? yr : zr2);
          N_VScaleVectorArray(nvec, c, ym, alias ? ym : zm2);
          compare_vectors(t, p, "N_VScaleVectorArray");
          fill(p, state);
          N_Vector xr[2] = {r[0], r[1]}, xm[2] = {m[0], m[1]};
          N_VLinearSumVectorArray(nvec, c[0], xr, c[nvec - 1], yr, alias ? yr : zr2);
          N_VLinearSumVectorArray(nvec, c[0], xm, c[nvec - 1], ym, alias ? ym : zm2);
          compare_vectors(t, p, "N_VLinearSumVectorArray");
          N_VConstVectorArray(nvec, c[0], zr2);
          N_VConstVectorArray(nvec, c[0], zm2);
          compare_vectors(t, p, "N_VConstVectorArray");
        }
      }
}

int main(void) {
  SUNContext ctx;
  if (SUNContext_Create(NULL, &ctx) != 0) return 1;
  const sunindextype lengths[] = {1, 7, 196, 1001};
  tally t[4] = {{0}};
  uint64_t state = 20261128;
  int made = 1, engine_ops = 1;
  for (int l = 0; l < 4; l++) {
    pair p = {.n = lengths[l]};
    for (int k = 0; k < NVEC; k++) {
      p.ref[k] = N_VNew_Serial(p.n, ctx);
      p.mine[k] = N_VNew_Serial(p.n, ctx);
      if (!p.ref[k] || !p.mine[k]) made = 0;
      if (!made) break;
      N_VEnableFusedOps_Serial(p.ref[k], SUNTRUE);
      jy_vector_use_engine_ops(p.mine[k]);
      engine_ops = engine_ops && p.mine[k]->ops->nvlinearsum != N_VLinearSum_Serial &&
        p.mine[k]->ops->nvwrmsnorm != N_VWrmsNorm_Serial &&
        p.mine[k]->ops->nvlinearcombination != N_VLinearCombination_Serial;
    }
    if (made) {
      linear_sums(&t[0], &p, &state);
      elementwise(&t[1], &p, &state);
      reductions(&t[2], &p, &state);
      fused(&t[3], &p, &state);
    }
    for (int k = 0; k < NVEC; k++) {
      if (p.ref[k]) N_VDestroy(p.ref[k]);
      if (p.mine[k]) N_VDestroy(p.mine[k]);
    }
  }
  plan(6);
  ok(made, "the vectors were made");
  /* the engine's vectors must carry the engine's kernels, or the comparisons are trivial */
  ok(engine_ops, "the engine's vectors have the engine's kernels, not SUNDIALS' serial ones");
  const char *names[4] = {"linear sums", "element-wise operations", "reductions",
                          "fused and vector-array operations"};
  for (int k = 0; k < 4; k++) {
    ok(t[k].checked > 100 && t[k].wrong == 0, "%s: %ld cases the same to the bit%s%s", names[k],
       t[k].checked, t[k].wrong ? "; first: " : "", t[k].first);
  }
  SUNContext_Free(&ctx);
  return done();
}

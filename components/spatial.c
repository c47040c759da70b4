/* components/spatial.c — quaternions, hyper-dual drivers and small 3 x 3 linear algebra for
 * the spatial parts. */
#include "spatial.h"

#include <math.h>
#include <string.h>

const char *const jy_names_frame[JY_FRAME_DIM] = {"x", "y", "z", "q0", "q1", "q2", "q3"};
const char *const jy_names_frame_a[JY_FRAME_DIM] = {"ax", "ay", "az", "aq0", "aq1", "aq2", "aq3"};
const char *const jy_names_frame_b[JY_FRAME_DIM] = {"bx", "by", "bz", "bq0", "bq1", "bq2", "bq3"};

void jy_spatial_eval(jySpatialFn f, const void *ctx, int nin, int nout, const double *q,
                     const double *v, double *value, double *jac, double *rate, double *curv) {
  jyHyper qh[JY_SPATIAL_MAX_IN], out[JY_SPATIAL_MAX_OUT];
  /* One pass with both seeds along v: value, f_q v (e1) and v^T f_qq v (e12). */
  for (int i = 0; i < nin; i++) qh[i] = jy_hd_var(q[i], v ? v[i] : 0.0, v ? v[i] : 0.0);
  f(ctx, qh, out);
  for (int k = 0; k < nout; k++) {
    if (value) value[k] = out[k].v;
    if (rate) rate[k] = out[k].e1;
    if (curv) curv[k] = out[k].e12;
  }
  if (!jac) return;
  for (int j = 0; j < nin; j++) {
    for (int i = 0; i < nin; i++) qh[i] = jy_hd_var(q[i], i == j ? 1.0 : 0.0, 0.0);
    f(ctx, qh, out);
    for (int k = 0; k < nout; k++) jac[k + j * nout] = out[k].e1;
  }
}

#define ADD jy_hd_add
#define SUB jy_hd_sub
#define MUL jy_hd_mul

void jy_hq_mul(jyHyper o[4], const jyHyper a[4], const jyHyper b[4]) {
  jyHyper r[4];
  r[0] = SUB(SUB(MUL(a[0], b[0]), MUL(a[1], b[1])), ADD(MUL(a[2], b[2]), MUL(a[3], b[3])));
  r[1] = ADD(ADD(MUL(a[0], b[1]), MUL(a[1], b[0])), SUB(MUL(a[2], b[3]), MUL(a[3], b[2])));
  r[2] = ADD(ADD(MUL(a[0], b[2]), MUL(a[2], b[0])), SUB(MUL(a[3], b[1]), MUL(a[1], b[3])));
  r[3] = ADD(ADD(MUL(a[0], b[3]), MUL(a[3], b[0])), SUB(MUL(a[1], b[2]), MUL(a[2], b[1])));
  for (int i = 0; i < 4; i++) o[i] = r[i];
}

void jy_hq_conj(jyHyper o[4], const jyHyper q[4]) {
  o[0] = q[0];
  for (int i = 1; i < 4; i++) o[i] = jy_hd_neg(q[i]);
}

jyHyper jy_hd_dot3(const jyHyper a[3], const jyHyper b[3]) {
  return ADD(ADD(MUL(a[0], b[0]), MUL(a[1], b[1])), MUL(a[2], b[2]));
}

void jy_hd_cross3(jyHyper o[3], const jyHyper a[3], const jyHyper b[3]) {
  jyHyper r[3];
  r[0] = SUB(MUL(a[1], b[2]), MUL(a[2], b[1]));
  r[1] = SUB(MUL(a[2], b[0]), MUL(a[0], b[2]));
  r[2] = SUB(MUL(a[0], b[1]), MUL(a[1], b[0]));
  for (int i = 0; i < 3; i++) o[i] = r[i];
}

void jy_hq_rotate(jyHyper o[3], const jyHyper q[4], const jyHyper r[3]) {
  const jyHyper *e = q + 1;
  jyHyper ee = jy_hd_dot3(e, e), er = jy_hd_dot3(e, r), exr[3];
  jyHyper s = SUB(MUL(q[0], q[0]), ee);
  jy_hd_cross3(exr, e, r);
  for (int i = 0; i < 3; i++)
    o[i] =
      ADD(ADD(MUL(s, r[i]), jy_hd_scale(MUL(er, e[i]), 2.0)), jy_hd_scale(MUL(q[0], exr[i]), 2.0));
}

void jy_q_rotate(double o[3], const double q[4], const double r[3]) {
  const double *e = q + 1;
  double ee = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
  double er = e[0] * r[0] + e[1] * r[1] + e[2] * r[2];
  double s = q[0] * q[0] - ee;
  double exr[3] = {e[1] * r[2] - e[2] * r[1], e[2] * r[0] - e[0] * r[2], e[0] * r[1] - e[1] * r[0]};
  for (int i = 0; i < 3; i++) o[i] = s * r[i] + 2.0 * er * e[i] + 2.0 * q[0] * exr[i];
}

void jy_q_mul(double o[4], const double a[4], const double b[4]) {
  o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  o[2] = a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3];
  o[3] = a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1];
}

/* ---- closed-form rows of two frames ---------------------------------------------------- */

static const double zero_v[JY_PAIR_NC];

void jy_pair_rotated(jyPairVec *o, const double *q, const double *v, int f, const double x[3]) {
  int c0 = f * JY_FRAME_DIM + JY_FRAME_Q;
  const double *qf = q + c0, *vf = (v ? v : zero_v) + c0, w = qf[0], *e = qf + 1;
  memset(o, 0, sizeof *o);
  jy_q_rotate(o->val, qf, x);
  /* R(q) x = B(q, q) for the symmetric bilinear B(q, p) = (w_q w_p - e_q.e_p) x + (e_q.x) e_p
   * + (e_p.x) e_q + w_q e_p x x + w_p e_q x x, so d/dq_k = 2 B(q, unit k). */
  double ex = e[0] * x[0] + e[1] * x[1] + e[2] * x[2];
  double *J = o->jac + 3 * c0;
  J[0] = 2.0 * (w * x[0] + e[1] * x[2] - e[2] * x[1]);
  J[1] = 2.0 * (w * x[1] + e[2] * x[0] - e[0] * x[2]);
  J[2] = 2.0 * (w * x[2] + e[0] * x[1] - e[1] * x[0]);
  /* unit_i x x for i = 0, 1, 2 (row-major by i) */
  const double ux[9] = {0.0, -x[2], x[1], x[2], 0.0, -x[0], -x[1], x[0], 0.0};
  for (int i = 0; i < 3; i++) {
    double *col = J + 3 * (1 + i);
    for (int r = 0; r < 3; r++)
      col[r] = 2.0 * (-e[i] * x[r] + x[i] * e[r] + w * ux[3 * i + r] + (r == i ? ex : 0.0));
  }
  for (int r = 0; r < 3; r++) {
    double s = 0.0;
    for (int k = 0; k < 4; k++) s += J[r + 3 * k] * vf[k];
    o->rate[r] = s;
  }
  jy_q_rotate(o->curv, vf, x); /* the second derivative of B(q, q) along v is 2 B(v, v) */
  for (int r = 0; r < 3; r++) o->curv[r] *= 2.0;
}

void jy_pair_point(jyPairVec *o, const double *q, const double *v, int f, const double r[3]) {
  int c0 = f * JY_FRAME_DIM;
  jy_pair_rotated(o, q, v, f, r);
  for (int i = 0; i < 3; i++) {
    o->val[i] += q[c0 + i];
    o->jac[i + 3 * (c0 + i)] = 1.0;
    if (v) o->rate[i] += v[c0 + i];
  }
}

void jy_pair_sub(jyPairVec *o, const jyPairVec *a, const jyPairVec *b) {
  for (int i = 0; i < 3; i++) {
    o->val[i] = a->val[i] - b->val[i];
    o->rate[i] = a->rate[i] - b->rate[i];
    o->curv[i] = a->curv[i] - b->curv[i];
  }
  for (int i = 0; i < 3 * JY_PAIR_NC; i++) o->jac[i] = a->jac[i] - b->jac[i];
}

void jy_pair_relative(jyPairVec *o, const double *q, const double *v, const double c[4]) {
  enum { A = JY_FRAME_Q, B = JY_FRAME_DIM + JY_FRAME_Q };
  const double *qa = q + A, *qb = q + B;
  const double *va = (v ? v : zero_v) + A, *vb = (v ? v : zero_v) + B;
  double conj_a[4] = {qa[0], -qa[1], -qa[2], -qa[3]}, p[4], t[4], u[4];
  memset(o, 0, sizeof *o);
  jy_q_mul(p, c, conj_a);
  jy_q_mul(t, p, qb);
  for (int i = 0; i < 3; i++) o->val[i] = t[1 + i];
  /* Bilinear in (q_a, q_b): each column is the product with a unit quaternion in its place. */
  for (int k = 0; k < 4; k++) {
    double unit[4] = {0.0, 0.0, 0.0, 0.0};
    unit[k] = 1.0;
    jy_q_mul(t, p, unit); /* d/dq_b,k: c q_a* unit_k */
    for (int i = 0; i < 3; i++) o->jac[i + 3 * (B + k)] = t[1 + i];
    unit[k] = k == 0 ? 1.0 : -1.0; /* unit_k* */
    jy_q_mul(u, unit, qb);
    jy_q_mul(t, c, u); /* d/dq_a,k: c unit_k* q_b */
    for (int i = 0; i < 3; i++) o->jac[i + 3 * (A + k)] = t[1 + i];
  }
  for (int i = 0; i < 3; i++) {
    double s = 0.0;
    for (int k = 0; k < 4; k++)
      s += o->jac[i + 3 * (A + k)] * va[k] + o->jac[i + 3 * (B + k)] * vb[k];
    o->rate[i] = s;
  }
  /* The second derivative of a bilinear g(q_a, q_b) along v is 2 g(v_a, v_b). */
  double conj_va[4] = {va[0], -va[1], -va[2], -va[3]};
  jy_q_mul(u, conj_va, vb);
  jy_q_mul(t, c, u);
  for (int i = 0; i < 3; i++) o->curv[i] = 2.0 * t[1 + i];
}

/* ---- value and rate alone (a step end's residual check: no Jacobian, no curvature) ---- */

void jy_vr_rotated(double val[3], double rate[3], const double *q, const double *v, int f,
                   const double x[3]) {
  int c0 = f * JY_FRAME_DIM + JY_FRAME_Q;
  const double *qf = q + c0, *vf = (v ? v : zero_v) + c0, w = qf[0], *e = qf + 1;
  const double wd = vf[0], *ed = vf + 1;
  jy_q_rotate(val, qf, x);
  /* 2 B(q, q') x, B as in jy_pair_rotated */
  double ee = e[0] * ed[0] + e[1] * ed[1] + e[2] * ed[2];
  double ex = e[0] * x[0] + e[1] * x[1] + e[2] * x[2];
  double edx = ed[0] * x[0] + ed[1] * x[1] + ed[2] * x[2];
  const double exx[3] = {e[1] * x[2] - e[2] * x[1], e[2] * x[0] - e[0] * x[2],
                         e[0] * x[1] - e[1] * x[0]};
  const double edxx[3] = {ed[1] * x[2] - ed[2] * x[1], ed[2] * x[0] - ed[0] * x[2],
                          ed[0] * x[1] - ed[1] * x[0]};
  for (int i = 0; i < 3; i++)
    rate[i] = 2.0 * ((w * wd - ee) * x[i] + ex * ed[i] + edx * e[i] + w * edxx[i] + wd * exx[i]);
}

void jy_vr_point(double val[3], double rate[3], const double *q, const double *v, int f,
                 const double r[3]) {
  int c0 = f * JY_FRAME_DIM;
  jy_vr_rotated(val, rate, q, v, f, r);
  for (int i = 0; i < 3; i++) {
    val[i] += q[c0 + i];
    if (v) rate[i] += v[c0 + i];
  }
}

void jy_vr_relative(double val[3], double rate[3], const double *q, const double *v,
                    const double c[4]) {
  enum { A = JY_FRAME_Q, B = JY_FRAME_DIM + JY_FRAME_Q };
  const double *qa = q + A, *qb = q + B;
  const double *va = (v ? v : zero_v) + A, *vb = (v ? v : zero_v) + B;
  double conj_a[4] = {qa[0], -qa[1], -qa[2], -qa[3]}, conj_va[4] = {va[0], -va[1], -va[2], -va[3]};
  double p[4], t[4], u[4], w[4];
  jy_q_mul(p, c, conj_a);
  jy_q_mul(t, p, qb);
  jy_q_mul(u, p, vb); /* bilinear: c q_a* q_b' + c q_a'* q_b */
  jy_q_mul(w, c, conj_va);
  jy_q_mul(p, w, qb);
  for (int i = 0; i < 3; i++) val[i] = t[1 + i], rate[i] = u[1 + i] + p[1 + i];
}

void jy_pair_dot(const jyPairVec *a, const jyPairVec *b, double *val, double *jac, int stride,
                 double *rate, double *curv) {
  double s = 0.0, r = 0.0, k = 0.0;
  for (int i = 0; i < 3; i++) {
    s += a->val[i] * b->val[i];
    r += a->rate[i] * b->val[i] + a->val[i] * b->rate[i];
    k += a->curv[i] * b->val[i] + 2.0 * a->rate[i] * b->rate[i] + a->val[i] * b->curv[i];
  }
  if (val) *val = s;
  if (rate) *rate = r;
  if (curv) *curv = k;
  if (!jac) return;
  for (int c = 0; c < JY_PAIR_NC; c++) {
    const double *ja = a->jac + 3 * c, *jb = b->jac + 3 * c;
    jac[c * stride] = ja[0] * b->val[0] + ja[1] * b->val[1] + ja[2] * b->val[2] +
      a->val[0] * jb[0] + a->val[1] * jb[1] + a->val[2] * jb[2];
  }
}

void jy_pair_put(const jyPairVec *a, int row, int nout, double *value, double *jac, double *rate,
                 double *curv) {
  for (int i = 0; i < 3; i++) {
    if (value) value[row + i] = a->val[i];
    if (rate) rate[row + i] = a->rate[i];
    if (curv) curv[row + i] = a->curv[i];
    if (jac)
      for (int c = 0; c < JY_PAIR_NC; c++) jac[row + i + c * nout] = a->jac[i + 3 * c];
  }
}

void jy_q_G(double G[12], const double q[4]) {
  const double g[12] = {-q[1], q[0], q[3],  -q[2], -q[2], -q[3],
                        q[0],  q[1], -q[3], q[2],  -q[1], q[0]};
  for (int i = 0; i < 12; i++) G[i] = g[i];
}

void jy_q_E(double E[12], const double q[4]) {
  const double e[12] = {-q[1], q[0],  -q[3], q[2],  -q[2], q[3],
                        q[0],  -q[1], -q[3], -q[2], q[1],  q[0]};
  for (int i = 0; i < 12; i++) E[i] = e[i];
}

int jy_spatial_basis(const double dir[3], double u[3], double s1[3], double s2[3]) {
  double len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  if (!(len > 0.0) || !isfinite(len)) return 1;
  for (int i = 0; i < 3; i++) u[i] = dir[i] / len;
  /* s1 = u x e_k, normalized, with e_k the axis u is least aligned with. */
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(u[i]) < fabs(u[k])) k = i;
  double e[3] = {0.0, 0.0, 0.0};
  e[k] = 1.0;
  double c[3] = {u[1] * e[2] - u[2] * e[1], u[2] * e[0] - u[0] * e[2], u[0] * e[1] - u[1] * e[0]};
  double cl = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  for (int i = 0; i < 3; i++) s1[i] = c[i] / cl;
  s2[0] = u[1] * s1[2] - u[2] * s1[1];
  s2[1] = u[2] * s1[0] - u[0] * s1[2];
  s2[2] = u[0] * s1[1] - u[1] * s1[0];
  return 0;
}

void jy_sym3_eig(const double a_in[9], double lambda[3]) {
  double a[9];
  for (int i = 0; i < 9; i++) a[i] = a_in[i];
  for (int sweep = 0; sweep < 64; sweep++) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-34 * diag || off == 0.0) break;
    for (int p = 0; p < 2; p++)
      for (int r = p + 1; r < 3; r++) {
        double apr = a[p * 3 + r];
        if (apr == 0.0) continue;
        double theta = (a[r * 3 + r] - a[p * 3 + p]) / (2.0 * apr);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        /* a <- R^T a R with the rotation R in the (p, r) plane */
        for (int k = 0; k < 3; k++) {
          double akp = a[k * 3 + p], akr = a[k * 3 + r];
          a[k * 3 + p] = c * akp - s * akr;
          a[k * 3 + r] = s * akp + c * akr;
        }
        for (int k = 0; k < 3; k++) {
          double apk = a[p * 3 + k], ark = a[r * 3 + k];
          a[p * 3 + k] = c * apk - s * ark;
          a[r * 3 + k] = s * apk + c * ark;
        }
      }
  }
  double l[3] = {a[0], a[4], a[8]};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (l[j] < l[i]) {
        double t = l[i];
        l[i] = l[j];
        l[j] = t;
      }
  for (int i = 0; i < 3; i++) lambda[i] = l[i];
}

/* The workloads in MuJoCo 2.2 (generalized coordinates on a tree, fixed step).
 *
 *   mujoco_driver WORKLOAD N INTEGRATOR DT T
 *     WORKLOAD    w1 | w2 | w3 | fbc (N windows) | ball (N rods) | tree
 *     INTEGRATOR  euler (semi-implicit, MuJoCo's default) | rk4
 *     DT          the fixed time step; round(T / DT) steps
 *
 * W1 is a flat URDF of continuous joints (Debian's tinyxml2 rejects MJCF nested deeper than
 * about 97 bodies), each link an inertial of 1 kg at (1,0,0) with inertia 1e-14 (the compiler
 * refuses less than 1e-15). W2: two nested slide joints with joint stiffness. W3 and the
 * chain: trees closed by equality `connect`s, stiffened (solref 0.002 1, solimp 0.9999 0.9999
 * 0.001): MuJoCo's constraints are soft, and the default ones lose energy. Contact is off;
 * the energy is computed outside the timed loop. ball and tree (bench/peers/spatial.h): nested
 * MJCF bodies with ball and hinge joints, each body's frame at its centre of mass; the chain
 * loads only to about 97 rods (the same tinyxml2 depth limit). The model goes through a file in /tmp.
 * Prints one line "result key=value ..." (see bench/peers/run.py). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spatial.h"

static void write_chain_urdf(FILE *out, int n) {
  fprintf(out, "<robot name=\"chain\"><link name=\"base\"/>\n");
  for (int i = 1; i <= n; i++) {
    char parent[16] = "base";
    if (i > 1) snprintf(parent, sizeof parent, "l%d", i - 1);
    fprintf(out,
            "<link name=\"l%d\"><inertial><origin xyz=\"1 0 0\"/><mass value=\"1\"/>"
            "<inertia ixx=\"1e-14\" iyy=\"1e-14\" izz=\"1e-14\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
            "</inertial></link>\n"
            "<joint name=\"j%d\" type=\"continuous\"><parent link=\"%s\"/><child link=\"l%d\"/>"
            "<origin xyz=\"%d 0 0\"/><axis xyz=\"0 0 1\"/></joint>\n",
            i, i, parent, i, i == 1 ? 0 : 1);
  }
  fprintf(out, "</robot>\n");
}

static void write_springs_mjcf(FILE *out) {
  fprintf(out,
          "<mujoco><option gravity=\"0 0 0\"/><worldbody>\n"
          "<body name=\"m1\"><joint name=\"x1\" type=\"slide\" axis=\"1 0 0\" stiffness=\"100\"/>"
          "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
          "<body name=\"m2\"><joint name=\"x21\" type=\"slide\" axis=\"1 0 0\" stiffness=\"50\"/>"
          "<inertial pos=\"0 0 0\" mass=\"2\" diaginertia=\"1 1 1\"/></body></body>\n"
          "</worldbody></mujoco>\n");
}

/* Rods of 1 m, 1 kg along their body's x axis, pinned at the body origin. At qpos = 0 every
 * rod lies along +x, so each coupler's tip (1,0,0) already sits on the next crank's tip. */
static void write_four_bars_mjcf(FILE *out, int windows) {
  const char *rod = "<joint type=\"hinge\" axis=\"0 0 1\"/><inertial pos=\"0.5 0 0\" mass=\"1\" "
                    "diaginertia=\"1e-6 0.0833333333333333 0.0833333333333333\"/>";
  fprintf(out, "<mujoco><option gravity=\"0 -9.81 0\"/><worldbody>\n");
  for (int i = 0; i <= windows; i++) {
    fprintf(out, "<body name=\"crank%d\" pos=\"%d 0 0\">%s", i, i, rod);
    if (i < windows) fprintf(out, "<body name=\"coupler%d\" pos=\"1 0 0\">%s</body>", i + 1, rod);
    fprintf(out, "</body>\n");
  }
  fprintf(out, "</worldbody><equality>\n");
  for (int j = 1; j <= windows; j++)
    fprintf(out,
            "<connect body1=\"coupler%d\" body2=\"crank%d\" anchor=\"1 0 0\" solref=\"0.002 1\" "
            "solimp=\"0.9999 0.9999 0.001\"/>\n",
            j, j);
  fprintf(out, "</equality></mujoco>\n");
}

static void write_ball_chain_mjcf(FILE *out, int n) {
  double I[3];
  spatial_rod_inertia(I);
  fprintf(out, "<mujoco><option gravity=\"0 0 -9.81\"/><worldbody>\n");
  for (int i = 0; i < n; i++)
    fprintf(out,
            "<body name=\"rod%d\" pos=\"0 0 %.17g\"><joint type=\"ball\" pos=\"0 0 %.17g\"/>"
            "<inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n",
            i + 1, i == 0 ? -SPATIAL_ROD_L / 2 : -SPATIAL_ROD_L, SPATIAL_ROD_L / 2, SPATIAL_ROD_M,
            I[0], I[1], I[2]);
  for (int i = 0; i < n; i++) fprintf(out, "</body>");
  fprintf(out, "\n</worldbody></mujoco>\n");
}

static void write_tree_body(FILE *out, const struct tree_body *b, int n, int k) {
  const struct tree_body *t = &b[k];
  const double *pc = t->parent < 0 ? (const double[3]){0, 0, 1.0} : b[t->parent].c;
  double I[3];
  tree_inertia(t, I);
  /* the ball's point is the origin: tree.lua's shift of -1 m in z */
  fprintf(out, "<body name=\"%s\" pos=\"%.17g %.17g %.17g\">", t->name, t->c[0] - pc[0],
          t->c[1] - pc[1], t->c[2] - pc[2]);
  if (t->parent < 0)
    fprintf(out, "<joint type=\"ball\" pos=\"%.17g %.17g %.17g\"/>", t->p[0] - t->c[0],
            t->p[1] - t->c[1], t->p[2] - t->c[2]);
  else
    fprintf(out, "<joint type=\"hinge\" pos=\"%.17g %.17g %.17g\" axis=\"%g %g %g\"/>",
            t->p[0] - t->c[0], t->p[1] - t->c[1], t->p[2] - t->c[2], t->n[0], t->n[1], t->n[2]);
  fprintf(out, "<inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n", t->m,
          I[0], I[1], I[2]);
  for (int j = 0; j < n; j++)
    if (b[j].parent == k) write_tree_body(out, b, n, j);
  fprintf(out, "</body>\n");
}

static void write_tree_mjcf(FILE *out) {
  struct tree_body b[TREE_BODIES];
  int n = tree_bodies(b);
  fprintf(out, "<mujoco><option gravity=\"0 0 -9.81\"/><worldbody>\n");
  write_tree_body(out, b, n, 0);
  fprintf(out, "</worldbody></mujoco>\n");
}

static void initial_state(const mjModel *m, mjData *d, const char *w, int windows) {
  if (strcmp(w, "ball") == 0) {
    for (int j = 0; j < m->njnt; j++) /* one ball a body, in chain order */
      if (j == 0)
        spatial_q1(d->qpos + m->jnt_qposadr[j]);
      else
        spatial_qrel(d->qpos + m->jnt_qposadr[j]);
  } else if (strcmp(w, "tree") == 0) {
    /* every body at the identity, at rest: qpos0 */
  } else if (strcmp(w, "w2") == 0) {
    d->qpos[0] = 0.1;
    d->qpos[1] = -0.1; /* x2 = 0: the second slide is relative to the first */
  } else if (strcmp(w, "w1") != 0) {
    char name[32];
    for (int i = 0; i <= windows; i++) {
      snprintf(name, sizeof name, "crank%d", i);
      int body = mj_name2id(m, mjOBJ_BODY, name), jnt = m->body_jntadr[body];
      d->qpos[m->jnt_qposadr[jnt]] = mjPI / 2;
      d->qvel[m->jnt_dofadr[jnt]] = -1;
      if (i == 0) continue;
      snprintf(name, sizeof name, "coupler%d", i);
      body = mj_name2id(m, mjOBJ_BODY, name), jnt = m->body_jntadr[body];
      d->qpos[m->jnt_qposadr[jnt]] = -mjPI / 2; /* level */
      d->qvel[m->jnt_dofadr[jnt]] = 1;
    }
  }
}

/* Instants at which each driver measures the energy (run.py's DRIFT_SAMPLES). */
#define DRIFT_SAMPLES 20

static double energy(const mjModel *m, mjData *d) {
  mj_forward(m, d);
  return d->energy[0] + d->energy[1];
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: mujoco_driver w1|w2|w3|fbc|ball|tree N euler|rk4 DT T\n");
    return 2;
  }
  const char *w = argv[1];
  int n = atoi(argv[2]), rk4 = strcmp(argv[3], "rk4") == 0;
  double dt = atof(argv[4]), t_end = atof(argv[5]);
  int windows = strcmp(w, "w3") == 0 ? 1 : n;
  char path[64];
  snprintf(path, sizeof path, "/tmp/peers-mujoco-%ld.%s", (long)getpid(),
           strcmp(w, "w1") == 0 ? "urdf" : "xml");
  FILE *out = fopen(path, "w");
  if (!out) return 2;
  if (strcmp(w, "w1") == 0)
    write_chain_urdf(out, n);
  else if (strcmp(w, "w2") == 0)
    write_springs_mjcf(out);
  else if (strcmp(w, "ball") == 0)
    write_ball_chain_mjcf(out, n);
  else if (strcmp(w, "tree") == 0)
    write_tree_mjcf(out);
  else
    write_four_bars_mjcf(out, windows);
  fclose(out);
  char error[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, error, sizeof error);
  remove(path);
  if (!m) {
    printf("result failed=1 reason=%s\n", error);
    return 0;
  }
  m->opt.disableflags |= mjDSBL_CONTACT;
  m->opt.integrator = rk4 ? mjINT_RK4 : mjINT_EULER;
  m->opt.timestep = dt;
  if (strcmp(w, "w1") == 0) m->opt.gravity[2] = 0, m->opt.gravity[1] = -9.81;
  mjData *d = mj_makeData(m);
  initial_state(m, d, w, windows);
  m->opt.enableflags |= mjENBL_ENERGY;
  double e0 = energy(m, d);
  m->opt.enableflags &= ~mjENBL_ENERGY;
  long steps = lround(t_end / dt);
  double seconds = 0, drift = 0;
  /* The energy at DRIFT_SAMPLES instants, outside the timing (mj_forward with the energy
   * flag costs a step of its own); its largest departure from E0 is the drift measure. */
  long done = 0;
  for (int k = 1; k <= DRIFT_SAMPLES; k++) {
    long until = steps * k / DRIFT_SAMPLES;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (; done < until; done++) mj_step(m, d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    seconds += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    m->opt.enableflags |= mjENBL_ENERGY;
    drift = fmax(drift, fabs(energy(m, d) - e0));
    m->opt.enableflags &= ~mjENBL_ENERGY;
  }
  m->opt.enableflags |= mjENBL_ENERGY;
  double e1 = energy(m, d);
  printf("result time=%.6g steps=%ld rhs=%ld e0=%.17g e1=%.17g drift=%.17g", seconds, steps,
         steps * (rk4 ? 4 : 1), e0, e1, drift);
  if (strcmp(w, "w1") == 0) {
    const double *tip = d->xipos + 3 * (m->nbody - 1);
    printf(" tip_x=%.17g tip_y=%.17g nq=%d", tip[0], tip[1], m->nq);
  } else if (strcmp(w, "ball") == 0 || strcmp(w, "tree") == 0) {
    /* the last body's centre of mass: the chain's last rod, the tree's right foot */
    const double *tip = d->xipos + 3 * (m->nbody - 1);
    printf(" tip_x=%.17g tip_y=%.17g tip_z=%.17g", tip[0], tip[1], tip[2]);
  } else if (strcmp(w, "w2") == 0) {
    printf(" x1=%.17g x2=%.17g", d->qpos[0], d->qpos[0] + d->qpos[1]);
  } else {
    printf(" theta=%.17g",
           d->qpos[m->jnt_qposadr[m->body_jntadr[mj_name2id(m, mjOBJ_BODY, "crank0")]]]);
  }
  printf("\n");
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}

/* The spatial workloads' data, shared by mujoco_driver.c and simbody_driver.cpp so that both
 * build the model of bench/peers/models/ball_chain.lua and bench/joint_rows/tree.lua.
 *
 * Ball chain ("ball", N rods): uniform rods of SPATIAL_ROD_M kg, SPATIAL_ROD_L m and radius
 * SPATIAL_ROD_R m along their own z axis, each body frame at its centre of mass; rod 1's
 * top end on a ball joint at the origin, rod k's top on rod k-1's bottom end. Start at rest:
 * rod 1 turned by SPATIAL_Q1 from the hanging pose, every next rod by SPATIAL_QREL relative to
 * the one before (a helix). g = 9.81 along -z.
 *
 * Tree ("tree"): 14 slender boxes (inertia of a box 0.02 m thick along z); the torso on a ball
 * joint at the origin, the head, arms and legs on hinges; every body at the identity
 * orientation at t = 0, at rest. Space points as in tree.lua (before its shift by -1 in z). */
#ifndef BENCH_PEERS_SPATIAL_H
#define BENCH_PEERS_SPATIAL_H

#include <math.h>

#define SPATIAL_ROD_M 1.0
#define SPATIAL_ROD_L 1.0
#define SPATIAL_ROD_R 0.05
/* Quaternions, scalar first: rod 1 by 1 rad about x, each joint by 0.3 rad about (0,1,1)/√2.
 * The figures are the Lua model's, which computes them the same way. */
static void spatial_rod_inertia(double I[3]) {
  double m = SPATIAL_ROD_M, L = SPATIAL_ROD_L, r = SPATIAL_ROD_R;
  I[0] = I[1] = m * (3 * r * r + L * L) / 12;
  I[2] = m * r * r / 2;
}
static void spatial_q1(double q[4]) { q[0] = cos(0.5), q[1] = sin(0.5), q[2] = 0, q[3] = 0; }
static void spatial_qrel(double q[4]) {
  double s = sin(0.15) / sqrt(2.0);
  q[0] = cos(0.15), q[1] = 0, q[2] = s, q[3] = s;
}

#define TREE_BODIES 14
struct tree_body {
  const char *name;
  int parent;  /* index of the parent; -1: the ground, through the ball */
  double m, L; /* kg; m, the box's length along its z axis */
  double c[3]; /* centre of mass (space, tree.lua before its shift) */
  double p[3]; /* the joint's point (space) */
  double n[3]; /* hinge axis (space = body axes at t = 0); unused for the ball */
};

/* Fills the 14 bodies in tree.lua's order; returns the count. */
static int tree_bodies(struct tree_body *b) {
  int k = 0;
  struct tree_body torso = {"torso", -1, 30, 0.6, {0, 0, 1.3}, {0, 0, 1.0}, {0, 0, 0}};
  struct tree_body head = {"head", 0, 5, 0.3, {0, 0, 1.75}, {0, 0, 1.6}, {0, 0, 1}};
  b[k++] = torso;
  b[k++] = head;
  const double s = sqrt(0.5);
  struct {
    const char *prefix;
    double root[3], len[3], mass[3], axes[3][3], dir[3];
  } limbs[4] = {
    {"larm",
     {0.25, 0, 1.55},
     {0.3, 0.28, 0.1},
     {2, 1.5, 0.5},
     {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
     {s, 0, -s}},
    {"rarm",
     {-0.25, 0, 1.55},
     {0.3, 0.28, 0.1},
     {2, 1.5, 0.5},
     {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}},
     {-s, 0, -s}},
    {"lleg",
     {0.12, 0, 1.0},
     {0.45, 0.42, 0.12},
     {8, 4, 1},
     {{1, 0, 0}, {0, 1, 0}, {1, 0, 0}},
     {0.2, 0.1, -0.97}},
    {"rleg",
     {-0.12, 0, 1.0},
     {0.45, 0.42, 0.12},
     {8, 4, 1},
     {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}},
     {-0.2, -0.1, -0.97}},
  };
  static const char *names[4][3] = {{"larm1", "larm2", "larm3"},
                                    {"rarm1", "rarm2", "rarm3"},
                                    {"lleg1", "lleg2", "lleg3"},
                                    {"rleg1", "rleg2", "rleg3"}};
  for (int l = 0; l < 4; l++) {
    double p[3] = {limbs[l].root[0], limbs[l].root[1], limbs[l].root[2]};
    int parent = 0;
    for (int j = 0; j < 3; j++) {
      double L = limbs[l].len[j];
      struct tree_body *t = &b[k];
      t->name = names[l][j];
      t->parent = parent;
      t->m = limbs[l].mass[j];
      t->L = L;
      for (int i = 0; i < 3; i++) {
        t->c[i] = p[i] + limbs[l].dir[i] * L / 2;
        t->p[i] = p[i];
        t->n[i] = limbs[l].axes[j][i];
      }
      for (int i = 0; i < 3; i++) p[i] += limbs[l].dir[i] * L;
      parent = k++;
    }
  }
  return k;
}

/* tree.lua's inertia: a box of length L along z, 0.02 m thick. */
static void tree_inertia(const struct tree_body *b, double I[3]) {
  I[0] = I[1] = b->m * (b->L * b->L + 0.02 * 0.02) / 12;
  I[2] = b->m * 0.02 * 0.02 / 6;
}

#endif

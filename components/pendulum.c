/* components/pendulum.c — a planar pendulum: a point mass on a massless rigid arm of length
 * l, hung from a pivot that is a coordinate of its own (px, py) so it can be glued. */
#include <math.h>
#include <string.h>

#include "parts.h"

enum { P_M, P_L };
enum { C_PX, C_PY, C_TH, NC };

static const jyParamSpec params[] = {
  {"m", 1, JY_PARAM_POSITIVE, "kg", "mass of the bob"},
  {"l", 1, JY_PARAM_POSITIVE, "m", "length of the arm"},
};

/* The bob: value, J = [[1, 0, l c], [0, 1, l s]] (2 x 3) and gamma = J' v. */
typedef struct Bob {
  double pos[2], jac[2 * NC], gamma[2];
} Bob;

/* A bob kept in the scratch with the inputs it was computed from: mass, force and the bob
 * terminal at one state share one sine and cosine (they were a third of a pendulum chain's
 * right-hand side). */
typedef struct KeptBob {
  double inputs[4]; /* px, py, theta, theta' */
  double l;
  int valid;
  Bob bob;
} KeptBob;

static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out);

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type;
  (void)p;
  (void)error;
  (void)error_len;
  s->ncoords = NC;
  s->coord_names[C_PX] = "px";
  s->coord_names[C_PY] = "py";
  s->coord_names[C_TH] = "theta";
  s->flags = JY_PART_CONSERVATIVE | JY_PART_FOLLOWS_GLUE;
  s->scratch_size = sizeof(KeptBob);
  s->nterminals = 2;
  s->terminals[0] = (jyTerminalSpec){"pivot", 2, 1, 0};
  s->terminals[1] = (jyTerminalSpec){.name = "bob", .dim = 2};
  s->nvisuals = 2;
  s->visual = visual;
  return 0;
}

static void bob_compute(const jyPartInstance *self, const jyPartState *state, Bob *b) {
  double l = self->params[P_L], th = state->q[C_TH], w = state->v[C_TH];
  double s = sin(th), c = cos(th);
  b->pos[0] = state->q[C_PX] + l * s;
  b->pos[1] = state->q[C_PY] - l * c;
  for (int i = 0; i < 2 * NC; i++) b->jac[i] = 0.0;
  b->jac[0 + C_PX * 2] = 1.0;
  b->jac[1 + C_PY * 2] = 1.0;
  b->jac[0 + C_TH * 2] = l * c;
  b->jac[1 + C_TH * 2] = l * s;
  b->gamma[0] = -l * s * w * w;
  b->gamma[1] = l * c * w * w;
}

/* The bob at this state: the kept one when its inputs are bit for bit these, else computed
 * (and kept, when there is scratch). */
static void bob_eval(const jyPartInstance *self, const jyPartState *state, Bob *b) {
  KeptBob *kept = state->scratch;
  double inputs[4] = {state->q[C_PX], state->q[C_PY], state->q[C_TH], state->v[C_TH]};
  double l = self->params[P_L];
  if (!kept) {
    bob_compute(self, state, b);
    return;
  }
  if (!kept->valid || memcmp(kept->inputs, inputs, sizeof inputs) != 0 ||
      memcmp(&kept->l, &l, sizeof l) != 0) {
    bob_compute(self, state, &kept->bob);
    memcpy(kept->inputs, inputs, sizeof inputs);
    kept->l = l;
    kept->valid = 1;
  }
  *b = kept->bob;
}

static int terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                    double *jac, double *vel_bias, double *acc_bias) {
  (void)vel_bias;
  if (k == 0) {
    jy_point_terminal(2, C_PX, NC, state->q, value, jac);
    return 0;
  }
  if (k != 1)
    return jy_part_fail(state->error, state->error_len, "no terminal %d (it has pivot and bob)", k);
  Bob b;
  bob_eval(self, state, &b);
  value[0] = b.pos[0];
  value[1] = b.pos[1];
  if (jac)
    for (int i = 0; i < 2 * NC; i++) jac[i] = b.jac[i];
  if (acc_bias) {
    acc_bias[0] = b.gamma[0];
    acc_bias[1] = b.gamma[1];
  }
  return 0;
}

/* M = m J^T J: singular, because the pivot carries no mass of its own. */
static int mass(const jyPartInstance *self, const jyPartState *state, double *M) {
  Bob b;
  bob_eval(self, state, &b);
  double m = self->params[P_M];
  for (int j = 0; j < NC; j++)
    for (int i = 0; i < NC; i++)
      M[i + j * NC] =
        m * (b.jac[0 + i * 2] * b.jac[0 + j * 2] + b.jac[1 + i * 2] * b.jac[1 + j * 2]);
  return 0;
}

/* The bob obeys m (J q'' + gamma) = m g + (force through the arm and pivot), so projecting
 * with J^T gives M q'' = m J^T (g - gamma) + (constraint forces). */
static int force(const jyPartInstance *self, const jyPartState *state, double *Q) {
  Bob b;
  bob_eval(self, state, &b);
  double m = self->params[P_M];
  double fx = m * (state->gravity[0] - b.gamma[0]), fy = m * (state->gravity[1] - b.gamma[1]);
  for (int j = 0; j < NC; j++) Q[j] = b.jac[0 + j * 2] * fx + b.jac[1 + j * 2] * fy;
  return 0;
}

static int energy(const jyPartInstance *self, const jyPartState *state, double *kinetic,
                  double *potential) {
  Bob b;
  bob_eval(self, state, &b);
  double m = self->params[P_M], vel[2] = {0.0, 0.0};
  for (int j = 0; j < NC; j++) {
    vel[0] += b.jac[0 + j * 2] * state->v[j];
    vel[1] += b.jac[1 + j * 2] * state->v[j];
  }
  *kinetic = 0.5 * m * (vel[0] * vel[0] + vel[1] * vel[1]);
  *potential = -m * (state->gravity[0] * b.pos[0] + state->gravity[1] * b.pos[1]);
  return 0;
}

/* The arm from the pivot to the bob, and the bob. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  Bob b;
  bob_compute(self, state, &b);
  double ends[4] = {state->q[C_PX], state->q[C_PY], b.pos[0], b.pos[1]};
  jy_visual_ends(&out[0], JY_VISUAL_ROD, 2, ends);
  jy_visual_point(&out[1], JY_VISUAL_POINT, 2, b.pos);
  return 0;
}

static const jyPartType type = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "pendulum",
  .doc = "planar pendulum: bob m on a massless arm l from terminal pivot (px, py), angle theta",
  .params = params,
  .nparams = (int)(sizeof params / sizeof params[0]),
  .shape = shape,
  .terminal = terminal,
  .mass = mass,
  .force = force,
  .energy = energy,
};

const jyPartType *jy_part_pendulum(void) { return &type; }

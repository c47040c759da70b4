/* The spatial recursion (internal.h, jySpatialWork): where the model is body3d parts joined
 * by ball, hinge, slider and weld joints into a tree (part.h, jySpatialRole), the
 * acceleration of M q'' = Q + C + A^T lambda, A q'' = b is that of the tree's own freedoms,
 * solved by the articulated-body algorithm in O(1) a body: no row is assembled and no KKT
 * system factored.
 *
 * Each body's spatial velocity is (w, v), world axes, at its centre of mass; a joint to its
 * parent gives A_c = X A_p + S u' + kappa: X shifts the parent's acceleration to the child's
 * centre, S spans the joint's freedoms (a ball's relative angular acceleration, a hinge's
 * angle, a slider's travel, none for a weld, all six for a free root) and kappa is the
 * velocity product of the joint point held in both bodies. Leaves to root, each body passes
 * its articulated inertia and bias force, with its joint's freedoms eliminated, to its
 * parent; root to leaves, each joint's u' and each body's acceleration follow; the
 * quaternion's acceleration is then the one body3d's norm row and w = 2 G(q) q' give it.
 *
 * The state stays the model's absolute coordinates, so outputs, projections and the row
 * forces (solved on demand by the row path) do not change; at a state that meets the rows
 * the answer is the row path's to rounding, and off them by the drift the projections bound.
 * A body whose articulated inertia is not positive definite along its joint's freedoms (no
 * mass where the joint moves it) leaves the answer to the row path, which says why.
 * docs/numerics.md, "The spatial tree". */
#include <lapacke.h>
#undef I /* complex.h's, which lapacke.h includes: I is an inertia here */
#include <math.h>
#include <string.h>

#include "internal.h"

enum { JOINT_BALL, JOINT_HINGE, JOINT_SLIDER, JOINT_WELD, JOINT_FREE };
enum { WORLD = -1, NO_PARENT = -2 };
/* A frame: x, y, z, q0..q3 (components/spatial.h, JY_FRAME_DIM; part.h, jySpatialRole). */
enum { FRAME = 7 };
/* Markers on markers a joint point may sit behind (a deeper chain keeps the row path). */
#define MAX_OFFSETS 8

/* Where a joint's point sits: fixed on `base` (a body, a fixed frame or point), moved by the
 * offsets of the markers between, and by the joint part's own r on `side` (0: a, 1: b). */
typedef struct Anchor {
  int base, offsets[MAX_OFFSETS], noffsets;
  int joint, side; /* the joint part, or -1 (a ball: a glue of two points) */
} Anchor;

typedef struct Edge {
  int kind, row0, nrows; /* its rows: the joint part's, or the ball glue's */
  Anchor end[2];
} Edge;

/* More rows than the tree carries cost a recursion each per right-hand side, and their
 * K x n block and K x K solve grow with K: beyond this the row path's sparse factor wins. */
#define MAX_EXTRA_ROWS 32
/* The branch guard's estimate is skipped where the rows beside the tree are this well
 * conditioned against each other through the tree's inertia (LAPACK dpocon's reciprocal
 * condition of the kept rows' A_x Phi A_x^T): a branch to jump to needs them near rank loss. */
#define SPATIAL_GUARD_RCOND 1e-4
/* A row left out as dependent that misses by this much of its terms after the choice is made
 * again is in conflict with the others, not off by the drift (a few 1e-4 measured on
 * Bricard's ERK stages at rtol 1e-6): the row path answers or says why. */
#define CONFLICT_MISS 0.1

/* A body in tree order (parents first), its joint to its parent and what the recursion
 * keeps of it at one state. */
typedef struct SpatialBody {
  int part, coord, parent, kind;
  Anchor at_parent, at_child;
  /* From the parameters (made again after one changes): the joint point in the parent's
   * axes from its centre (world: from the origin, world axes) and in the child's, the hinge
   * axis in the parent's axes (world axes for the world) and in the child's, unit (a
   * slider's on its frame a's side only); a slider's or weld's held relative orientation
   * q_ref (unit) and a fixed parent frame's orientation; the body's mass and inertia (body
   * axes, row-major). */
  double r_parent[3], r_child[3], axis[3], axis_child[3], qref[4], q_fixed[4], mass, inertia[9];
  /* At the state: rotation (body to world, row-major), centre, angular velocity (world),
   * articulated inertia (6 x 6, column-major, angular first) and bias force, the joint's S
   * (6 x dof), kappa, I S, the factor of S^T I S and its solve against [U^T, S^T p], the
   * shift from the parent's centre, and the acceleration. */
  int dof;
  double R[9], q[4], p[3], vel[3], w[3]; /* q: the unit quaternion */
  double inertia_a[36], bias_a[6], S[36], kappa[6], U[36], D[36], DU[42], d[3], acc[6];
  /* A response to a unit row force (close_rows): its bias force and D^-1 S^T of it */
  double unit_f[6], unit_x[6];
} SpatialBody;

/* The rows the tree does not carry (a loop's closing joint, a motor's drive, a rolling
 * contact, a part's own rows): their A block (nextra x n, column-major), b and b - A_x a,
 * the tree's own answer a, its responses Phi A_x^T to them (one n-vector a row), the Gram
 * matrix A_x Phi A_x^T (full) and the kept rows' block of it (then its factor), which rows
 * are left out as dependent (and the first state's choice, which the evaluator goes back to
 * with its own: jy_eval_restore_dependent), and the kept block's reciprocal condition at the
 * last solve. */
typedef struct ExtraRows {
  int count, *rows, *index_of; /* rows[k]: the model's row; index_of[i]: k, or -1 (m) */
  double *ax, *b, *residual, *a, *response, *full, *gram, *lambda, *scale, *work;
  int *nz_count, *nz_col; /* each row's nonzero columns, at the last assembly (nx x n) */
  int *kept, redundant;   /* redundant: -1 until the first state decides */
  unsigned char *dropped, *dropped_first;
  unsigned char *filter; /* the parts, then the glues, whose rows these are (jyEval.row_filter) */
  lapack_int *pivots, *iwork;
  int nkept;
  double norm1, rcond; /* rcond: -1 until estimated from the kept block's factor */
} ExtraRows;

struct jySpatialWork {
  int nbodies, stale;
  long solves;
  SpatialBody *bodies;
  ExtraRows extra;
};

static const jyModelPart *part_of(const jyEval *e, int i) { return &e->model->parts[i]; }
static jySpatialRole role(const jyModelPart *p) { return p->shape->spatial; }

/* The anchor of terminal k of part i when it is a point or frame fixed on one body or fixed
 * frame (pos: want_point; frame otherwise): 0, or -1. */
static int resolve(const jyModel *md, int i, int k, int want_point, Anchor *out) {
  out->noffsets = 0;
  out->joint = -1, out->side = 0;
  for (int depth = 0; depth <= MAX_OFFSETS; depth++) {
    const jyModelPart *p = &md->parts[i];
    switch (role(p)) {
    case JY_SPATIAL_BODY:
    case JY_SPATIAL_FIXED:
      if (k != (want_point ? 1 : 0)) return -1;
      out->base = i;
      return 0;
    case JY_SPATIAL_POINT: /* a fixed point: its one terminal, a point */
      if (!want_point || k != 0) return -1;
      out->base = i;
      return 0;
    case JY_SPATIAL_OFFSET: {
      if (k != (want_point ? 1 : 2) || p->nlinks != 1 || out->noffsets == MAX_OFFSETS) return -1;
      const jyModelLink *l = &md->links[p->first_link];
      if (l->offset != 0 || l->dim != FRAME) return -1;
      out->offsets[out->noffsets++] = i;
      i = l->source, k = l->terminal, want_point = 0; /* the marker's frame follows a frame */
      break;
    }
    default:
      return -1;
    }
  }
  return -1;
}

/* The joint part i (a hinge, slider or weld) as an edge: both its frames follow frames fixed on bodies. */
static int joint_edge(const jyModel *md, int i, Edge *edge) {
  const jyModelPart *p = &md->parts[i];
  if (p->nlinks != 2) return -1;
  for (int s = 0; s < 2; s++) {
    const jyModelLink *l = &md->links[p->first_link + s];
    int side = l->offset == 0 ? 0 : l->offset == FRAME ? 1 : -1;
    if (side < 0 || l->dim != FRAME || resolve(md, l->source, l->terminal, 0, &edge->end[side]))
      return -1;
    edge->end[side].joint = i, edge->end[side].side = side;
  }
  edge->kind = role(p) == JY_SPATIAL_HINGE ? JOINT_HINGE
    : role(p) == JY_SPATIAL_SLIDER         ? JOINT_SLIDER
                                           : JOINT_WELD;
  return 0;
}

/* Whether part i may stay as a force element: no mass, no rows, no coordinate of its own, no
 * modes. */
static int force_element(const jyModelPart *p) {
  if (p->inst.type->mass || p->inst.nrows > 0 || p->shape->hybrid) return 0;
  for (int j = 0; j < p->inst.ncoords; j++)
    if (p->coord_map[j] >= 0) return 0;
  return 1;
}

/* Whether part i's rows may be left to the rows beside the tree: no mass, no coordinate of its
 * own, no modes (a motor, a rolling contact, a joint the tree cannot take). */
static int rows_beside(const jyModelPart *p) {
  if (p->inst.type->mass || p->shape->hybrid) return 0;
  for (int j = 0; j < p->inst.ncoords; j++)
    if (p->coord_map[j] >= 0) return 0;
  return 1;
}

static void mark_rows(unsigned char *extra, int row0, int nrows) {
  for (int i = 0; i < nrows; i++) extra[row0 + i] = 1;
}

/* The model's edges (joints) and bodies when it is a spatial tree, with the rows it does not
 * carry marked in extra (m): the edge count, or -1. */
static int collect(const jyModel *md, int *body_of, Edge *edges, unsigned char *extra) {
  int nedges = 0;
  for (int i = 0; i < md->nparts; i++) {
    const jyModelPart *p = &md->parts[i];
    body_of[i] = -1;
    switch (role(p)) {
    case JY_SPATIAL_BODY:
      if (p->inst.ncoords != FRAME || p->nlinks != 0 || p->inst.nrows != 1 || p->shape->hybrid)
        return -1;
      for (int j = 0; j < FRAME; j++)
        if (p->coord_map[j] != p->coord_map[0] + j || p->coord_map[0] < 0) return -1;
      body_of[i] = 0;
      break;
    case JY_SPATIAL_HINGE:
    case JY_SPATIAL_SLIDER:
    case JY_SPATIAL_WELD:
      if (!rows_beside(p)) return -1;
      if (joint_edge(md, i, &edges[nedges]) != 0) { /* its frames are not on bodies: rows */
        mark_rows(extra, p->row_offset, p->inst.nrows);
        break;
      }
      edges[nedges].row0 = p->row_offset, edges[nedges].nrows = p->inst.nrows;
      nedges++;
      break;
    case JY_SPATIAL_OFFSET:
    case JY_SPATIAL_FIXED:
    case JY_SPATIAL_POINT:
      if (!force_element(p)) return -1;
      break;
    default:
      if (force_element(p)) break;
      if (p->inst.nrows == 0 || !rows_beside(p)) return -1;
      mark_rows(extra, p->row_offset, p->inst.nrows);
    }
  }
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *gl = &md->glues[g];
    if (gl->row_offset < 0) continue; /* eliminated */
    Edge *edge = &edges[nedges];
    edge->kind = JOINT_BALL;
    if (gl->dim != 3 || resolve(md, gl->part_a, gl->terminal_a, 1, &edge->end[0]) ||
        resolve(md, gl->part_b, gl->terminal_b, 1, &edge->end[1])) {
      mark_rows(extra, gl->row_offset, gl->dim); /* not a ball between bodies: rows */
      continue;
    }
    edge->row0 = gl->row_offset, edge->nrows = 3;
    nedges++;
  }
  return nedges;
}

/* The node of an anchor: its body's index, or nbodies for a fixed frame (the world). */
static int node(const jyModel *md, const int *body_of, int nbodies, const Anchor *a) {
  return role(&md->parts[a->base]) == JY_SPATIAL_BODY ? body_of[a->base] : nbodies;
}

/* Orders the bodies from the world (then each free root) outwards. A joint that closes a
 * loop, joins a body to itself or two fixed frames leaves its rows to extra (m). 0, or -1. */
static int order_tree(const jyModel *md, const int *body_of, const int *body_part, int nbodies,
                      const Edge *edges, int nedges, SpatialBody *out, int *scratch,
                      unsigned char *used, unsigned char *extra) {
  /* scratch: the queue (nbodies + 1), each body's tree index (-1 until placed), and each
   * node's joints (node_at: nbodies + 3 offsets into at_node, 2 nedges) */
  int *queue = scratch, *index = queue + nbodies + 1, *node_at = index + nbodies;
  int *at_node = node_at + nbodies + 3, placed = 0;
  memset(node_at, 0, sizeof(int) * (size_t)(nbodies + 3));
  for (int k = 0; k < nedges; k++)
    for (int s = 0; s < 2; s++) node_at[node(md, body_of, nbodies, &edges[k].end[s]) + 2]++;
  for (int i = 0; i <= nbodies; i++) node_at[i + 2] += node_at[i + 1];
  for (int k = 0; k < nedges; k++)
    for (int s = 0; s < 2; s++)
      at_node[node_at[node(md, body_of, nbodies, &edges[k].end[s]) + 1]++] = k;
  for (int b = 0; b < nbodies; b++) index[b] = -1;
  memset(used, 0, (size_t)nedges);
  for (int root = nbodies; root >= 0 && placed < nbodies; root--) {
    if (root < nbodies && index[root] >= 0) continue;
    if (root < nbodies) { /* a free root: its own joint is all six freedoms */
      index[root] = placed;
      out[placed++] =
        (SpatialBody){.part = body_part[root], .parent = NO_PARENT, .kind = JOINT_FREE};
    }
    queue[0] = root;
    for (int head = 0, tail = 1; head < tail; head++) {
      int at = queue[head];
      for (int j = node_at[at]; j < node_at[at + 1]; j++) {
        int k = at_node[j];
        if (used[k]) continue;
        used[k] = 1;
        int n0 = node(md, body_of, nbodies, &edges[k].end[0]);
        int n1 = node(md, body_of, nbodies, &edges[k].end[1]);
        int from = n0 == at ? 0 : 1, other = from ? n0 : n1;
        if (other == at || other == nbodies || index[other] >= 0) { /* a loop: its rows */
          mark_rows(extra, edges[k].row0, edges[k].nrows);
          continue;
        }
        index[other] = placed;
        out[placed++] = (SpatialBody){.part = body_part[other],
                                      .parent = at == nbodies ? WORLD : index[at],
                                      .kind = edges[k].kind,
                                      .at_parent = edges[k].end[from],
                                      .at_child = edges[k].end[1 - from]};
        queue[tail++] = other;
      }
    }
  }
  for (int k = 0; k < nedges; k++)
    if (!used[k]) return -1; /* a joint between two fixed frames, or left over */
  return placed == nbodies ? 0 : -1;
}

/* The rows beside the tree, from their marks (m): their workspace for n coordinates. 0, or -1
 * out of memory. */
static int make_extra(const jyAllocator *a, ExtraRows *x, const jyModel *md,
                      const unsigned char *marked) {
  int m = md->m, n = md->n, count = 0;
  for (int i = 0; i < m; i++) count += marked[i];
  x->count = count;
  x->index_of = jy_calloc(a, (size_t)m + 1, sizeof(int));
  if (!x->index_of) return -1;
  for (int i = 0; i < m; i++) x->index_of[i] = -1;
  if (count == 0) return 0;
  size_t k = (size_t)count;
  x->rows = jy_calloc(a, k, sizeof(int));
  x->ax = jy_calloc(a, k * (size_t)n, sizeof(double));
  x->response = jy_calloc(a, k * (size_t)n, sizeof(double));
  x->b = jy_calloc(a, k, sizeof(double));
  x->lambda = jy_calloc(a, k, sizeof(double));
  x->gram = jy_calloc(a, k * k, sizeof(double));
  x->residual = jy_calloc(a, k, sizeof(double));
  x->scale = jy_calloc(a, k, sizeof(double));
  x->nz_count = jy_calloc(a, k, sizeof(int));
  x->nz_col = jy_calloc(a, k * (size_t)n + 1, sizeof(int));
  x->a = jy_calloc(a, (size_t)n + 1, sizeof(double));
  x->full = jy_calloc(a, k * k, sizeof(double));
  x->kept = jy_calloc(a, k, sizeof(int));
  x->dropped = jy_calloc(a, k, 1);
  x->dropped_first = jy_calloc(a, k, 1);
  x->pivots = jy_calloc(a, k, sizeof(lapack_int));
  x->iwork = jy_calloc(a, k, sizeof(lapack_int));
  /* a Gram matrix to pivot, then dpstrf's 2 k or dpocon's 3 k */
  x->work = jy_calloc(a, k * k + 3 * k, sizeof(double));
  if (!x->rows || !x->ax || !x->response || !x->b || !x->lambda || !x->gram || !x->residual ||
      !x->scale || !x->nz_count || !x->nz_col || !x->a || !x->full || !x->kept || !x->dropped ||
      !x->dropped_first || !x->pivots || !x->iwork || !x->work)
    return -1;
  for (int i = 0, at = 0; i < m; i++)
    if (marked[i]) x->index_of[i] = at, x->rows[at++] = i;
  x->redundant = -1;
  x->filter = jy_calloc(a, (size_t)md->nparts + (size_t)md->nglues + 1, 1);
  if (!x->filter) return -1;
  for (int i = 0; i < md->nparts; i++) {
    const jyModelPart *p = &md->parts[i];
    for (int r = 0; r < p->inst.nrows; r++) x->filter[i] |= marked[p->row_offset + r];
  }
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *gl = &md->glues[g];
    for (int r = 0; gl->row_offset >= 0 && r < gl->dim; r++)
      x->filter[md->nparts + g] |= marked[gl->row_offset + r];
  }
  return 0;
}

static void free_extra(const jyAllocator *a, ExtraRows *x) {
  jy_free(a, x->rows);
  jy_free(a, x->index_of);
  jy_free(a, x->residual);
  jy_free(a, x->scale);
  jy_free(a, x->nz_count);
  jy_free(a, x->nz_col);
  jy_free(a, x->a);
  jy_free(a, x->full);
  jy_free(a, x->kept);
  jy_free(a, x->dropped);
  jy_free(a, x->dropped_first);
  jy_free(a, x->filter);
  jy_free(a, x->pivots);
  jy_free(a, x->iwork);
  jy_free(a, x->ax);
  jy_free(a, x->response);
  jy_free(a, x->b);
  jy_free(a, x->lambda);
  jy_free(a, x->gram);
  jy_free(a, x->work);
}

jyStatus jy_spatial_create(jyEval *e, jySpatialWork **out) {
  const jyModel *md = e->model;
  const jyAllocator *a = &md->alloc;
  *out = NULL;
  if (md->tree || md->m == 0 || md->has_laws) /* parts' modes: collect */
    return JY_OK;
  size_t np = (size_t)md->nparts;
  int *body_of = jy_calloc(a, np + 1, sizeof(int));
  int *body_part = jy_calloc(a, np + 1, sizeof(int));
  size_t most_edges = np + (size_t)md->nglues;
  int *queue = jy_calloc(a, 3 * np + 4 + 2 * most_edges, sizeof(int)); /* order_tree's scratch */
  Edge *edges = jy_calloc(a, most_edges + 1, sizeof(Edge));
  unsigned char *used = jy_calloc(a, most_edges + 1, 1);
  unsigned char *extra = jy_calloc(a, (size_t)md->m + 1, 1);
  jySpatialWork *w = jy_calloc(a, 1, sizeof *w);
  jyStatus st = JY_ERR_NOMEM;
  if (!body_of || !body_part || !queue || !edges || !used || !extra || !w) goto done;
  st = JY_OK;
  int nedges = collect(md, body_of, edges, extra), nbodies = 0;
  if (nedges < 0) goto done;
  for (int i = 0; i < md->nparts; i++)
    if (body_of[i] == 0) body_of[i] = nbodies, body_part[nbodies++] = i;
  if (nbodies == 0) goto done;
  w->bodies = jy_calloc(a, (size_t)nbodies, sizeof(SpatialBody));
  if (!w->bodies) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  if (order_tree(md, body_of, body_part, nbodies, edges, nedges, w->bodies, queue, used, extra) !=
      0)
    goto done;
  int nextra = 0;
  for (int i = 0; i < md->m; i++) nextra += extra[i];
  if (nextra > MAX_EXTRA_ROWS) goto done;
  if (make_extra(a, &w->extra, md, extra) != 0) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  for (int b = 0; b < nbodies; b++) w->bodies[b].coord = md->parts[w->bodies[b].part].coord_map[0];
  w->nbodies = nbodies;
  w->stale = 1;
  *out = w;
  w = NULL;
done:
  jy_spatial_destroy(a, w);
  jy_free(a, body_of);
  jy_free(a, body_part);
  jy_free(a, queue);
  jy_free(a, edges);
  jy_free(a, used);
  jy_free(a, extra);
  return st;
}

void jy_spatial_destroy(const jyAllocator *a, jySpatialWork *w) {
  if (!w) return;
  free_extra(a, &w->extra);
  jy_free(a, w->bodies);
  jy_free(a, w);
}

long jy_spatial_solves(const jySpatialWork *w) { return w ? w->solves : 0; }

void jy_spatial_params_changed(jySpatialWork *w) {
  if (w) w->stale = 1;
}

/* ---- small vector algebra (3-vectors; 3 x 3 row-major; 6-vectors angular first) ---- */

static void cross(const double a[3], const double b[3], double o[3]) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
         z = a[0] * b[1] - a[1] * b[0];
  o[0] = x, o[1] = y, o[2] = z;
}

static double dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void mat3_vec(const double A[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

static void mat3t_vec(const double A[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

/* o = a b (Hamilton's product, scalar first); o may not alias a or b. */
static void qmul(const double a[4], const double b[4], double o[4]) {
  o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  o[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  o[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* The rotation of quaternion q (any length: q / |q|), row-major. */
static void rotation(const double q[4], double R[9]) {
  double n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], s = 1.0 / n;
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = s * (w * w + x * x - y * y - z * z), R[1] = 2 * s * (x * y - w * z);
  R[2] = 2 * s * (x * z + w * y), R[3] = 2 * s * (x * y + w * z);
  R[4] = s * (w * w - x * x + y * y - z * z), R[5] = 2 * s * (y * z - w * x);
  R[6] = 2 * s * (x * z - w * y), R[7] = 2 * s * (y * z + w * x);
  R[8] = s * (w * w - x * x - y * y + z * z);
}

/* G(q) x (3) and G(q)^T y (4), as body3d's w = 2 G(q) q' (components/spatial.c, jy_q_G). */
static void g_times(const double q[4], const double x[4], double o[3]) {
  o[0] = -q[1] * x[0] + q[0] * x[1] + q[3] * x[2] - q[2] * x[3];
  o[1] = -q[2] * x[0] - q[3] * x[1] + q[0] * x[2] + q[1] * x[3];
  o[2] = -q[3] * x[0] + q[2] * x[1] - q[1] * x[2] + q[0] * x[3];
}

static void gt_times(const double q[4], const double y[3], double o[4]) {
  o[0] = -q[1] * y[0] - q[2] * y[1] - q[3] * y[2];
  o[1] = q[0] * y[0] - q[3] * y[1] + q[2] * y[2];
  o[2] = q[3] * y[0] + q[0] * y[1] - q[1] * y[2];
  o[3] = -q[2] * y[0] + q[1] * y[1] + q[0] * y[2];
}

/* ---- the geometry from the parameters ---- */

static void normalize(double x[3]) {
  double n = sqrt(dot(x, x));
  for (int i = 0; i < 3; i++) x[i] /= n;
}

static void unit_quaternion(const double *q, double out[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) out[i] = q[i] / n;
}

/* The anchor's point in its base's axes from the base's origin, and (a hinge) the axis on
 * the anchor's side in those axes; a fixed base's pose in world terms after them. */
static void anchor_geometry(const jyEval *e, const Anchor *an, double r[3], double axis[3]) {
  r[0] = r[1] = r[2] = 0;
  for (int k = 0; k < an->noffsets; k++) {
    const double *rp = jy_eval_inst(e, part_of(e, an->offsets[k]))->params;
    int at = part_of(e, an->offsets[k])->shape->spatial_param;
    for (int i = 0; i < 3; i++) r[i] += rp[at + i];
  }
  if (an->joint >= 0) {
    const jyModelPart *j = part_of(e, an->joint);
    const double *jp = jy_eval_inst(e, j)->params + j->shape->spatial_param;
    for (int i = 0; i < 3; i++) r[i] += jp[3 * an->side + i];
    if (axis && (role(j) == JY_SPATIAL_HINGE || (role(j) == JY_SPATIAL_SLIDER && an->side == 0))) {
      for (int i = 0; i < 3; i++) axis[i] = jp[6 + 3 * an->side + i];
      normalize(axis);
    }
  }
  const jyModelPart *base = part_of(e, an->base);
  if (role(base) == JY_SPATIAL_POINT) { /* a point: no offsets or axes reach it */
    const double *x = jy_eval_inst(e, base)->params + base->shape->spatial_param;
    for (int i = 0; i < 3; i++) r[i] += x[i];
    return;
  }
  if (role(base) != JY_SPATIAL_FIXED) return;
  const double *g = jy_eval_inst(e, base)->params + base->shape->spatial_param;
  double R[9], t[3];
  rotation(g + 3, R);
  mat3_vec(R, r, t);
  for (int i = 0; i < 3; i++) r[i] = g[i] + t[i];
  if (axis && an->joint >= 0 && role(part_of(e, an->joint)) != JY_SPATIAL_WELD) {
    mat3_vec(R, axis, t);
    memcpy(axis, t, sizeof t);
  }
}

static void geometry(const jyEval *e, jySpatialWork *w) {
  for (int b = 0; b < w->nbodies; b++) {
    SpatialBody *s = &w->bodies[b];
    const jyModelPart *p = part_of(e, s->part);
    const double *bp = jy_eval_inst(e, p)->params + p->shape->spatial_param;
    s->mass = bp[0];
    s->inertia[0] = bp[1], s->inertia[4] = bp[2], s->inertia[8] = bp[3];
    s->inertia[1] = s->inertia[3] = bp[4];
    s->inertia[2] = s->inertia[6] = bp[5];
    s->inertia[5] = s->inertia[7] = bp[6];
    if (s->kind == JOINT_FREE) continue;
    anchor_geometry(e, &s->at_parent, s->r_parent, s->axis);
    anchor_geometry(e, &s->at_child, s->r_child, s->axis_child);
    s->qref[0] = 1, s->qref[1] = s->qref[2] = s->qref[3] = 0;
    if (s->kind == JOINT_SLIDER || s->kind == JOINT_WELD) {
      const jyModelPart *j = part_of(e, s->at_child.joint);
      const double *jp = jy_eval_inst(e, j)->params + j->shape->spatial_param;
      unit_quaternion(jp + (s->kind == JOINT_SLIDER ? 9 : 6), s->qref);
    }
    const jyModelPart *base = part_of(e, s->at_parent.base);
    s->q_fixed[0] = 1, s->q_fixed[1] = s->q_fixed[2] = s->q_fixed[3] = 0;
    if (role(base) == JY_SPATIAL_FIXED)
      unit_quaternion(jy_eval_inst(e, base)->params + base->shape->spatial_param + 3, s->q_fixed);
  }
  w->stale = 0;
}

/* ---- the recursion ---- */

/* A slider's axis in world axes, from the side that is its frame a. */
static void slider_axis(const SpatialBody *s, const SpatialBody *par, double n[3]) {
  if (s->at_child.side == 0)
    mat3_vec(s->R, s->axis_child, n);
  else if (par)
    mat3_vec(par->R, s->axis, n);
  else
    memcpy(n, s->axis, sizeof(double) * 3);
}

/* Baumgarte on a slider's or weld's held orientation: the child's small rotation off
 * q_b = q_a q_ref, in world axes (2 vec(q_ref* q_a* q_b) in a q_ref's axes, the sign taken
 * for the nearer of q and -q), against the relative angular velocity. */
static void turn_back(SpatialBody *s, const SpatialBody *par, const double rc[3], double rate) {
  const double *qp = par ? par->q : s->q_fixed;
  int child_is_b = s->at_child.side == 1;
  const double *qa = child_is_b ? qp : s->q, *qb = child_is_b ? s->q : qp;
  double qa_ref[4], conj[4], err[4], R[9], theta[3], world[3], fix[3], c[3];
  qmul(qa, s->qref, qa_ref);
  for (int i = 0; i < 4; i++) conj[i] = i ? -qa_ref[i] : qa_ref[i];
  qmul(conj, qb, err);
  double sign = err[0] < 0 ? -2.0 : 2.0;
  for (int i = 0; i < 3; i++) theta[i] = sign * err[1 + i];
  rotation(qa_ref, R);
  mat3_vec(R, theta, world); /* b's rotation off a q_ref */
  for (int i = 0; i < 3; i++) {
    double off = child_is_b ? world[i] : -world[i];
    double rel = s->w[i] - (par ? par->w[i] : 0.0);
    fix[i] = -2 * rate * rel - rate * rate * off;
  }
  cross(rc, fix, c);
  for (int i = 0; i < 3; i++) s->kappa[i] += fix[i], s->kappa[3 + i] += c[i];
}

/* Baumgarte's phi'' + 2 w phi' + w^2 phi = 0 (the row path's, eval_solve.c) on the joint's
 * rows, into kappa: the joint points' gap and its rate (any invertible combination of them is
 * the same condition, so the glue's sign and order do not matter) and, for a hinge, the
 * axes' misalignment n_p x n_c, the small rotation of the child's axis off the parent's, and
 * the relative angular velocity across the axis. */
static void baumgarte(SpatialBody *s, const SpatialBody *par, const double rc[3], double rate) {
  double rp[3], gap[3], speed[3], a[3], b[3];
  if (par) {
    mat3_vec(par->R, s->r_parent, rp);
    cross(par->w, rp, a);
  } else {
    memcpy(rp, s->r_parent, sizeof rp); /* a world point */
    a[0] = a[1] = a[2] = 0;
  }
  cross(s->w, rc, b);
  for (int i = 0; i < 3; i++) {
    double pp = par ? par->p[i] + rp[i] : rp[i], vp = par ? par->vel[i] + a[i] : 0.0;
    gap[i] = s->p[i] + rc[i] - pp;
    speed[i] = s->vel[i] + b[i] - vp;
  }
  if (s->kind == JOINT_SLIDER) { /* only across the axis, in the parent's turning frame */
    double n[3], c[3];
    slider_axis(s, par, n);
    if (par) cross(par->w, gap, c);
    for (int i = 0; i < 3; i++) speed[i] -= par ? c[i] : 0.0;
    double g = dot(n, gap), r = dot(n, speed);
    for (int i = 0; i < 3; i++) gap[i] -= g * n[i], speed[i] -= r * n[i];
  }
  for (int i = 0; i < 3; i++) s->kappa[3 + i] -= 2 * rate * speed[i] + rate * rate * gap[i];
  if (s->kind == JOINT_SLIDER || s->kind == JOINT_WELD) {
    turn_back(s, par, rc, rate);
    return;
  }
  if (s->kind != JOINT_HINGE) return;
  double np[3], nc[3], mis[3], rel[3], fix[3], c[3];
  if (par)
    mat3_vec(par->R, s->axis, np);
  else
    memcpy(np, s->axis, sizeof np);
  mat3_vec(s->R, s->axis_child, nc);
  cross(np, nc, mis);
  for (int i = 0; i < 3; i++) rel[i] = s->w[i] - (par ? par->w[i] : 0.0);
  double along = dot(rel, np);
  for (int i = 0; i < 3; i++) fix[i] = -2 * rate * (rel[i] - along * np[i]) - rate * rate * mis[i];
  cross(rc, fix, c);
  for (int i = 0; i < 3; i++) s->kappa[i] += fix[i], s->kappa[3 + i] += c[i];
}

/* One body at the state: its pose, angular velocity, inertia and applied force (the model's
 * Q + C on its coordinates, the quaternion's part turned into a torque), its joint's S and
 * kappa from the parent's (already computed: tree order). */
static void body_state(jySpatialWork *w, SpatialBody *s, const double *q, const double *v,
                       const double *force, const double *nonideal, double rate) {
  const double *e = q + s->coord + 3, *ed = v + s->coord + 3;
  double fq[4], fx[3];
  for (int i = 0; i < 4; i++) fq[i] = force[s->coord + 3 + i] + nonideal[s->coord + 3 + i];
  for (int i = 0; i < 3; i++) fx[i] = force[s->coord + i] + nonideal[s->coord + i];
  double n2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3], wb[3], tb[3], t[3];
  rotation(e, s->R);
  for (int i = 0; i < 4; i++) s->q[i] = e[i] / sqrt(n2);
  memcpy(s->p, q + s->coord, sizeof s->p);
  memcpy(s->vel, v + s->coord, sizeof s->vel);
  g_times(e, ed, wb);
  for (int i = 0; i < 3; i++) wb[i] *= 2.0 / n2;
  mat3_vec(s->R, wb, s->w);
  /* the articulated inertia starts as the body's own, R J R^T and m I */
  double RJ[9];
  memset(s->inertia_a, 0, sizeof s->inertia_a);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      RJ[3 * i + j] = s->R[3 * i] * s->inertia[j] + s->R[3 * i + 1] * s->inertia[3 + j] +
        s->R[3 * i + 2] * s->inertia[6 + j];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      s->inertia_a[i + 6 * j] =
        RJ[3 * i] * s->R[3 * j] + RJ[3 * i + 1] * s->R[3 * j + 1] + RJ[3 * i + 2] * s->R[3 * j + 2];
  for (int i = 3; i < 6; i++) s->inertia_a[i + 6 * i] = s->mass;
  /* J w_b' = G(q) Q_q / (2 |q|^2): body3d's Q_q holds the gyroscopic torque too */
  g_times(e, fq, tb);
  for (int i = 0; i < 3; i++) tb[i] *= 0.5 / n2;
  mat3_vec(s->R, tb, t);
  for (int i = 0; i < 3; i++) s->bias_a[i] = -t[i], s->bias_a[3 + i] = -fx[i];
  /* the joint */
  memset(s->S, 0, sizeof s->S);
  memset(s->kappa, 0, sizeof s->kappa);
  if (s->kind == JOINT_FREE) {
    s->dof = 6;
    for (int i = 0; i < 6; i++) s->S[i + 6 * i] = 1.0;
    return;
  }
  static const double zero[3] = {0, 0, 0};
  const SpatialBody *par = s->parent >= 0 ? &w->bodies[s->parent] : NULL;
  const double *wp = par ? par->w : zero;
  double rc[3], rp[3], n[3], a[3], b[3];
  mat3_vec(s->R, s->r_child, rc); /* the joint point from the child's centre */
  for (int i = 0; i < 3; i++) rp[i] = s->p[i] + rc[i] - (par ? par->p[i] : 0.0);
  for (int i = 0; i < 3; i++) s->d[i] = s->p[i] - (par ? par->p[i] : 0.0);
  /* kappa's linear part: the point's velocity product on the parent minus on the child */
  cross(wp, rp, a);
  cross(wp, a, a);
  cross(s->w, rc, b);
  cross(s->w, b, b);
  for (int i = 0; i < 3; i++) s->kappa[3 + i] = a[i] - b[i];
  switch (s->kind) {
  case JOINT_BALL:
    s->dof = 3;
    for (int k = 0; k < 3; k++) {
      double e_k[3] = {k == 0, k == 1, k == 2}, c[3];
      cross(rc, e_k, c); /* the child's point held: a = ... + rc x u' */
      s->S[k + 6 * k] = 1.0;
      for (int i = 0; i < 3; i++) s->S[3 + i + 6 * k] = c[i];
    }
    break;
  case JOINT_HINGE: {
    if (par)
      mat3_vec(par->R, s->axis, n);
    else
      memcpy(n, s->axis, sizeof n);
    double rel[3] = {s->w[0] - wp[0], s->w[1] - wp[1], s->w[2] - wp[2]}, wn[3], c[3];
    double spin = dot(n, rel);
    cross(wp, n, wn); /* the axis turns with the parent */
    for (int i = 0; i < 3; i++) wn[i] *= spin;
    cross(rc, wn, c);
    cross(rc, n, a);
    s->dof = 1;
    for (int i = 0; i < 3; i++) {
      s->S[i] = n[i], s->S[3 + i] = a[i];
      s->kappa[i] = wn[i];
      s->kappa[3 + i] += c[i];
    }
    break;
  }
  case JOINT_SLIDER: {
    /* the child turns with the parent; its point slides along n, which turns with both:
     * kappa gains the Coriolis term 2 (w_p x n) s' */
    slider_axis(s, par, n);
    double c[3], wn[3];
    cross(wp, s->d, c);
    double travel = 0;
    for (int i = 0; i < 3; i++) travel += n[i] * (s->vel[i] - (par ? par->vel[i] : 0.0) - c[i]);
    cross(wp, n, wn);
    s->dof = 1;
    for (int i = 0; i < 3; i++) {
      s->S[3 + i] = n[i];
      s->kappa[3 + i] += 2 * travel * wn[i];
    }
    break;
  }
  default: /* a weld: the point held and no turning */
    s->dof = 0;
  }
  if (rate > 0) baumgarte(s, par, rc, rate);
}

/* f := X^T f for the shift d (X: [a; l] -> [a; l - d x a]): the angular part gains d x l. */
static void shift_force(const double d[3], const double *f, double *out) {
  double c[3];
  cross(d, f + 3, c);
  for (int i = 0; i < 3; i++) out[i] += f[i] + c[i], out[3 + i] += f[3 + i];
}

/* P += X^T M X for the shift d (M 6 x 6 column-major, symmetric). In 3 x 3 blocks, with
 * M = [A B; B^T C] and D = [d x] (D^T = -D), X = [1 0; -D 1]: the angular block gains
 * A - B D - (B D)^T - D C D, the coupling B + D C, the linear block C. */
static void shift_inertia(const double d[3], const double *M, double *P) {
  double BD[9], DC[9]; /* row-major */
  for (int i = 0; i < 3; i++) {
    const double b[3] = {M[i + 18], M[i + 24], M[i + 30]};             /* B's row i */
    const double c[3] = {M[3 + i + 18], M[3 + i + 24], M[3 + i + 30]}; /* C's column i */
    /* (B D)_ij = b . (d x e_j) = (b x d)_j; (D C)_:i = d x C_:i */
    BD[3 * i] = b[1] * d[2] - b[2] * d[1];
    BD[3 * i + 1] = b[2] * d[0] - b[0] * d[2];
    BD[3 * i + 2] = b[0] * d[1] - b[1] * d[0];
    DC[i] = d[1] * c[2] - d[2] * c[1];
    DC[3 + i] = d[2] * c[0] - d[0] * c[2];
    DC[6 + i] = d[0] * c[1] - d[1] * c[0];
  }
  for (int j = 0; j < 3; j++) {
    /* (D C D)_:j = (D C) (d x e_j): row i is (DC_i x d)_j */
    for (int i = 0; i <= j; i++) {
      const double *r = DC + 3 * i;
      double dcd = j == 0 ? r[1] * d[2] - r[2] * d[1]
        : j == 1          ? r[2] * d[0] - r[0] * d[2]
                          : r[0] * d[1] - r[1] * d[0];
      double x = M[i + 6 * j] - BD[3 * i + j] - BD[3 * j + i] - dcd;
      P[i + 6 * j] += x;
      if (i != j) P[j + 6 * i] += x;
    }
    for (int i = 0; i < 3; i++) {
      double x = M[i + 6 * (3 + j)] + DC[3 * i + j]; /* B + D C, and its transpose */
      P[i + 6 * (3 + j)] += x;
      P[3 + j + 6 * i] += x;
      P[3 + i + 6 * (3 + j)] += M[3 + i + 6 * (3 + j)];
    }
  }
}

/* Leaves to root for body s with dof freedoms (a constant where it is called, so that the
 * loops unroll): U = I S, D = S^T I S factored, DU = D^-1 [U^T, S^T p] kept for the way
 * down, and what is left, I - U D^-1 U^T and p - U D^-1 S^T p + I' kappa, passed to the
 * parent. 0, or -1 when the articulated inertia is not positive definite along them. */
static inline int eliminate(jySpatialWork *w, SpatialBody *s, const int dof) {
  const double *I = s->inertia_a, *S = s->S, *p = s->bias_a;
  double Ia[36], pa[6];
  if (dof > 0) {
    double scale = 0;
    for (int i = 0; i < 6; i++) scale = I[i + 6 * i] > scale ? I[i + 6 * i] : scale;
    for (int k = 0; k < dof; k++)
      for (int i = 0; i < 6; i++) {
        double u = 0;
        for (int j = 0; j < 6; j++) u += I[i + 6 * j] * S[j + 6 * k];
        s->U[i + 6 * k] = u;
      }
    for (int k = 0; k < dof; k++)
      for (int l = 0; l < dof; l++) {
        double x = 0;
        for (int i = 0; i < 6; i++) x += S[i + 6 * k] * s->U[i + 6 * l];
        s->D[k + dof * l] = x;
      }
    if (jy_tree_factor_block(s->D, dof, scale) != 0) return -1;
    for (int k = 0; k < dof; k++) {
      double x = 0;
      for (int i = 0; i < 6; i++) {
        s->DU[k + dof * i] = s->U[i + 6 * k];
        x += S[i + 6 * k] * p[i];
      }
      s->DU[k + dof * 6] = x;
    }
    jy_tree_solve_block(s->D, dof, s->DU, 7);
  }
  if (s->parent < 0) return 0; /* nothing to pass: the world or none */
  for (int i = 0; i < 6; i++) {
    pa[i] = p[i];
    for (int k = 0; k < dof; k++) pa[i] -= s->U[i + 6 * k] * s->DU[k + dof * 6];
    for (int j = 0; j <= i; j++) { /* symmetric: the lower half, mirrored */
      double x = I[i + 6 * j];
      for (int k = 0; k < dof; k++) x -= s->U[i + 6 * k] * s->DU[k + dof * j];
      Ia[i + 6 * j] = Ia[j + 6 * i] = x;
    }
  }
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) pa[i] += Ia[i + 6 * j] * s->kappa[j];
  SpatialBody *par = &w->bodies[s->parent];
  shift_force(s->d, pa, par->bias_a);
  shift_inertia(s->d, Ia, par->inertia_a);
  return 0;
}

static int pass_up(jySpatialWork *w, SpatialBody *s) {
  switch (s->dof) {
  case 0:
    return eliminate(w, s, 0);
  case 1:
    return eliminate(w, s, 1);
  case 3:
    return eliminate(w, s, 3);
  default:
    return eliminate(w, s, 6);
  }
}

/* Root to leaves for body s: its acceleration from its parent's, and its joint's
 * u' = -D^-1 (U^T A + S^T p) from what the way up kept. */
static void pass_down(jySpatialWork *w, SpatialBody *s) {
  double *A = s->acc;
  memcpy(A, s->kappa, sizeof s->acc);
  if (s->parent >= 0) {
    const double *Ap = w->bodies[s->parent].acc;
    double c[3];
    cross(s->d, Ap, c);
    for (int i = 0; i < 3; i++) A[i] += Ap[i], A[3 + i] += Ap[3 + i] - c[i];
  }
  int dof = s->dof;
  double u[6];
  for (int k = 0; k < dof; k++) {
    u[k] = -s->DU[k + dof * 6];
    for (int i = 0; i < 6; i++) u[k] -= s->DU[k + dof * i] * A[i];
  }
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < dof; k++) A[i] += s->S[i + 6 * k] * u[k];
}

/* The tree's response to the generalized force f (n, on the bodies' coordinates) alone: no
 * velocity product, no Baumgarte, the articulated inertias and their factors of the last
 * recursion (the same state). The coordinates' accelerations into y (n; 0 elsewhere). */
static void unit_response(jySpatialWork *w, const double *q, const double *f, double *y) {
  for (int b = 0; b < w->nbodies; b++) {
    SpatialBody *s = &w->bodies[b];
    const double *e = q + s->coord + 3, *fq = f + s->coord + 3;
    double n2 = dot(e, e) + e[3] * e[3], tb[3], t[3];
    g_times(e, fq, tb);
    for (int i = 0; i < 3; i++) tb[i] *= 0.5 / n2;
    mat3_vec(s->R, tb, t);
    for (int i = 0; i < 3; i++) s->unit_f[i] = -t[i], s->unit_f[3 + i] = -f[s->coord + i];
  }
  for (int b = w->nbodies - 1; b >= 0; b--) {
    SpatialBody *s = &w->bodies[b];
    int dof = s->dof;
    for (int k = 0; k < dof; k++) {
      double x = 0;
      for (int i = 0; i < 6; i++) x += s->S[i + 6 * k] * s->unit_f[i];
      s->unit_x[k] = x;
    }
    if (dof > 0) jy_tree_solve_block(s->D, dof, s->unit_x, 1);
    if (s->parent < 0) continue;
    double pa[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
      double x = s->unit_f[i];
      for (int k = 0; k < dof; k++) x -= s->U[i + 6 * k] * s->unit_x[k];
      pa[i] = x;
    }
    shift_force(s->d, pa, w->bodies[s->parent].unit_f);
  }
  for (int b = 0; b < w->nbodies; b++) {
    SpatialBody *s = &w->bodies[b];
    double *A = s->acc; /* the recursion's accelerations are in acc already: reused */
    memset(A, 0, sizeof s->acc);
    if (s->parent >= 0) {
      const double *Ap = w->bodies[s->parent].acc;
      double c[3];
      cross(s->d, Ap, c);
      for (int i = 0; i < 3; i++) A[i] = Ap[i], A[3 + i] = Ap[3 + i] - c[i];
    }
    int dof = s->dof;
    double u[6];
    for (int k = 0; k < dof; k++) {
      u[k] = -s->unit_x[k];
      for (int i = 0; i < 6; i++) u[k] -= s->DU[k + dof * i] * A[i];
    }
    for (int i = 0; i < 6; i++)
      for (int k = 0; k < dof; k++) A[i] += s->S[i + 6 * k] * u[k];
    const double *e = q + s->coord + 3;
    double ab[3], gq[4];
    mat3t_vec(s->R, A, ab);
    gt_times(e, ab, gq);
    for (int i = 0; i < 3; i++) y[s->coord + i] = A[3 + i];
    for (int i = 0; i < 4; i++) y[s->coord + 3 + i] = 0.5 * gq[i];
  }
}

/* Which rows beside the tree depend on the others through it, by LAPACK's pivoted Cholesky
 * (dpstrf) of a copy of the Gram matrix. At the first state (redundant < 0): those whose
 * pivot is under rank_rcond of the largest (the Gram matrix is in squared units of the rows'
 * singular values: rounding leaves a dependent row's pivot near 1e-16 of the largest, and off
 * the manifold by d it looks independent by about d^2), their count kept for the evaluator's
 * life, as the compiled dependent rows are. Later: that many, the last pivots. */
static void decide_dropped(ExtraRows *x, double rank_rcond) {
  int nx = x->count, first = x->redundant < 0;
  double largest = 0;
  memcpy(x->work, x->full, sizeof(double) * (size_t)nx * nx);
  for (int k = 0; k < nx; k++) largest = fmax(largest, x->work[k + nx * k]);
  double cut = first ? rank_rcond * largest : -1.0; /* -1: dpstrf's own floor */
  lapack_int rank = 0;
  if (LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', nx, x->work, nx, x->pivots, &rank, cut,
                          x->work + (size_t)nx * nx) < 0)
    rank = nx;
  if (first) x->redundant = nx - (int)rank;
  memset(x->dropped, 0, (size_t)nx);
  for (int r = nx - x->redundant; r < nx; r++) x->dropped[x->pivots[r] - 1] = 1;
  if (first) memcpy(x->dropped_first, x->dropped, (size_t)nx);
}

/* The kept rows' solve: acc = a + Y_K lambda with G_K lambda = r_K, G_K scaled to a unit
 * diagonal and factored in x->gram (its condition estimated later, when the branch guard
 * asks: jy_spatial_rows_clear). 0, or -1 when G_K is not positive definite. */
static int solve_kept(ExtraRows *x, int n, const double *a, double *acc) {
  int nx = x->count, nk = 0;
  for (int k = 0; k < nx; k++)
    if (!x->dropped[k]) x->kept[nk++] = k;
  memcpy(acc, a, sizeof(double) * (size_t)n);
  x->rcond = 0; /* until the kept rows are factored */
  if (nk == 0) {
    x->rcond = 1;
    return 0;
  }
  /* scaled to a unit diagonal, so that the condition says how near the rows are to
   * depending on each other, whatever their units */
  for (int c = 0; c < nk; c++) {
    double d = x->full[x->kept[c] * (nx + 1)];
    if (!(d > 0 && d < INFINITY)) return -1;
    x->scale[c] = 1.0 / sqrt(d);
  }
  double norm1 = 0;
  for (int c = 0; c < nk; c++) {
    double col = 0;
    for (int r = 0; r < nk; r++) {
      double g = x->full[x->kept[r] + nx * x->kept[c]] * x->scale[r] * x->scale[c];
      x->gram[r + nk * c] = g;
      col += fabs(g);
    }
    norm1 = fmax(norm1, col);
    x->lambda[c] = x->residual[x->kept[c]] * x->scale[c];
  }
  if (jy_tree_factor_block(x->gram, nk, 1.0) != 0) return -1;
  x->nkept = nk, x->norm1 = norm1;
  x->rcond = -1; /* the factor stands: jy_spatial_rows_clear estimates when it is asked */
  jy_tree_solve_block(x->gram, nk, x->lambda, 1);
  for (int c = 0; c < nk; c++) {
    const double *y = x->response + (size_t)x->kept[c] * n;
    double l = x->lambda[c] * x->scale[c];
    for (int j = 0; j < n; j++) acc[j] += l * y[j];
  }
  return 0;
}

/* A_x out of the rows just assembled: into the store on a model solved there, else into the
 * dense A (dyn_assemble.c, sink_of with JY_ASM_SPARSE_ONLY). */
static void read_rows(const jyEval *e, ExtraRows *x) {
  const jyModel *md = e->model;
  int n = md->n, nx = x->count;
  memset(x->ax, 0, sizeof(double) * (size_t)nx * (size_t)n);
  if (e->store_solves) {
    const jyCsc *A = &e->store_jac;
    for (int j = 0; j < n; j++)
      for (int k = A->p[j]; k < A->p[j + 1]; k++) {
        int at = x->index_of[A->i[k]];
        if (at >= 0) x->ax[at + (size_t)nx * j] = A->x[k];
      }
    return;
  }
  for (int j = 0; j < n; j++)
    for (int k = 0; k < nx; k++) x->ax[k + (size_t)nx * j] = e->jac[x->rows[k] + (size_t)j * md->m];
}

/* Each row's nonzero columns (a joint's row touches two bodies' fourteen coordinates): the
 * products below run over these. */
static void list_nonzeros(ExtraRows *x, int n) {
  int nx = x->count;
  for (int k = 0; k < nx; k++) {
    int *col = x->nz_col + (size_t)k * n, count = 0;
    for (int j = 0; j < n; j++)
      if (x->ax[k + (size_t)nx * j] != 0) col[count++] = j;
    x->nz_count[k] = count;
  }
}

/* A_x's row k times the n-vector y. */
static double row_times(const ExtraRows *x, int n, int k, const double *y) {
  const int *col = x->nz_col + (size_t)k * n;
  double sum = 0;
  for (int i = 0; i < x->nz_count[k]; i++) sum += x->ax[k + (size_t)x->count * col[i]] * y[col[i]];
  return sum;
}

/* The largest relative miss of the rows left out (0 when none is). */
static double dropped_miss(const ExtraRows *x, int n, const double *acc) {
  double worst = 0;
  for (int k = 0; k < x->count; k++) {
    if (!x->dropped[k]) continue;
    const int *col = x->nz_col + (size_t)k * n;
    double res = -x->b[k], size = fabs(x->b[k]);
    for (int i = 0; i < x->nz_count[k]; i++) {
      double term = x->ax[k + (size_t)x->count * col[i]] * acc[col[i]];
      res += term, size += fabs(term);
    }
    double miss = fabs(res) / fmax(size, 1e-300);
    worst = miss > worst || miss != miss ? miss : worst;
  }
  return worst;
}

/* The rows beside the tree, A_x q'' = b_x, by Udwadia and Kalaba on the tree's reduced
 * system: q'' = a + Phi A_x^T lambda with (A_x Phi A_x^T) lambda = b_x - A_x a, where a is
 * the tree's answer and Phi the tree's inverse inertia (one response a row). The tree keeps
 * all its own rows, so a redundant row is one of these (Bricard's sixth hinge). As the row
 * path's dependent rows, how many to leave out is decided at the first state, on the manifold
 * (deciding at each state would let the drift make a dependent row look independent, and
 * amplify it); which ones, again when one misses by more than dependent_tol. Where it then
 * misses by a conflict's size, or the kept rows are not independent through the tree (a
 * singular configuration), the row path answers, or says why it cannot. */
static jyStatus close_rows(jyEval *e, jySpatialWork *w, const double *q, double *acc, double rate) {
  const jyModel *md = e->model;
  ExtraRows *x = &w->extra;
  int n = md->n, nx = x->count;
  read_rows(e, x);
  list_nonzeros(x, n);
  memcpy(x->a, acc, sizeof(double) * (size_t)n);
  for (int k = 0; k < nx; k++) {
    int i = x->rows[k];
    double b = e->rhs[i]; /* Baumgarte as the row path's (jy_eval_acceleration) */
    if (rate > 0 && md->row_kinds[i] == JY_ROW_POSITION)
      b -= 2 * rate * e->rate[i] + rate * rate * e->residual[i];
    else if (rate > 0 && md->row_kinds[i] == JY_ROW_VELOCITY)
      b -= rate * e->residual[i];
    x->b[k] = b;
    double *y = x->response + (size_t)k * n; /* A_x's row k, then the tree's response to it */
    for (int j = 0; j < n; j++) y[j] = x->ax[k + (size_t)nx * j];
    unit_response(w, q, y, y);
    x->residual[k] = b - row_times(x, n, k, x->a);
  }
  for (int r = 0; r < nx; r++)
    for (int c = 0; c <= r; c++) { /* symmetric in exact arithmetic: both halves averaged */
      double g = 0.5 *
        (row_times(x, n, r, x->response + (size_t)c * n) +
         row_times(x, n, c, x->response + (size_t)r * n));
      x->full[r + nx * c] = x->full[c + nx * r] = g;
    }
  if (x->redundant < 0) decide_dropped(x, md->solver.rank_rcond);
  if (solve_kept(x, n, x->a, acc) != 0) return JY_ERR_NOT_UNIQUE;
  if (x->redundant == 0 || dropped_miss(x, n, acc) <= md->solver.dependent_tol) return JY_OK;
  decide_dropped(x, md->solver.rank_rcond);
  if (solve_kept(x, n, x->a, acc) != 0) return JY_ERR_NOT_UNIQUE;
  if (!(dropped_miss(x, n, acc) <= CONFLICT_MISS)) {
    x->rcond = 0; /* the row path answers: the guard estimates */
    return JY_ERR_NOT_UNIQUE;
  }
  return JY_OK;
}

void jy_spatial_forget_rows(jySpatialWork *w) {
  if (w && w->extra.redundant >= 0)
    memcpy(w->extra.dropped, w->extra.dropped_first, (size_t)w->extra.count);
}

int jy_spatial_rows_clear(jySpatialWork *w) {
  ExtraRows *x = &w->extra;
  if (x->count == 0) return 1;
  if (x->rcond < 0) { /* LAPACK's estimate from the last solve's factor: at step ends only */
    x->rcond = 1;
    if (x->nkept > 1 &&
        LAPACKE_dpocon_work(LAPACK_COL_MAJOR, 'L', x->nkept, x->gram, x->nkept, x->norm1, &x->rcond,
                            x->work, x->iwork) != 0)
      x->rcond = 0;
  }
  return x->rcond >= SPATIAL_GUARD_RCOND;
}

jyStatus jy_spatial_acceleration(jyEval *e, const double *q, const double *v, double t,
                                 double *acc) {
  jySpatialWork *w = e->spatial;
  double rate = e->baumgarte_rate;
  unsigned what = JY_ASM_FORCE | JY_ASM_NONIDEAL;
  if (w->extra.count > 0)
    what |= JY_ASM_CONSTRAINTS | JY_ASM_SPARSE_ONLY | (rate > 0 ? JY_ASM_RESIDUALS : 0u);
  e->row_filter = w->extra.count > 0 ? w->extra.filter : NULL;
  jyStatus st = jy_assemble(e, q, v, t, what);
  e->row_filter = NULL;
  if (st != JY_OK) return st;
  if (w->stale) geometry(e, w);
  w->extra.rcond = 0; /* until close_rows has solved: a failure here leaves the guard on */
  for (int b = 0; b < w->nbodies; b++) {
    const double *qe = q + w->bodies[b].coord + 3;
    double n2 = dot(qe, qe) + qe[3] * qe[3];
    if (!(n2 > 0 && n2 < INFINITY)) return JY_ERR_NOT_UNIQUE; /* the row path names the part */
    body_state(w, &w->bodies[b], q, v, e->force, e->nonideal, rate);
  }
  for (int b = w->nbodies - 1; b >= 0; b--)
    if (pass_up(w, &w->bodies[b]) != 0) return JY_ERR_NOT_UNIQUE; /* the row path says why */
  for (int b = 0; b < w->nbodies; b++) {
    SpatialBody *s = &w->bodies[b];
    pass_down(w, s);
    /* q'' of the body: the centre's, and the quaternion's from w_b' = R^T alpha with the
     * norm row's q . q'' = -|q'|^2 */
    const double *qe = q + s->coord + 3, *ve = v + s->coord + 3;
    double ab[3], gq[4];
    mat3t_vec(s->R, s->acc, ab);
    gt_times(qe, ab, gq);
    double n2 = dot(qe, qe) + qe[3] * qe[3], vv = dot(ve, ve) + ve[3] * ve[3];
    double qv = dot(qe, ve) + qe[3] * ve[3];
    /* the norm row: q . q'' = -|q'|^2, with Baumgarte's terms when it is on */
    double along = (-vv - 2 * rate * qv - 0.5 * rate * rate * (n2 - 1)) / n2;
    for (int i = 0; i < 3; i++) acc[s->coord + i] = s->acc[3 + i];
    for (int i = 0; i < 4; i++) acc[s->coord + 3 + i] = 0.5 * gq[i] + along * qe[i];
  }
  if (w->extra.count > 0) {
    st = close_rows(e, w, q, acc, rate);
    if (st != JY_OK) return st;
  }
  w->solves++;
  return JY_OK;
}

/* The sparse acceleration solve for any sparse symmetric positive semi-definite M: block
 * diagonal of any block size, massless coordinates (singular M), no constraint rows at all.
 *
 * With the rows of A scaled to unit length (As, bs) and the auxiliary mass
 * M_a = M + alpha As^T As (positive definite whenever q'' is unique), q'' and z solve
 *     K [q''; z] = [M_a, As^T; As, -beta I] [q''; z] = [Q + C + alpha As^T bs; bs]
 * at beta = 0 (then A q'' = b and M q'' = Q + C - As^T z: the multipliers are mu = -S z).
 * The auxiliary mass may take any subset S of the rows instead (alpha As_S^T (As_S q'' - bs_S)
 * is zero at the answer: no solution changes), and it is only needed where M is singular.
 * Where the patterns allow (augmented_rows: rows joining small blocks of M that each have
 * rows of their own, a body3d's norm row), a second K with S = every row but those is
 * factored first: M_a keeps M's block pattern instead of a dense block per spatial joint
 * (issue 44: the joints' 14 x 14 blocks were most of the LDL's work). Its M_a is positive
 * definite whenever q'' is unique and each of those blocks is with its own rows, which
 * blocks_definite checks at each factorization; all that follows then holds for it too.
 * Its unshifted answer is kept when the pivots' signs are right, it is at rounding and
 * meets the rows (JY_UK_OK); anything else (a block singular beyond its rows: a zero
 * moment of inertia, a zero mass; dependent rows kept) is answered by K over all rows,
 * as below.
 * SuiteSparse's LDL factors K in a fill-reducing ordering CHOLMOD chooses once, each row
 * then moved to just after the last of its coordinates, or after its pivot (a coordinate
 * where the caller knows its coefficient is +-1: a glue's row on a block of coordinates);
 * K's pattern is that of M, A and As_S^T As_S, fixed by the model, and is stored already
 * permuted so that a factorization permutes nothing (allocates nothing). In that ordering
 * every leading block of K is [M_a11, A1^T; A1, 0] with A1 of full row rank when the rows
 * are independent (usable_pivots says why for the pivoted ones), and M_a11 positive
 * definite when M_a is: K factors as it is (beta = 0), and one solve is kept when its
 * backward error is at rounding. A dependent row not dropped has a pivot that is rounding:
 * of the wrong sign or zero, K is factored again shifted, beta > 0 (quasi-definite, so it
 * factors in any ordering), and iterative refinement against beta = 0 removes the shift;
 * of the right sign, the answer is kept only at rounding, else the shifted factorization
 * takes it too. Dependent rows the caller drops become decoupled rows (z = 0); dependent
 * rows it does not drop are met either way (z is not unique, q'' is). A massless free
 * direction, or rows that contradict each other, show as a pivot of the wrong sign or a
 * refinement that stalls: JY_UK_NOT_UNIQUE, and the caller decides (dense rank-revealing
 * path or error).
 * M, A are read from compressed-column stores (jyCsc), never from dense arrays. */
#include "dyn_kkt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>
#include <suitesparse/ldl.h>

#include "mem.h"
#include "vec.h"

/* --- compressed-column patterns --- */

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Sorts (row, col) pairs by column then row; position[k] receives pair k's place among the
 * distinct pairs, p (ncol + 1) and i (distinct count) their pattern. Returns the distinct
 * count, or -1. i may be NULL (count only). The pairs are bucketed by column, merged by
 * row within each column and each column's few distinct rows sorted: O(count + nrow + ncol)
 * time and one int per pair of memory. A comparison sort of (key, index) records was most of
 * a large model's compile (issue 44: a 1000-body spatial chain, 430,000 pairs). */
static int64_t sorted_pattern(const jyAllocator *a, int nrow, int ncol, size_t count,
                              const int *rows, const int *cols, int *position, int *p, int *i) {
  int *start = jy_alloc(a, sizeof(int) * ((size_t)ncol + 2));
  int *bucket = jy_alloc(a, sizeof(int) * (count + 1));      /* pair indices by column */
  int *seen = jy_alloc(a, sizeof(int) * ((size_t)nrow + 1)); /* row -> last column it was in */
  int *slot_of = jy_alloc(a, sizeof(int) * ((size_t)nrow + 1));
  int *col_rows = jy_alloc(a, sizeof(int) * ((size_t)nrow + 1)); /* a column's distinct rows */
  int64_t distinct = -1;
  if (!start || !bucket || !seen || !slot_of || !col_rows) goto done;
  memset(start, 0, sizeof(int) * ((size_t)ncol + 2));
  for (size_t k = 0; k < count; k++) start[cols[k] + 2]++;
  for (int c = 0; c < ncol; c++) start[c + 2] += start[c + 1];
  for (size_t k = 0; k < count; k++) bucket[start[cols[k] + 1]++] = (int)k;
  /* start[c] .. start[c + 1]: column c's pairs */
  for (int r = 0; r < nrow; r++) seen[r] = -1;
  distinct = 0;
  p[0] = 0;
  for (int c = 0; c < ncol; c++) {
    int nr = 0;
    for (int t = start[c]; t < start[c + 1]; t++) {
      int r = rows[bucket[t]];
      if (seen[r] != c) {
        seen[r] = c;
        col_rows[nr++] = r;
      }
    }
    if (nr > 32) /* a dense column (a hub part) */
      qsort(col_rows, (size_t)nr, sizeof(int), compare_ints);
    else /* insertion sort: most columns hold few distinct rows */
      for (int x = 1; x < nr; x++)
        for (int y = x; y > 0 && col_rows[y - 1] > col_rows[y]; y--) {
          int swap = col_rows[y];
          col_rows[y] = col_rows[y - 1];
          col_rows[y - 1] = swap;
        }
    for (int x = 0; x < nr; x++) {
      slot_of[col_rows[x]] = (int)distinct + x;
      if (i) i[distinct + x] = col_rows[x];
    }
    if (position)
      for (int t = start[c]; t < start[c + 1]; t++) position[bucket[t]] = slot_of[rows[bucket[t]]];
    distinct += nr;
    p[c + 1] = (int)distinct;
  }
done:
  jy_free(a, start);
  jy_free(a, bucket);
  jy_free(a, seen);
  jy_free(a, slot_of);
  jy_free(a, col_rows);
  return distinct;
}

int jy_csc_build(const jyAllocator *a, int nrow, int ncol, size_t count, const int *rows,
                 const int *cols, jyCsc *out) {
  memset(out, 0, sizeof *out);
  out->nrow = nrow;
  out->ncol = ncol;
  out->p = jy_calloc(a, (size_t)ncol + 1, sizeof(int));
  out->i = jy_calloc(a, count + 1, sizeof(int));
  if (!out->p || !out->i ||
      sorted_pattern(a, nrow > 0 ? nrow : 1, ncol, count, rows, cols, NULL, out->p, out->i) < 0) {
    jy_csc_free(a, out);
    return -1;
  }
  out->x = jy_calloc(a, (size_t)out->p[ncol] + 1, sizeof(double));
  if (!out->x) {
    jy_csc_free(a, out);
    return -1;
  }
  return 0;
}

void jy_csc_free(const jyAllocator *a, jyCsc *c) {
  jy_free(a, c->p);
  jy_free(a, c->i);
  jy_free(a, c->x);
  c->p = c->i = NULL;
  c->x = NULL;
}

/* --- the KKT work --- */

struct jyKktWork {
  jyAllocator alloc;
  int n, m, size;
  cholmod_common common;
  int started;
  cholmod_sparse *k; /* upper triangle of P K P^T */
  /* its LDL^T (SuiteSparse LDL, natural order): unit L by columns (l_p, l_nz, l_i, l_x, the
   * diagonal left out), D; elimination tree and workspace for ldl_numeric */
  int *l_p, *l_nz, *l_i, *parent, *pattern, *flag;
  double *l_x, *d, *work;
  int *perm, *inv; /* position k of the factor is unknown perm[k] (coordinates, then rows) */
  int *mass_pos;   /* per entry of M: its place in k, -1 below the diagonal */
  int *jac_pos;    /* per entry of A: its place in k (column n + row) */
  /* As^T As: the entries of each row of A by column, row_entry[row_ptr[r] .. row_ptr[r + 1]),
   * and per pair (a, b) of one row's entries, a's column <= b's, listed row by row, a then
   * b: its place in k */
  int *row_ptr, *row_entry, *pair_pos, npairs;
  int *row_pos, *mass_diag; /* per row: its diagonal in k; per coordinate: M_jj */
  int *entry_col;           /* per entry of A: its column */
  double *row_scale, *row_norm, *rhs, *x, *res, *corr, *bound;
  int factored;          /* the factor is that of the values below */
  double factored_beta;  /* ... at this shift: 0, or the fallback's */
  int unshifted_factors; /* those values factored unshifted */
  int solves;            /* triangular solves the last answer took */
  int pivoted;           /* rows the ordering placed right after their pivot coordinates */
  double factored_alpha, *factored_mass, *factored_jac, *factored_scale;
  long factorizations; /* numeric factorizations so far (the subset's work counts its own) */
  /* The rows in the auxiliary mass (NULL: all; naugment of them), and a second work
   * augmented by a subset (NULL: none), tried first (jy_kkt_create, jy_kkt_solve). failed:
   * the recorded values failed its check or its unshifted factorization. */
  unsigned char *augment;
  struct jyKktWork *reduced;
  int naugment, failed, answered_reduced;
  /* the sealed blocks the subset relies on (augmented_rows): nblock of them, their
   * coordinates block_col[block_ptr[b] .. block_ptr[b + 1]) and own rows (block_row_ptr,
   * block_row), and room for one block's dense M_C + alpha As_C^T As_C (block) */
  int nblock, *block_ptr, *block_col, *block_row_ptr, *block_row;
  /* M's lower entries in each block (block_mass_k[block_mass_ptr[b] ..]) and where they and
   * the own rows' pairs land in block */
  int *block_mass_ptr, *block_mass_k, *block_mass_at, *block_pair_at;
  double *block;
};

/* Whether row r is in the auxiliary mass. */
static int augmented(const jyKktWork *w, int r) { return !w->augment || w->augment[r]; }

void jy_kkt_destroy(jyKktWork *w) {
  if (!w) return;
  jy_kkt_destroy(w->reduced);
  if (w->started) {
    cholmod_free_sparse(&w->k, &w->common);
    cholmod_finish(&w->common);
  }
  jyAllocator a = w->alloc;
  int *ints[] = {w->perm,          w->inv,           w->mass_pos,       w->jac_pos,
                 w->row_ptr,       w->row_entry,     w->pair_pos,       w->row_pos,
                 w->mass_diag,     w->l_p,           w->l_nz,           w->l_i,
                 w->parent,        w->pattern,       w->flag,           w->entry_col,
                 w->block_ptr,     w->block_col,     w->block_row_ptr,  w->block_row,
                 w->block_mass_at, w->block_pair_at, w->block_mass_ptr, w->block_mass_k};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) jy_free(&a, ints[k]);
  double *doubles[] = {
    w->row_scale,    w->row_norm,       w->rhs, w->x, w->res,  w->corr, w->bound, w->factored_mass,
    w->factored_jac, w->factored_scale, w->l_x, w->d, w->work, w->block};
  for (size_t k = 0; k < sizeof doubles / sizeof doubles[0]; k++) jy_free(&a, doubles[k]);
  jy_free(&a, w->augment);
  jy_free(&a, w);
}

/* The columns of each row of A in increasing order: cols[ptr[r] .. ptr[r + 1]) (ptr: m + 1,
 * cols: nnz); entry, when not NULL, gets each one's entry index. 0, or -1 (no memory). */
static int row_columns(const jyKktWork *w, const jyCsc *jac, int **ptr, int **cols, int **entry) {
  int m = w->m, n = w->n, nnz = jac->p[n];
  *ptr = jy_calloc(&w->alloc, (size_t)m + 2, sizeof(int));
  *cols = jy_alloc(&w->alloc, sizeof(int) * ((size_t)nnz + 1));
  if (entry) *entry = jy_alloc(&w->alloc, sizeof(int) * ((size_t)nnz + 1));
  if (!*ptr || !*cols || (entry && !*entry)) return -1;
  int *p = *ptr;
  for (int k = 0; k < nnz; k++) p[jac->i[k] + 2]++;
  for (int r = 0; r < m; r++) p[r + 2] += p[r + 1];
  for (int j = 0; j < n; j++) /* columns in order: each row's entries by column */
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
      int at = p[jac->i[k] + 1]++;
      (*cols)[at] = j;
      if (entry) (*entry)[at] = k;
    }
  return 0;
}

/* The pairs of unknowns (ta <= tb, natural numbering) where K can be non-zero: M's upper
 * entries, A's entries (coordinate, n + row), the distinct pairs of columns that share a
 * row of A (As^T As), the diagonals. Listed once per distinct product rather than once per
 * product: the pattern of K is the same, and a large model's compile sorted every product
 * (issue 44: 430,000 pairs where K has 130,000 entries). *count gets how many; the arrays
 * are the caller's. 0, or -1 (no memory). */
static int natural_entries(const jyKktWork *w, const jyCsc *mass, const jyCsc *jac, int **ta,
                           int **tb, size_t *count) {
  int n = w->n, m = w->m, status = -1;
  int *ptr = NULL, *cols = NULL, *mark = jy_alloc(&w->alloc, sizeof(int) * ((size_t)n + 1));
  *ta = *tb = NULL;
  if (!mark || row_columns(w, jac, &ptr, &cols, NULL) != 0) goto done;
  for (int pass = 0; pass < 2; pass++) { /* count, then list */
    size_t t = 0;
    int *a = *ta, *b = *tb;
    for (int j = 0; j < n; j++)
      for (int k = mass->p[j]; k < mass->p[j + 1]; k++)
        if (mass->i[k] <= j) {
          if (a) a[t] = mass->i[k], b[t] = j;
          t++;
        }
    for (int j = 0; j < n; j++)
      for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
        if (a) a[t] = j, b[t] = n + jac->i[k];
        t++;
      }
    for (int j = 0; j < n; j++) mark[j] = -1;
    for (int j = 0; j < n; j++) /* column j of As^T As: the columns c <= j sharing a row */
      for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
        int r = jac->i[k];
        if (!augmented(w, r)) continue;
        for (int x = ptr[r]; x < ptr[r + 1] && cols[x] <= j; x++)
          if (mark[cols[x]] != j) {
            mark[cols[x]] = j;
            if (a) a[t] = cols[x], b[t] = j;
            t++;
          }
      }
    for (int u = 0; u < m + n; u++) {
      if (a) a[t] = b[t] = u;
      t++;
    }
    *count = t;
    if (pass == 0) {
      *ta = jy_alloc(&w->alloc, sizeof(int) * (t + 1));
      *tb = jy_alloc(&w->alloc, sizeof(int) * (t + 1));
      if (!*ta || !*tb) goto done;
    }
  }
  status = 0;
done:
  if (status != 0) {
    jy_free(&w->alloc, *ta);
    jy_free(&w->alloc, *tb);
    *ta = *tb = NULL;
  }
  jy_free(&w->alloc, mark);
  jy_free(&w->alloc, ptr);
  jy_free(&w->alloc, cols);
  return status;
}

/* The products of As^T As: for every row of A, each pair of its entries (a, b) with
 * column(a) <= column(b), kept as the rows' entries (row_ptr, row_entry) and counted. */
static int build_pairs(jyKktWork *w, const jyCsc *jac) {
  int *row_cols = NULL;
  if (row_columns(w, jac, &w->row_ptr, &row_cols, &w->row_entry) != 0) {
    jy_free(&w->alloc, row_cols);
    return -1;
  }
  jy_free(&w->alloc, row_cols);
  size_t npairs = 0;
  for (int r = 0; r < w->m; r++) {
    size_t c = (size_t)(w->row_ptr[r + 1] - w->row_ptr[r]);
    npairs += augmented(w, r) ? c * (c + 1) / 2 : 0;
  }
  w->npairs = (int)npairs;
  /* every element written by build_k: no zeroing */
  w->pair_pos = jy_alloc(&w->alloc, sizeof(int) * (npairs + 1));
  return w->pair_pos ? 0 : -1;
}

/* The size x size upper pattern of the pairs (ta[t] <= tb[t]) into w->k, values 1 (any
 * non-zero, for the analysis). 0, or -1 (no memory). */
static int upper_pattern(jyKktWork *w, int size, size_t count, const int *ta, const int *tb) {
  int *cp = jy_calloc(&w->alloc, (size_t)size + 1, sizeof(int)), status = -1;
  int *ri = jy_alloc(&w->alloc, sizeof(int) * (count + 1));
  if (!cp || !ri) goto done;
  int64_t nnz = sorted_pattern(&w->alloc, size, size, count, ta, tb, NULL, cp, ri);
  if (nnz < 0) goto done;
  w->k = cholmod_allocate_sparse((size_t)size, (size_t)size, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL,
                                 &w->common);
  if (!w->k) goto done;
  int *kp = w->k->p, *ki = w->k->i;
  double *kx = w->k->x;
  memcpy(kp, cp, sizeof(int) * ((size_t)size + 1));
  memcpy(ki, ri, sizeof(int) * (size_t)nnz);
  for (int64_t q = 0; q < nnz; q++) kx[q] = 1.0;
  status = 0;
done:
  jy_free(&w->alloc, cp);
  jy_free(&w->alloc, ri);
  return status;
}

/* Where unknowns u, v (natural numbering) meet in w->k (ordered by w->inv): its column's
 * rows are sorted, and the entry is there (it came from the same contributions). */
static int k_position(const jyKktWork *w, int u, int v) {
  int a = w->inv[u], b = w->inv[v];
  int row = a < b ? a : b, col = a < b ? b : a;
  const int *kp = w->k->p, *ki = w->k->i;
  int lo = kp[col], hi = kp[col + 1] - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (ki[mid] < row)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* K's upper pattern in the order inv (unknown u at position inv[u], 0 <= inv[u] < size;
 * unknowns sharing a position are merged) into w->k from the natural pairs (ta, tb: count),
 * and, when `place`, where each contribution lands (mass_pos, jac_pos, pair_pos, row_pos).
 * Allocation happens here only. */
static int build_k(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, int size, const int *ta,
                   const int *tb, size_t count, int place) {
  int *pa = jy_alloc(&w->alloc, sizeof(int) * (count + 1));
  int *pb = jy_alloc(&w->alloc, sizeof(int) * (count + 1)), status = -1;
  if (!pa || !pb) goto done;
  for (size_t t = 0; t < count; t++) { /* upper triangle of the permuted matrix */
    int a = w->inv[ta[t]], b = w->inv[tb[t]];
    pa[t] = a < b ? a : b;
    pb[t] = a < b ? b : a;
  }
  if (upper_pattern(w, size, count, pa, pb) != 0) goto done;
  if (place) {
    int n = w->n;
    for (int j = 0; j < n; j++)
      for (int k = mass->p[j]; k < mass->p[j + 1]; k++)
        w->mass_pos[k] = mass->i[k] <= j ? k_position(w, mass->i[k], j) : -1;
    for (int j = 0; j < n; j++)
      for (int k = jac->p[j]; k < jac->p[j + 1]; k++)
        w->jac_pos[k] = k_position(w, j, n + jac->i[k]);
    int q = 0; /* the pairs' columns, as entries of A: a's and b's (A's entries by column) */
    for (int r = 0; r < w->m; r++)
      for (int x = w->row_ptr[r]; x < w->row_ptr[r + 1] && augmented(w, r); x++)
        for (int y = x; y < w->row_ptr[r + 1]; y++)
          w->pair_pos[q++] =
            k_position(w, w->entry_col[w->row_entry[x]], w->entry_col[w->row_entry[y]]);
    for (int r = 0; r < w->m; r++) w->row_pos[r] = k_position(w, n + r, n + r);
  }
  status = 0;
done:
  jy_free(&w->alloc, pa);
  jy_free(&w->alloc, pb);
  return status;
}

static int allocate_arrays(jyKktWork *w, const jyCsc *mass, const jyCsc *jac) {
  const jyAllocator *a = &w->alloc;
  size_t size = (size_t)w->size + 1;
  w->perm = jy_calloc(a, size, sizeof(int));
  w->inv = jy_calloc(a, size, sizeof(int));
  w->mass_pos = jy_calloc(a, (size_t)mass->p[w->n] + 1, sizeof(int));
  w->jac_pos = jy_calloc(a, (size_t)jac->p[w->n] + 1, sizeof(int));
  w->row_pos = jy_calloc(a, (size_t)w->m + 1, sizeof(int));
  w->mass_diag = jy_calloc(a, (size_t)w->n + 1, sizeof(int));
  w->row_scale = jy_calloc(a, (size_t)w->m + 1, sizeof(double));
  w->row_norm = jy_calloc(a, (size_t)w->m + 1, sizeof(double));
  w->rhs = jy_calloc(a, size, sizeof(double));
  w->x = jy_calloc(a, size, sizeof(double));
  w->res = jy_calloc(a, size, sizeof(double));
  w->corr = jy_calloc(a, size, sizeof(double));
  w->bound = jy_calloc(a, size, sizeof(double));
  w->factored_mass = jy_calloc(a, (size_t)mass->p[w->n] + 1, sizeof(double));
  w->factored_jac = jy_calloc(a, (size_t)jac->p[w->n] + 1, sizeof(double));
  w->factored_scale = jy_calloc(a, (size_t)w->m + 1, sizeof(double));
  w->entry_col = jy_calloc(a, (size_t)jac->p[w->n] + 1, sizeof(int));
  if (!w->perm || !w->inv || !w->mass_pos || !w->jac_pos || !w->row_pos || !w->mass_diag ||
      !w->row_scale || !w->row_norm || !w->rhs || !w->x || !w->res || !w->corr || !w->bound ||
      !w->factored_mass || !w->factored_jac || !w->factored_scale || !w->entry_col)
    return -1;
  for (int j = 0; j < w->n; j++)
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) w->entry_col[k] = j;
  for (int j = 0; j < w->n; j++) w->mass_diag[j] = jy_csc_find(mass, j, j);
  return 0;
}

/* The symbolic factorization of K (its elimination tree and the column counts of L) and
 * every array the numeric one fills: no solve allocates. 0, or -1 (no memory). */
static int analyze_ldl(jyKktWork *w) {
  const jyAllocator *a = &w->alloc;
  size_t size = (size_t)w->size + 1;
  w->l_p = jy_calloc(a, size, sizeof(int));
  w->l_nz = jy_calloc(a, size, sizeof(int));
  w->parent = jy_calloc(a, size, sizeof(int));
  w->pattern = jy_calloc(a, size, sizeof(int));
  w->flag = jy_calloc(a, size, sizeof(int));
  w->d = jy_calloc(a, size, sizeof(double));
  w->work = jy_calloc(a, size, sizeof(double));
  if (!w->l_p || !w->l_nz || !w->parent || !w->pattern || !w->flag || !w->d || !w->work) return -1;
  ldl_symbolic(w->size, w->k->p, w->k->i, w->l_p, w->parent, w->l_nz, w->flag, NULL, NULL);
  size_t lnz = (size_t)w->l_p[w->size] + 1;
  w->l_i = jy_calloc(a, lnz, sizeof(int));
  w->l_x = jy_calloc(a, lnz, sizeof(double));
  return w->l_i && w->l_x ? 0 : -1;
}

/* Whether rows r and s are in one group (pivot_block NULL: each row alone). */
static int same_block(const int *pivot_block, int r, int s) {
  return pivot_block ? pivot_block[r] == pivot_block[s] : r == s;
}

/* The row pivots the ordering may use: pivot[r] = the coordinate row_pivot names (where
 * the caller knows row r's coefficient is +-1 whatever the state), or -1. Placed right after
 * its pivot, a row enters every leading block of K with that coordinate, and the leading
 * blocks stay nonsingular when
 * - no two rows share a pivot, and no row without one has an entry in a pivot column: the
 *   leading rows are then [B X; 0 Y] over (pivot columns, the rest), Y whole rows of A;
 * - "row r has an entry in row s's pivot column" has no cycle: B is then triangular, its
 *   diagonal +-1, in some order of the rows.
 * Rows that break the first rule lose their pivots (and so on, as that frees others to
 * break it); a cycle drops every pivot. 0, or -1 (no memory). */
static int usable_pivots(jyKktWork *w, const jyCsc *jac, const int *row_pivot,
                         const int *pivot_block, int *pivot) {
  int n = w->n, m = w->m, status = -1;
  int *ptr = NULL, *cols = NULL;
  int *owner = jy_calloc(&w->alloc, (size_t)n + 1, sizeof(int)); /* the row pivoting on j */
  int *stack = jy_calloc(&w->alloc, (size_t)m + 1, sizeof(int));
  int *before = jy_calloc(&w->alloc, (size_t)m + 1, sizeof(int)); /* rows it must follow */
  if (!owner || !stack || !before || row_columns(w, jac, &ptr, &cols, NULL) != 0) goto done;
  for (int j = 0; j < n; j++) owner[j] = -1;
  for (int r = 0; r < m; r++) {
    int j = row_pivot ? row_pivot[r] : -1;
    pivot[r] = j >= 0 && j < n && jy_csc_find(jac, r, j) >= 0 ? j : -1;
    if (pivot[r] >= 0) owner[j] = owner[j] == -1 ? r : -2; /* -2: claimed twice */
  }
  int top = 0;
  for (int r = 0; r < m; r++) {
    if (pivot[r] >= 0 && owner[pivot[r]] != r) pivot[r] = -1;
    if (pivot[r] < 0) stack[top++] = r;
  }
  while (top > 0) { /* each row is pushed once: when it is, or becomes, without a pivot */
    int r = stack[--top];
    for (int k = ptr[r]; k < ptr[r + 1]; k++) {
      int s = owner[cols[k]];
      if (s >= 0 && s != r && pivot[s] == cols[k]) {
        pivot[s] = -1;
        stack[top++] = s;
      }
    }
  }
  /* Kahn's order of "r must follow s" (r has an entry in s's pivot column): all placed, or
   * there is a cycle */
  for (int r = 0; r < m; r++)
    for (int k = ptr[r]; pivot[r] >= 0 && k < ptr[r + 1]; k++) {
      int s = owner[cols[k]];
      if (s >= 0 && !same_block(pivot_block, r, s) && pivot[s] == cols[k]) before[r]++;
    }
  int placed = 0, pivoted = 0;
  top = 0;
  for (int r = 0; r < m; r++) {
    pivoted += pivot[r] >= 0;
    if (pivot[r] >= 0 && before[r] == 0) stack[top++] = r;
  }
  while (top > 0) {
    int s = stack[--top];
    placed++;
    for (int k = jac->p[pivot[s]]; k < jac->p[pivot[s] + 1]; k++) { /* rows in s's column */
      int r = jac->i[k];
      if (!same_block(pivot_block, r, s) && pivot[r] >= 0 && --before[r] == 0) stack[top++] = r;
    }
  }
  if (placed < pivoted)
    for (int r = 0; r < m; r++) pivot[r] = -1;
  w->pivoted = placed < pivoted ? 0 : pivoted;
  status = 0;
done:
  jy_free(&w->alloc, ptr);
  jy_free(&w->alloc, cols);
  jy_free(&w->alloc, owner);
  jy_free(&w->alloc, stack);
  jy_free(&w->alloc, before);
  return status;
}

/* CHOLMOD's fill-reducing ordering of K into w->perm, with each pivoted row and its pivot
 * coordinate given the union of their neighbours: the ordering then sees the two as one
 * variable of weight two, as they will be eliminated together. */
static int fill_reducing_order(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, const int *pivot,
                               const int *ta0, const int *tb0, size_t count0) {
  int n = w->n, m = w->m, size = n, status = -1;
  int *first = jy_calloc(&w->alloc, (size_t)w->size + 1, sizeof(int)); /* place -> unknowns */
  int *next = jy_calloc(&w->alloc, (size_t)w->size + 1, sizeof(int));
  int *ta = NULL, *tb = NULL;
  if (!first || !next) goto done;
  for (int j = 0; j < n; j++) w->inv[j] = j;
  for (int r = 0; r < m; r++) w->inv[n + r] = pivot[r] >= 0 ? pivot[r] : size++;
  for (int v = 0; v < size; v++) first[v] = -1;
  for (int u = w->size - 1; u >= 0; u--) {
    next[u] = first[w->inv[u]];
    first[w->inv[u]] = u;
  }
  if (build_k(w, mass, jac, size, ta0, tb0, count0, 0) != 0) goto done;
  const int *kp = w->k->p, *ki = w->k->i;
  size_t count = 0;
  for (int b = 0; b < size; b++)
    for (int q = kp[b]; q < kp[b + 1]; q++)
      for (int u = first[ki[q]]; u >= 0; u = next[u])
        for (int x = first[b]; x >= 0; x = next[x]) count++;
  ta = jy_alloc(&w->alloc, sizeof(int) * (count + 1)); /* written before read */
  tb = jy_alloc(&w->alloc, sizeof(int) * (count + 1));
  if (!ta || !tb) goto done;
  count = 0;
  for (int b = 0; b < size; b++)
    for (int q = kp[b]; q < kp[b + 1]; q++)
      for (int u = first[ki[q]]; u >= 0; u = next[u])
        for (int x = first[b]; x >= 0; x = next[x]) {
          ta[count] = u < x ? u : x;
          tb[count++] = u < x ? x : u;
        }
  cholmod_free_sparse(&w->k, &w->common);
  if (upper_pattern(w, w->size, count, ta, tb) != 0) goto done;
  cholmod_factor *order = cholmod_analyze(w->k, &w->common);
  cholmod_free_sparse(&w->k, &w->common);
  if (!order) goto done;
  const int *perm = order->Perm;
  for (int k = 0; k < w->size; k++) {
    w->perm[k] = perm[k];
    w->inv[perm[k]] = k;
  }
  cholmod_free_factor(&order, &w->common);
  status = 0;
done:
  if (w->k) cholmod_free_sparse(&w->k, &w->common);
  jy_free(&w->alloc, first);
  jy_free(&w->alloc, next);
  jy_free(&w->alloc, ta);
  jy_free(&w->alloc, tb);
  return status;
}

/* Moves each row to just after its pivot (pivot[r] >= 0) or else the last of its
 * coordinates in w->perm (a row without one stays where it is), keeping the order
 * otherwise: then K factors unshifted. A row after its last coordinate joins the leading
 * block whole; after its pivot it joins it early, and its elimination fills less: on the
 * W1 pendulum chain (N = 100) L has 1062 entries with the glue rows after their pivots,
 * 1288 with every row after its last coordinate. 0, or -1 (no memory). */
static int rows_after_coordinates(jyKktWork *w, const jyCsc *jac, const int *pivot) {
  int n = w->n, m = w->m, status = -1;
  int *last = jy_calloc(&w->alloc, (size_t)m + 1, sizeof(int));            /* place it follows */
  int *first_row = jy_calloc(&w->alloc, (size_t)w->size + 1, sizeof(int)); /* rows per place */
  int *next_row = jy_calloc(&w->alloc, (size_t)m + 1, sizeof(int));
  int *order = jy_calloc(&w->alloc, (size_t)w->size + 1, sizeof(int));
  if (!last || !first_row || !next_row || !order) goto done;
  for (int r = 0; r < m; r++) last[r] = pivot[r] >= 0 ? w->inv[pivot[r]] : -1;
  for (int j = 0; j < n; j++)
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
      int r = jac->i[k];
      if (pivot[r] < 0 && w->inv[j] > last[r]) last[r] = w->inv[j];
    }
  for (int k = 0; k < w->size; k++) first_row[k] = -1;
  for (int k = w->size - 1; k >= 0; k--) { /* listed backwards: each list in CHOLMOD's order */
    int r = w->perm[k] - n;
    if (r < 0 || last[r] < 0) continue;
    next_row[r] = first_row[last[r]];
    first_row[last[r]] = r;
  }
  int at = 0;
  for (int k = 0; k < w->size; k++) {
    int u = w->perm[k];
    if (u >= n && last[u - n] >= 0) continue; /* placed after its last coordinate */
    order[at++] = u;
    for (int r = first_row[k]; r >= 0; r = next_row[r]) order[at++] = n + r;
  }
  for (int k = 0; k < w->size; k++) {
    w->perm[k] = order[k];
    w->inv[order[k]] = k;
  }
  status = 0;
done:
  jy_free(&w->alloc, last);
  jy_free(&w->alloc, first_row);
  jy_free(&w->alloc, next_row);
  jy_free(&w->alloc, order);
  return status;
}

/* The work for the auxiliary mass over the rows in augment (m flags, taken over; NULL: all
 * rows). NULL when out of memory. */
static jyKktWork *create_work(jyAllocator a, const jyCsc *mass, const jyCsc *jac,
                              const int *row_pivot, const int *pivot_block,
                              unsigned char *augment) {
  jyKktWork *w = jy_calloc(&a, 1, sizeof *w);
  if (!w) {
    jy_free(&a, augment);
    return NULL;
  }
  w->alloc = a;
  w->n = mass->ncol;
  w->m = jac->nrow;
  w->size = w->n + w->m;
  w->augment = augment;
  w->naugment = w->m;
  for (int r = 0; augment && r < w->m; r++) w->naugment -= !augment[r];
  int *ta = NULL, *tb = NULL; /* K's natural pattern, listed once for both orderings */
  size_t count = 0;
  int *pivot = jy_calloc(&a, (size_t)w->m + 1, sizeof(int));
  if (!pivot || allocate_arrays(w, mass, jac) != 0 || build_pairs(w, jac) != 0) goto fail;
  cholmod_start(&w->common);
  w->started = 1;
  w->common.print = 0;
  w->common.supernodal = CHOLMOD_SIMPLICIAL; /* CHOLMOD orders K; it factors nothing */
  /* CHOLMOD chooses the ordering on K's pattern; K is then built again in that order, and
   * LDL factors it as it is. */
  if (natural_entries(w, mass, jac, &ta, &tb, &count) != 0 ||
      usable_pivots(w, jac, row_pivot, pivot_block, pivot) != 0 ||
      fill_reducing_order(w, mass, jac, pivot, ta, tb, count) != 0 ||
      rows_after_coordinates(w, jac, pivot) != 0 ||
      build_k(w, mass, jac, w->size, ta, tb, count, 1) != 0 || analyze_ldl(w) != 0)
    goto fail;
  jy_free(&a, pivot);
  jy_free(&a, ta);
  jy_free(&a, tb);
  return w;
fail:
  jy_free(&a, pivot);
  jy_free(&a, ta);
  jy_free(&a, tb);
  jy_kkt_destroy(w);
  return NULL;
}

/* The subset of rows the auxiliary mass needs, chosen on the patterns: the blocks of M (the
 * connected components of its pattern) that are sealed, small (at most KKT_SEALED_MAX
 * coordinates), every coordinate with a diagonal and at least one row of their own (a
 * body3d's norm row); the rows joining sealed blocks only (a spatial joint: 5 rows over 14
 * coordinates) are left out, every other row kept. M_a = M + alpha As_S^T As_S is then
 * positive definite whenever q'' is unique and each sealed block a row leaves out is,
 * with its own rows, M_C + alpha As_C^T As_C (a vector M and As_S send to zero is then zero
 * on those blocks, the only ones the rows left out touch, so A sends it to zero too), which
 * blocks_definite checks before each factorization. M_a keeps M's block pattern there
 * instead of a dense 14 x 14 block per joint (issue 44: the LDL of K was half of a spatial
 * right-hand side). Fills w's blocks (those a left-out row touches: their coordinates and
 * own rows) and returns the m flags of the subset, or NULL (no row left out; or no memory:
 * *failed). */
enum { KKT_SEALED_MAX = 64 };

static unsigned char *augmented_rows(jyKktWork *w, const jyCsc *mass, const jyCsc *jac,
                                     int *failed) {
  const jyAllocator *a = &w->alloc;
  int n = w->n, m = w->m, left_out = 0;
  int *root = jy_alloc(a, sizeof(int) * ((size_t)n + 1));  /* union-find over M's pattern */
  int *size = jy_calloc(a, (size_t)n + 1, sizeof(int));    /* per root */
  int *own = jy_calloc(a, (size_t)n + 1, sizeof(int));     /* per root: its own rows */
  int *first = jy_alloc(a, sizeof(int) * ((size_t)m + 1)); /* a row's block, -2: several */
  int *ptr = NULL, *cols = NULL;
  unsigned char *augment = jy_alloc(a, (size_t)m + 1);
  *failed =
    !root || !size || !own || !first || !augment || row_columns(w, jac, &ptr, &cols, NULL) != 0;
  if (*failed) goto done;
  for (int j = 0; j < n; j++) root[j] = j;
  for (int j = 0; j < n; j++)
    for (int k = mass->p[j]; k < mass->p[j + 1]; k++) {
      int x = mass->i[k], y = j;
      while (root[x] != x) x = root[x] = root[root[x]];
      while (root[y] != y) y = root[y] = root[root[y]];
      if (x != y) root[x > y ? x : y] = x < y ? x : y;
    }
  for (int j = 0; j < n; j++) { /* roots first: root[j] <= j */
    root[j] = root[root[j]];
    size[root[j]]++;
  }
  for (int j = 0; j < n; j++) /* a massless coordinate seals nothing */
    if (w->mass_diag[j] < 0) size[root[j]] = KKT_SEALED_MAX + 1;
  for (int r = 0; r < m; r++) {
    first[r] = -1;
    for (int x = ptr[r]; x < ptr[r + 1]; x++) {
      int b = root[cols[x]];
      first[r] = first[r] == -1 || first[r] == b ? b : -2;
    }
    if (first[r] >= 0) own[first[r]]++;
  }
  /* sealed: size[b] in 1 .. KKT_SEALED_MAX and own[b] > 0 */
  for (int r = 0; r < m; r++) {
    int sealed = first[r] == -2;
    for (int x = ptr[r]; sealed && x < ptr[r + 1]; x++) {
      int b = root[cols[x]];
      sealed = size[b] <= KKT_SEALED_MAX && own[b] > 0;
    }
    augment[r] = !sealed;
    left_out += sealed;
  }
  if (left_out == 0) goto done;
  /* the blocks to check: those a left-out row touches */
  int nblock = 0, ncol = 0, nrow = 0, largest = 0, nmass = 0, npairs = 0;
  int *checked = own; /* per root: own rows > 0, -(index + 1) once numbered */
  for (int r = 0; r < m; r++)
    for (int x = ptr[r]; !augment[r] && x < ptr[r + 1]; x++) {
      int b = root[cols[x]];
      if (checked[b] > 0) {
        nblock++;
        ncol += size[b];
        nrow += checked[b];
        largest = size[b] > largest ? size[b] : largest;
        checked[b] = -nblock;
      }
    }
  for (int j = 0; j < n; j++)
    if (checked[root[j]] < 0) nmass += mass->p[j + 1] - mass->p[j];
  for (int r = 0; r < m; r++)
    if (first[r] >= 0 && checked[first[r]] < 0)
      npairs += (ptr[r + 1] - ptr[r]) * (ptr[r + 1] - ptr[r] + 1) / 2;
  w->nblock = nblock;
  w->block_ptr = jy_calloc(a, (size_t)nblock + 2, sizeof(int));
  w->block_col = jy_alloc(a, sizeof(int) * ((size_t)ncol + 1));
  w->block_row_ptr = jy_calloc(a, (size_t)nblock + 2, sizeof(int));
  w->block_row = jy_alloc(a, sizeof(int) * ((size_t)nrow + 1));
  w->block_mass_ptr = jy_calloc(a, (size_t)nblock + 1, sizeof(int));
  w->block_mass_k = jy_alloc(a, sizeof(int) * ((size_t)nmass + 1));
  w->block_mass_at = jy_alloc(a, sizeof(int) * ((size_t)nmass + 1));
  w->block_pair_at = jy_alloc(a, sizeof(int) * ((size_t)npairs + 1));
  w->block = jy_alloc(a, sizeof(double) * ((size_t)largest * (size_t)largest + 1));
  *failed = !w->block_ptr || !w->block_col || !w->block_row_ptr || !w->block_row ||
    !w->block_mass_ptr || !w->block_mass_k || !w->block_mass_at || !w->block_pair_at || !w->block;
  if (*failed) goto done;
  /* coordinates and own rows by block, each in increasing order (counted, then placed) */
  for (int j = 0; j < n; j++)
    if (checked[root[j]] < 0) w->block_ptr[-checked[root[j]] + 1]++;
  for (int r = 0; r < m; r++)
    if (first[r] >= 0 && checked[first[r]] < 0) w->block_row_ptr[-checked[first[r]] + 1]++;
  for (int b = 0; b < nblock; b++) {
    w->block_ptr[b + 2] += w->block_ptr[b + 1];
    w->block_row_ptr[b + 2] += w->block_row_ptr[b + 1];
  }
  for (int j = 0; j < n; j++)
    if (checked[root[j]] < 0) w->block_col[w->block_ptr[-checked[root[j]]]++] = j;
  for (int r = 0; r < m; r++)
    if (first[r] >= 0 && checked[first[r]] < 0) {
      int b = -checked[first[r]] - 1;
      w->block_row[w->block_row_ptr[b + 1]++] = r;
    }
  /* where blocks_definite puts each of M's entries and each own row's pair: its block's
   * lower triangle by rows, (i, k) at i * nb + k in the coordinates' order within it */
  int *local = size, *pair_at = w->block_pair_at, at = 0;
  for (int b = 0; b < nblock; b++) {
    int lo = w->block_ptr[b], nb = w->block_ptr[b + 1] - lo;
    for (int t = lo; t < lo + nb; t++) local[w->block_col[t]] = t - lo;
    for (int t = lo; t < lo + nb; t++) {
      int j = w->block_col[t];
      for (int k = mass->p[j]; k < mass->p[j + 1]; k++)
        if (mass->i[k] >= j) {
          w->block_mass_k[at] = k;
          w->block_mass_at[at++] = local[mass->i[k]] * nb + local[j];
        }
    }
    w->block_mass_ptr[b + 1] = at;
    for (int q = w->block_row_ptr[b]; q < w->block_row_ptr[b + 1]; q++) {
      int row = w->block_row[q];
      for (int x = ptr[row]; x < ptr[row + 1]; x++)
        for (int y = x; y < ptr[row + 1]; y++) *pair_at++ = local[cols[y]] * nb + local[cols[x]];
    }
  }
done:
  jy_free(a, root);
  jy_free(a, size);
  jy_free(a, own);
  jy_free(a, first);
  jy_free(a, ptr);
  jy_free(a, cols);
  if (*failed || left_out == 0) {
    jy_free(a, augment);
    return NULL;
  }
  return augment;
}

jyKktWork *jy_kkt_create(const jyAllocator *alloc, const jyCsc *mass, const jyCsc *jac,
                         const int *row_pivot, const int *pivot_block) {
  jyAllocator a = alloc ? *alloc : (jyAllocator){0};
  if (!mass || !jac || mass->ncol <= 0 || jac->ncol != mass->ncol) return NULL;
  jyKktWork *w = create_work(a, mass, jac, row_pivot, pivot_block, NULL);
  if (!w) return NULL;
  int failed;
  unsigned char *augment = augmented_rows(w, mass, jac, &failed);
  if (augment) w->reduced = create_work(a, mass, jac, row_pivot, pivot_block, augment);
  if (failed || (augment && !w->reduced)) {
    jy_kkt_destroy(w);
    return NULL;
  }
  return w;
}

/* --- the numeric solve --- */

/* Row scales (1 / |A_i|; 0 for dropped and zero rows) and alpha. */
static double scale_rows(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, const jyUkProblem *p,
                         double augment_scale) {
  int n = w->n, m = w->m;
  memset(w->row_scale, 0, sizeof(double) * (size_t)m);
  for (int k = 0; k < jac->p[n]; k++) w->row_scale[jac->i[k]] += jac->x[k] * jac->x[k];
  for (int r = 0; r < m; r++) {
    double norm = sqrt(w->row_scale[r]);
    w->row_norm[r] = norm;
    w->row_scale[r] = (p->dropped && p->dropped[r]) || !(norm > 0) ? 0.0 : 1.0 / norm;
  }
  if (m == 0) return 0.0;
  double trace = 0;
  for (int j = 0; j < n; j++) trace += w->mass_diag[j] >= 0 ? mass->x[w->mass_diag[j]] : 0.0;
  double alpha = trace / n;
  if (!(alpha > 0)) alpha = 1.0;
  return alpha * (augment_scale > 0 ? augment_scale : 1.0);
}

/* K's values at the shift beta. */
static void fill_k(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, double alpha, double beta) {
  int n = w->n;
  double *kx = w->k->x;
  memset(kx, 0, sizeof(double) * (size_t)((int *)w->k->p)[w->size]);
  for (int k = 0; k < mass->p[n]; k++)
    if (w->mass_pos[k] >= 0) kx[w->mass_pos[k]] += mass->x[k];
  /* alpha s^2 A_ra A_rb row by row, a's factor (alpha s s) A_ra once for all its pairs: the
   * same products ((alpha s) s A_ra) A_rb summed in the same order, bit for bit, with one
   * load of A and one product a pair (no pair_a, pair_b, row index or scale to fetch) */
  const int *pos = w->pair_pos, *entry = w->row_entry;
  for (int r = 0; r < w->m; r++) {
    double s = w->row_scale[r], c = alpha * s * s;
    if (!augmented(w, r)) continue;
    for (int x = w->row_ptr[r]; x < w->row_ptr[r + 1]; x++) {
      double ca = c * jac->x[entry[x]];
      for (int y = x; y < w->row_ptr[r + 1]; y++) kx[*pos++] += ca * jac->x[entry[y]];
    }
  }
  for (int k = 0; k < jac->p[n]; k++) kx[w->jac_pos[k]] += w->row_scale[jac->i[k]] * jac->x[k];
  for (int r = 0; r < w->m; r++) /* a left-out row: decoupled, z = 0 */
    kx[w->row_pos[r]] = w->row_scale[r] != 0 ? -beta : -1.0;
}

/* The right side [Q + C + alpha As^T bs; bs] (permuted). */
static void fill_rhs(jyKktWork *w, const jyCsc *jac, const jyUkProblem *p, double alpha) {
  int n = w->n;
  for (int j = 0; j < n; j++) {
    double sum = p->force[j] + (p->nonideal ? p->nonideal[j] : 0.0);
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
      if (!augmented(w, jac->i[k])) continue;
      double s = w->row_scale[jac->i[k]];
      sum += alpha * s * jac->x[k] * s * p->rhs[jac->i[k]];
    }
    w->rhs[w->inv[j]] = sum;
  }
  for (int r = 0; r < w->m; r++)
    w->rhs[w->inv[n + r]] = w->row_scale[r] != 0 ? w->row_scale[r] * p->rhs[r] : 0.0;
}

/* Whether the factor in hand is that of these M, A, row scales and alpha: bit for bit the
 * values of the last factorization that succeeded (the projection's velocity step and the
 * right-hand side after it solve with the same M and A). Records them otherwise. */
static int same_values(const jyKktWork *w, const jyCsc *mass, const jyCsc *jac, double alpha) {
  return alpha == w->factored_alpha &&
    !memcmp(w->factored_mass, mass->x, sizeof(double) * (size_t)mass->p[w->n]) &&
    !memcmp(w->factored_jac, jac->x, sizeof(double) * (size_t)jac->p[w->n]) &&
    !memcmp(w->factored_scale, w->row_scale, sizeof(double) * (size_t)w->m);
}

static int factor_current(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, double alpha) {
  size_t mass_bytes = sizeof(double) * (size_t)mass->p[w->n];
  size_t jac_bytes = sizeof(double) * (size_t)jac->p[w->n];
  size_t scale_bytes = sizeof(double) * (size_t)w->m;
  if (w->factored && same_values(w, mass, jac, alpha)) return 1;
  w->factored = 0; /* until the factorization succeeds */
  w->factored_alpha = alpha;
  memcpy(w->factored_mass, mass->x, mass_bytes);
  memcpy(w->factored_jac, jac->x, jac_bytes);
  memcpy(w->factored_scale, w->row_scale, scale_bytes);
  return 0;
}

/* x <- (L D L^T)^-1 x with LDL's factor: ldl_lsolve, ldl_dsolve and ldl_ltsolve's
 * arithmetic in their order, bit for bit, with x[j] held in a register while its column is
 * walked (l_i > j: no alias). ldl_ltsolve stores x[j] after every entry, so each waits on
 * the store before it (the 1000-pendulum chain's 2 s ERK run: 0.64 s with LDL's solves,
 * 0.61 s so; they took 19 % of it and take 16 %). */
static void solve_ldl(jyKktWork *w, double *x) {
  const int *lp = w->l_p, *li = w->l_i;
  const double *lx = w->l_x, *d = w->d;
  for (int j = 0; j < w->size; j++) {
    double xj = x[j];
    for (int p = lp[j]; p < lp[j + 1]; p++) x[li[p]] -= lx[p] * xj;
  }
  for (int j = 0; j < w->size; j++) x[j] /= d[j];
  for (int j = w->size - 1; j >= 0; j--) {
    double xj = x[j];
    for (int p = lp[j]; p < lp[j + 1]; p++) xj -= lx[p] * x[li[p]];
    x[j] = xj;
  }
}

/* Whether the pivots have the signs of a quasi-definite matrix: coordinates' positive, the
 * kept rows' negative. A free massless direction makes K singular (a zero pivot, or one of
 * the wrong sign from rounding); where a pivot is small is no guide (a row eliminated after
 * the coordinates it shares with another row has a pivot near -beta without being
 * dependent), so near-singularity is judged by the refinement instead. */
static int pivots_sound(const jyKktWork *w) {
  for (int k = 0; k < w->size; k++) {
    int u = w->perm[k];
    double d = w->d[k];
    if (!isfinite(d)) return 0;
    if (u < w->n ? !(d > 0) : w->row_scale[u - w->n] != 0 && !(d < 0)) return 0;
  }
  return 1;
}

/* res = rhs - K0 x, K0: K without the shift of the active rows (K stored upper), and
 * beside it (in bound) |rhs| + |K| |x|, the terms each entry of res balances; *largest is
 * the largest of those. Column j subtracts its products with x[j] from the rows above it
 * and its transposed part from row j, in that order; row j is held in a register
 * meanwhile (no column before j touches it), so that no entry waits on the store of the
 * one before it. Returns max |res|. */
static double kkt_residual(jyKktWork *w, double beta, double *largest) {
  const int *kp = w->k->p, *ki = w->k->i;
  const double *kx = w->k->x, *x = w->x;
  double *res = w->res, *bound = w->bound;
  for (int k = 0; k < w->size; k++) res[k] = w->rhs[k], bound[k] = fabs(w->rhs[k]);
  for (int j = 0; j < w->size; j++) {
    double xj = x[j], res_j = res[j], bound_j = bound[j];
    for (int q = kp[j]; q < kp[j + 1]; q++) {
      int i = ki[q];
      double a = kx[q];
      if (i == j) {
        res_j -= a * xj;
        bound_j += fabs(a * xj);
        continue;
      }
      res[i] -= a * xj;
      bound[i] += fabs(a * xj);
      res_j -= a * x[i];
      bound_j += fabs(a * x[i]);
    }
    res[j] = res_j;
    bound[j] = bound_j;
  }
  for (int r = 0; r < w->m; r++)
    if (w->row_scale[r] != 0) res[w->inv[w->n + r]] -= beta * x[w->inv[w->n + r]];
  double worst = 0;
  *largest = 0;
  for (int k = 0; k < w->size; k++) {
    worst = jy_larger(worst, fabs(res[k]));
    *largest = jy_larger(*largest, bound[k]);
  }
  return worst;
}

/* The unshifted factorization's answer: one solve, kept when its normwise backward error
 * max |rhs - K0 x| / max (|rhs| + |K0| |x|) is at rounding (KKT_ROUNDING), refined with
 * the same factor while it is not and the residual halves. Relative to the largest terms
 * rather than row by row: in a projection's solve rows at rest balance terms of 1e-24
 * against others of 1e-8, and their own rounding (1e-30) is nothing to the answer.
 * Measured on the pendulum chain (N = 100, 10 s, every right-hand side and projection):
 * one solve, at most 2.3 DBL_EPSILON. Returns the residual relative to the right side, or
 * INFINITY when the answer did not reach rounding (the shifted factorization then takes
 * the problem). */
enum { KKT_ROUNDING = 16, KKT_UNSHIFTED_PASSES = 4 };

static double unshifted_solve(jyKktWork *w) {
  double size = 0, last = INFINITY, largest;
  for (int k = 0; k < w->size; k++) size = jy_larger(size, fabs(w->rhs[k]));
  memcpy(w->x, w->rhs, sizeof(double) * (size_t)w->size);
  solve_ldl(w, w->x);
  w->solves = 1;
  for (int pass = 0; pass < KKT_UNSHIFTED_PASSES; pass++) {
    double worst = kkt_residual(w, 0.0, &largest);
    if (worst <= KKT_ROUNDING * DBL_EPSILON * largest) return worst / (size > 0 ? size : 1.0);
    if (!(worst < 0.5 * last)) break; /* stalls above rounding (NaN too) */
    last = worst;
    memcpy(w->corr, w->res, sizeof(double) * (size_t)w->size);
    solve_ldl(w, w->corr);
    w->solves++;
    for (int k = 0; k < w->size; k++) w->x[k] += w->corr[k];
  }
  return INFINITY;
}

/* Solve, then refine against beta = 0 while that keeps improving the answer. Each pass
 * shrinks the residual by a steady ratio (the shift's and the pivots' error, ~1e-7); once
 * that ratio times the residual just corrected is below rounding, the correction leaves it
 * at rounding, and checking so (a residual, another solve and a residual that stalls) is
 * skipped: 2 residuals and 3 solves a call instead of 4 and 4 on the pendulum chain.
 * Returns the last residual measured of the unshifted system relative to its right side. */
static double refined_solve(jyKktWork *w, double beta) {
  memcpy(w->x, w->rhs, sizeof(double) * (size_t)w->size);
  solve_ldl(w, w->x);
  w->solves++;
  double last = INFINITY, size = 0;
  for (int k = 0; k < w->size; k++) size = jy_larger(size, fabs(w->rhs[k]));
  for (int pass = 0; pass < 12; pass++) {
    double largest, worst = kkt_residual(w, beta, &largest);
    if (!(worst < 0.5 * last) || worst == 0) {
      if (pass > 0 && !(worst <= last)) /* the last correction made it worse: undo it */
        for (int k = 0; k < w->size; k++) w->x[k] -= w->corr[k];
      last = fmin(last, worst);
      break;
    }

    double ratio = pass > 0 ? worst / last : 1.0;
    last = worst;
    memcpy(w->corr, w->res, sizeof(double) * (size_t)w->size);
    solve_ldl(w, w->corr);
    w->solves++;
    for (int k = 0; k < w->size; k++) w->x[k] += w->corr[k];
    if (ratio * worst <= DBL_EPSILON * size) break; /* the next residual: rounding */
  }
  return last / (size > 0 ? size : 1.0);
}

/* acc, mu and the scaled residual of A q'' = b (as the dense path measures it). */
static void unpack(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, const jyUkProblem *p,
                   double consistency_tol, double *acc, double *mu, jyUkResult *result) {
  int n = w->n, m = w->m;
  for (int j = 0; j < n; j++) acc[j] = w->x[w->inv[j]];
  /* bound: free scratch after the KKT residuals, the natural accelerations below and the
   * rows' multipliers (-mu) after them */
  double *natural = w->bound, *multiplier = w->bound + n;
  for (int r = 0; r < m; r++) multiplier[r] = w->row_scale[r] * w->x[w->inv[n + r]];
  if (mu)
    for (int r = 0; r < m; r++) mu[r] = -multiplier[r];
  if (!(consistency_tol < INFINITY)) { /* any b (a projection's step): nothing to measure */
    memset(w->corr, 0, sizeof(double) * (size_t)m);
    result->residual = result->dropped_residual = 0;
    result->row_residual = w->corr;
    result->outcome = JY_UK_OK;
    return;
  }
  double *ax = w->res, *terms = w->corr; /* A q'' - b, sum |A_rj q''_j| (corr: reused below) */
  for (int r = 0; r < m; r++) ax[r] = -p->rhs[r], terms[r] = 0;
  /* At an equilibrium q'' is zero and the terms of A q'' are rounding (a chain hanging at rest:
   * measured against them a 1e-16 residual read 0.34, "constraints not met"): the acceleration
   * each coordinate's balanced forces would give alone, (|Q_j| + |A^T mu|_j) / M_jj, stands
   * in for q''_j where it is larger. */
  for (int j = 0; j < n; j++) {
    double force = fabs(p->force[j]) + (p->nonideal ? fabs(p->nonideal[j]) : 0.0);
    double mjj = w->mass_diag[j] >= 0 ? mass->x[w->mass_diag[j]] : 0.0;
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++)
      force += fabs(jac->x[k] * multiplier[jac->i[k]]);
    natural[j] = jy_larger(fabs(acc[j]), mjj > 0 ? force / mjj : 0.0);
  }
  for (int j = 0; j < n; j++)
    for (int k = jac->p[j]; k < jac->p[j + 1]; k++) {
      ax[jac->i[k]] += jac->x[k] * acc[j];
      terms[jac->i[k]] += fabs(jac->x[k] * natural[j]);
    }
  /* Relative to the size of what the rows balance: b, and the terms of A q'' (at rest b is
   * zero or rounding, ~1e-29, while the terms are of the order of g). */
  double scale = 0, worst = 0, dropped_worst = 0;
  for (int r = 0; r < m; r++)
    if (w->row_scale[r] != 0)
      scale = fmax(scale, w->row_scale[r] * fmax(fabs(p->rhs[r]), terms[r]));
  if (!(scale > 0)) scale = 1;
  for (int r = 0; r < m; r++) {
    int dropped = p->dropped && p->dropped[r];
    /* a dropped row is measured at its own unit length, as the dense path does */
    double unit = w->row_norm[r] > 0 ? 1.0 / w->row_norm[r] : 0.0;
    w->corr[r] = unit != 0 ? unit * ax[r] / scale : ax[r];
    worst = fmax(worst, fabs(w->corr[r]));
    if (dropped) dropped_worst = fmax(dropped_worst, fabs(w->corr[r]));
  }
  result->residual = worst;
  result->dropped_residual = dropped_worst;
  result->row_residual = w->corr;
  result->outcome = worst <= consistency_tol ? JY_UK_OK : JY_UK_INCONSISTENT;
}

/* Factors K at the shift beta: 1 when LDL finished with pivots of the right signs. */
static int factor_k(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, double alpha, double beta) {
  w->factorizations++;
  fill_k(w, mass, jac, alpha, beta);
  w->factored_beta = beta;
  /* LDL stops at a zero pivot (and returns where); pivots_sound then judges the rest */
  return ldl_numeric(w->size, w->k->p, w->k->i, w->k->x, w->l_p, w->parent, w->l_nz, w->l_i, w->l_x,
                     w->d, w->work, w->pattern, w->flag, NULL, NULL) == w->size &&
    pivots_sound(w);
}

void jy_kkt_last_path(const jyKktWork *w, double *beta, int *solves) {
  if (w->answered_reduced) w = w->reduced;
  *beta = w->factored ? w->factored_beta : NAN;
  *solves = w->solves;
}

int jy_kkt_pivoted_rows(const jyKktWork *w) { return w->pivoted; }

long jy_kkt_factorizations(const jyKktWork *w) {
  return w->factorizations + (w->reduced ? w->reduced->factorizations : 0);
}

int jy_kkt_last_augmented(const jyKktWork *w) {
  return w->answered_reduced ? w->reduced->naugment : w->m;
}

/* Whether each sealed block the subset relies on is positive definite with its own rows,
 * M_C + alpha As_C^T As_C (w: the whole work, r: the subset's, its row scales current):
 * Cholesky of each, dense (at most KKT_SEALED_MAX coordinates; 7 for a body3d), every
 * pivot above 1e-10 of the block's largest diagonal. Below that the whole rows answer, as
 * they did before the subset (a body3d with a zero principal moment, a zero mass). */
static int blocks_definite(const jyKktWork *w, const jyKktWork *r, const jyCsc *mass,
                           const jyCsc *jac, double alpha) {
  double *c = w->block; /* the lower triangle by rows: (i, k) at c[i * nb + k] */
  const int *mass_k = w->block_mass_k, *mass_at = w->block_mass_at, *pair_at = w->block_pair_at;
  for (int b = 0; b < w->nblock; b++) {
    int nb = w->block_ptr[b + 1] - w->block_ptr[b];
    memset(c, 0, sizeof(double) * (size_t)nb * (size_t)nb);
    for (int t = w->block_mass_ptr[b]; t < w->block_mass_ptr[b + 1]; t++)
      c[mass_at[t]] = mass->x[mass_k[t]];
    for (int q = w->block_row_ptr[b]; q < w->block_row_ptr[b + 1]; q++) {
      int row = w->block_row[q], lo = r->row_ptr[row], hi = r->row_ptr[row + 1];
      double scale = r->row_scale[row], coef = alpha * scale * scale;
      for (int x = lo; x < hi; x++) {
        double ca = coef * jac->x[r->row_entry[x]];
        for (int y = x; y < hi; y++) c[*pair_at++] += ca * jac->x[r->row_entry[y]];
      }
    }
    double largest = 0;
    for (int i = 0; i < nb; i++) largest = jy_larger(largest, c[i * nb + i]);
    for (int i = 0; i < nb; i++) {
      double *ci = c + (size_t)i * (size_t)nb;
      for (int j = 0; j < i; j++) {
        const double *cj = c + (size_t)j * (size_t)nb;
        double v = ci[j];
        for (int k = 0; k < j; k++) v -= ci[k] * cj[k];
        ci[j] = v / cj[j];
      }
      double d = ci[i];
      for (int k = 0; k < i; k++) d -= ci[k] * ci[k];
      if (!(d > 1e-10 * largest)) return 0;
      ci[i] = sqrt(d);
    }
  }
  return 1;
}

/* The answer of K augmented by the subset alone, unshifted: 1 when the sealed blocks are
 * positive definite, its pivots had the right signs, the answer reached rounding and met
 * the rows (JY_UK_OK), else 0 (acc, mu and result are then the caller's to overwrite). A
 * check or factorization that failed for these values is remembered (failed), so that the
 * projection's solves with the same M and A do not try again. */
static int reduced_solve(jyKktWork *whole, const jyCsc *mass, const jyCsc *jac,
                         const jyUkProblem *p, const jyUkOptions *opt, double *acc, double *mu,
                         jyUkResult *result) {
  jyKktWork *w = whole->reduced;
  double alpha = scale_rows(w, mass, jac, p, opt->augment_scale);
  if (w->failed && same_values(w, mass, jac, alpha)) return 0;
  if (!factor_current(w, mass, jac, alpha)) { /* (a factor kept passed the check) */
    w->failed = 1;                            /* until it factors */
    if (!blocks_definite(whole, w, mass, jac, alpha)) return 0;
    w->factored = w->unshifted_factors = factor_k(w, mass, jac, alpha, 0.0);
    if (!w->factored) return 0;
    w->failed = 0;
  }
  fill_rhs(w, jac, p, alpha);
  w->solves = 0;
  if (!(unshifted_solve(w) <= 1e-8)) return 0;
  result->outcome = JY_UK_OK;
  result->rank = -1;
  unpack(w, mass, jac, p, opt->consistency_tol, acc, mu, result);
  return result->outcome == JY_UK_OK;
}

jyUkOutcome jy_kkt_solve(jyKktWork *w, const jyCsc *mass, const jyCsc *jac, const jyUkProblem *p,
                         const jyUkOptions *opt, double *acc, double *mu, jyUkResult *result) {
  /* The subset's K first: its answer is that of all rows (the augmentation by any subset
   * of the rows changes no solution); where it does not factor soundly or its answer is
   * not at rounding (M_a singular, dependent rows kept), all rows answer as before. */
  w->answered_reduced = w->reduced && reduced_solve(w, mass, jac, p, opt, acc, mu, result);
  if (w->answered_reduced) return JY_UK_OK;
  result->outcome = JY_UK_OK;
  result->rank = -1; /* not revealed by this path */
  result->residual = 0;
  result->dropped_residual = 0;
  result->row_residual = w->corr;
  double alpha = scale_rows(w, mass, jac, p, opt->augment_scale);
  /* The shift: far below the rows' pivots (~1/alpha, unit rows), enough to factor. */
  double beta = w->m > 0 ? 1e-10 / alpha : 0.0;
  fill_rhs(w, jac, p, alpha);
  /* Unshifted first, the shifted factorization when that fails or its answer does not
   * reach rounding. Which factor answers depends on M, A and this right side only, never on
   * the calls before: a factor kept from the last call is reused unless it is the shifted
   * one and the unshifted one had factored (a fresh work would try that first). */
  int current = factor_current(w, mass, jac, alpha);
  if (current && w->factored_beta != 0 && w->unshifted_factors) current = 0;
  if (!current) w->factored = w->unshifted_factors = factor_k(w, mass, jac, alpha, 0.0);
  double residual = INFINITY;
  w->solves = 0;
  if (w->factored && w->factored_beta == 0) residual = unshifted_solve(w);
  if (!(residual <= 1e-8)) {
    if (beta > 0 && (!w->factored || w->factored_beta != beta))
      w->factored = factor_k(w, mass, jac, alpha, beta);
    if (!w->factored) return result->outcome = JY_UK_NOT_UNIQUE;
    /* Refinement that stalls above 1e-8 of the right side: K is (nearly) singular, a free
     * massless direction or rows that contradict each other; rounding alone stays ~1e-14. */
    residual = refined_solve(w, w->factored_beta);
  }
  if (!(residual <= 1e-8)) return result->outcome = JY_UK_NOT_UNIQUE;
  unpack(w, mass, jac, p, opt->consistency_tol, acc, mu, result);
  return result->outcome;
}

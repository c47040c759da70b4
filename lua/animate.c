/* lua/animate.c — joinery animate: the visuals (part protocol 7, jy_eval_visuals) of every
 * output row of a run, or of the rows of a CSV a run wrote, written with the viewer's script
 * into one self-contained HTML page (docs/animation.md).
 *
 * The page: a JSON header in <script id="jy-data"> and the frames as base64 float32. Each
 * visual has ten values per frame (jyVisual's a, b and quat); of those its kind uses, the
 * ones that never change go once into its "base", the others into the frame stream, so a
 * ground costs nothing per frame and a planar model no z. A planar model (every visual in
 * z = 0) gets the canvas view, any other the three.js one. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "animate.h"
#include "binding_private.h"
#include "plot_table.h"
#include "viewer_bundle.h"

#define JYL_ANIM "joinery.Animation"

enum { NV = 10 }; /* values a visual keeps per frame: a[3], b[3], quat[4] */

typedef struct Anim {
  const jyModel *model;
  jyEval *eval;
  int n, nchannels, nvis, forces;
  double *q, *v, *channels;
  jyVisual *vis;
  int *kinds;     /* nvis: each visual's kind, the same in every row */
  double *frames; /* nframes x nvis x NV */
  double *t;
  size_t nframes, cap;
  /* the columns of the rows handed in: model coordinate (-1: none), velocity or not */
  int ncols, *col_coord, *col_vel;
  int have_v;
  char err[1024];
} Anim;

/* Frees what the Anim holds; again is harmless (its userdata's __gc calls it too, for a Lua
 * error raised while it works). */
static void anim_free(Anim *a) {
  jy_eval_destroy(a->eval);
  free(a->q);
  free(a->v);
  free(a->channels);
  free(a->vis);
  free(a->kinds);
  free(a->frames);
  free(a->t);
  free(a->col_coord);
  free(a->col_vel);
  char err[sizeof a->err];
  memcpy(err, a->err, sizeof err);
  memset(a, 0, sizeof *a);
  memcpy(a->err, err, sizeof err);
}

static int anim_gc(lua_State *L) {
  anim_free((Anim *)luaL_checkudata(L, 1, JYL_ANIM));
  return 0;
}

static int anim_init(Anim *a, const jyModel *model, int forces) {
  a->model = model;
  a->forces = forces;
  a->n = jy_model_num_coords(model);
  a->nchannels = jy_model_num_channels(model);
  a->nvis = jy_model_num_visuals(model);
  a->eval = jy_eval_create(model);
  a->q = calloc((size_t)a->n + 1, sizeof(double));
  a->v = calloc((size_t)a->n + 1, sizeof(double));
  a->channels = calloc((size_t)a->nchannels + 1, sizeof(double));
  a->vis = calloc((size_t)a->nvis + 1, sizeof(jyVisual));
  a->kinds = calloc((size_t)a->nvis + 1, sizeof(int));
  if (!a->eval || !a->q || !a->v || !a->channels || !a->vis || !a->kinds) {
    snprintf(a->err, sizeof a->err, "out of memory");
    return -1;
  }
  if (a->nvis == 0) {
    snprintf(a->err, sizeof a->err,
             "nothing to draw: no part of the model has visuals (part protocol 7; "
             "docs/animation.md)");
    return -1;
  }
  return 0;
}

/* Maps column names (channel names) to coordinates; every model coordinate must have one. */
static int anim_columns(Anim *a, const char *const *names, int ncols, const char *source) {
  a->ncols = ncols;
  a->col_coord = malloc(sizeof(int) * ((size_t)ncols + 1));
  a->col_vel = malloc(sizeof(int) * ((size_t)ncols + 1));
  int *seen = calloc((size_t)a->n + 1, sizeof(int)),
      *seen_v = calloc((size_t)a->n + 1, sizeof(int));
  if (!a->col_coord || !a->col_vel || !seen || !seen_v) {
    free(seen);
    free(seen_v);
    return snprintf(a->err, sizeof a->err, "out of memory"), -1;
  }
  for (int k = 0; k < ncols; k++) {
    int ch = jy_model_find_channel(a->model, names[k]), vel = 0;
    int c = ch >= 0 ? jy_model_channel_coord(a->model, ch, &vel) : -1;
    a->col_coord[k] = c >= 0 ? c : -1;
    a->col_vel[k] = vel;
    if (c >= 0) (vel ? seen_v : seen)[c] = 1;
  }
  int missing = -1, have_v = 1;
  for (int i = 0; i < a->n; i++) {
    if (!seen[i] && missing < 0) missing = i;
    if (!seen_v[i]) have_v = 0;
  }
  free(seen);
  free(seen_v);
  a->have_v = have_v;
  if (missing >= 0)
    return snprintf(a->err, sizeof a->err,
                    "%s has no column %s, a coordinate of the model: animate needs every "
                    "coordinate (the default columns of joinery run have them)",
                    source, jy_model_coord_name(a->model, missing)),
           -1;
  if (a->forces && !have_v)
    return snprintf(a->err, sizeof a->err,
                    "%s lacks some velocities der(...): --forces needs them to solve for the "
                    "constraint forces",
                    source),
           -1;
  return 0;
}

/* One output row: its visuals become a frame. */
static int anim_row(Anim *a, const double *row) {
  for (int k = 1; k < a->ncols; k++)
    if (a->col_coord[k] >= 0) (a->col_vel[k] ? a->v : a->q)[a->col_coord[k]] = row[k];
  double t = row[0];
  const double *channels = NULL;
  if (a->forces) {
    jyStatus st = jy_eval_channels(a->eval, a->q, a->v, t, a->channels);
    if (st != JY_OK)
      return snprintf(a->err, sizeof a->err, "%s", jyl_msg_or(jy_eval_error(a->eval), st)), -1;
    channels = a->channels;
  }
  jyStatus st = jy_eval_visuals(a->eval, a->q, a->v, t, channels, a->vis);
  if (st != JY_OK)
    return snprintf(a->err, sizeof a->err, "%s", jyl_msg_or(jy_eval_error(a->eval), st)), -1;
  if (a->nframes == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 256;
    double *f = realloc(a->frames, sizeof(double) * cap * (size_t)a->nvis * NV);
    if (!f) return snprintf(a->err, sizeof a->err, "out of memory"), -1;
    a->frames = f;
    double *tt = realloc(a->t, sizeof(double) * cap);
    if (!tt) return snprintf(a->err, sizeof a->err, "out of memory"), -1;
    a->t = tt;
    a->cap = cap;
  }
  double *dst = a->frames + a->nframes * (size_t)a->nvis * NV;
  for (int i = 0; i < a->nvis; i++) {
    const jyVisual *x = &a->vis[i];
    /* the page keeps 32-bit floats: a value beyond them would be no number there */
    double big = 0;
    for (int k = 0; k < 3; k++) big = fmax(big, fmax(fabs(x->a[k]), fabs(x->b[k])));
    if (big > 1e30)
      return snprintf(a->err, sizeof a->err,
                      "visual %d of %s is %g m (or N) from the origin at t = %.9g: too far to draw",
                      i + 1, jy_model_visual_name(a->model, i), big, t),
             -1;
    if (a->nframes == 0) a->kinds[i] = x->kind;
    if (x->kind != a->kinds[i]) /* the page draws each visual with one kind */
      return snprintf(a->err, sizeof a->err,
                      "visual %d of %s changed its kind from %d to %d at t = %.9g: a part's "
                      "visual keeps one kind for the whole run (part.h, jyVisualKind)",
                      i + 1, jy_model_visual_name(a->model, i), a->kinds[i], x->kind, t),
             -1;
    memcpy(dst + (size_t)i * NV, x->a, sizeof x->a);
    memcpy(dst + (size_t)i * NV + 3, x->b, sizeof x->b);
    memcpy(dst + (size_t)i * NV + 6, x->quat, sizeof x->quat);
  }
  a->t[a->nframes++] = t;
  return 0;
}

/* ---- the rows of a run -------------------------------------------------------------- */

static int run_sink(void *ud, const double *row, int nchannels) {
  (void)nchannels;
  return anim_row((Anim *)ud, row) != 0;
}

static int anim_run(lua_State *L, Anim *a, int model_idx, const jySimDef *def) {
  jySimDef d = *def;
  d.columns = NULL; /* the default: every coordinate and velocity, whatever sys:output says */
  LSim *sm = jyl_new_sim(L, model_idx, &d);
  int nc = jy_sim_num_columns(sm->sim);
  const char **names = malloc(sizeof(char *) * ((size_t)nc + 1));
  if (!names) return snprintf(a->err, sizeof a->err, "out of memory"), -1;
  for (int k = 0; k < nc; k++)
    names[k] = jy_model_channel_name(a->model, jy_sim_column(sm->sim, k));
  int rc = anim_columns(a, names, nc, "the run");
  free(names);
  if (rc != 0) return -1;
  jyStatus st = jy_sim_run(sm->sim, run_sink, a);
  if (st != JY_OK && !a->err[0])
    snprintf(a->err, sizeof a->err, "%s", jyl_msg_or(jy_sim_error(sm->sim), st));
  lua_pop(L, 1);
  return st == JY_OK ? 0 : -1;
}

/* ---- the rows of a run's file ----------------------------------------------------------- */

/* plot_table_load's chooser: every column, once the names say which are coordinates. */
typedef struct AnimFile {
  Anim *a;
  const char *path;
} AnimFile;

static int choose_columns(void *ud, const PlotTable *t, char *want, char *err, size_t len) {
  AnimFile *af = ud;
  if (t->ncols < 1 || strcmp(t->names[0], "t") != 0) {
    snprintf(err, len, "%s: the first column is '%s', not t: not a joinery output file", af->path,
             t->ncols < 1 ? "" : t->names[0]);
    return -1;
  }
  if (anim_columns(af->a, (const char *const *)t->names, t->ncols, af->path) != 0) {
    if (err != af->a->err) snprintf(err, len, "%s", af->a->err); /* anim_file passes a->err */
    return -1;
  }
  memset(want, 1, (size_t)t->ncols);
  return 0;
}

/* The rows of a CSV or HDF5 file a run wrote (lua/plot_table.c reads both). */
static int anim_file(Anim *a, const char *path) {
  PlotTable t = {0};
  AnimFile af = {a, path};
  double *row = NULL;
  int rc = -1;
  if (plot_table_load(path, &t, choose_columns, &af, a->err, sizeof a->err) != 0) goto done;
  if (t.nrows == 0) {
    snprintf(a->err, sizeof a->err, "%s has a header but no rows", path);
    goto done;
  }
  if (!(row = malloc(sizeof(double) * (size_t)t.ncols))) {
    snprintf(a->err, sizeof a->err, "out of memory");
    goto done;
  }
  for (long i = 0; i < t.nrows; i++) {
    for (int k = 0; k < t.ncols; k++) row[k] = t.values[k][i];
    if (anim_row(a, row) != 0) goto done;
  }
  rc = 0;
done:
  free(row);
  plot_table_free(&t);
  return rc;
}

/* ---- the page ------------------------------------------------------------------------- */

/* The fields (of a, b, quat) a kind draws with. */
static unsigned kind_fields(int kind) {
  switch (kind) {
  case JY_VISUAL_POINT:
    return 0x7u;
  case JY_VISUAL_FRAME:
    return 0x7u | 0x3c0u;
  case JY_VISUAL_NONE:
    return 0;
  default: /* rod, spring, damper, rope, ground, arrow: a and b */
    return 0x3fu;
  }
}

/* A JSON string, safe inside <script>: quotes, backslashes, controls and '<' escaped. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c == '<' || c == '>' || c == '&')
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void base64(FILE *f, const unsigned char *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned x = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
    fputc(tab[x >> 18], f), fputc(tab[(x >> 12) & 63], f);
    fputc(tab[(x >> 6) & 63], f), fputc(tab[x & 63], f);
  }
  if (i < n) {
    unsigned x = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0u);
    fputc(tab[x >> 18], f), fputc(tab[(x >> 12) & 63], f);
    fputc(i + 1 < n ? tab[(x >> 6) & 63] : '=', f), fputc('=', f);
  }
}

static const char page_head[] =
  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
  "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:\">\n<title>";
static const char page_style[] =
  "</title>\n<style>\nhtml, body { margin: 0; height: 100%; overflow: hidden; "
  "font: 14px sans-serif; }\n"
  "#jy-root { position: relative; width: 100%; height: 100%; }\n"
  "#jy-stage { position: absolute; left: 0; right: 0; top: 0; bottom: 40px; }\n"
  "#jy-controls { position: absolute; left: 0; right: 0; bottom: 0; display: flex; gap: 12px; "
  "align-items: center; height: 28px; padding: 6px 10px; background: #f5f5f5; }\n"
  "#jy-time { flex: 1; }\n</style>\n</head>\n<body>\n<div id=\"jy-root\"></div>\n"
  "<script id=\"jy-data\" type=\"application/json\">";

/* Whether the build embedded the viewer's script; else says how to get it. */
static int have_viewer(Anim *a, size_t js_len) {
  if (js_len > 0) return 1;
  snprintf(a->err, sizeof a->err,
           "this joinery was built without the viewer's script: run `npm ci` in viewer/ "
           "(esbuild and three.js from the npm registry; .ci/install-deps does it), then "
           "rebuild (meson setup --reconfigure build && meson compile -C build)");
  return 0;
}

static int anim_write(Anim *a, const char *path, const char *title, int planar) {
  const char *js = planar ? jyl_viewer_2d : jyl_viewer_3d;
  size_t js_len = planar ? jyl_viewer_2d_len : jyl_viewer_3d_len;
  if (!have_viewer(a, js_len)) return -1;
  /* each visual: which of its fields vary (a column each) and which stay as in frame 0 */
  size_t nf = a->nframes, nv = (size_t)a->nvis;
  int *at = malloc(sizeof(int) * (nv + 1));
  unsigned *vary = calloc(nv + 1, sizeof(unsigned));
  if (!at || !vary) {
    free(at);
    free(vary);
    return snprintf(a->err, sizeof a->err, "out of memory"), -1;
  }
  int width = 0;
  for (size_t i = 0; i < nv; i++) {
    unsigned use = kind_fields(a->kinds[i]);
    for (int k = 0; k < NV; k++) {
      if (!(use >> k & 1u)) continue;
      double first = a->frames[i * NV + (size_t)k];
      for (size_t fr = 1; fr < nf; fr++)
        if (a->frames[(fr * nv + i) * NV + (size_t)k] != first) {
          vary[i] |= 1u << k;
          break;
        }
    }
    at[i] = width;
    for (int k = 0; k < NV; k++) width += vary[i] >> k & 1u;
  }
  float *stream = malloc(sizeof(float) * ((size_t)width * nf + 1));
  if (!stream) {
    free(at);
    free(vary);
    return snprintf(a->err, sizeof a->err, "out of memory"), -1;
  }
  for (size_t fr = 0; fr < nf; fr++)
    for (size_t i = 0; i < nv; i++) {
      float *dst = stream + fr * (size_t)width + (size_t)at[i];
      for (int k = 0; k < NV; k++)
        if (vary[i] >> k & 1u) *dst++ = (float)a->frames[(fr * nv + i) * NV + (size_t)k];
    }
  /* written beside the target and renamed: a failed write leaves no half page */
  size_t plen = strlen(path) + 32;
  char *tmp = malloc(plen);
  FILE *f =
    tmp ? (snprintf(tmp, plen, "%s.%ld.partial", path, (long)getpid()), fopen(tmp, "w")) : NULL;
  if (!f) {
    snprintf(a->err, sizeof a->err, "cannot write %s: %s", tmp ? tmp : path, strerror(errno));
    free(tmp);
    free(stream);
    free(at);
    free(vary);
    return -1;
  }
  fputs(page_head, f);
  for (const char *c = title; *c; c++) /* the title as text: only < and & matter */
    if (*c == '<')
      fputs("&lt;", f);
    else if (*c == '&')
      fputs("&amp;", f);
    else
      fputc(*c, f);
  fputs(" — joinery", f);
  fputs(page_style, f);
  fputs("{\"title\":", f);
  json_string(f, title);
  double gravity[3];
  jy_model_gravity(a->model, gravity);
  fprintf(f, ",\"planar\":%s,\"forces\":%s,\"gravity\":[%.17g,%.17g,%.17g],\"width\":%d,\"t\":[",
          planar ? "true" : "false", a->forces ? "true" : "false", gravity[0], gravity[1],
          gravity[2], width);
  for (size_t fr = 0; fr < nf; fr++) fprintf(f, "%s%.10g", fr ? "," : "", a->t[fr]);
  fputs("],\n\"visuals\":[", f);
  for (size_t i = 0; i < nv; i++) {
    fputs(i ? ",\n{\"name\":" : "{\"name\":", f);
    json_string(f, jy_model_visual_name(a->model, (int)i));
    fprintf(f, ",\"kind\":%d,\"size\":%.9g,\"at\":%d,\"base\":[", a->kinds[i], a->vis[i].size,
            at[i]);
    for (int k = 0; k < NV; k++) {
      double x = (vary[i] >> k & 1u) ? 0.0 : a->frames[i * NV + (size_t)k];
      fprintf(f, "%s%.9g", k ? "," : "", x);
    }
    fputs("],\"cols\":[", f);
    for (int k = 0, first = 1; k < NV; k++)
      if (vary[i] >> k & 1u) fprintf(f, "%s%d", first ? "" : ",", k), first = 0;
    fputs("]}", f);
  }
  fputs("],\n\"frames\":\"", f);
  base64(f, (const unsigned char *)stream, sizeof(float) * (size_t)width * nf);
  fputs("\"}</script>\n<script>", f);
  fwrite(js, 1, js_len, f);
  fputs("</script>\n</body>\n</html>\n", f);
  free(stream);
  free(at);
  free(vary);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
    snprintf(a->err, sizeof a->err, "cannot write %s: %s", path, strerror(errno));
    remove(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

/* Keeps every k-th frame (and the last) when there are more than JYL_ANIM_MAX_FRAMES: a page
 * of a long or finely sampled run stays a few MB, and a browser plays it smoothly. */
static long anim_decimate(Anim *a) {
  if (a->nframes <= JYL_ANIM_MAX_FRAMES) return 1;
  size_t k = (a->nframes + JYL_ANIM_MAX_FRAMES - 2) / (JYL_ANIM_MAX_FRAMES - 1), kept = 0;
  size_t width = (size_t)a->nvis * NV;
  for (size_t f = 0; f < a->nframes; f++) {
    if (f % k != 0 && f + 1 != a->nframes) continue;
    memmove(a->frames + kept * width, a->frames + f * width, sizeof(double) * width);
    a->t[kept++] = a->t[f];
  }
  a->nframes = kept;
  return (long)k;
}

/* Whether every visual of every frame lies in z = 0, turning about z only. */
static int anim_planar(const Anim *a) {
  size_t count = a->nframes * (size_t)a->nvis;
  for (size_t i = 0; i < count; i++) {
    const double *x = a->frames + i * NV;
    if (x[2] != 0.0 || x[5] != 0.0 || x[7] != 0.0 || x[8] != 0.0) return 0;
  }
  return 1;
}

int jyl_animate(lua_State *L, int model_idx, const jySimDef *def, const jylAnimOpts *opts,
                jylAnimResult *res) {
  model_idx = lua_absindex(L, model_idx);
  LModel *m = jyl_check_model(L, model_idx);
  Anim *a = (Anim *)lua_newuserdatauv(L, sizeof(Anim), 0);
  memset(a, 0, sizeof *a);
  if (luaL_newmetatable(L, JYL_ANIM)) {
    lua_pushcfunction(L, anim_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  /* before the run: a build without the viewer has neither script */
  int rc = have_viewer(a, jyl_viewer_2d_len + jyl_viewer_3d_len) ? 0 : -1;
  if (rc == 0) rc = anim_init(a, m->model, opts->forces);
  if (rc == 0) rc = opts->csv ? anim_file(a, opts->csv) : anim_run(L, a, model_idx, def);
  long every = rc == 0 ? anim_decimate(a) : 1;
  int planar = rc == 0 ? anim_planar(a) : 0;
  if (rc == 0) rc = anim_write(a, opts->out, opts->title, planar);
  if (res) {
    res->frames = (long)a->nframes;
    res->visuals = a->nvis;
    res->planar = planar;
    res->every = every;
  }
  anim_free(a);
  if (rc != 0) {
    lua_pushstring(L, a->err[0] ? a->err : "animate failed");
    return lua_error(L);
  }
  lua_pop(L, 1);
  return 0;
}

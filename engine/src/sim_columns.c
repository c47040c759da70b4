/* The output selection of a run (jySimDef.columns): glob patterns over the channel names
 * resolved once by jy_sim_create into the columns (channel indices, "t" first) and the mask
 * of the channels to compute; the default leaves out what follows from the glue
 * (default_skips). */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Whether name matches the glob pattern p[0..len) ('*' any run, '?' one character). */
static int glob_match(const char *p, size_t len, const char *name) {
  const char *end = p + len, *star = NULL, *resume = NULL;
  while (*name) {
    if (p < end && (*p == '?' || *p == *name)) {
      p++;
      name++;
    } else if (p < end && *p == '*') {
      star = ++p;
      resume = name;
    } else if (star) {
      p = star;
      name = ++resume;
    } else {
      return 0;
    }
  }
  while (p < end && *p == '*') p++;
  return p == end;
}

/* Edit distance of a[0..la) and b, capped (the caller only ranks). */
static int distance(const char *a, size_t la, const char *b) {
  enum { CAP = 127 };
  size_t lb = strlen(b);
  if (la > CAP) la = CAP;
  if (lb > CAP) lb = CAP;
  int row[CAP + 1];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* The channel nearest the pattern p[0..len), its wildcards dropped. */
static const char *nearest_channel(const jyModel *m, const char *p, size_t len) {
  char plain[128];
  size_t n = 0;
  for (size_t i = 0; i < len && n + 1 < sizeof plain; i++)
    if (p[i] != '*' && p[i] != '?') plain[n++] = p[i];
  const char *best = m->channel_names[0];
  int best_d = 1 << 30;
  for (int i = 0; i < m->nchannels; i++) {
    int d = distance(plain, n, m->channel_names[i]);
    if (d < best_d) best_d = d, best = m->channel_names[i];
  }
  return best;
}

static int add_column(jySim *sim, int ch) {
  if (sim->want[ch]) return 0;
  sim->want[ch] = 1;
  sim->cols[sim->ncols++] = ch;
  return 0;
}

/* What the default leaves out, set in skip (nchannels): what glue elimination substituted
 * away (the copies of eliminated coordinates, "part.coord" and "der(part.coord)", and the
 * forces of the eliminated glues, "force.<glue>...") and the outputs of the parts that keep
 * theirs for whoever asks (JY_PART_OUTPUTS_ON_REQUEST: a mesh's springs). All of it grows
 * with the connections rather than with the parts' own coordinates; a glob brings it back. */
static void default_skips(const jyModel *m, unsigned char *skip) {
  for (int i = 1; i < m->nchannels; i++)
    if (jy_model_channel_coord(m, i, NULL) == -2) skip[i] = 1;
  for (int g = 0; g < m->nglues; g++)
    if (m->glues[g].link >= 0)
      for (int k = 0; k < m->glues[g].dim; k++) skip[m->glues[g].force_channel + k] = 1;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    if (p->shape->flags & JY_PART_OUTPUTS_ON_REQUEST)
      for (int k = 0; k < p->shape->noutputs; k++) skip[p->output_channel + k] = 1;
  }
}

jyStatus jy_sim_select_columns(jySim *sim) {
  const jyModel *m = sim->model;
  const jyAllocator *a = &m->alloc;
  sim->cols = jy_calloc(a, (size_t)m->nchannels + 1, sizeof(int));
  sim->want = jy_calloc(a, (size_t)m->nchannels + 1, 1);
  sim->col_row = jy_calloc(a, (size_t)m->nchannels + 1, sizeof(double));
  if (!sim->cols || !sim->want || !sim->col_row) return JY_ERR_NOMEM;
  sim->ncols = 0;
  add_column(sim, 0); /* t */
  const char *s = sim->def.columns;
  sim->def.columns = NULL; /* the caller's string need not outlive jy_sim_create */
  int any = 0;
  while (s && *s) {
    size_t len = strcspn(s, ",");
    const char *p = s, *next = s[len] ? s + len + 1 : s + len;
    while (len > 0 && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++, len--;
    while (len > 0 &&
           (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n' || p[len - 1] == '\r'))
      len--;
    s = next;
    if (len == 0) continue;
    any = 1;
    int matched = 0;
    for (int i = 0; i < m->nchannels; i++)
      if (glob_match(p, len, m->channel_names[i])) {
        matched = 1;
        add_column(sim, i);
      }
    if (!matched) {
      jy_set_error(sim->error,
                   "columns: '%.*s' matches no output channel (the nearest is '%s'; "
                   "model:channels() lists them)",
                   (int)(len > 200 ? 200 : len), p, nearest_channel(m, p, len));
      return JY_ERR_INVALID;
    }
  }
  if (!any) { /* the default: every channel but those default_skips names */
    unsigned char *skip = jy_calloc(a, (size_t)m->nchannels + 1, 1);
    if (!skip) return JY_ERR_NOMEM;
    default_skips(m, skip);
    for (int i = 1; i < m->nchannels; i++)
      if (!skip[i]) add_column(sim, i);
    jy_free(a, skip);
  }
  /* An angle output continues from its last report (within pi of it): with every > 1 the
   * rows between the written ones still report the selected angle outputs, so that a part
   * turning more than half a turn between two written rows is not unwrapped wrongly. */
  sim->angle_rows = 0;
  for (int i = 0; i < m->nparts && !sim->angle_rows; i++) {
    const jyModelPart *p = &m->parts[i];
    unsigned bits = p->shape->angle_outputs;
    for (int k = 0; bits && k < p->shape->noutputs; k++, bits >>= 1)
      if ((bits & 1u) && sim->want[p->output_channel + k]) sim->angle_rows = 1;
  }
  return JY_OK;
}

int jy_sim_num_columns(const jySim *sim) { return sim && sim->cols ? sim->ncols : 0; }

int jy_sim_column(const jySim *sim, int k) {
  return sim && sim->cols && k >= 0 && k < sim->ncols ? sim->cols[k] : -1;
}

/* The output selection of a run (jySimDef.columns): glob patterns over the channel names
 * resolved once by jy_sim_create into the columns (channel indices, "t" first) and the mask
 * of the channels to compute; the default leaves out what follows from the glue
 * (default_skips). */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Adds channel ch once (jy_pick_names's callback). */
static int add_column(void *ud, int ch) {
  jySim *sim = ud;
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
  jyNameMiss miss = {NULL, 0, -1};
  int npatterns =
    jy_pick_names(s, (const char *const *)m->channel_names, m->nchannels, add_column, sim, &miss);
  if (npatterns < 0) {
    jy_set_error(sim->error,
                 "columns: '%.*s' matches no output channel (the nearest is '%s'; "
                 "model:channels() lists them)",
                 (int)(miss.len > 200 ? 200 : miss.len), miss.pattern,
                 miss.nearest >= 0 ? m->channel_names[miss.nearest] : "");
    return JY_ERR_INVALID;
  }
  if (npatterns == 0) { /* the default: every channel but those default_skips names */
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

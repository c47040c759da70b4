/* The output selection of a run (jySimDef.columns): glob patterns over the channel names
 * resolved once by jy_sim_create into the columns (channel indices, "t" first) and the mask
 * of the channels to compute; the default leaves out the copies of eliminated coordinates. */
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
  if (npatterns == 0) /* the default: every channel but the copies of eliminated coordinates */
    for (int i = 1; i < m->nchannels; i++)
      if (jy_model_channel_coord(m, i, NULL) != -2) add_column(sim, i);
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

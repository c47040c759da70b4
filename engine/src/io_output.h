/* What the file writers (io_csv.c, io_hdf5.c) share: the run's temporary file beside the
 * output, the removal of dead processes' temporary files, the name of a failed run's
 * incomplete file and the note the run's error ends with. Internal. */
#ifndef JY_IO_OUTPUT_H
#define JY_IO_OUTPUT_H

#include <stddef.h>

#include "sim.h"

/* "<stem>.incomplete<ext>" for "<stem><ext>", else "<path>.incomplete<ext>"; 0 when it does
 * not fit in len. */
int jy_out_incomplete_name(const char *path, const char *ext, char *out, size_t len);
/* Removes the "<path>.<pid>-<hex>.partial" files of processes that no longer run (when
 * remove_stale) and returns how many belong to processes that run. */
int jy_out_other_partials(const char *path, int remove_stale);
/* Creates "<path>.<pid>-<n>.partial" exclusively (mode 0666 less the umask) and returns its
 * open descriptor, its name in tmp; -1 with errno set when it cannot. Records the file's
 * identity on sim (jy_sim_output_replaced). */
int jy_out_create_temp(jySim *sim, const char *path, char *tmp, size_t len);
/* Whether path exists and is not a regular file (a pipe, a terminal, /dev/full). */
int jy_out_is_special_file(const char *path);
/* After a failed run: appends to the simulation's message where its rows went (kept_ok:
 * into `kept`, whose mark is `marked`, e.g. "first line '# incomplete: ...'"), or why they
 * could not be kept (errno), and that a file at path is an earlier run's. */
void jy_out_failure_note(jySim *sim, const char *path, const char *kept, int kept_ok, long rows,
                         const char *marked);
/* The end of a run written to tmp: on success (st == JY_OK) renames tmp to path (failing
 * to is JY_ERR_IO) and removes an earlier run's "<stem>.incomplete<ext>"; otherwise removes
 * tmp. Returns the status. */
jyStatus jy_out_finish(jySim *sim, const char *path, const char *tmp, const char *ext, jyStatus st);

#endif

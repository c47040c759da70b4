/* lua/plot_table.h — the table joinery plot reads: a run's output file as channel names,
 * units and columns of numbers, whatever the file's format. One loader per format behind
 * plot_table_load: CSV, and HDF5 for a name ending in .h5 or .hdf5. */
#ifndef JOINERY_PLOT_TABLE_H
#define JOINERY_PLOT_TABLE_H

#include <stddef.h>

typedef struct PlotTable {
  int ncols;        /* columns of the file */
  char **names;     /* ncols channel names, in the file's order */
  char **units;     /* ncols units, each NULL when the file gives none */
  char *incomplete; /* the reason of a run that failed ("# incomplete: <why>"), or NULL */
  long nrows;
  double **values; /* ncols, each NULL or nrows numbers: only the columns chosen are read */
} PlotTable;

/* Chooses the columns to read once the names are known: sets want[k] for column k and
 * returns 0, or returns non-zero after writing why into err[len]. */
typedef int (*PlotChoose)(void *ud, const PlotTable *t, char *want, char *err, size_t len);

/* Reads the file at path (its format from its extension) into *t, zeroed by the caller:
 * the names, units and incomplete note, then the values of the columns `choose` wants.
 * Returns 0, or -1 with the reason (naming the file, and the line of a bad row) in err[len].
 * *t is the caller's to free with plot_table_free, on failure too. */
int plot_table_load(const char *path, PlotTable *t, PlotChoose choose, void *ud, char *err,
                    size_t len);

void plot_table_free(PlotTable *t);

#endif

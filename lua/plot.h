/* lua/plot.h — joinery plot: a run's channels drawn by Debian's gnuplot, run as a program.
 * Reading the file is plot_table.h's; main.c runs a model script first when it is given. */
#ifndef JOINERY_PLOT_H
#define JOINERY_PLOT_H

#include <stdio.h>

typedef struct PlotArgs {
  const char *input; /* the run's file, or a model script (.lua) to run first */
  char *y;           /* the --y patterns joined by commas (owned) */
  const char *x;     /* the --x channel (default "t") */
  const char *out;   /* -o (default: the input's base name with .png) */
  char *out_owned;   /* the default out, when out is it */
  const char *title; /* --title, or NULL: the input's base name */
  int width, height; /* --size WxH in pixels (a PDF: points) */
  int has_xrange, has_yrange;
  double xrange[2], yrange[2];
  char **rest; /* the other arguments, in order: run's options for a script (owned array) */
  int nrest;
} PlotArgs;

void plot_usage(FILE *f);

/* Reads joinery plot's arguments argv[at..argc) into *a (zeroed by the caller). Returns -1 to
 * go on, 0 after --help, 2 after a usage error (printed). Free *a with plot_args_free. */
int plot_parse(int argc, char **argv, int at, PlotArgs *a);

void plot_args_free(PlotArgs *a);

/* Whether path names a model script (.lua) rather than a run's output file. */
int plot_is_script(const char *path);

/* Whether the picture a->out can be written (tried and removed); -1 after saying why not. */
int plot_check_out(const PlotArgs *a);

/* Draws the --y channels of the table at `table` against --x into a->out through gnuplot.
 * Returns 0 (after printing "wrote ..."), or 1 after printing why not. */
int plot_draw(const PlotArgs *a, const char *table);

#endif

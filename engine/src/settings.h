/* The range checks of the settings' lists (settings.c): jy_sim_create and jy_model_compile
 * refuse a definition that fails them. */
#ifndef JOINERY_SETTINGS_H
#define JOINERY_SETTINGS_H

#include "internal.h"

/* Name the first run (solver) setting out of its range in error and return 1, or return 0. */
int jy_sim_def_bad(const jySimDef *d, char *error);
int jy_solver_def_bad(const jySolverDef *d, char *error);

#endif

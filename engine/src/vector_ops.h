/* The integrators' vector arithmetic, compiled with the engine. Internal. */
#ifndef JY_VECTOR_OPS_H
#define JY_VECTOR_OPS_H

#include <sundials/sundials_nvector.h>

/* Gives a serial vector (and every clone CVODE and ARKODE make of it) the engine's own
 * kernels for the operations the integrators spend their time in, with the fused and vector
 * array operations on. Each kernel does the same floating-point operations in the same order
 * as SUNDIALS' serial one, so every result is the same to the bit; only the machine code
 * differs (vector_ops.c says why). */
void jy_vector_use_engine_ops(N_Vector v);

#endif

/* lib/tileir internals shared by its files. */
#ifndef PB_TILEIR_INTERNAL_H
#define PB_TILEIR_INTERNAL_H

#include "tileir/bytecode.h"
#include "tileir/tileir.h"

/* translate.c: write the Tile IR entry "name" for the nest "root" (a
 * top-level affine.parallel or affine.for of kernel function "func", or
 * the first of a run of "count" top-level operations of scalar work),
 * its parameters one pointer per argument of "func", those with
 * "aligned" set (may be NULL) assumed 16-byte aligned; the grid of
 * blocks it needs into "grid". PB_ERR reported at the operation it
 * cannot translate. */
int pb_tileir_nest(struct pb_ctx *ctx, struct pb_tileir *w,
		   MlirOperation func, MlirOperation root, int count,
		   const char *name,
		   const int *aligned, int64_t grid[3]);

#endif

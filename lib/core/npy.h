/* NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from
 * struct pb_tensor. Only little-endian ("<", "|" or "=") C-ordered arrays of
 * the numeric types in core/tensor.h are accepted; Fortran order, big-endian
 * data, structured and object dtypes are rejected with a clear message.
 * This file does not use MLIR (a GPU-only pb-run links it without MLIR). */
#ifndef PB_CORE_NPY_H
#define PB_CORE_NPY_H

#include <stddef.h>

#include "core/pb.h"
#include "core/tensor.h"

/* Decode the .npy image "data" of "len" bytes into "t" (data malloc'ed,
 * name left alone). On failure returns -1, leaves "t" without data and
 * writes a lowercase message without trailing period into "err" (of size
 * "errlen"); returns 0 on success. */
int pb_npy_decode(const void *data, size_t len, struct pb_tensor *t,
		  char *err, size_t errlen);

/* Append the .npy image of "t" to "out": format 1.0, or 2.0 when the header
 * does not fit in 1.0's 16-bit length. Returns -1 with a message in "err"
 * (of size "errlen") when "t"'s dtype has no NumPy equivalent. */
int pb_npy_encode(const struct pb_tensor *t, struct pb_buf *out, char *err,
		  size_t errlen);

/* Read the whole regular file "path" (never stdin) into malloc'ed memory
 * with a trailing NUL not counted in "*len": at most the size the file
 * has when opened, so that a device such as /dev/zero, a pipe or a
 * directory is refused ("path: error: not a regular file") instead of
 * read without end. NULL after reporting an error through "ctx". */
char *pb_read_regular(struct pb_ctx *ctx, const char *path, size_t *len);

/* Read the .npy file "path" into "t"; errors are reported through "ctx" as
 * "path: error: ..." and give PB_ERR. */
int pb_npy_read(struct pb_ctx *ctx, const char *path, struct pb_tensor *t);

/* Write "t" to "path" atomically (pb_write_file); PB_ERR (reported through
 * "ctx") on failure. */
int pb_npy_write(struct pb_ctx *ctx, const char *path,
		 const struct pb_tensor *t);

/* The NumPy type string ("<f4", "|b1", ...) of "dt", or NULL. */
const char *pb_npy_descr(enum pb_dtype dt);

#endif

/* pb core: the context, diagnostics, growable buffers and files (the tool
 * driver is lib/driver, above lib/target).
 *
 * Exit codes (every tool): PB_OK 0, PB_ERR 1 (input or compilation error),
 * PB_USAGE 2 (bad command line).
 */
#ifndef PB_CORE_PB_H
#define PB_CORE_PB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mlir-c/IR.h"

struct isl_ctx;
struct pb_target;

enum { PB_OK = 0, PB_ERR = 1, PB_USAGE = 2 };

#define PB_VERSION "0.1.0"

/* A growable byte buffer; output of every tool is collected in one and only
 * written out when the whole run succeeded. */
struct pb_buf {
	char *data;
	size_t len, cap;
};
void pb_buf_append(struct pb_buf *b, const void *p, size_t n);
void pb_buf_puts(struct pb_buf *b, const char *s);
void pb_buf_printf(struct pb_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pb_buf_vprintf(struct pb_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void pb_buf_free(struct pb_buf *b);
/* With $PB_TIMING set, print to stderr the wall-clock and CPU seconds
 * (all threads) since the previous call as phase "name" of "tool" (NULL:
 * start the clock without printing) (phase.c). */
void pb_phase(const char *tool, const char *name);
/* realloc "p" to "n" elements of "size" bytes (at least one), aborting
 * when memory runs out: the growable lists of the compiler treat that as
 * fatal, as isl and MLIR do. */
void *pb_xrealloc(void *p, size_t n, size_t size);
/* A map from pointers (an MLIR handle's ptr: operations, uniqued
 * attributes) to non-negative ints, by open addressing (ptrmap.c): for
 * the lookups that a scan of a list or of the IR would make quadratic. */
struct pb_ptrmap {
	size_t cap, n;
	const void **key;
	int *val;
};
/* Map "key" (not NULL) to "val" in "m", replacing any earlier value. */
void pb_ptrmap_put(struct pb_ptrmap *m, const void *key, int val);
/* The value of "key" in "m", or -1. */
int pb_ptrmap_get(const struct pb_ptrmap *m, const void *key);
void pb_ptrmap_free(struct pb_ptrmap *m);
/* MlirStringCallback that appends to the pb_buf in "user". */
void pb_buf_mlir_callback(MlirStringRef s, void *user);

/* The context of one tool run: owns the MlirContext (dialects, passes and
 * translations registered once), the isl_ctx, the common options and the
 * diagnostic state. In a build with -DPB_NO_MLIR (pb-run-lite) "mlir" and
 * "isl" stay null and only the diagnostics without locations exist. */
/* What float32 contractions compute in (--precision, docs/driver.md):
 * exact fp32 on CUDA cores (the default), or on tensor cores with their
 * operands rounded to tf32, fp16 or bf16 and f32 accumulation. */
enum pb_precision {
	PB_PRECISION_FP32 = 0,
	PB_PRECISION_TF32,
	PB_PRECISION_FP16,
	PB_PRECISION_BF16,
};

/* The --precision name of "p": "fp32", "tf32", "fp16", "bf16". */
const char *pb_precision_name(enum pb_precision p);
/* The precision named "name", -1 when none is. */
int pb_precision_parse(const char *name);

struct pb_ctx {
	MlirContext mlir;
	struct isl_ctx *isl;
	const char *tool;       /* "pb-fuse" */
	const char *input_name; /* file name used in diagnostics */
	const char *arch;       /* --arch, default "sm_90" (or the arch of
				   --target-file when --arch is not given) */
	const char *target_file; /* --target-file (docs/targets.md), NULL:
				    the built-in description of "arch" */
	enum pb_precision precision; /* --precision: what float32
				   contractions compute in (docs/pb-mma.md) */
	struct pb_target *target; /* the description, loaded once by
				     pb_target_of (lib/target); plain
				     memory, freed with the context */
	int first_line;         /* line offset of the current split chunk */
	int nerrors;
};
struct pb_ctx *pb_ctx_alloc(const char *tool);
void pb_ctx_free(struct pb_ctx *ctx);
/* The compiler half of "ctx" (core/ctx_compiler.c): create the MlirContext
 * with its diagnostic handler and the isl_ctx, or destroy them.
 * pb_ctx_alloc and pb_ctx_free call these unless built with PB_NO_MLIR. */
void pb_ctx_compiler_init(struct pb_ctx *ctx);
void pb_ctx_compiler_free(struct pb_ctx *ctx);

/* Diagnostics: "<file>:<line>:<col>: error: <msg>" on stderr.
 * pb_error_at uses an MLIR location (FileLineCol, Name, Fused, CallSite);
 * pb_error reports against the current input file without a position. */
void pb_error_at(struct pb_ctx *ctx, MlirLocation loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pb_error(struct pb_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pb_verror(struct pb_ctx *ctx, const char *where, const char *fmt,
	       va_list ap);
/* Report an error against "where" (a file, or NULL: the current input)
 * and return PB_ERR, so that an error path is one line. */
int pb_error_in(struct pb_ctx *ctx, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pb_warn(struct pb_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A remark (why a stage did or did not transform something, under a
 * tool's --remarks): "<file>:<line>:<col>: remark: <msg>" on stderr. */
void pb_remark_at(struct pb_ctx *ctx, MlirLocation loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read a whole file ("-" or NULL: stdin). Returns malloc'ed data with a
 * trailing NUL (not counted in *len), or NULL with errno set. */
char *pb_read_file(const char *path, size_t *len);
/* Write "data" to "path" atomically (temp file + rename); "-" is stdout,
 * whose close is checked. Returns 0 or -1 (errno set). */
int pb_write_file(const char *path, const void *data, size_t len);

/* Run the program at the path "argv[0]" with arguments "argv" and
 * environment "env" (NULL: this process's), standard input "in" (through
 * an unlinked temporary file; NULL: this process's standard input), and
 * its standard output (with "merge", its standard error too) appended to
 * "out". Returns its exit status (128 + the signal that killed it), or -1
 * with errno set when it could not run. */
int pb_run_program(char *const argv[], char *const env[],
		   const struct pb_buf *in, int merge, struct pb_buf *out);

/* Write "root" (a jansson json_t, kept) as JSON formatted with json_dumps
 * "flags" and a final newline to "path", atomically like pb_write_file.
 * Returns 0, or -1 with errno set. */
struct json_t;
int pb_write_json(const struct json_t *root, const char *path, size_t flags);

/* A list of strings (a repeatable option's values). */
struct pb_strlist {
	const char **v;
	int n;
};

/* One input handed to a tool: the whole file (or one --split-input-file
 * chunk, padded with newlines so that line numbers match the file). */
struct pb_input {
	const char *name; /* for diagnostics: the path, or "<stdin>" */
	const char *path; /* NULL for stdin */
	const char *data; /* "len" bytes and a '\0' after them: MLIR's
			     lexer reads up to the terminator */
	size_t len;
};

#endif

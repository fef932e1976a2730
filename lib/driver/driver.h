/* The one tool driver that every pb-* executable runs through: options,
 * input (a file or stdin, whole or split into --split-input-file chunks),
 * the target description (--arch, --target-file: loaded once into the
 * context) and output written only when the whole run succeeded. */
#ifndef PB_DRIVER_DRIVER_H
#define PB_DRIVER_DRIVER_H

#include "core/pb.h"

/* Command-line options. Long options only ("--name", "--name=value",
 * "--name value"), plus -h and -o from the driver. */
enum pb_opt_kind {
	PB_OPT_FLAG,    /* int *: set to 1 */
	PB_OPT_STR,     /* const char **: required value */
	PB_OPT_OPTSTR,  /* const char **: optional "=value"; "" when absent */
	PB_OPT_INT,     /* long * */
	PB_OPT_DOUBLE,  /* double * */
	PB_OPT_NONNEG,  /* double *: finite and >= 0 (a tolerance) */
	PB_OPT_LIST,    /* struct pb_strlist *: repeatable */
	PB_OPT_GROUP,   /* const struct pb_opt *: a table shared by tools */
};
struct pb_opt {
	const char *name; /* without the leading "--" */
	enum pb_opt_kind kind;
	void *dest;
	const char *metavar;
	const char *help;
};

enum {
	PB_TOOL_BINARY_INPUT = 1, /* input is not MLIR text: no splitting */
	PB_TOOL_NO_INPUT_OK = 2,  /* input is optional (e.g. --random runs) */
	PB_TOOL_REPORT = 4,       /* output is a report: on failure it still
				     goes to stdout (never to -o) */
};

/* A tool: its option table and the function that turns one input into
 * output text. run returns PB_OK or PB_ERR (after reporting the error). */
struct pb_tool {
	const char *name;
	const char *summary;     /* one line, for --help */
	const char *description; /* paragraph(s) for --help, may be NULL */
	const struct pb_opt *opts;
	unsigned flags;
	int (*run)(struct pb_ctx *ctx, const struct pb_input *in,
		   struct pb_buf *out, void *user);
	void *user;
};

/* The one driver: parses the command line, reads the input (file argument
 * or stdin), runs the tool on it (per chunk with --split-input-file) and
 * writes the output only when everything succeeded. Returns the exit code. */
int pb_main(const struct pb_tool *tool, int argc, char **argv);

#endif

/* pb-codegen: lower a pb module to PTX with a host launch plan.
 * See docs/pb-codegen.md. */
#ifndef PB_CODEGEN_CODEGEN_H
#define PB_CODEGEN_CODEGEN_H

#include "ir/ir.h"

struct pb_codegen_opts {
	const char *emit;  /* "ptx" (default) or "mlir" */
	const char *plan;  /* also write the plan JSON to this file */
	int ptxas_report;  /* print ptxas -v statistics to stderr */
};

/* Compile the module in "in" (any stage; earlier stages run first with
 * their defaults) for ctx->arch: PTX with the plan header, or with
 * emit "mlir" the mapped and outlined host+device module, into "out". */
int pb_codegen_run(struct pb_ctx *ctx, const struct pb_input *in,
		   struct pb_buf *out, const struct pb_codegen_opts *opts);

#endif

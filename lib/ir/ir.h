/* Helpers over the MLIR C API shared by every stage: parsing, verified
 * printing, pass pipelines, attributes, walks and the stage marker. */
#ifndef PB_IR_IR_H
#define PB_IR_IR_H

#include "mlir-c/IR.h"

#include "core/pb.h"

#define pb_str(s) mlirStringRefCreateFromCString(s)

/* The stages in pipeline order; a module records the last one applied in
 * its "pb.stage" attribute (no attribute: the input of pb-import's kind). */
enum pb_stage {
	PB_STAGE_NONE = 0,
	PB_STAGE_IMPORT,
	PB_STAGE_FUSE,
	PB_STAGE_TILE,
	PB_STAGE_MMA,
	PB_STAGE_SMEM,
	PB_STAGE_CODEGEN,
};
enum pb_stage pb_ir_get_stage(MlirModule m);
void pb_ir_set_stage(MlirModule m, enum pb_stage s);
const char *pb_ir_stage_name(enum pb_stage s);

/* Parse "in" as a module; NULL module (errors reported) on failure. */
MlirModule pb_ir_parse(struct pb_ctx *ctx, const struct pb_input *in);
/* Verify "m" and print it into "out"; PB_ERR when verification fails. */
int pb_ir_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out);
/* Run a textual pass pipeline ("builtin.module(...)") on "m". */
int pb_ir_run_pipeline(struct pb_ctx *ctx, MlirModule m, const char *pipeline);

/* Attribute access on operations by name. */
MlirAttribute pb_ir_attr(MlirOperation op, const char *name);
void pb_ir_set_attr(MlirOperation op, const char *name, MlirAttribute a);
int pb_ir_op_is(MlirOperation op, const char *name);
/* String value of a string attribute, or NULL-data ref. */
MlirStringRef pb_ir_str_attr(MlirOperation op, const char *name);

/* Find the func.func named "name" in "m" (null op when absent). */
MlirOperation pb_ir_lookup_func(MlirModule m, const char *name);



/* A stage transformation on a module in place; "opts" is stage-specific. */
typedef int (*pb_ir_transform_fn)(struct pb_ctx *ctx, MlirModule m,
				  const void *opts);
/* The body of every MLIR-to-MLIR filter tool: parse "in", apply "fn",
 * verify and print into "out". */
int pb_ir_filter(struct pb_ctx *ctx, const struct pb_input *in,
		 struct pb_buf *out, pb_ir_transform_fn fn, const void *opts);
#endif

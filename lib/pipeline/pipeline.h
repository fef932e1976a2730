/* The stages in order, and the one place that runs them.
 *
 * Every stage (lib/fuse, lib/tile, lib/mma, lib/smem, lib/codegen) does
 * its own step on a module and nothing else: none calls another. What an
 * input still needs before a stage (a tool's input may be the output of
 * any earlier stage) is run here, from one table, each missing stage with
 * its defaults. Named pipelines (pipelines/, --pipeline) are shell
 * scripts over the tools; script.c runs them for pb-run and pb-prof.
 */
#ifndef PB_PIPELINE_PIPELINE_H
#define PB_PIPELINE_PIPELINE_H

#include "driver/driver.h"
#include "ir/ir.h"

/* Bring "m" to stage "upto": every stage after the one "m" is at runs in
 * order, with its defaults except "upto", which runs with "opts" (its
 * own options struct: struct pb_tile_opts for PB_STAGE_TILE, ...; NULL
 * for the defaults). A stage that "m" is already at or past passes it
 * through. Returns PB_OK, or the failing stage's PB_ERR (reported) or
 * PB_USAGE (a bad option value). */
int pb_pipeline_run(struct pb_ctx *ctx, MlirModule m, enum pb_stage upto,
		    const void *opts);

/* Write "m" (brought to "stage") into "out" as the tool of that stage
 * does: pb-codegen's PTX (or MLIR, as its options say), else the
 * verified MLIR text. */
int pb_pipeline_emit(struct pb_ctx *ctx, MlirModule m, enum pb_stage stage,
		     const void *opts, struct pb_buf *out);

/* The main of a stage tool (pb-fuse ... pb-codegen: the tool of
 * "stage", whose name and help are in the table of stages): options
 * "options", bound to "opts" (the stage's options struct); the input
 * parsed, brought to "stage" (pb_pipeline_run) and written as the stage's
 * tool does (pb_pipeline_emit). Returns the exit code. */
int pb_pipeline_main(enum pb_stage stage, const struct pb_opt *options,
		     const void *opts, int argc, char **argv);

/* script.c: the named pipelines of pipelines/.
 *
 * A named pipeline is a shell script that is a filter like the tools:
 * MLIR of any stage on stdin, MLIR on stdout, and its arguments (the
 * common options --arch and --target-file) handed to every stage. "name"
 * is a file when it holds a '/' or names no pipeline of pb's own (those
 * lie in pipelines/ of the source tree, or share/pb/pipelines of an
 * install, found from the running executable). The script runs with the
 * directory of the running executable first on $PATH, so that it calls
 * the tools of the same build. Runs it on "in" (MLIR text) and appends
 * its output to "out". PB_ERR (reported) when the pipeline is not found
 * or fails; the failing stage has said why on stderr. */
int pb_pipeline_script(struct pb_ctx *ctx, const char *name,
		       const struct pb_buf *in, struct pb_buf *out);

#endif

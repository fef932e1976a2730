/* pb-mma: map contractions (matmul, conv, attention) to tensor cores. */
#include "mma/mma.h"

static struct pb_mma_opts opts;

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	return pb_ir_filter(ctx, in, out, (pb_ir_transform_fn)pb_mma_run,
			    &opts);
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-mma",
		.summary = "pb-mma: map contractions (matmul, conv, attention) to tensor cores (MLIR in, MLIR out).",
		.description =
			"NOT IMPLEMENTED YET: the transformation itself is future work.\n"
			"Today pb-mma runs the earlier stages its input still needs (with\n"
			"their defaults), verifies the module and passes it through,\n"
			"marking it with pb.stage = \"mma\".\n",
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

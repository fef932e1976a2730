/* pb-fuse: bufferize, lower to affine, outline loop nests into kernels. */
#include "fuse/fuse.h"

static struct pb_fuse_opts opts;

static const struct pb_opt options[] = {
	{"no-fusion", PB_OPT_FLAG, &opts.no_fusion, NULL,
	 "one kernel per operation (today's only behaviour)"},
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	return pb_ir_filter(ctx, in, out, (pb_ir_transform_fn)pb_fuse_run,
			    &opts);
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-fuse",
		.summary = "pb-fuse: bufferize, lower to affine loops and outline "
			   "kernels (MLIR in, MLIR out).",
		.description =
			"Input: linalg on tensors (pb-import's output). Output: affine loops\n"
			"on memrefs, each loop nest outlined into a private func.func with\n"
			"the pb.kernel attribute, called from @main (docs/ir-contract.md).\n"
			"FUSION IS NOT IMPLEMENTED YET: each operation becomes its own kernel.\n",
		.opts = options,
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

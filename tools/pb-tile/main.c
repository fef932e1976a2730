/* pb-tile: multi-level tiling and mapping to blocks, warps and threads. */
#include "tile/tile.h"

static struct pb_tile_opts opts;

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	return pb_ir_filter(ctx, in, out, (pb_ir_transform_fn)pb_tile_run,
			    &opts);
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-tile",
		.summary = "pb-tile: multi-level tiling and mapping to blocks, warps and threads (MLIR in, MLIR out).",
		.description =
			"NOT IMPLEMENTED YET: the transformation itself is future work.\n"
			"Today pb-tile runs the earlier stages its input still needs (with\n"
			"their defaults), verifies the module and passes it through,\n"
			"marking it with pb.stage = \"tile\".\n",
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

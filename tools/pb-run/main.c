/* pb-run (placeholder). */
#include "core/pb.h"

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)in; (void)out; (void)user;
	pb_error(ctx, "pb-run: not implemented yet");
	return PB_ERR;
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-run",
		.summary = "pb-run (not implemented yet)",
		.flags = PB_TOOL_BINARY_INPUT,
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

/* pb-prof (placeholder). */
#include "core/pb.h"

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)in; (void)out; (void)user;
	pb_error(ctx, "pb-prof: not implemented yet");
	return PB_ERR;
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-prof",
		.summary = "pb-prof (not implemented yet)",
		.flags = PB_TOOL_BINARY_INPUT,
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

/* pb-import: an ONNX model in, linalg on tensors out. */
#include "onnx/onnx.h"

static struct pb_import_opts opts;

static const struct pb_opt options[] = {
	{"inline-weights", PB_OPT_FLAG, &opts.inline_weights, NULL,
	 "inline initializers as dense constants instead of pb.param "
	 "arguments"},
	{"shape", PB_OPT_LIST, &opts.shapes, "NAME=DxD..",
	 "static shape of input NAME (repeatable; binds dynamic dims)"},
	{"debug-text", PB_OPT_FLAG, &opts.debug_text, NULL,
	 "write the generated MLIR text to stderr before parsing it"},
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	MlirModule m;
	(void)user;
	if (pb_onnx_import(ctx, in, &opts, &m))
		return PB_ERR;
	int rc = pb_onnx_print(ctx, m, out);
	mlirModuleDestroy(m);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
		.name = "pb-import",
		.summary = "pb-import: import an ONNX model as MLIR (linalg on "
			   "tensors).",
		.description =
			"Input: an ONNX model file (or '-' for stdin). Output: a module with\n"
			"func.func @main on tensors: graph inputs are arguments with pb.name,\n"
			"initializers are arguments with pb.param (loaded by pb-run from the\n"
			"file named in the module's pb.source), outputs carry pb.name. Each\n"
			"op is located at its ONNX node: loc(\"<node name>\"). Reading from\n"
			"stdin needs --inline-weights when the model has weights.\n"
			"See docs/pb-import.md for the supported operators.\n",
		.opts = options,
		.flags = PB_TOOL_BINARY_INPUT,
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

/* pb-import: an ONNX model in, linalg on tensors out. */
#include <stdlib.h>

#include "driver/driver.h"
#include "onnx/onnx.h"

static struct pb_import_opts opts;
static int list_ops;
static const char *cast;

static const struct pb_opt options[] = {
	{"inline-weights", PB_OPT_FLAG, &opts.inline_weights, NULL,
	 "inline initializers as dense constants instead of pb.param "
	 "arguments"},
	{"shape", PB_OPT_LIST, &opts.shapes, "NAME=DxD..",
	 "static shape of input NAME (repeatable; binds dynamic dims)"},
	{"list-ops", PB_OPT_FLAG, &list_ops, NULL,
	 "print the supported ONNX ops and the attributes each understands, "
	 "then exit (no input read)"},
	{"cast", PB_OPT_STR, &cast, "f16|bf16",
	 "convert the model's float32 data (inputs, weights, constants) to "
	 "float16 or bfloat16, as PyTorch's model.half()"},
	{"debug-text", PB_OPT_FLAG, &opts.debug_text, NULL,
	 "write the generated MLIR text to stderr before parsing it"},
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	MlirModule m;
	(void)user;
	if (list_ops) {
		pb_onnx_list_ops(out);
		return PB_OK;
	}
	if (cast && !(opts.cast = pb_onnx_cast_type(cast))) {
		pb_error(ctx, "bad --cast '%s': expected f16 or bf16", cast);
		return PB_USAGE;
	}
	/* no input file named: read stdin (NO_INPUT_OK is for --list-ops) */
	struct pb_input sin = *in;
	char *data = NULL;
	if (!in->data) {
		data = pb_read_file(NULL, &sin.len);
		if (!data) {
			pb_error(ctx, "cannot read <stdin>");
			return PB_ERR;
		}
		sin.data = data;
		in = &sin;
	}
	int err = pb_onnx_import(ctx, in, &opts, &m);
	free(data);
	if (err)
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
		.flags = PB_TOOL_BINARY_INPUT | PB_TOOL_NO_INPUT_OK,
		.run = run,
	};
	return pb_main(&tool, argc, argv);
}

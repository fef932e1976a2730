/* ONNX: reading models and tensors (protobuf-c, bindings generated from
 * libonnx-dev's onnx.proto) and importing graphs as MLIR. */
#ifndef PB_ONNX_ONNX_H
#define PB_ONNX_ONNX_H

#include "core/pb.h"
#include "core/tensor.h"

struct pb_import_opts {
	int inline_weights; /* --inline-weights: initializers as constants */
	struct pb_strlist shapes; /* --shape NAME=DxDx..: bind input shapes */
	int debug_text; /* --debug-text: the generated text to stderr */
	int cast; /* --cast: enum pb_dtype (F16, BF16) that float32 data
		   * becomes, or 0 */
};

/* Import the ONNX model in "in" (raw bytes; in->path names it) as a module
 * on tensors per docs/ir-contract.md, with pb.stage = "import". Returns
 * PB_OK and *out, or PB_ERR after reporting one error line. */
int pb_onnx_import(struct pb_ctx *ctx, const struct pb_input *in,
		   const struct pb_import_opts *opts, MlirModule *out);

/* The element type --cast names: PB_DT_F16 for "f16", PB_DT_BF16 for
 * "bf16", else 0. */
int pb_onnx_cast_type(const char *name);

/* A graph input that becomes an argument of @main (not an initializer):
 * its name and whether its declared shape has a dynamic dimension. */
struct pb_onnx_input {
	char *name;
	int dynamic;
};
/* The graph inputs of the model in "in" in argument order into "*out"
 * ("*n" of them; free with pb_onnx_inputs_free); PB_ERR (reported) when
 * the model does not decode. */
int pb_onnx_inputs(struct pb_ctx *ctx, const struct pb_input *in,
		   struct pb_onnx_input **out, int *n);
void pb_onnx_inputs_free(struct pb_onnx_input *v, int n);

/* The ONNX ops the importer lowers (default domain, every opset: version
 * changes are followed by the model's opset), one a line: the op and the
 * attributes it understands ("-" for none), from the dispatch table. */
void pb_onnx_list_ops(struct pb_buf *out);

/* Verify "m" and print it into "out" with its locations (each op's
 * loc("<onnx node>")), so that later stages still name the node. */
int pb_onnx_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out);

/* Decode one serialized TensorProto (an ONNX test_data_set input_N.pb)
 * into "t". "what" names the source in the error. */
int pb_onnx_read_tensor_file(struct pb_ctx *ctx, const char *path,
			     struct pb_tensor *t);

/* An opened ONNX model whose initializers can be looked up by name
 * (the weights that pb.param arguments refer to). */
struct pb_onnx_weights;
struct pb_onnx_weights *pb_onnx_weights_open(struct pb_ctx *ctx,
					     const char *path);
/* Copy initializer "name" into "t"; PB_ERR (reported) when absent. */
int pb_onnx_weights_get(struct pb_ctx *ctx, struct pb_onnx_weights *w,
			const char *name, struct pb_tensor *t);
void pb_onnx_weights_close(struct pb_onnx_weights *w);

#endif

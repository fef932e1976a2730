/* libFuzzer target over the ONNX readers: each input is fed to the model
 * importer (pb_onnx_import with inline weights, so no file is opened) and
 * to the TensorProto reader (protobuf-c unpack + pb_onnx_tensor_from_proto,
 * the in-memory half of pb_onnx_read_tensor_file). Built and run by
 * `make fuzz` (docs/testing.md, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/pb.h"
#include "core/tensor.h"
#include "onnx/internal.h"
#include "onnx/onnx.h"

static struct pb_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ctx) /* registers the MLIR dialects: once per process */
		ctx = pb_ctx_alloc("pb-import");

	struct pb_input in = {
		.name = "fuzz.onnx",
		.path = "fuzz.onnx",
		.data = (const char *)data,
		.len = size,
	};
	struct pb_import_opts opts = { .inline_weights = 1 };
	MlirModule m = { 0 };
	ctx->input_name = in.name;
	ctx->nerrors = 0;
	if (pb_onnx_import(ctx, &in, &opts, &m) == PB_OK &&
	    !mlirModuleIsNull(m))
		mlirModuleDestroy(m);

	Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, size, data);
	if (p) {
		struct pb_tensor t = { 0 };
		if (pb_onnx_tensor_from_proto(ctx, "fuzz.pb", NULL, p, &t) == PB_OK)
			pb_tensor_clear(&t);
		onnx__tensor_proto__free_unpacked(p, NULL);
	}
	return 0;
}

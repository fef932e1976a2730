/* Table-driven tests of lib/onnx: TensorProto decoding from raw_data and
 * from each typed field, rejected tensors, and the weight store's look-up
 * of initializers and Constant node values. The protos are built with
 * protobuf-c and written to temporary files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "onnx/onnx.pb-c.h"

#include "onnx/onnx.h"

#include "check.h"
#include "quiet.h"

/* Pack "msg" into the temporary file "path". */
static void write_msg(const ProtobufCMessage *msg, const char *path)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n + 1);
	protobuf_c_message_pack(msg, buf);
	FILE *f = fopen(path, "wb");
	fwrite(buf, 1, n, f);
	fclose(f);
	free(buf);
}

static int64_t dims23[] = {2, 3};
static float f6[] = {1, -2, 3.5f, 0, 1e-3f, -7};
static int32_t i6[] = {1, -2, 3, 0, 100, -7};
static int64_t l6[] = {1, -2, 3, 0, 1LL << 40, -7};
static double d6[] = {1, -2, 3.5, 0, 1e-300, -7};
static uint64_t u6[] = {1, 2, 3, 0, 1ULL << 40, 7};
static int32_t h6[] = {0x3c00, 0xc000, 0x4300, 0, 0x1400, 0xc700};
static int32_t b6[] = {1, 0, 5, 0, 1, 0};

/* Decoding cases: the data type, which typed field holds the values, and
 * the bytes the decoded tensor must hold. */
static const struct {
	const char *name;
	int dtype;
	int field; /* 0 raw_data, 1 float, 2 int32, 3 int64, 4 double, 5 uint64 */
	const void *vals;
	size_t esz;     /* size of one decoded element */
	const void *expect; /* NULL: same as vals */
} cases[] = {
	{"f32 typed", PB_DT_F32, 1, f6, 4, NULL},
	{"f32 raw", PB_DT_F32, 0, f6, 4, NULL},
	{"i32 typed", PB_DT_I32, 2, i6, 4, NULL},
	{"i64 typed", PB_DT_I64, 3, l6, 8, NULL},
	{"i64 raw", PB_DT_I64, 0, l6, 8, NULL},
	{"f64 typed", PB_DT_F64, 4, d6, 8, NULL},
	{"u64 typed", PB_DT_U64, 5, u6, 8, NULL},
	{"f16 in int32_data", PB_DT_F16, 2, h6, 2, NULL},
	{"bf16 in int32_data", PB_DT_BF16, 2, h6, 2, NULL},
	{"bool in int32_data", PB_DT_BOOL, 2, b6, 1, NULL},
};

/* The expected bytes of case "c": vals narrowed to "esz" bytes, bools
 * normalized to 0/1. */
static void expected(int i, unsigned char *out)
{
	for (int k = 0; k < 6; k++) {
		if (cases[i].field == 2 && cases[i].esz == 2) {
			uint16_t h = (uint16_t)h6[k];
			memcpy(out + 2 * k, &h, 2);
		} else if (cases[i].dtype == PB_DT_BOOL) {
			out[k] = b6[k] != 0;
		} else {
			memcpy(out + k * cases[i].esz,
			       (const char *)cases[i].vals + k * cases[i].esz,
			       cases[i].esz);
		}
	}
}

static void test_decode(struct pb_ctx *ctx, const char *path)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
		p.n_dims = 2;
		p.dims = dims23;
		p.has_data_type = 1;
		p.data_type = cases[i].dtype;
		p.name = "t";
		switch (cases[i].field) {
		case 0:
			p.has_raw_data = 1;
			p.raw_data.len = 6 * cases[i].esz;
			p.raw_data.data = (uint8_t *)cases[i].vals;
			break;
		case 1: p.n_float_data = 6; p.float_data = f6; break;
		case 2: p.n_int32_data = 6; p.int32_data = (int32_t *)cases[i].vals; break;
		case 3: p.n_int64_data = 6; p.int64_data = l6; break;
		case 4: p.n_double_data = 6; p.double_data = d6; break;
		case 5: p.n_uint64_data = 6; p.uint64_data = u6; break;
		}
		write_msg(&p.base, path);
		struct pb_tensor t;
		int rc = pb_onnx_read_tensor_file(ctx, path, &t);
		check_detail(rc == PB_OK, cases[i].name, "decode failed");
		if (rc != PB_OK)
			continue;
		unsigned char want[48];
		expected(i, want);
		check_detail(t.dtype == (enum pb_dtype)cases[i].dtype && t.rank == 2 &&
		      t.dims[0] == 2 && t.dims[1] == 3, cases[i].name,
		      "type or shape");
		check_detail(t.nbytes == 6 * cases[i].esz &&
		      !memcmp(t.data, want, t.nbytes), cases[i].name, "data");
		check_detail(t.name && !strcmp(t.name, "t"), cases[i].name, "name");
		pb_tensor_clear(&t);
	}
}

/* Tensors that must be rejected with an error (not decoded). */
static void test_reject(struct pb_ctx *ctx, const char *path)
{
	static const char *names[] = {"string", "external", "short raw",
				      "count mismatch", "no data"};
	for (int i = 0; i < 5; i++) {
		Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
		Onnx__StringStringEntryProto loc =
			ONNX__STRING_STRING_ENTRY_PROTO__INIT;
		Onnx__StringStringEntryProto *locs[] = {&loc};
		p.n_dims = 2;
		p.dims = dims23;
		p.has_data_type = 1;
		p.data_type = PB_DT_F32;
		if (i == 0) {
			p.data_type = PB_DT_STRING;
		} else if (i == 1) {
			loc.key = "location";
			loc.value = "w.bin";
			p.n_external_data = 1;
			p.external_data = locs;
			p.has_data_location = 1;
			p.data_location =
				ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
		} else if (i == 2) {
			p.has_raw_data = 1;
			p.raw_data.len = 8;
			p.raw_data.data = (uint8_t *)f6;
		} else if (i == 3) {
			p.n_float_data = 5;
			p.float_data = f6;
		}
		write_msg(&p.base, path);
		struct pb_tensor t;
		int nerr = ctx->nerrors;
		check_detail(pb_onnx_read_tensor_file(ctx, path, &t) == PB_ERR &&
		      ctx->nerrors == nerr + 1 && !t.data, names[i],
		      "accepted");
	}
	FILE *f = fopen(path, "wb");
	fputs("\xff\xff\xff garbage", f);
	fclose(f);
	struct pb_tensor t;
	check_detail(pb_onnx_read_tensor_file(ctx, path, &t) == PB_ERR, "garbage",
	      "accepted");
}

/* A model with one initializer "w" and a Constant node "c": both are
 * found by name, anything else is an error. */
static void test_weights(struct pb_ctx *ctx, const char *path)
{
	Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, c = w;
	w.name = "w";
	w.n_dims = 2;
	w.dims = dims23;
	w.has_data_type = c.has_data_type = 1;
	w.data_type = PB_DT_F32;
	w.n_float_data = 6;
	w.float_data = f6;
	c.data_type = PB_DT_I64;
	c.n_dims = 1;
	c.dims = (int64_t[]){6};
	c.n_int64_data = 6;
	c.int64_data = l6;
	Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT;
	a.name = "value";
	a.t = &c;
	a.has_type = 1;
	a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	Onnx__AttributeProto *attrs[] = {&a};
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	char *outs[] = {"c"};
	n.op_type = "Constant";
	n.n_output = 1;
	n.output = outs;
	n.n_attribute = 1;
	n.attribute = attrs;
	Onnx__NodeProto *nodes[] = {&n};
	Onnx__TensorProto *inits[] = {&w};
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.n_node = 1;
	g.node = nodes;
	g.n_initializer = 1;
	g.initializer = inits;
	Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	op.has_version = 1;
	op.version = 13;
	Onnx__OperatorSetIdProto *ops[] = {&op};
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	m.has_ir_version = 1;
	m.ir_version = 7;
	m.graph = &g;
	m.n_opset_import = 1;
	m.opset_import = ops;
	write_msg(&m.base, path);

	struct pb_onnx_weights *ws = pb_onnx_weights_open(ctx, path);
	check_detail(ws != NULL, "weights open", NULL);
	if (!ws)
		return;
	struct pb_tensor t;
	int rc = pb_onnx_weights_get(ctx, ws, "w", &t);
	check_detail(rc == PB_OK && t.dtype == PB_DT_F32 && t.nbytes == 24 &&
	      !memcmp(t.data, f6, 24) && !strcmp(t.name, "w"),
	      "initializer", NULL);
	pb_tensor_clear(&t);
	rc = pb_onnx_weights_get(ctx, ws, "c", &t);
	check_detail(rc == PB_OK && t.dtype == PB_DT_I64 && t.nbytes == 48 &&
	      !memcmp(t.data, l6, 48) && !strcmp(t.name, "c"),
	      "constant node", NULL);
	pb_tensor_clear(&t);
	quiet(1);
	check_detail(pb_onnx_weights_get(ctx, ws, "nope", &t) == PB_ERR,
	      "missing weight", NULL);
	quiet(0);
	pb_onnx_weights_close(ws);
}

int main(void)
{
	char path[] = "/tmp/pb-test-onnx-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	struct pb_ctx *ctx = pb_ctx_alloc("test_onnx");
	test_decode(ctx, path);
	quiet(1);
	test_reject(ctx, path);
	quiet(0);
	test_weights(ctx, path);
	pb_ctx_free(ctx);
	unlink(path);
	return check_summary("test_onnx");
}

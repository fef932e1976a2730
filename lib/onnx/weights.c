/* The weight store: an opened ONNX model whose initializers (and large
 * Constant node values) are looked up by name for pb.param arguments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "onnx/internal.h"
#include "onnx/onnx.h"

struct pb_onnx_weights {
	char *path;
	Onnx__ModelProto *model;
};

/* Absent optional strings unpack as NULL; the readers compare names
 * with strcmp, so give each one an empty string (allocated: protobuf-c
 * frees every string that is not the field's default). 0 when out of
 * memory. */
static int fill_str(char **s)
{
	return *s || (*s = strdup(""));
}

static int fill_value_infos(Onnx__ValueInfoProto **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fill_str(&v[i]->name))
			return 0;
	return 1;
}

static int fill_names(Onnx__ModelProto *m)
{
	Onnx__GraphProto *g = m->graph;
	for (size_t i = 0; i < m->n_opset_import; i++)
		if (!fill_str(&m->opset_import[i]->domain))
			return 0;
	if (!fill_str(&g->name) ||
	    !fill_value_infos(g->input, g->n_input) ||
	    !fill_value_infos(g->output, g->n_output) ||
	    !fill_value_infos(g->value_info, g->n_value_info))
		return 0;
	for (size_t i = 0; i < g->n_initializer; i++)
		if (!fill_str(&g->initializer[i]->name))
			return 0;
	for (size_t i = 0; i < g->n_node; i++) {
		Onnx__NodeProto *n = g->node[i];
		if (!fill_str(&n->name) || !fill_str(&n->op_type) ||
		    !fill_str(&n->domain))
			return 0;
		for (size_t a = 0; a < n->n_attribute; a++)
			if (!fill_str(&n->attribute[a]->name))
				return 0;
	}
	return 1;
}

/* The deepest nesting of messages the reader accepts: protobuf's own
 * default recursion limit. protobuf-c unpacks recursively, so a model of
 * thousands of nested subgraphs (a few hundred KB) would overflow the
 * stack. */
#define MAX_DEPTH 100

/* Read the varint at "*p" (before "end") into "*v"; 0 when truncated. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* Is the serialized "desc" message in "data" ("len" bytes) nested no more
 * than MAX_DEPTH messages deep? Scans the wire format without recursion,
 * following the fields that "desc" and its field descriptors declare as
 * messages. Malformed data passes: the unpacker rejects it. */
static int depth_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
		    size_t len)
{
	const ProtobufCMessageDescriptor *descs[MAX_DEPTH];
	const uint8_t *ends[MAX_DEPTH];
	const uint8_t *p = data;
	int depth = 0;
	descs[0] = desc;
	ends[0] = data + len;
	while (depth >= 0) {
		uint64_t tag, n;
		if (p >= ends[depth]) {
			p = ends[depth--];
			continue;
		}
		if (!varint(&p, ends[depth], &tag))
			return 1;
		switch (tag & 7) {
		case 0:
			if (!varint(&p, ends[depth], &n))
				return 1;
			break;
		case 1: case 5:
			n = (tag & 7) == 1 ? 8 : 4;
			if (n > (uint64_t)(ends[depth] - p))
				return 1;
			p += n;
			break;
		case 2: {
			if (!varint(&p, ends[depth], &n) ||
			    n > (uint64_t)(ends[depth] - p))
				return 1;
			const ProtobufCFieldDescriptor *f =
				protobuf_c_message_descriptor_get_field(
					descs[depth], (unsigned)(tag >> 3));
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (depth + 1 == MAX_DEPTH)
					return 0;
				descs[++depth] = f->descriptor;
				ends[depth] = p + n;
			} else {
				p += n;
			}
			break;
		}
		default:
			return 1;
		}
	}
	return 1;
}

/* Unpack the ModelProto in "data" ("len" bytes) and check that it has a
 * graph, after checking that its messages do not nest too deeply for the
 * recursive unpacker; errors name "where". */
Onnx__ModelProto *pb_onnx_model_unpack(struct pb_ctx *ctx, const char *where,
				       const void *data, size_t len)
{
	if (!depth_ok(&onnx__model_proto__descriptor, data, len)) {
		pb_error_in(ctx, where, "cannot parse ONNX model: messages "
			    "nested more than %d deep", MAX_DEPTH);
		return NULL;
	}
	Onnx__ModelProto *m =
		onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
	if (!m || !m->graph || !m->has_ir_version || !m->n_opset_import) {
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		pb_error_in(ctx, where, "cannot parse ONNX model");
		return NULL;
	}
	if (!fill_names(m)) {
		onnx__model_proto__free_unpacked(m, NULL);
		pb_error_in(ctx, where, "out of memory");
		return NULL;
	}
	return m;
}

/* The "value" tensor attribute of Constant node "n", or NULL. */
const Onnx__TensorProto *pb_onnx_constant_value(const Onnx__NodeProto *n)
{
	if (strcmp(n->op_type, "Constant") || n->n_output != 1)
		return NULL;
	for (size_t i = 0; i < n->n_attribute; i++)
		if (!strcmp(n->attribute[i]->name, "value"))
			return n->attribute[i]->t;
	return NULL;
}

/* Open the ONNX model at "path" for weight look-ups; NULL after
 * reporting an error. */
struct pb_onnx_weights *pb_onnx_weights_open(struct pb_ctx *ctx,
					     const char *path)
{
	size_t len;
	char *data = pb_read_regular(ctx, path, &len);
	if (!data)
		return NULL;
	Onnx__ModelProto *m = pb_onnx_model_unpack(ctx, path, data, len);
	free(data);
	if (!m)
		return NULL;
	struct pb_onnx_weights *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		onnx__model_proto__free_unpacked(m, NULL);
		pb_error_in(ctx, path, "out of memory");
		return NULL;
	}
	w->model = m;
	return w;
}

/* Find tensor "name" in the graph of "w": an initializer, else the value
 * of a Constant node with that output name. */
static const Onnx__TensorProto *lookup(const struct pb_onnx_weights *w,
				       const char *name)
{
	const Onnx__GraphProto *g = w->model->graph;
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name &&
		    !strcmp(g->initializer[i]->name, name))
			return g->initializer[i];
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__TensorProto *t = pb_onnx_constant_value(g->node[i]);
		if (t && !strcmp(g->node[i]->output[0], name))
			return t;
	}
	return NULL;
}

/* Copy the tensor called "name" of "w" into "t" (t->name set to "name"). */
int pb_onnx_weights_get(struct pb_ctx *ctx, struct pb_onnx_weights *w,
			const char *name, struct pb_tensor *t)
{
	const Onnx__TensorProto *p = lookup(w, name);
	if (!p) {
		memset(t, 0, sizeof(*t));
		pb_error_in(ctx, w->path, "no initializer named '%s'", name);
		return PB_ERR;
	}
	struct pb_buf where = {0};
	pb_buf_printf(&where, "%s: initializer '%s'", w->path, name);
	int rc = pb_onnx_tensor_from_proto(ctx, where.data, w->path, p, t);
	pb_buf_free(&where);
	if (rc == PB_OK && !t->name)
		t->name = strdup(name);
	return rc;
}

void pb_onnx_weights_close(struct pb_onnx_weights *w)
{
	if (!w)
		return;
	onnx__model_proto__free_unpacked(w->model, NULL);
	free(w->path);
	free(w);
}

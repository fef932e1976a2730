/* The weight store: an opened ONNX model whose initializers (and large
 * Constant node values) are looked up by name for pb.param arguments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"
#include "onnx/onnx.h"

struct pb_onnx_weights {
	char *path;
	Onnx__ModelProto *model;
};

/* Unpack the ModelProto in "data" ("len" bytes) and check that it has a
 * graph; errors name "where". */
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

Onnx__ModelProto *pb_onnx_model_unpack(struct pb_ctx *ctx, const char *where,
				       const void *data, size_t len)
{
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
	char *data = pb_read_file(path, &len);
	if (!data) {
		pb_error_in(ctx, path, "cannot read: %s", strerror(errno));
		return NULL;
	}
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

/* The graph inputs of an ONNX model as pb-run binds them: their names in
 * argument order (the inputs that are not initializers) and which of
 * their dimensions are dynamic. */
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"
#include "onnx/onnx.h"

/* Is "name" one of the initializers of graph "g"? */
static int is_initializer(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++)
		if (g->initializer[i]->name &&
		    !strcmp(g->initializer[i]->name, name))
			return 1;
	return 0;
}

/* Does graph input "vi" have a dimension that is not a known size (a
 * symbol, or no shape at all)? */
static int is_dynamic(const Onnx__ValueInfoProto *vi)
{
	if (!vi->type || vi->type->value_case !=
			 ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return 0;
	const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
	if (!sh)
		return 1;
	for (size_t i = 0; i < sh->n_dim; i++)
		if (sh->dim[i]->value_case !=
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    sh->dim[i]->dim_value < 0)
			return 1;
	return 0;
}

int pb_onnx_inputs(struct pb_ctx *ctx, const struct pb_input *in,
		   struct pb_onnx_input **out, int *n)
{
	*out = NULL;
	*n = 0;
	Onnx__ModelProto *m = pb_onnx_model_unpack(ctx, in->name, in->data,
						   in->len);
	if (!m)
		return PB_ERR;
	const Onnx__GraphProto *g = m->graph;
	size_t cap = g ? g->n_input : 0;
	struct pb_onnx_input *v = calloc(cap + 1, sizeof(*v));
	if (!v)
		abort();
	for (size_t i = 0; i < cap; i++) {
		const Onnx__ValueInfoProto *vi = g->input[i];
		if (!vi->name || is_initializer(g, vi->name))
			continue;
		v[*n].name = strdup(vi->name);
		if (!v[*n].name)
			abort();
		v[(*n)++].dynamic = is_dynamic(vi);
	}
	onnx__model_proto__free_unpacked(m, NULL);
	*out = v;
	return PB_OK;
}

void pb_onnx_inputs_free(struct pb_onnx_input *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

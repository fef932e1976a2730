/* The ONNX importer: an ONNX graph becomes MLIR text (linalg on tensors)
 * that is parsed and verified into a module.
 *
 * The text has this layout:
 *
 *	#l0 = loc("Conv_0")                  one location alias per node
 *	module attributes {pb.source = "m.onnx", pb.stage = "import"} {
 *	  func.func @main(%a0: <input> {pb.name = ..},
 *	                  %p0: <initializer> {pb.param = ..})
 *	      -> (<output> {pb.name = ..}) {
 *	    <one group of ops per node, each op with loc(#l<node>)>
 *	    return ...
 *	  }
 *	}
 *
 * Values known at import time (initializers, Constant nodes and what is
 * computed from them and from static shapes) are folded; they reach the
 * IR only where a node uses them as data. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "ir/contract.h"
#include "onnx/import.h"

/* Parse "spec" ("name=1x3x224x224") of --shape and, when it names
 * "input", store its dims into "sh". Returns 1 when it applied, 0 when it
 * names another input, -1 on a malformed spec (reported). */
static int shape_spec(struct imp *s, const char *spec, const char *input,
		      struct shape *sh)
{
	const char *eq = strrchr(spec, '=');
	if (!eq || eq == spec) {
		pb_error(s->ctx, "bad --shape '%s': expected NAME=DxDx...",
			 spec);
		return -1;
	}
	if (strlen(input) != (size_t)(eq - spec) ||
	    strncmp(spec, input, eq - spec))
		return 0;
	const char *p = eq + 1;
	sh->rank = 0;
	while (*p) {
		char *end;
		long long d = strtoll(p, &end, 10);
		if (end == p || d < 0 || sh->rank == PB_MAX_RANK ||
		    (*end && *end != 'x')) {
			pb_error(s->ctx, "bad --shape '%s': expected NAME=DxDx...",
				 spec);
			return -1;
		}
		sh->d[sh->rank++] = d;
		p = *end ? end + 1 : end;
	}
	return 1;
}

/* The static shape of graph input "vi" into "sh", with --shape bindings
 * taking precedence over the model. */
static int input_shape(struct imp *s, const Onnx__ValueInfoProto *vi,
		       struct shape *sh)
{
	for (int i = 0; i < s->opts->shapes.n; i++) {
		int r = shape_spec(s, s->opts->shapes.v[i], vi->name, sh);
		if (r)
			return r < 0 ? PB_ERR : PB_OK;
	}
	const Onnx__TensorShapeProto *tsh = vi->type->tensor_type->shape;
	if (!tsh) {
		pb_error(s->ctx, "input '%s' has no shape (bind it with "
			 "--shape %s=DxDx...)", vi->name, vi->name);
		return PB_ERR;
	}
	if (tsh->n_dim > PB_MAX_RANK) {
		pb_error(s->ctx, "input '%s' has rank %zu: at most %d is "
			 "supported", vi->name, tsh->n_dim, PB_MAX_RANK);
		return PB_ERR;
	}
	sh->rank = (int)tsh->n_dim;
	for (size_t i = 0; i < tsh->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tsh->dim[i];
		if (d->value_case !=
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
		    d->dim_value < 0) {
			const char *sym = d->value_case ==
				ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
				? d->dim_param : "?";
			pb_error(s->ctx, "input '%s' has a dynamic dimension "
				 "'%s' (bind it with --shape %s=DxDx...)",
				 vi->name, sym, vi->name);
			return PB_ERR;
		}
		sh->d[i] = d->dim_value;
	}
	return PB_OK;
}

/* Check that value "v" of "s", the "what" ("input", "initializer",
 * "output") of that name, fits in PB_MAX_BYTES: no later size, count or
 * offset of it can then overflow. */
static int check_size(struct imp *s, const char *what, const struct val *v)
{
	char why[80];
	if (!pb_tensor_size_ok(pb_dtype_size(v->dtype), v->sh.rank, v->sh.d,
			       NULL, why, sizeof(why)))
		return PB_OK;
	return pb_imp_node_error(s, "%s '%s' (%s) is too large: %s", what,
				 v->name, pb_imp_ty_dt(&v->sh, v->dtype).s,
				 why);
}

int pb_onnx_cast_type(const char *name)
{
	if (!strcmp(name, "f16"))
		return PB_DT_F16;
	if (!strcmp(name, "bf16"))
		return PB_DT_BF16;
	return 0;
}

/* Register the initializers of the graph as known values. */
static int add_initializers(struct imp *s)
{
	for (size_t i = 0; i < s->g->n_initializer; i++) {
		const Onnx__TensorProto *t = s->g->initializer[i];
		struct shape sh = {0};
		if (!t->name || t->n_dims > PB_MAX_RANK) {
			pb_error(s->ctx, "initializer %zu: bad name or rank", i);
			return PB_ERR;
		}
		sh.rank = (int)t->n_dims;
		for (size_t j = 0; j < t->n_dims; j++)
			sh.d[j] = t->dims[j];
		struct val *v = pb_imp_new_val(s, t->name, pb_imp_data_type(s,
					(enum pb_dtype)t->data_type), &sh);
		v->init = t;
		v->is_init = 1;
		if (check_size(s, "initializer", v))
			return PB_ERR;
	}
	if (s->g->n_sparse_initializer) {
		pb_error(s->ctx, "sparse initializers are not supported");
		return PB_ERR;
	}
	return PB_OK;
}

/* Turn the graph inputs that are not initializers into arguments. */
static int add_inputs(struct imp *s)
{
	for (size_t i = 0; i < s->g->n_input; i++) {
		const Onnx__ValueInfoProto *vi = s->g->input[i];
		struct val *old = pb_imp_lookup(s, vi->name);
		if (old && old->is_init)
			continue;
		if (!vi->type || vi->type->value_case !=
				 ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
			pb_error(s->ctx, "input '%s' is not a tensor", vi->name);
			return PB_ERR;
		}
		/* integer inputs (shapes, indices) may be arguments: their
		 * values are unknown here, so only declared shapes use them */
		enum pb_dtype dt = pb_imp_data_type(s,
					vi->type->tensor_type->elem_type);
		if (!pb_imp_elt(dt)) {
			pb_error(s->ctx, "input '%s' has type %s: only float, "
				 "integer and bool inputs are supported",
				 vi->name, pb_dtype_name(dt));
			return PB_ERR;
		}
		struct shape sh;
		if (input_shape(s, vi, &sh))
			return PB_ERR;
		struct val *v = pb_imp_new_val(s, vi->name, dt, &sh);
		if (check_size(s, "input", v))
			return PB_ERR;
		snprintf(v->ssa.s, sizeof(v->ssa.s), "%%a%zu", i);
		pb_buf_printf(&s->args, "%s%s: %s {" PB_ATTR_NAME " = ",
			      s->nargs++ ? ",\n      " : "", v->ssa.s,
			      pb_imp_ty_dt(&sh, dt).s);
		pb_imp_str(&s->args, vi->name);
		pb_imp_dtype_attr(&s->args, dt);
		pb_buf_puts(&s->args, "} loc(unknown)");
	}
	return PB_OK;
}

/* Is "name" in the comma-separated list "list"? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* The op tables: the one list of what the importer lowers, used by the
 * dispatch (lookup_op) and by pb-import --list-ops. */
static const struct pb_imp_op *const op_tables[] = {
	pb_imp_ops_math, pb_imp_ops_nn, pb_imp_ops_shape, pb_imp_ops_typed,
	pb_imp_ops_scatter, pb_imp_ops_rnn, pb_imp_ops_loss, pb_imp_ops_gen,
	pb_imp_ops_select, pb_imp_ops_grid, pb_imp_ops_quant};
#define N_OP_TABLES (sizeof(op_tables) / sizeof(*op_tables))

void pb_onnx_list_ops(struct pb_buf *out)
{
	for (size_t t = 0; t < N_OP_TABLES; t++)
		for (const struct pb_imp_op *o = op_tables[t]; o->name; o++)
			pb_buf_printf(out, "%-22s %2d-%-2d  %s\n", o->name,
				      o->since, o->until ? o->until
							 : PB_OPSET_MAX,
				      *o->attrs ? o->attrs : "-");
}

/* The table entry of "op_type", or NULL. */
static const struct pb_imp_op *lookup_op(const char *op_type)
{
	for (size_t t = 0; t < N_OP_TABLES; t++)
		for (const struct pb_imp_op *o = op_tables[t]; o->name; o++)
			if (!strcmp(o->name, op_type))
				return o;
	return NULL;
}

/* Lower the current node by "op": around a lowering that computes on
 * float32 only, float16/bfloat16 inputs (and for PB_IMP_WIDEN_INT, 8- and
 * 16-bit integers) are widened and its results narrowed back
 * (pb_imp_widen, pb_imp_narrow). */
static int lower(struct imp *s, const struct pb_imp_op *op)
{
	if (!op->widen)
		return op->fn(s);
	struct val **saved = calloc(s->node->n_input + 1, sizeof(*saved));
	enum pb_dtype dt;
	if (!saved) {
		fprintf(stderr, "pb: out of memory\n");
		exit(PB_ERR);
	}
	int rc = pb_imp_widen(s, saved, &dt,
			      op->widen == PB_IMP_WIDEN_INT);
	if (!rc)
		rc = op->fn(s);
	if (!rc && dt)
		rc = pb_imp_narrow(s, saved, dt,
				   op->widen == PB_IMP_WIDEN_FIRST);
	free(saved);
	return rc;
}

/* Lower node "i" of the graph. */
static int import_node(struct imp *s, size_t i)
{
	const Onnx__NodeProto *n = s->g->node[i];
	struct pb_buf name = {0};
	s->node = n;
	if (n->name && *n->name)
		pb_buf_puts(&name, n->name);
	else
		pb_buf_printf(&name, "%s_%zu", n->op_type, i);
	free(s->node_name);
	s->node_name = name.data;
	s->loc = s->nlocs++;
	pb_buf_printf(&s->locs, "#l%d = loc(", s->loc);
	pb_imp_str(&s->locs, s->node_name);
	pb_buf_puts(&s->locs, ")\n");

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return pb_imp_node_error(s, "domain '%s' is not supported",
					 n->domain);
	const struct pb_imp_op *op = lookup_op(n->op_type);
	if (!op)
		return pb_imp_node_error(s, "operator not supported");
	int until = op->until ? op->until : PB_OPSET_MAX;
	if (s->opset < op->since || s->opset > until)
		return pb_imp_node_error(s, "opset %lld is not supported (%s: "
					 "opsets %d to %d)", (long long)s->opset,
					 op->name, op->since, until);
	const char *attrs = op->attrs;
	/* consumed_inputs (opset < 6) only concerned in-place training */
	for (size_t a = 0; a < n->n_attribute; a++)
		if (!in_list(attrs, n->attribute[a]->name) &&
		    strcmp(n->attribute[a]->name, "consumed_inputs"))
			return pb_imp_node_error(s, "attribute '%s' is not "
						 "supported",
						 n->attribute[a]->name);
	if (!n->n_output) /* every op defines output 0 */
		return pb_imp_node_error(s, "node has no output");
	if ((!n->n_input || !n->input[0][0]) && strcmp(n->op_type, "Constant"))
		return pb_imp_node_error(s, "input 0 is missing");
	for (size_t k = 0; k < n->n_input; k++)
		if (n->input[k][0] && !pb_imp_lookup(s, n->input[k]))
			return pb_imp_node_error(s, "input '%s' is not defined",
						 n->input[k]);
	if (lower(s, op))
		return PB_ERR;
	for (size_t k = 0; k < n->n_output; k++) {
		struct val *v = n->output[k][0] ? pb_imp_lookup(s, n->output[k])
						: NULL;
		if (n->output[k][0] && !v)
			return pb_imp_node_error(s, "output %zu ('%s') is not "
						 "supported", k, n->output[k]);
		if (v && check_size(s, "output", v))
			return PB_ERR;
	}
	return PB_OK;
}

/* Emit the return of the graph outputs and collect their result types
 * with pb.name attributes into "res". */
static int add_outputs(struct imp *s, struct pb_buf *res)
{
	struct pb_buf ret = {0}, tys = {0};
	s->node = NULL;
	s->loc = -1;
	for (size_t i = 0; i < s->g->n_output; i++) {
		const char *name = s->g->output[i]->name;
		struct val *v = pb_imp_lookup(s, name);
		const char *x = NULL;
		if (!v)
			pb_error(s->ctx, "output '%s' is not defined", name);
		else if (!pb_imp_elt(v->dtype))
			pb_error(s->ctx, "output '%s' has type %s: only float, "
				 "integer and bool outputs are supported", name,
				 pb_dtype_name(v->dtype));
		else
			x = pb_imp_use_dt(s, v);
		if (!x) {
			pb_buf_free(&ret);
			pb_buf_free(&tys);
			return PB_ERR;
		}
		const char *sep = i ? ", " : "";
		pb_buf_printf(&ret, "%s%s", sep, x);
		struct text ty = pb_imp_ty_dt(&v->sh, v->dtype);
		pb_buf_printf(&tys, "%s%s", sep, ty.s);
		pb_buf_printf(res, "%s%s {" PB_ATTR_NAME " = ", sep, ty.s);
		pb_imp_str(res, name);
		pb_imp_dtype_attr(res, v->dtype);
		pb_buf_puts(res, "}");
	}
	if (s->g->n_output)
		pb_buf_printf(&s->body, "    return %s : %s loc(unknown)\n",
			      ret.data, tys.data);
	else
		pb_buf_puts(&s->body, "    return loc(unknown)\n");
	pb_buf_free(&ret);
	pb_buf_free(&tys);
	return PB_OK;
}

/* The default-domain opset version the model imports. */
static int64_t opset_version(const Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = m->opset_import[i]->domain;
		if (!d || !*d || !strcmp(d, "ai.onnx"))
			return m->opset_import[i]->version;
	}
	return 1;
}

/* Assemble the whole module text of "s" (after the graph was lowered,
 * with result types "res") into "out". */
static void assemble(struct imp *s, const struct pb_buf *res,
		     struct pb_buf *out)
{
	if (s->locs.len)
		pb_buf_append(out, s->locs.data, s->locs.len);
	pb_buf_puts(out, "module attributes {");
	if (s->path) {
		pb_buf_puts(out, PB_ATTR_SOURCE " = ");
		pb_imp_str(out, s->path);
		pb_buf_puts(out, ", ");
	}
	pb_buf_puts(out, PB_ATTR_STAGE " = \"import\"} {\n  func.func @main(");
	if (s->args.len)
		pb_buf_append(out, s->args.data, s->args.len);
	pb_buf_printf(out, ") -> (%s) {\n", res->data ? res->data : "");
	if (s->body.len)
		pb_buf_append(out, s->body.data, s->body.len);
	pb_buf_puts(out, "  } loc(unknown)\n} loc(unknown)\n");
}

/* Lower the whole graph of "s" into module text "out". */
static int lower_graph(struct imp *s, struct pb_buf *out)
{
	struct pb_buf res = {0};
	int rc = add_initializers(s);
	if (!rc)
		rc = add_inputs(s);
	for (size_t i = 0; !rc && i < s->g->n_node; i++)
		rc = import_node(s, i);
	if (!rc)
		rc = add_outputs(s, &res);
	if (!rc && s->nparams && !s->path) {
		pb_error(s->ctx, "the model is read from stdin, so its weights "
			 "cannot be referenced: name the file or use "
			 "--inline-weights");
		rc = PB_ERR;
	}
	if (!rc)
		assemble(s, &res, out);
	pb_buf_free(&res);
	return rc;
}

/* Free the state of "s" (not "s" itself). */
static void imp_clear(struct imp *s)
{
	for (int i = 0; i < s->nvals; i++) {
		if (s->vals[i]->k) {
			pb_tensor_clear(s->vals[i]->k);
			free(s->vals[i]->k);
		}
		free(s->vals[i]);
	}
	free(s->vals);
	free(s->hkeys);
	free(s->hvals);
	free(s->node_name);
	pb_buf_free(&s->locs);
	pb_buf_free(&s->args);
	pb_buf_free(&s->body);
	if (s->model)
		onnx__model_proto__free_unpacked(s->model, NULL);
}

/* Import the ONNX model in "in" as a module on tensors into "*out" (see
 * the layout above); "opts" selects inlined weights and input shapes. */
int pb_onnx_import(struct pb_ctx *ctx, const struct pb_input *in,
		   const struct pb_import_opts *opts, MlirModule *out)
{
	static const struct pb_import_opts none;
	struct imp s = {0};
	struct pb_buf text = {0};
	int rc = PB_ERR;
	*out = (MlirModule){NULL};
	s.ctx = ctx;
	s.opts = opts ? opts : &none;
	s.file = in->name;
	s.path = in->path;
	s.model = pb_onnx_model_unpack(ctx, in->name, in->data, in->len);
	if (!s.model)
		goto done;
	s.g = s.model->graph;
	s.opset = opset_version(s.model);
	if (lower_graph(&s, &text))
		goto done;
	if (s.opts->debug_text) {
		fwrite(text.data, 1, text.len, stderr);
		fflush(stderr);
	}
	MlirOperation op = mlirOperationCreateParse(
		ctx->mlir, mlirStringRefCreate(text.data, text.len),
		mlirStringRefCreateFromCString(in->name));
	if (mlirOperationIsNull(op)) {
		pb_error(ctx, "internal: the generated module does not parse");
		goto done;
	}
	if (!mlirOperationVerify(op)) {
		if (!ctx->nerrors)
			pb_error(ctx, "internal: the generated module does not "
				 "verify");
		mlirOperationDestroy(op);
		goto done;
	}
	*out = mlirModuleFromOperation(op);
	rc = PB_OK;
done:
	pb_buf_free(&text);
	imp_clear(&s);
	return rc;
}

/* Verify "m" and print it into "out" with debug locations. */
int pb_onnx_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out)
{
	MlirOperation op = mlirModuleGetOperation(m);
	if (!mlirOperationVerify(op)) {
		if (!ctx->nerrors)
			pb_error(ctx, "the module does not verify");
		return PB_ERR;
	}
	MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
	mlirOperationPrintWithFlags(op, flags, pb_buf_mlir_callback, out);
	mlirOpPrintingFlagsDestroy(flags);
	pb_buf_append(out, "\n", 1);
	return PB_OK;
}

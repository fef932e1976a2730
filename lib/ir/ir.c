/* Helpers over the MLIR C API shared by every stage. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Pass.h"

#include "core/tensor.h"
#include "ir/ir.h"
#include "ir/contract.h"

static const char *stage_names[] = {"none", "import", "fuse", "tile",
				    "mma",  "smem",   "codegen"};

const char *pb_ir_stage_name(enum pb_stage s)
{
	return stage_names[s];
}

enum pb_stage pb_ir_get_stage(MlirModule m)
{
	MlirStringRef s =
		pb_ir_str_attr(mlirModuleGetOperation(m), PB_ATTR_STAGE);
	if (!s.data)
		return PB_STAGE_NONE;
	for (int i = 1; i <= PB_STAGE_CODEGEN; i++)
		if (strlen(stage_names[i]) == s.length &&
		    !strncmp(stage_names[i], s.data, s.length))
			return i;
	return PB_STAGE_NONE;
}

void pb_ir_set_stage(MlirModule m, enum pb_stage s)
{
	MlirOperation op = mlirModuleGetOperation(m);
	pb_ir_set_attr(op, PB_ATTR_STAGE,
		       mlirStringAttrGet(mlirOperationGetContext(op),
					 pb_str(stage_names[s])));
}

void pb_ir_advance_stage(MlirModule m, enum pb_stage s)
{
	if (pb_ir_get_stage(m) < s)
		pb_ir_set_stage(m, s);
}

/* The bytes of one element of shaped type "t" (at least 1). */
static int64_t elem_bytes(MlirType t)
{
	MlirType e = mlirShapedTypeGetElementType(t);
	int64_t bits = mlirTypeIsAIndex(e)     ? 64
		       : mlirTypeIsAInteger(e) ? mlirIntegerTypeGetWidth(e)
		       : mlirTypeIsAFloat(e)   ? mlirFloatTypeGetWidth(e)
					       : 8;
	return bits < 8 ? 1 : bits / 8;
}

/* Report against "op" when "t" is a statically shaped type larger than
 * PB_MAX_BYTES; 1 when it is. "ctx" receives the error. */
static int too_large(struct pb_ctx *ctx, MlirOperation op, MlirType t)
{
	int64_t dims[PB_MAX_RANK];
	char why[80];
	if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasRank(t) ||
	    !mlirShapedTypeHasStaticShape(t) ||
	    mlirShapedTypeGetRank(t) > PB_MAX_RANK)
		return 0;
	int rank = (int)mlirShapedTypeGetRank(t);
	for (int i = 0; i < rank; i++)
		dims[i] = mlirShapedTypeGetDimSize(t, i);
	if (!pb_tensor_size_ok(elem_bytes(t), rank, dims, NULL, why,
			       sizeof(why)))
		return 0;
	struct pb_buf ty = {0};
	mlirTypePrint(t, pb_buf_mlir_callback, &ty);
	pb_error_at(ctx, mlirOperationGetLocation(op), "type '%s' is too "
		    "large: %s", ty.data, why);
	pb_buf_free(&ty);
	return 1;
}

/* mlirOperationWalk callback: stop at the first operation of "user" (a
 * pb_ctx) whose results or block arguments have a type too large to
 * allocate, which too_large reports. */
static MlirWalkResult check_sizes(MlirOperation op, void *user)
{
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
		if (too_large(user, op, mlirValueGetType(
					       mlirOperationGetResult(op, i))))
			return MlirWalkResultInterrupt;
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
		for (MlirBlock b = mlirRegionGetFirstBlock(
			     mlirOperationGetRegion(op, r));
		     !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
			for (intptr_t i = 0; i < mlirBlockGetNumArguments(b);
			     i++)
				if (too_large(user, op, mlirValueGetType(
						mlirBlockGetArgument(b, i))))
					return MlirWalkResultInterrupt;
	return MlirWalkResultAdvance;
}

MlirModule pb_ir_parse(struct pb_ctx *ctx, const struct pb_input *in)
{
	size_t k = 0;
	while (k < in->len && strchr(" \t\r\n", in->data[k]) && in->data[k])
		k++;
	if (k == in->len) {
		pb_error_in(ctx, in->name, "empty input%s",
			    in->path ? "" : " (did the stage before fail?)");
		return (MlirModule){NULL};
	}
	if (pb_ir_check_nesting(ctx, in))
		return (MlirModule){NULL};
	MlirOperation op = mlirOperationCreateParse(
		ctx->mlir, mlirStringRefCreate(in->data, in->len),
		pb_str(in->name));
	if (mlirOperationIsNull(op))
		return (MlirModule){NULL};
	if (!pb_ir_op_is(op, "builtin.module")) {
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "expected a 'builtin.module' at top level");
		mlirOperationDestroy(op);
		return (MlirModule){NULL};
	}
	int nerrors = ctx->nerrors;
	mlirOperationWalk(op, check_sizes, ctx, MlirWalkPreOrder);
	if (ctx->nerrors > nerrors) {
		mlirOperationDestroy(op);
		return (MlirModule){NULL};
	}
	return mlirModuleFromOperation(op);
}

int pb_ir_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out)
{
	MlirOperation op = mlirModuleGetOperation(m);
	if (!mlirOperationVerify(op)) {
		if (!ctx->nerrors)
			pb_error(ctx, "%s produced a module that does not verify",
				 ctx->tool);
		return PB_ERR;
	}
	mlirOperationPrint(op, pb_buf_mlir_callback, out);
	pb_buf_append(out, "\n", 1);
	return PB_OK;
}

static void to_stderr(MlirStringRef s, void *u)
{
	(void)u;
	fwrite(s.data, 1, s.length, stderr);
}

/* Run "pipeline" on "m", verifying after each pass if "verify". */
static int run_pipeline(struct pb_ctx *ctx, MlirModule m, const char *pipeline,
			int verify)
{
	MlirPassManager pm = mlirPassManagerCreate(ctx->mlir);
	MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
	int rc = PB_OK;
	if (getenv("PB_TIMING"))
		mlirPassManagerEnableTiming(pm);
	if (!verify)
		mlirPassManagerEnableVerifier(pm, false);
	if (mlirLogicalResultIsFailure(
		    mlirParsePassPipeline(opm, pb_str(pipeline), to_stderr, NULL))) {
		pb_error(ctx, "internal: bad pass pipeline '%s'", pipeline);
		rc = PB_ERR;
	} else if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(
			   pm, mlirModuleGetOperation(m)))) {
		if (!ctx->nerrors)
			pb_error(ctx, "pass pipeline failed: %s", pipeline);
		rc = PB_ERR;
	}
	mlirPassManagerDestroy(pm);
	return rc;
}

int pb_ir_run_pipeline(struct pb_ctx *ctx, MlirModule m, const char *pipeline)
{
	return run_pipeline(ctx, m, pipeline, 1);
}

int pb_ir_run_pipeline_unverified(struct pb_ctx *ctx, MlirModule m,
				  const char *pipeline)
{
	return run_pipeline(ctx, m, pipeline, 0);
}

MlirAttribute pb_ir_attr(MlirOperation op, const char *name)
{
	return mlirOperationGetAttributeByName(op, pb_str(name));
}

void pb_ir_set_attr(MlirOperation op, const char *name, MlirAttribute a)
{
	mlirOperationSetAttributeByName(op, pb_str(name), a);
}

int pb_ir_op_is(MlirOperation op, const char *name)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	return s.length == strlen(name) && !strncmp(s.data, name, s.length);
}

MlirStringRef pb_ir_str_attr(MlirOperation op, const char *name)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
		return (MlirStringRef){NULL, 0};
	return mlirStringAttrGetValue(a);
}

MlirOperation pb_ir_lookup_func_ref(MlirModule m, MlirStringRef name)
{
	MlirBlock body = mlirModuleGetBody(m);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "func.func"))
			continue;
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (s.data && mlirStringRefEqual(s, name))
			return op;
	}
	return (MlirOperation){NULL};
}

MlirOperation pb_ir_lookup_func(MlirModule m, const char *name)
{
	return pb_ir_lookup_func_ref(m, mlirStringRefCreateFromCString(name));
}

MlirOperation pb_ir_parent_func(MlirOperation op)
{
	while (!mlirOperationIsNull(op) && !pb_ir_op_is(op, "func.func"))
		op = mlirOperationGetParentOperation(op);
	return op;
}

/* Generic helpers for transformations. */

void pb_ir_ops_push(struct pb_ir_ops *l, MlirOperation op)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = pb_xrealloc(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = op;
}

void pb_ir_ops_free(struct pb_ir_ops *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

struct collect_data {
	MlirOperation root;
	const char *name;
	struct pb_ir_ops *l;
};

/* Walk callback of pb_ir_collect: push "op" if it is not the root and has
 * the requested name. */
static MlirWalkResult collect_cb(MlirOperation op, void *user)
{
	struct collect_data *d = user;
	if (mlirOperationEqual(op, d->root))
		return MlirWalkResultAdvance;
	if (!d->name || pb_ir_op_is(op, d->name))
		pb_ir_ops_push(d->l, op);
	return MlirWalkResultAdvance;
}

void pb_ir_collect(MlirOperation root, const char *name, struct pb_ir_ops *l)
{
	struct collect_data d = {root, name, l};
	mlirOperationWalk(root, collect_cb, &d, MlirWalkPreOrder);
}

void pb_ir_block_ops(MlirBlock block, struct pb_ir_ops *l)
{
	if (mlirBlockIsNull(block))
		return;
	for (MlirOperation op = mlirBlockGetFirstOperation(block);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		pb_ir_ops_push(l, op);
}

void pb_ir_map_add(struct pb_ir_map *m, MlirValue from, MlirValue to)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->from = pb_xrealloc(m->from, m->cap, sizeof(*m->from));
		m->to = pb_xrealloc(m->to, m->cap, sizeof(*m->to));
	}
	if (!mlirValueIsNull(from) && pb_ptrmap_get(&m->index, from.ptr) < 0)
		pb_ptrmap_put(&m->index, from.ptr, m->n);
	m->from[m->n] = from;
	m->to[m->n++] = to;
}

MlirValue pb_ir_map_lookup(const struct pb_ir_map *m, MlirValue v)
{
	int i = mlirValueIsNull(v) ? -1 : pb_ptrmap_get(&m->index, v.ptr);
	return i >= 0 ? m->to[i] : (MlirValue){NULL};
}

void pb_ir_map_free(struct pb_ir_map *m)
{
	free(m->from);
	free(m->to);
	pb_ptrmap_free(&m->index);
	m->from = m->to = NULL;
	m->n = m->cap = 0;
}

/* Walk callback of pb_ir_remap_operands: replace the mapped operands of
 * "op" using the map in "user". */
static MlirWalkResult remap_cb(MlirOperation op, void *user)
{
	const struct pb_ir_map *m = user;
	intptr_t n = mlirOperationGetNumOperands(op);
	for (intptr_t i = 0; i < n; i++) {
		MlirValue to = pb_ir_map_lookup(m, mlirOperationGetOperand(op, i));
		if (!mlirValueIsNull(to))
			mlirOperationSetOperand(op, i, to);
	}
	return MlirWalkResultAdvance;
}

void pb_ir_remap_operands(MlirOperation root, const struct pb_ir_map *m)
{
	if (m->n)
		mlirOperationWalk(root, remap_cb, (void *)m, MlirWalkPreOrder);
}

MlirOperation pb_ir_value_parent(MlirValue v)
{
	if (mlirValueIsAOpResult(v))
		return mlirOpResultGetOwner(v);
	return mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
}

MlirOperation pb_ir_ancestor_in(MlirOperation op, MlirBlock block)
{
	while (!mlirOperationIsNull(op)) {
		MlirBlock b = mlirOperationGetBlock(op);
		if (mlirBlockIsNull(b))
			break;
		if (mlirBlockEqual(b, block))
			return op;
		op = mlirOperationGetParentOperation(op);
	}
	return (MlirOperation){NULL};
}

int pb_ir_same_operands(MlirOperation a, int fa, MlirOperation b, int fb)
{
	intptr_t na = mlirOperationGetNumOperands(a) - fa;
	if (na != mlirOperationGetNumOperands(b) - fb)
		return 0;
	for (intptr_t i = 0; i < na; i++)
		if (!mlirValueEqual(mlirOperationGetOperand(a, fa + i),
				    mlirOperationGetOperand(b, fb + i)))
			return 0;
	return 1;
}

int pb_ir_defined_in(MlirValue v, MlirOperation op)
{
	return pb_ir_is_inside(pb_ir_value_parent(v), op);
}

int pb_ir_is_inside(MlirOperation op, MlirOperation ancestor)
{
	for (; !mlirOperationIsNull(op);
	     op = mlirOperationGetParentOperation(op))
		if (mlirOperationEqual(op, ancestor))
			return 1;
	return 0;
}

MlirBlock pb_ir_entry_block(MlirOperation op)
{
	if (mlirOperationGetNumRegions(op) < 1)
		return (MlirBlock){NULL};
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

void pb_ir_func_retype(MlirOperation fn)
{
	MlirBlock b = pb_ir_entry_block(fn);
	MlirType ft = mlirTypeAttrGetValue(pb_ir_attr(fn, "function_type"));
	intptr_t n = mlirFunctionTypeGetNumInputs(ft);
	intptr_t nr = mlirFunctionTypeGetNumResults(ft);
	MlirType in[n > 0 ? n : 1], res[nr > 0 ? nr : 1];
	for (intptr_t i = 0; i < n; i++)
		in[i] = mlirValueGetType(mlirBlockGetArgument(b, i));
	for (intptr_t i = 0; i < nr; i++)
		res[i] = mlirFunctionTypeGetResult(ft, i);
	pb_ir_set_attr(fn, "function_type",
		       mlirTypeAttrGet(mlirFunctionTypeGet(
			       mlirOperationGetContext(fn), n, in, nr, res)));
}

MlirStringRef pb_ir_op_short_name(MlirOperation op)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	const char *dot = memchr(s.data, '.', s.length);
	if (!dot)
		return s;
	return mlirStringRefCreate(dot + 1, s.length - (dot + 1 - s.data));
}

int pb_ir_type_is_static(MlirType t)
{
	if (!mlirTypeIsAShaped(t))
		return 1;
	return mlirShapedTypeHasRank(t) && mlirShapedTypeHasStaticShape(t);
}

void pb_ir_type_print(MlirType t, struct pb_buf *out)
{
	mlirTypePrint(t, pb_buf_mlir_callback, out);
	pb_buf_append(out, "", 1);
	out->len--;
}

/* Recursive worker of pb_ir_loc_names, bounded by "depth". */
static void loc_names(MlirLocation loc, int depth,
		      void (*fn)(MlirStringRef, void *), void *user)
{
	if (mlirLocationIsNull(loc) || depth > 32)
		return;
	if (mlirLocationIsAName(loc)) {
		fn(mlirIdentifierStr(mlirLocationNameGetName(loc)), user);
		loc_names(mlirLocationNameGetChildLoc(loc), depth + 1, fn, user);
	} else if (mlirLocationIsACallSite(loc)) {
		loc_names(mlirLocationCallSiteGetCallee(loc), depth + 1, fn,
			  user);
		loc_names(mlirLocationCallSiteGetCaller(loc), depth + 1, fn,
			  user);
	} else if (mlirLocationIsAFused(loc)) {
		unsigned n = mlirLocationFusedGetNumLocations(loc);
		MlirLocation *all = malloc(sizeof(*all) * (n ? n : 1));
		if (!all)
			abort();
		mlirLocationFusedGetLocations(loc, all);
		for (unsigned i = 0; i < n; i++)
			loc_names(all[i], depth + 1, fn, user);
		free(all);
	}
}

void pb_ir_loc_names(MlirLocation loc,
		     void (*fn)(MlirStringRef name, void *user), void *user)
{
	loc_names(loc, 0, fn, user);
}

int pb_ir_func_num_args(MlirOperation func)
{
	MlirAttribute t = pb_ir_attr(func, "function_type");
	return mlirFunctionTypeGetNumInputs(mlirTypeAttrGetValue(t));
}

int pb_ir_func_num_results(MlirOperation func)
{
	MlirAttribute t = pb_ir_attr(func, "function_type");
	return mlirFunctionTypeGetNumResults(mlirTypeAttrGetValue(t));
}

/* Attribute "name" of the dictionary at position "i" of the array
 * attribute "attrs" of "func" ("arg_attrs" or "res_attrs"). */
static MlirAttribute dict_array_get(MlirOperation func, const char *attrs,
				    int i, const char *name)
{
	MlirAttribute arr = pb_ir_attr(func, attrs);
	if (mlirAttributeIsNull(arr) || !mlirAttributeIsAArray(arr) ||
	    i >= mlirArrayAttrGetNumElements(arr))
		return (MlirAttribute){NULL};
	MlirAttribute d = mlirArrayAttrGetElement(arr, i);
	if (!mlirAttributeIsADictionary(d))
		return (MlirAttribute){NULL};
	return mlirDictionaryAttrGetElementByName(d, pb_str(name));
}

MlirAttribute pb_ir_func_arg_attr(MlirOperation func, int i, const char *name)
{
	return dict_array_get(func, "arg_attrs", i, name);
}

MlirAttribute pb_ir_func_result_attr(MlirOperation func, int i,
				     const char *name)
{
	return dict_array_get(func, "res_attrs", i, name);
}

/* A copy of dictionary "d" (may be null) with "name" set to "a", or
 * removed when "a" is null. */
static MlirAttribute dict_with(MlirContext mctx, MlirAttribute d,
			       const char *name, MlirAttribute a)
{
	intptr_t n = mlirAttributeIsNull(d) ? 0 : mlirDictionaryAttrGetNumElements(d);
	MlirNamedAttribute *v = malloc(sizeof(*v) * (n + 1));
	intptr_t k = 0;
	int done = 0;
	MlirIdentifier id = mlirIdentifierGet(mctx, pb_str(name));
	if (!v)
		abort();
	for (intptr_t j = 0; j < n; j++) {
		MlirNamedAttribute e = mlirDictionaryAttrGetElement(d, j);
		if (mlirIdentifierEqual(e.name, id)) {
			if (!mlirAttributeIsNull(a))
				v[k++] = mlirNamedAttributeGet(id, a);
			done = 1;
		} else {
			v[k++] = e;
		}
	}
	if (!done && !mlirAttributeIsNull(a))
		v[k++] = mlirNamedAttributeGet(id, a);
	MlirAttribute r = mlirDictionaryAttrGet(mctx, k, v);
	free(v);
	return r;
}

void pb_ir_func_set_arg_attr(MlirOperation func, int i, const char *name,
			     MlirAttribute a)
{
	MlirContext mctx = mlirOperationGetContext(func);
	int n = pb_ir_func_num_args(func);
	MlirAttribute arr = pb_ir_attr(func, "arg_attrs");
	int have = !mlirAttributeIsNull(arr) && mlirAttributeIsAArray(arr) &&
		   mlirArrayAttrGetNumElements(arr) == n;
	MlirAttribute *v;
	if (i < 0 || i >= n)
		return;
	v = malloc(sizeof(*v) * n);
	if (!v)
		abort();
	for (int j = 0; j < n; j++)
		v[j] = have ? mlirArrayAttrGetElement(arr, j)
			    : mlirDictionaryAttrGet(mctx, 0, NULL);
	v[i] = dict_with(mctx, v[i], name, a);
	pb_ir_set_attr(func, "arg_attrs", mlirArrayAttrGet(mctx, n, v));
	free(v);
}

MlirOperation pb_ir_func_create(MlirLocation loc, const char *name, int n,
				const MlirType *types, const MlirLocation *locs,
				int private_)
{
	MlirContext mctx = mlirLocationGetContext(loc);
	MlirLocation *l = malloc(sizeof(*l) * (n ? n : 1));
	if (!l)
		abort();
	for (int i = 0; i < n; i++)
		l[i] = locs ? locs[i] : loc;
	MlirRegion region = mlirRegionCreate();
	mlirRegionAppendOwnedBlock(region, mlirBlockCreate(n, types, l));
	free(l);
	MlirType ft = mlirFunctionTypeGet(mctx, n, types, 0, NULL);
	MlirNamedAttribute attrs[3] = {
		mlirNamedAttributeGet(mlirIdentifierGet(mctx, pb_str("sym_name")),
				      mlirStringAttrGet(mctx, pb_str(name))),
		mlirNamedAttributeGet(
			mlirIdentifierGet(mctx, pb_str("function_type")),
			mlirTypeAttrGet(ft)),
		mlirNamedAttributeGet(
			mlirIdentifierGet(mctx, pb_str("sym_visibility")),
			mlirStringAttrGet(mctx, pb_str("private"))),
	};
	MlirOperationState st = mlirOperationStateGet(pb_str("func.func"), loc);
	mlirOperationStateAddAttributes(&st, private_ ? 3 : 2, attrs);
	mlirOperationStateAddOwnedRegions(&st, 1, &region);
	return mlirOperationCreate(&st);
}

MlirOperation pb_ir_call_create(MlirLocation loc, const char *callee, int n,
				const MlirValue *args)
{
	MlirContext mctx = mlirLocationGetContext(loc);
	MlirNamedAttribute a = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("callee")),
		mlirFlatSymbolRefAttrGet(mctx, pb_str(callee)));
	MlirOperationState st = mlirOperationStateGet(pb_str("func.call"), loc);
	mlirOperationStateAddOperands(&st, n, args);
	mlirOperationStateAddAttributes(&st, 1, &a);
	return mlirOperationCreate(&st);
}

MlirOperation pb_ir_op_create(MlirLocation loc, const char *name, int n,
			      const MlirValue *args)
{
	MlirOperationState st = mlirOperationStateGet(pb_str(name), loc);
	mlirOperationStateAddOperands(&st, n, args);
	return mlirOperationCreate(&st);
}

MlirOperation pb_ir_int_constant(MlirType t, MlirLocation loc, int64_t v)
{
	MlirOperationState st = mlirOperationStateGet(pb_str("arith.constant"),
						      loc);
	MlirNamedAttribute a = mlirNamedAttributeGet(
		mlirIdentifierGet(mlirTypeGetContext(t), pb_str("value")),
		mlirIntegerAttrGet(t, v));
	mlirOperationStateAddResults(&st, 1, &t);
	mlirOperationStateAddAttributes(&st, 1, &a);
	return mlirOperationCreate(&st);
}

/* Walk callback of pb_ir_clone_from_text: stop at the first operation with
 * the name in "user"'s first slot and store it in the second. */
static MlirWalkResult find_first_cb(MlirOperation op, void *user)
{
	struct collect_data *d = user;
	if (!pb_ir_op_is(op, d->name))
		return MlirWalkResultAdvance;
	d->root = op;
	return MlirWalkResultInterrupt;
}

MlirOperation pb_ir_clone_from_text(MlirContext mctx, const char *text,
				    const char *name, int n,
				    const MlirValue *operands)
{
	MlirModule m = mlirModuleCreateParse(mctx, pb_str(text));
	MlirOperation r = {NULL};
	if (mlirModuleIsNull(m))
		return r;
	struct collect_data d = {{NULL}, name, NULL};
	mlirOperationWalk(mlirModuleGetOperation(m), find_first_cb, &d,
			  MlirWalkPreOrder);
	if (!mlirOperationIsNull(d.root) &&
	    mlirOperationGetNumOperands(d.root) == n) {
		r = mlirOperationClone(d.root);
		for (int i = 0; i < n; i++)
			mlirOperationSetOperand(r, i, operands[i]);
	}
	mlirModuleDestroy(m);
	return r;
}

/* Walk callback: set the location of "op" to the one in "user". */
static MlirWalkResult set_loc_cb(MlirOperation op, void *user)
{
	mlirOperationSetLocation(op, *(MlirLocation *)user);
	return MlirWalkResultAdvance;
}

/* Locate "op" and every operation nested in it at "loc". */
static void set_locs(MlirOperation op, MlirLocation loc)
{
	mlirOperationWalk(op, set_loc_cb, &loc, MlirWalkPreOrder);
}

int pb_ir_instantiate(struct pb_ctx *ctx, const char *text,
		      MlirOperation before, int nargs, const MlirValue *args,
		      MlirLocation loc, struct pb_ir_ops *out)
{
	MlirModule t = mlirModuleCreateParse(ctx->mlir,
					     mlirStringRefCreateFromCString(text));
	if (mlirModuleIsNull(t)) {
		pb_error(ctx, "internal: bad IR template:\n%s", text);
		return PB_ERR;
	}
	MlirOperation func = mlirBlockGetFirstOperation(mlirModuleGetBody(t));
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
	MlirBlock dest = mlirOperationGetBlock(before);
	struct pb_ir_map m = {0};
	for (int i = 0; i < nargs && i < mlirBlockGetNumArguments(body); i++)
		pb_ir_map_add(&m, mlirBlockGetArgument(body, i), args[i]);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "func.return"))
			break;
		MlirOperation c = mlirOperationClone(op);
		pb_ir_remap_operands(c, &m);
		set_locs(c, loc);
		for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
			pb_ir_map_add(&m, mlirOperationGetResult(op, i),
				      mlirOperationGetResult(c, i));
		mlirBlockInsertOwnedOperationBefore(dest, before, c);
		if (out)
			pb_ir_ops_push(out, c);
	}
	pb_ir_map_free(&m);
	mlirModuleDestroy(t);
	return PB_OK;
}

int pb_ir_replace_by_template(struct pb_ctx *ctx, const char *text,
			      MlirOperation op, int nargs,
			      const MlirValue *args)
{
	struct pb_ir_ops out = {0};
	int rc = pb_ir_instantiate(ctx, text, op, nargs, args,
				   mlirOperationGetLocation(op), &out);
	if (rc == PB_OK &&
	    (!out.n || !mlirOperationGetNumResults(out.v[out.n - 1]))) {
		pb_error(ctx, "internal: IR template ends in no value:\n%s",
			 text);
		rc = PB_ERR;
	}
	if (rc == PB_OK) {
		mlirValueReplaceAllUsesOfWith(
			mlirOperationGetResult(op, 0),
			mlirOperationGetResult(out.v[out.n - 1], 0));
		mlirOperationDestroy(op);
	}
	pb_ir_ops_free(&out);
	return rc;
}

int pb_ir_const_int(MlirValue v, int64_t *c)
{
	if (!mlirValueIsAOpResult(v))
		return -1;
	MlirOperation def = mlirOpResultGetOwner(v);
	MlirAttribute a = pb_ir_attr(def, "value");
	if (!(pb_ir_op_is(def, "arith.constant") ||
	      pb_ir_op_is(def, "index.constant")) ||
	    mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a))
		return -1;
	*c = mlirIntegerAttrGetValueInt(a);
	return 0;
}

int pb_ir_const_map(MlirOperation op, const char *name, int n, int64_t *v)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return -1;
	MlirAffineMap map = mlirAffineMapAttrGetValue(a);
	if (mlirAffineMapGetNumResults(map) != n)
		return -1;
	for (int i = 0; i < n; i++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, i);
		if (!mlirAffineExprIsAConstant(e))
			return -1;
		v[i] = mlirAffineConstantExprGetValue(e);
	}
	return 0;
}

void pb_ir_set_access_map(MlirOperation op, int store, MlirAffineMap map)
{
	MlirContext mctx = mlirAffineMapGetContext(map);
	intptr_t nd = mlirAffineMapGetNumDims(map);
	intptr_t nr = mlirAffineMapGetNumResults(map);
	int first = store ? 2 : 1, n = 0;
	MlirValue *v = malloc(sizeof(*v) * (first + nd + 1));
	MlirAffineExpr *d = malloc(sizeof(*d) * (nd + nr + 1));
	if (!v || !d)
		abort();
	for (int k = 0; k < first; k++)
		v[n++] = mlirOperationGetOperand(op, k);
	/* "d": each used dimension to its new number; the unused ones to 0,
	 * which no result reads */
	for (intptr_t k = 0; k < nd; k++) {
		int used = 0;
		for (intptr_t r = 0; r < nr && !used; r++)
			used = mlirAffineExprIsFunctionOfDim(
				mlirAffineMapGetResult(map, r), k);
		d[k] = used ? mlirAffineDimExprGet(mctx, n - first)
			    : mlirAffineConstantExprGet(mctx, 0);
		if (used)
			v[n++] = mlirOperationGetOperand(op, first + k);
	}
	if (n - first < nd && mlirAffineMapGetNumSymbols(map) == 0) {
		MlirAffineMap re = mlirAffineMapGet(mctx, nd, 0, nd, d);
		for (intptr_t r = 0; r < nr; r++)
			d[r] = mlirAffineExprCompose(
				mlirAffineMapGetResult(map, r), re);
		map = mlirAffineMapGet(mctx, n - first, 0, nr, d);
		mlirOperationSetOperands(op, n, v);
	}
	pb_ir_set_attr(op, "map", mlirAffineMapAttrGet(map));
	free(v);
	free(d);
}

int pb_ir_parallel_dims(MlirOperation op, int max, int64_t *lb,
			int64_t *step, int64_t *count, MlirValue *iv)
{
	int64_t l[32], u[32];
	if (!pb_ir_op_is(op, "affine.parallel") ||
	    mlirOperationGetNumResults(op) || mlirOperationGetNumOperands(op))
		return -1;
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
	int n = mlirBlockGetNumArguments(body);
	MlirAttribute steps = pb_ir_attr(op, "steps");
	if (n > max || n > 32 || pb_ir_const_map(op, "lowerBoundsMap", n, l) ||
	    pb_ir_const_map(op, "upperBoundsMap", n, u) ||
	    mlirAttributeIsNull(steps) || !mlirAttributeIsAArray(steps) ||
	    mlirArrayAttrGetNumElements(steps) != n)
		return -1;
	for (int i = 0; i < n; i++)
		if (mlirIntegerAttrGetValueInt(mlirArrayAttrGetElement(steps, i)) < 1)
			return -1;
	for (int i = 0; i < n; i++) {
		int64_t s = mlirIntegerAttrGetValueInt(
			mlirArrayAttrGetElement(steps, i));
		lb[i] = l[i];
		step[i] = s;
		count[i] = u[i] > l[i] ? (u[i] - l[i] + s - 1) / s : 0;
		iv[i] = mlirBlockGetArgument(body, i);
	}
	return n;
}

/* pb-fuse: bufferize pb-import's linalg-on-tensors @main, lower it to
 * affine loops on memrefs and outline every top-level loop nest into a
 * private kernel function called from @main (docs/pb-fuse.md).
 *
 *     @main(tensors) -> tensors                 @main(inputs, params, outs)
 *       linalg ops on tensors         ==>         allocs, views, constants
 *                                                 call @k0_<node>(...)
 *                                                 call @k1_<node>(...)
 *                                                 deallocs
 *                                               @k0_<node>(memrefs) {pb.kernel}
 *                                                 affine.for ...
 *
 * Between lowering and outlining, fusion.c merges loop nests on isl
 * dependences and contracts the buffers that became local, so that each
 * kernel is one (fused) top-level nest. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"
#include "ir/contract.h"
#include "ir/passes.h"

/* Metadata prefix of the fused location that records, across the
 * lowering, which operation a loop nest came from. */
#define TAG PB_LOC_OP_PREFIX

/* Operations that stay in @main: buffers, views of buffers, constants,
 * calls and the terminator. */
static const char *keep_ops[] = {
	"memref.alloc",		 "memref.alloca",	  "memref.dealloc",
	"memref.get_global",	 "memref.collapse_shape", "memref.expand_shape",
	"memref.subview",	 "memref.reinterpret_cast", "memref.cast",
	"memref.view",		 "memref.reshape",	  "memref.transpose",
	"func.return",		 "func.call",		  "arith.constant",
	"ub.poison",		 NULL,
};

/* Views: operations whose memref results alias their first operand. */
static const char *view_ops[] = {
	"memref.collapse_shape", "memref.expand_shape", "memref.subview",
	"memref.reinterpret_cast", "memref.cast",	"memref.view",
	"memref.reshape",	 "memref.transpose",	NULL,
};

/* Is "op" named by one of the NULL-terminated "names"? */
static int op_in(MlirOperation op, const char **names)
{
	for (int i = 0; names[i]; i++)
		if (pb_ir_op_is(op, names[i]))
			return 1;
	return 0;
}

/* Is "op" a side-effect-free scalar operation (index arithmetic, arith)
 * that can be cloned into a kernel? */
static int is_scalar_pure(MlirOperation op)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	if (mlirOperationGetNumRegions(op))
		return 0;
	if ((s.length > 6 && !strncmp(s.data, "arith.", 6)) ||
	    (s.length > 6 && !strncmp(s.data, "index.", 6)))
		return 1;
	return pb_ir_op_is(op, "affine.apply") ||
	       pb_ir_op_is(op, "affine.min") ||
	       pb_ir_op_is(op, "affine.max") || pb_ir_op_is(op, "ub.poison");
}

struct static_check {
	struct pb_ctx *ctx;
	int bad;
};

/* Report "t" at "loc" through "c" if it has a dynamic shape. */
static void check_type(struct static_check *c, MlirType t, MlirLocation loc)
{
	struct pb_buf b = {0};
	if (c->bad || pb_ir_type_is_static(t))
		return;
	pb_ir_type_print(t, &b);
	pb_error_at(c->ctx, loc,
		    "dynamic shape '%s' is not supported: pb compiles static "
		    "shapes only",
		    b.data);
	pb_buf_free(&b);
	c->bad = 1;
}

/* Call "fn" with "user" on every argument of every block of the regions
 * of "op" (not of the operations nested deeper). */
static void for_block_args(MlirOperation op, void (*fn)(MlirValue, void *),
			   void *user)
{
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++) {
		MlirRegion reg = mlirOperationGetRegion(op, r);
		for (MlirBlock b = mlirRegionGetFirstBlock(reg);
		     !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
			for (intptr_t a = 0; a < mlirBlockGetNumArguments(b); a++)
				fn(mlirBlockGetArgument(b, a), user);
	}
}

/* for_block_args callback: check the type of block argument "v". */
static void check_arg(MlirValue v, void *user)
{
	check_type(user, mlirValueGetType(v), mlirValueGetLocation(v));
}

/* Walk callback: check the result types of "op" and the types of the
 * arguments of its blocks for static shapes. */
static MlirWalkResult check_static_cb(MlirOperation op, void *user)
{
	struct static_check *c = user;
	intptr_t n = mlirOperationGetNumResults(op);
	for (intptr_t i = 0; i < n; i++)
		check_type(c, mlirValueGetType(mlirOperationGetResult(op, i)),
			   mlirOperationGetLocation(op));
	for_block_args(op, check_arg, c);
	return c->bad ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

/* Check that every shaped value in "m" has a static shape; report the
 * first one that does not through "ctx". */
static int check_static(struct pb_ctx *ctx, MlirModule m)
{
	struct static_check c = {ctx, 0};
	mlirOperationWalk(mlirModuleGetOperation(m), check_static_cb, &c,
			  MlirWalkPreOrder);
	return c.bad ? PB_ERR : PB_OK;
}

/* Walk callback: report the first operation of the module whose operands
 * or results are still tensors after bufferization. */
static MlirWalkResult check_no_tensor_cb(MlirOperation op, void *user)
{
	struct pb_ctx *ctx = user;
	intptr_t n = mlirOperationGetNumResults(op);
	for (intptr_t i = 0; i < n; i++) {
		MlirType t = mlirValueGetType(mlirOperationGetResult(op, i));
		if (!mlirTypeIsATensor(t))
			continue;
		MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "'%.*s' was not bufferized", (int)s.length,
			    s.data);
		return MlirWalkResultInterrupt;
	}
	return MlirWalkResultAdvance;
}

/* Wrap the location of every top-level operation of "body" into a fused
 * location whose metadata names the operation ("pb.op:matmul"), so that
 * the loop nests lowered from it can be named after it. */
static void tag_locs(MlirBlock body)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirContext mctx = mlirOperationGetContext(op);
		MlirStringRef s = pb_ir_op_short_name(op);
		struct pb_buf b = {0};
		MlirLocation loc = mlirOperationGetLocation(op);
		if (pb_ir_op_is(op, "func.return"))
			continue;
		pb_buf_printf(&b, TAG "%.*s", (int)s.length, s.data);
		MlirAttribute md = mlirStringAttrGet(
			mctx, mlirStringRefCreate(b.data, b.len));
		mlirOperationSetLocation(op,
					 mlirLocationFusedGet(mctx, 1, &loc, md));
		pb_buf_free(&b);
	}
}

/* Is "md" (a fused location's metadata) one of tag_locs' tags? */
static int is_tag(MlirAttribute md)
{
	if (mlirAttributeIsNull(md) || !mlirAttributeIsAString(md))
		return 0;
	MlirStringRef s = mlirStringAttrGetValue(md);
	return s.length > strlen(TAG) && !strncmp(s.data, TAG, strlen(TAG));
}

/* The operation name recorded by tag_locs in "loc" (searched through
 * fused, name and call-site locations), or a null-data reference. */
static MlirStringRef loc_tag(MlirLocation loc, int depth)
{
	MlirStringRef none = {NULL, 0};
	if (depth > 32)
		return none;
	if (mlirLocationIsAName(loc))
		return loc_tag(mlirLocationNameGetChildLoc(loc), depth + 1);
	if (mlirLocationIsACallSite(loc))
		return loc_tag(mlirLocationCallSiteGetCallee(loc), depth + 1);
	if (!mlirLocationIsAFused(loc))
		return none;
	MlirAttribute md = mlirLocationFusedGetMetadata(loc);
	if (is_tag(md)) {
		MlirStringRef s = mlirStringAttrGetValue(md);
		return mlirStringRefCreate(s.data + strlen(TAG),
					   s.length - strlen(TAG));
	}
	unsigned n = mlirLocationFusedGetNumLocations(loc);
	MlirLocation *all = pb_xrealloc(NULL, n, sizeof(*all));
	mlirLocationFusedGetLocations(loc, all);
	MlirStringRef r = none;
	for (unsigned i = 0; i < n && !r.data; i++)
		r = loc_tag(all[i], depth + 1);
	free(all);
	return r;
}

/* "loc" without the tags of tag_locs. */
static MlirLocation untag(MlirLocation loc, int depth)
{
	MlirContext mctx = mlirLocationGetContext(loc);
	if (depth > 32)
		return loc;
	if (mlirLocationIsAName(loc)) {
		MlirLocation c = mlirLocationNameGetChildLoc(loc);
		return mlirLocationNameGet(mctx,
					   mlirIdentifierStr(
						   mlirLocationNameGetName(loc)),
					   untag(c, depth + 1));
	}
	if (mlirLocationIsACallSite(loc))
		return mlirLocationCallSiteGet(
			untag(mlirLocationCallSiteGetCallee(loc), depth + 1),
			untag(mlirLocationCallSiteGetCaller(loc), depth + 1));
	if (!mlirLocationIsAFused(loc))
		return loc;
	unsigned n = mlirLocationFusedGetNumLocations(loc);
	MlirAttribute md = mlirLocationFusedGetMetadata(loc);
	MlirLocation *all = pb_xrealloc(NULL, n, sizeof(*all));
	mlirLocationFusedGetLocations(loc, all);
	for (unsigned i = 0; i < n; i++)
		all[i] = untag(all[i], depth + 1);
	if (is_tag(md))
		md = (MlirAttribute){NULL};
	MlirLocation r = n == 1 && mlirAttributeIsNull(md)
				 ? all[0]
				 : mlirLocationFusedGet(mctx, n, all, md);
	free(all);
	return r;
}

/* for_block_args callback: remove the tags from the location of "v". */
static void untag_arg(MlirValue v, void *user)
{
	(void)user;
	mlirBlockArgumentSetLocation(v, untag(mlirValueGetLocation(v), 0));
}

/* Walk callback: remove the tags from the location of "op" and of the
 * arguments of its blocks. */
static MlirWalkResult untag_cb(MlirOperation op, void *user)
{
	(void)user;
	mlirOperationSetLocation(op, untag(mlirOperationGetLocation(op), 0));
	for_block_args(op, untag_arg, NULL);
	return MlirWalkResultAdvance;
}

/* Replace every memref.copy in "m" by a linalg.copy so that
 * convert-linalg-to-affine-loops turns copies into loops like the rest. */
static int copies_to_linalg(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops copies = {0};
	int rc = PB_OK;
	pb_ir_collect(mlirModuleGetOperation(m), "memref.copy", &copies);
	for (int i = 0; i < copies.n && rc == PB_OK; i++) {
		MlirOperation cp = copies.v[i];
		MlirValue v[2] = {mlirOperationGetOperand(cp, 0),
				  mlirOperationGetOperand(cp, 1)};
		if (mlirValueEqual(v[0], v[1])) {
			/* an operand written in place (concat.c) */
			mlirOperationDestroy(cp);
			continue;
		}
		struct pb_buf t0 = {0}, t1 = {0}, text = {0};
		pb_ir_type_print(mlirValueGetType(v[0]), &t0);
		pb_ir_type_print(mlirValueGetType(v[1]), &t1);
		pb_buf_printf(&text,
			      "func.func @f(%%a: %s, %%b: %s) {\n"
			      "  linalg.copy ins(%%a : %s) outs(%%b : %s)\n"
			      "  return\n}\n",
			      t0.data, t1.data, t0.data, t1.data);
		pb_buf_append(&text, "", 1);
		MlirOperation lc = pb_ir_clone_from_text(
			mlirOperationGetContext(cp), text.data, "linalg.copy", 2,
			v);
		if (mlirOperationIsNull(lc)) {
			pb_error_at(ctx, mlirOperationGetLocation(cp),
				    "internal: cannot turn memref.copy of '%s' "
				    "into linalg.copy",
				    t0.data);
			rc = PB_ERR;
		} else {
			MlirLocation loc = mlirOperationGetLocation(cp);
			if (!loc_tag(loc, 0).data)
				loc = mlirLocationFusedGet(
					mlirLocationGetContext(loc), 1, &loc,
					mlirStringAttrGet(
						mlirLocationGetContext(loc),
						pb_str(TAG "copy")));
			mlirOperationSetLocation(lc, loc);
			mlirBlockInsertOwnedOperationBefore(
				mlirOperationGetBlock(cp), cp, lc);
			mlirOperationDestroy(cp);
		}
		pb_buf_free(&t0);
		pb_buf_free(&t1);
		pb_buf_free(&text);
	}
	pb_ir_ops_free(&copies);
	return rc;
}

/* The names of @main's results, recorded before bufferization moves them
 * to out-parameters. */
struct result_names {
	int n;
	MlirAttribute *name; /* PB_ATTR_NAME of each result, or null */
	MlirAttribute *dtype; /* PB_ATTR_DTYPE of each result, or null */
};

/* Check that @main "main" returns only tensors and record their names
 * into "rn". */
static int record_results(struct pb_ctx *ctx, MlirOperation main,
			  struct result_names *rn)
{
	MlirType ft = mlirTypeAttrGetValue(pb_ir_attr(main, "function_type"));
	rn->n = mlirFunctionTypeGetNumResults(ft);
	rn->name = calloc(rn->n ? rn->n : 1, sizeof(*rn->name));
	rn->dtype = calloc(rn->n ? rn->n : 1, sizeof(*rn->dtype));
	if (!rn->name || !rn->dtype)
		abort();
	for (int i = 0; i < rn->n; i++) {
		MlirType t = mlirFunctionTypeGetResult(ft, i);
		if (!mlirTypeIsARankedTensor(t) && !mlirTypeIsAMemRef(t)) {
			struct pb_buf b = {0};
			pb_ir_type_print(t, &b);
			pb_error_at(ctx, mlirOperationGetLocation(main),
				    "result #%d of @main has type '%s': only "
				    "tensor results are supported",
				    i, b.data);
			pb_buf_free(&b);
			return PB_ERR;
		}
		rn->name[i] = pb_ir_func_result_attr(main, i, PB_ATTR_NAME);
		rn->dtype[i] = pb_ir_func_result_attr(main, i, PB_ATTR_DTYPE);
	}
	return PB_OK;
}

/* Mark the "n" arguments of "main" as not writable, so that bufferization
 * never writes into a graph input or a parameter in place. */
static void protect_args(MlirOperation main, int n)
{
	MlirContext mctx = mlirOperationGetContext(main);
	MlirType ft = mlirTypeAttrGetValue(pb_ir_attr(main, "function_type"));
	for (int i = 0; i < n; i++)
		if (mlirTypeIsATensor(mlirFunctionTypeGetInput(ft, i)))
			pb_ir_func_set_arg_attr(main, i,
						"bufferization.writable",
						mlirBoolAttrGet(mctx, 0));
}

/* After bufferization: the "nin" original arguments of "main" lose the
 * bufferization marker; the out-parameters that follow get the names in
 * "rn" and the unit attribute PB_ATTR_OUTPUT. */
static int fix_signature(struct pb_ctx *ctx, MlirOperation main, int nin,
			 const struct result_names *rn)
{
	MlirContext mctx = mlirOperationGetContext(main);
	int nargs = pb_ir_func_num_args(main);
	if (pb_ir_func_num_results(main) != 0 || nargs != nin + rn->n) {
		pb_error_at(ctx, mlirOperationGetLocation(main),
			    "internal: @main's results were not turned into "
			    "out-parameters");
		return PB_ERR;
	}
	for (int i = 0; i < nin; i++)
		pb_ir_func_set_arg_attr(main, i, "bufferization.writable",
					(MlirAttribute){NULL});
	for (int i = 0; i < rn->n; i++) {
		if (!mlirAttributeIsNull(rn->name[i]))
			pb_ir_func_set_arg_attr(main, nin + i, PB_ATTR_NAME,
						rn->name[i]);
		if (!mlirAttributeIsNull(rn->dtype[i]))
			pb_ir_func_set_arg_attr(main, nin + i, PB_ATTR_DTYPE,
						rn->dtype[i]);
		pb_ir_func_set_arg_attr(main, nin + i, PB_ATTR_OUTPUT,
					mlirUnitAttrGet(mctx));
	}
	return PB_OK;
}

/* Outlining state for @main. */
struct outliner {
	struct pb_ctx *ctx;
	MlirModule m;
	MlirOperation main;
	MlirBlock body;
	struct pb_ir_ops ops; /* @main's top-level operations, in order */
	char *keep;	      /* per operation: stays in @main */
	int nkernels;
	struct pb_ptrmap index; /* operation -> its position in "ops" */
	struct pb_ptrmap funcs; /* sym_name StringAttr -> 1, every function */
};

/* Position of "op" among the top-level operations of "o", or -1. */
static int op_index(const struct outliner *o, MlirOperation op)
{
	return mlirOperationIsNull(op) ? -1 : pb_ptrmap_get(&o->index, op.ptr);
}

/* Is "v" @main's argument or a result of an operation that stays in
 * @main? */
static int is_kept_value(const struct outliner *o, MlirValue v)
{
	MlirOperation p = pb_ir_value_parent(v);
	if (mlirOperationEqual(p, o->main))
		return 1;
	int i = op_index(o, p);
	return i >= 0 && o->keep[i];
}

/* Decide which top-level operations of @main stay there: buffers, views,
 * constants and scalar computations on kept values; every other operation
 * is compute to be outlined. */
static void classify(struct outliner *o)
{
	o->keep = calloc(o->ops.n ? o->ops.n : 1, 1);
	if (!o->keep)
		abort();
	for (int i = 0; i < o->ops.n; i++) {
		MlirOperation op = o->ops.v[i];
		int keep = op_in(op, keep_ops);
		if (!keep && is_scalar_pure(op)) {
			keep = 1;
			for (intptr_t k = 0; k < mlirOperationGetNumOperands(op);
			     k++)
				if (!is_kept_value(
					    o, mlirOperationGetOperand(op, k)))
					keep = 0;
		}
		o->keep[i] = keep;
	}
}

/* The last position that a group starting at "start" must extend to so
 * that every use of a result of its compute operations is inside it;
 * -1 when a kept operation uses such a result. */
static int group_end(struct outliner *o, int start)
{
	int end = start;
	for (int j = start; j <= end; j++) {
		if (o->keep[j])
			continue;
		MlirOperation op = o->ops.v[j];
		for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++) {
			MlirValue v = mlirOperationGetResult(op, r);
			for (MlirOpOperand u = mlirValueGetFirstUse(v);
			     !mlirOpOperandIsNull(u);
			     u = mlirOpOperandGetNextUse(u)) {
				MlirOperation a = pb_ir_ancestor_in(
					mlirOpOperandGetOwner(u), o->body);
				int k = op_index(o, a);
				if (k < 0 || o->keep[k]) {
					pb_error_at(o->ctx,
						    mlirOperationGetLocation(op),
						    "internal: cannot outline an "
						    "operation whose result "
						    "@main uses");
					return -1;
				}
				if (k > end)
					end = k;
			}
		}
	}
	return end;
}

/* A group of compute operations being outlined into one kernel. */
struct group {
	MlirContext mctx;
	struct pb_ir_ops members;
	MlirValue *ext; /* values used inside, defined outside, in order */
	int next, cext;
	MlirAttribute *nodes; /* ONNX node names (StringAttr), in order */
	int nnodes, cnodes;
	struct pb_ptrmap seen; /* the StringAttrs in "nodes" */
};

static void group_free(struct group *g)
{
	pb_ir_ops_free(&g->members);
	free(g->ext);
	free(g->nodes);
	pb_ptrmap_free(&g->seen);
}

/* Is "op" inside one of the members of "g"? */
static int in_group(const struct group *g, MlirOperation op)
{
	for (int i = 0; i < g->members.n; i++)
		if (pb_ir_is_inside(op, g->members.v[i]))
			return 1;
	return 0;
}

/* Walk callback: record in the group "user" the operands of "op" defined
 * outside the group. */
static MlirWalkResult externals_cb(MlirOperation op, void *user)
{
	struct group *g = user;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		int seen = 0;
		if (in_group(g, pb_ir_value_parent(v)))
			continue;
		for (int k = 0; k < g->next && !seen; k++)
			seen = mlirValueEqual(g->ext[k], v);
		if (seen)
			continue;
		if (g->next == g->cext) {
			g->cext = g->cext ? 2 * g->cext : 16;
			g->ext = pb_xrealloc(g->ext, g->cext, sizeof(*g->ext));
		}
		g->ext[g->next++] = v;
	}
	return MlirWalkResultAdvance;
}

/* Location-name callback: add "name" to the node list of the group "user"
 * unless it is there already. */
static void add_node(MlirStringRef name, void *user)
{
	struct group *g = user;
	MlirAttribute a = mlirStringAttrGet(g->mctx, name);
	if (pb_ptrmap_get(&g->seen, a.ptr) >= 0)
		return;
	pb_ptrmap_put(&g->seen, a.ptr, 1);
	if (g->nnodes == g->cnodes) {
		g->cnodes = g->cnodes ? 2 * g->cnodes : 8;
		g->nodes = realloc(g->nodes, g->cnodes * sizeof(*g->nodes));
		if (!g->nodes)
			abort();
	}
	g->nodes[g->nnodes++] = a;
}

/* Walk callback: add the ONNX node names of the location of "op" to the
 * group "user". */
static MlirWalkResult nodes_cb(MlirOperation op, void *user)
{
	pb_ir_loc_names(mlirOperationGetLocation(op), add_node, user);
	return MlirWalkResultAdvance;
}

/* Append "s" to "b" as an identifier: runs of characters other than
 * letters, digits and '_' become one '_', none at either end, at most
 * "max" characters of "s" are used. */
static void append_ident(struct pb_buf *b, MlirStringRef s, size_t max)
{
	size_t start = b->len;
	int sep = 0;
	for (size_t i = 0; i < s.length && i < max; i++) {
		char c = s.data[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_';
		if (!ok) {
			sep = 1;
			continue;
		}
		if (sep && b->len > start)
			pb_buf_append(b, "_", 1);
		sep = 0;
		pb_buf_append(b, &c, 1);
	}
	if (b->len == start)
		pb_buf_append(b, "op", 2);
}

/* Name the kernel for group "g" of outliner "o" into "b" (NUL-terminated):
 * "k<N>_<first ONNX node>", else "k<N>_<operation it was lowered from>",
 * made unique among the module's functions (o->funcs), and record it
 * there. */
static void kernel_name(struct outliner *o, const struct group *g,
			struct pb_buf *b)
{
	MlirOperation first = g->members.v[0];
	MlirStringRef what;
	if (g->nnodes)
		what = mlirStringAttrGetValue(g->nodes[0]);
	else
		what = loc_tag(mlirOperationGetLocation(first), 0);
	if (!what.data)
		what = pb_ir_op_short_name(first);
	for (int suffix = 0;; suffix++) {
		b->len = 0;
		pb_buf_printf(b, "k%d_", o->nkernels);
		append_ident(b, what, 48);
		if (suffix)
			pb_buf_printf(b, "_%d", suffix);
		pb_buf_append(b, "", 1);
		b->len--;
		MlirAttribute a = mlirStringAttrGet(
			g->mctx, mlirStringRefCreate(b->data, b->len));
		if (pb_ptrmap_get(&o->funcs, a.ptr) < 0) {
			pb_ptrmap_put(&o->funcs, a.ptr, 1);
			break;
		}
	}
}

/* Can the external value "v" be recomputed inside a kernel (a scalar
 * constant or index computation of @main) instead of being passed? */
static int clonable(const struct outliner *o, MlirValue v)
{
	if (!mlirValueIsAOpResult(v) || mlirTypeIsAShaped(mlirValueGetType(v)))
		return 0;
	MlirOperation def = mlirOpResultGetOwner(v);
	int i = op_index(o, def);
	return i >= 0 && o->keep[i] &&
	       (is_scalar_pure(def) || pb_ir_op_is(def, "arith.constant"));
}

/* Make the external value "v" available in the kernel block "kb": as a
 * clone of its defining operation (after its own operands) or as a new
 * argument of "kb", whose outer value is appended to "args". Records the
 * kernel-side value in "map" and returns it. */
static MlirValue materialize(const struct outliner *o, MlirValue v,
			     MlirBlock kb, struct pb_ir_map *map,
			     struct pb_ir_map *args)
{
	MlirValue in = pb_ir_map_lookup(map, v);
	if (!mlirValueIsNull(in))
		return in;
	if (!clonable(o, v)) {
		in = mlirBlockAddArgument(kb, mlirValueGetType(v),
					  mlirValueGetLocation(v));
		pb_ir_map_add(map, v, in);
		pb_ir_map_add(args, v, in);
		return in;
	}
	MlirOperation def = mlirOpResultGetOwner(v);
	intptr_t n = mlirOperationGetNumOperands(def);
	MlirValue *ops = pb_xrealloc(NULL, n, sizeof(*ops));
	for (intptr_t i = 0; i < n; i++)
		ops[i] = materialize(o, mlirOperationGetOperand(def, i), kb,
				     map, args);
	MlirOperation c = mlirOperationClone(def);
	for (intptr_t i = 0; i < n; i++)
		mlirOperationSetOperand(c, i, ops[i]);
	free(ops);
	mlirBlockAppendOwnedOperation(kb, c);
	for (intptr_t r = 0; r < mlirOperationGetNumResults(def); r++)
		pb_ir_map_add(map, mlirOperationGetResult(def, r),
			      mlirOperationGetResult(c, r));
	return pb_ir_map_lookup(map, v);
}

/* Set the function type of the kernel "func" from the arguments of its
 * entry block "kb" (no results). */
static void set_func_type(MlirOperation func, MlirBlock kb)
{
	intptr_t n = mlirBlockGetNumArguments(kb);
	MlirType *t = malloc(sizeof(*t) * (n ? n : 1));
	if (!t)
		abort();
	for (intptr_t i = 0; i < n; i++)
		t[i] = mlirValueGetType(mlirBlockGetArgument(kb, i));
	pb_ir_set_attr(func,
		       "function_type",
		       mlirTypeAttrGet(mlirFunctionTypeGet(
			       mlirOperationGetContext(func), n, t, 0, NULL)));
	free(t);
}

/* Outline the compute operations of group "g" of "o" into a new private
 * kernel function inserted before @main, and replace them in @main by a
 * call placed where the last of them was. */
static void outline(struct outliner *o, struct group *g)
{
	MlirOperation first = g->members.v[0];
	MlirOperation last = g->members.v[g->members.n - 1];
	MlirLocation loc = mlirOperationGetLocation(first);
	struct pb_buf name = {0};
	struct pb_ir_map map = {0}, args = {0};

	for (int i = 0; i < g->members.n; i++) {
		mlirOperationWalk(g->members.v[i], externals_cb, g,
				  MlirWalkPreOrder);
		mlirOperationWalk(g->members.v[i], nodes_cb, g,
				  MlirWalkPreOrder);
	}
	kernel_name(o, g, &name);
	o->nkernels++;

	MlirOperation func = pb_ir_func_create(loc, name.data, 0, NULL, NULL, 1);
	MlirBlock kb = pb_ir_entry_block(func);
	for (int i = 0; i < g->next; i++)
		materialize(o, g->ext[i], kb, &map, &args);
	set_func_type(func, kb);
	pb_contract_set_kernel(func);
	pb_contract_set_nodes(func,
			      mlirArrayAttrGet(g->mctx, g->nnodes, g->nodes));

	MlirOperation call = pb_ir_call_create(loc, name.data, args.n,
					       args.from);
	mlirBlockInsertOwnedOperationAfter(o->body, last, call);
	for (int i = 0; i < g->members.n; i++) {
		mlirOperationRemoveFromParent(g->members.v[i]);
		mlirBlockAppendOwnedOperation(kb, g->members.v[i]);
	}
	mlirBlockAppendOwnedOperation(kb, pb_ir_op_create(loc, "func.return",
							  0, NULL));
	pb_ir_remap_operands(func, &map);
	mlirBlockInsertOwnedOperationBefore(mlirModuleGetBody(o->m), o->main,
					    func);
	pb_ir_map_free(&map);
	pb_ir_map_free(&args);
	pb_buf_free(&name);
}

/* Outline every group of compute operations of @main ("o"), in order. */
static int outline_all(struct outliner *o)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(o->body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		pb_ptrmap_put(&o->index, op.ptr, o->ops.n);
		pb_ir_ops_push(&o->ops, op);
	}
	for (MlirOperation op = mlirBlockGetFirstOperation(
		     mlirModuleGetBody(o->m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "func.func"))
			pb_ptrmap_put(&o->funcs, pb_ir_attr(op, "sym_name").ptr,
				      1);
	classify(o);
	for (int i = 0; i < o->ops.n;) {
		if (o->keep[i]) {
			i++;
			continue;
		}
		int end = group_end(o, i);
		if (end < 0)
			return PB_ERR;
		struct group g = {.mctx = mlirOperationGetContext(o->main)};
		for (int j = i; j <= end; j++)
			if (!o->keep[j])
				pb_ir_ops_push(&g.members, o->ops.v[j]);
		outline(o, &g);
		group_free(&g);
		i = end + 1;
	}
	return PB_OK;
}

/* Does any operand of "op" belong to the "n" values "set"? */
static int uses_any(MlirOperation op, const MlirValue *set, int n)
{
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
		for (int k = 0; k < n; k++)
			if (mlirValueEqual(mlirOperationGetOperand(op, i), set[k]))
				return 1;
	return 0;
}

/* Free the buffer of "alloc" (a top-level memref.alloc of @main's entry
 * block "body") after the last operation of "body" that uses it or one
 * of its views, unless it is already freed. */
static void add_dealloc(MlirBlock body, MlirOperation alloc)
{
	MlirValue *set = malloc(sizeof(*set) * 16);
	int n = 1, cap = 16;
	MlirOperation last = alloc;
	if (!set)
		abort();
	set[0] = mlirOperationGetResult(alloc, 0);
	for (MlirOperation op = mlirOperationGetNextInBlock(alloc);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!uses_any(op, set, n))
			continue;
		if (pb_ir_op_is(op, "memref.dealloc")) {
			free(set);
			return;
		}
		last = op;
		if (!op_in(op, view_ops))
			continue;
		for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++) {
			if (n == cap) {
				cap *= 2;
				set = realloc(set, sizeof(*set) * cap);
				if (!set)
					abort();
			}
			set[n++] = mlirOperationGetResult(op, r);
		}
	}
	free(set);
	MlirValue buf = mlirOperationGetResult(alloc, 0);
	MlirOperation d = pb_ir_op_create(mlirOperationGetLocation(alloc),
					  "memref.dealloc", 1, &buf);
	if (pb_ir_op_is(last, "func.return"))
		mlirBlockInsertOwnedOperationBefore(body, last, d);
	else
		mlirBlockInsertOwnedOperationAfter(body, last, d);
}

/* Free every buffer that @main's entry block "body" allocates. */
static void add_deallocs(MlirBlock body)
{
	struct pb_ir_ops allocs = {0};
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "memref.alloc"))
			pb_ir_ops_push(&allocs, op);
	for (int i = 0; i < allocs.n; i++)
		add_dealloc(body, allocs.v[i]);
	pb_ir_ops_free(&allocs);
}

/* Does "m" hold any func.func (an empty module has nothing to compile)? */
static int has_funcs(MlirModule m)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "func.func"))
			return 1;
	return 0;
}

/* Find @main in "m" and check that it has a single block; report through
 * "ctx" otherwise. */
static MlirOperation find_main(struct pb_ctx *ctx, MlirModule m)
{
	MlirOperation main = pb_ir_lookup_func(m, "main");
	if (mlirOperationIsNull(main)) {
		pb_error_at(ctx, mlirOperationGetLocation(mlirModuleGetOperation(m)),
			    "no func.func @main to compile");
		return main;
	}
	MlirBlock b = pb_ir_entry_block(main);
	if (mlirBlockIsNull(b) || !mlirBlockIsNull(mlirBlockGetNextInRegion(b))) {
		pb_error_at(ctx, mlirOperationGetLocation(main),
			    "@main must have a body of a single block");
		return (MlirOperation){NULL};
	}
	return main;
}

/* The deepest nesting of regions in @main that pb-fuse accepts: upstream
 * one-shot bufferization takes time exponential in the depth of nested
 * scf.if (0.14 s at 15, 3.3 s at 20, minutes at 25), and pb-import's
 * output nests one region (a linalg body) deep. */
#define MAX_REGION_DEPTH 16

/* Check that no operation in "main" lies in more than MAX_REGION_DEPTH
 * nested regions below main's body; report the operation holding the
 * first region too many through "ctx". */
static int check_depth(struct pb_ctx *ctx, MlirOperation main)
{
	MlirOperation op = pb_ir_find_too_deep(main, MAX_REGION_DEPTH + 1);
	if (mlirOperationIsNull(op))
		return PB_OK;
	op = mlirOperationGetParentOperation(op);
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	pb_error_at(ctx, mlirOperationGetLocation(op),
		    "'%.*s' nests regions too deeply: more than %d inside "
		    "@main", (int)s.length, s.data, MAX_REGION_DEPTH);
	return PB_ERR;
}

/* Bufferize "m" and lower it to affine loops with "main"'s results turned
 * into out-parameters named after them. */
static int lower(struct pb_ctx *ctx, MlirModule m, MlirOperation main,
		 const struct pb_fuse_opts *o)
{
	struct result_names rn = {0};
	int nin = pb_ir_func_num_args(main);
	int rc = record_results(ctx, main, &rn);
	if (rc == PB_OK)
		rc = check_depth(ctx, main);
	if (rc == PB_OK)
		rc = check_static(ctx, m);
	if (rc == PB_OK && !o->no_concat)
		rc = pb_fuse_concat_in_place(ctx, pb_ir_entry_block(main));
	pb_phase("pb-fuse", "checks, concat");
	if (rc == PB_OK) {
		protect_args(main, nin);
		tag_locs(pb_ir_entry_block(main));
		struct pb_ir_ops slices = {0};
		pb_ir_collect(main, "tensor.insert_slice", &slices);
		rc = pb_ir_run_pipeline(ctx, m, slices.n
						? pb_passes_bufferize
						: pb_passes_bufferize_no_slices);
		pb_ir_ops_free(&slices);
	}
	pb_phase("pb-fuse", "bufferize");
	if (rc == PB_OK)
		rc = fix_signature(ctx, main, nin, &rn);
	if (rc == PB_OK)
		rc = copies_to_linalg(ctx, m);
	if (rc == PB_OK)
		rc = pb_ir_run_pipeline(ctx, m, pb_passes_to_affine);
	pb_phase("pb-fuse", "to affine");
	if (rc == PB_OK) {
		int before = ctx->nerrors;
		mlirOperationWalk(mlirModuleGetOperation(m), check_no_tensor_cb,
				  ctx, MlirWalkPreOrder);
		if (ctx->nerrors != before)
			rc = PB_ERR;
	}
	free(rn.name);
	free(rn.dtype);
	return rc;
}

int pb_fuse_run(struct pb_ctx *ctx, MlirModule m, const struct pb_fuse_opts *o)
{
	static const struct pb_fuse_opts defaults;
	struct pb_fuse_plan plan = {0};
	if (!o)
		o = &defaults;
	if (pb_fuse_parse_kinds(ctx, o->fusion) < 0)
		return PB_ERR;
	if (pb_ir_get_stage(m) >= PB_STAGE_FUSE)
		return PB_OK;
	if (!has_funcs(m)) {
		pb_ir_set_stage(m, PB_STAGE_FUSE);
		return PB_OK;
	}
	MlirOperation main = find_main(ctx, m);
	if (mlirOperationIsNull(main))
		return PB_ERR;
	pb_phase("pb-fuse", NULL);
	int rc = lower(ctx, m, main, o);
	if (rc == PB_OK)
		rc = pb_fuse_nests(ctx, m, pb_ir_entry_block(main), o, &plan);
	if (rc != PB_OK) {
		pb_fuse_plan_free(&plan);
		return rc;
	}
	struct outliner out = {ctx, m, main, pb_ir_entry_block(main), {0}, NULL,
			       0, {0}, {0}};
	rc = outline_all(&out);
	pb_ir_ops_free(&out.ops);
	free(out.keep);
	pb_ptrmap_free(&out.index);
	pb_ptrmap_free(&out.funcs);
	pb_phase("pb-fuse", "outline");
	if (rc == PB_OK && !mlirOperationVerify(mlirModuleGetOperation(m))) {
		pb_error(ctx, "internal: outlining produced a module that does "
			      "not verify");
		rc = PB_ERR;
	}
	if (rc == PB_OK && o->report)
		rc = pb_fuse_write_report(ctx, m, o->report, &plan,
					  o->upstream    ? "upstream"
					  : o->no_fusion ? "none"
							 : "pb");
	pb_fuse_plan_free(&plan);
	if (rc == PB_OK)
		rc = pb_ir_run_pipeline(ctx, m, pb_passes_cleanup);
	pb_phase("pb-fuse", "verify, clean up");
	if (rc != PB_OK)
		return rc;
	add_deallocs(pb_ir_entry_block(main));
	mlirOperationWalk(mlirModuleGetOperation(m), untag_cb, NULL,
			  MlirWalkPreOrder);
	pb_ir_set_stage(m, PB_STAGE_FUSE);
	return PB_OK;
}

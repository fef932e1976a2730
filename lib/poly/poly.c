/* lib/poly: the top-level operations of one block lifted into isl
 * (poly.h). This file finds the statements and buffers and builds the
 * domains and access relations; sched.c the schedule and dependences,
 * access.c the subscripts, view.c the views.
 *
 * For a block
 *
 *	%t = memref.alloc()
 *	affine.for %i = 0 to 4 { affine.for %j = 0 to 8 { S0 body } }
 *	func.call @f(%t)
 *	return
 *
 * the statements are S0 (a NEST of depth 2) and S1 (OPAQUE), the buffers
 * the memref arguments B0.. first, then the roots allocated in the block
 * in order, then any other root met on the way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/internal.h"

/* Operations that are never statements although they may use memrefs. */
static const char *const skip_ops[] = {
	"memref.alloc",
	"memref.alloca",
	"memref.dealloc",
	"memref.get_global",
	"memref.dim",
	"memref.rank",
	"memref.extract_strided_metadata",
	"memref.extract_aligned_pointer_as_index",
	"func.return",
	"ub.poison",
	"affine.apply",
	NULL,
};

/* Is "op" one of skip_ops or a view? */
static int is_skipped(MlirOperation op)
{
	for (const char *const *p = skip_ops; *p; p++)
		if (pb_ir_op_is(op, *p))
			return 1;
	return pb_poly_is_view(op);
}

/* Does "op" have a memref operand? */
static int has_memref_operand(MlirOperation op)
{
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
		if (pb_poly_is_memref(mlirOperationGetOperand(op, i)))
			return 1;
	return 0;
}

/* Walk callback: stop at the first operation with a memref operand. */
static MlirWalkResult memref_cb(MlirOperation op, void *user)
{
	if (!has_memref_operand(op))
		return MlirWalkResultAdvance;
	*(int *)user = 1;
	return MlirWalkResultInterrupt;
}

/* Does "op" or an operation nested in it use a memref? */
static int touches_memref(MlirOperation op)
{
	int found = 0;
	mlirOperationWalk(op, memref_cb, &found, MlirWalkPreOrder);
	return found;
}

/* Is load/store "op" one of the accesses a NEST statement understands?
 * Sets *write and *mem (the memref operand). */
static int is_access(MlirOperation op, int *write, MlirValue *mem)
{
	int load = pb_ir_op_is(op, "affine.load") ||
		   pb_ir_op_is(op, "memref.load");
	int store = pb_ir_op_is(op, "affine.store") ||
		    pb_ir_op_is(op, "memref.store");
	int pos = store ? 1 : 0;
	if ((!load && !store) || mlirOperationGetNumOperands(op) <= pos)
		return 0;
	*write = store;
	*mem = mlirOperationGetOperand(op, pos);
	return pb_poly_is_memref(*mem);
}

/* The constant of the single-result, operand-free map attribute "name" of
 * "op" into *v; 0 when it has another form. */
static int const_bound(MlirOperation op, const char *name, int64_t *v)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return 0;
	MlirAffineMap m = mlirAffineMapAttrGetValue(a);
	if (mlirAffineMapGetNumResults(m) != 1 || mlirAffineMapGetNumInputs(m))
		return 0;
	MlirAffineExpr e = mlirAffineMapGetResult(m, 0);
	if (!mlirAffineExprIsAConstant(e))
		return 0;
	*v = mlirAffineConstantExprGetValue(e);
	return 1;
}

/* Is "op" an affine.for from constant 0 to a constant with step 1 and no
 * results? Its trip count goes to *n. */
static int simple_for(MlirOperation op, int64_t *n)
{
	int64_t lb;
	MlirAttribute st = pb_ir_attr(op, "step");
	return pb_ir_op_is(op, "affine.for") && !mlirOperationGetNumResults(op) &&
	       const_bound(op, "lowerBoundMap", &lb) && lb == 0 &&
	       const_bound(op, "upperBoundMap", n) && !mlirAttributeIsNull(st) &&
	       mlirAttributeIsAInteger(st) && mlirIntegerAttrGetValueInt(st) == 1;
}

/* The only operation of "b" before its terminator, or a null one. */
static MlirOperation only_op(MlirBlock b)
{
	MlirOperation first = mlirBlockGetFirstOperation(b);
	if (mlirOperationIsNull(first))
		return first;
	MlirOperation next = mlirOperationGetNextInBlock(first);
	if (mlirOperationIsNull(next) ||
	    !mlirOperationIsNull(mlirOperationGetNextInBlock(next)))
		return (MlirOperation){NULL};
	return first;
}

/* Can body "b" of a NEST hold the statement: no regions, and every use of
 * a memref a load or store (or a skipped operation)? */
static int simple_body(MlirBlock b)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int w;
		MlirValue mem;
		if (mlirOperationGetNumRegions(op))
			return 0;
		if (has_memref_operand(op) && !is_access(op, &w, &mem) &&
		    !is_skipped(op))
			return 0;
	}
	return 1;
}

/* Fill the loops of "st" if "op" is a perfect nest of simple loops with a
 * simple innermost body; returns 0 (nothing kept) otherwise. */
static int nest_of(struct pb_poly_stmt *st, MlirOperation op)
{
	int cap = 0;
	int64_t n;
	for (;;) {
		if (!simple_for(op, &n))
			goto not_nest;
		if (st->depth == cap) {
			cap = cap ? 2 * cap : 4;
			st->loops = realloc(st->loops, cap * sizeof(MlirOperation));
			st->extent = realloc(st->extent, cap * sizeof(int64_t));
			if (!st->loops || !st->extent)
				abort();
		}
		st->loops[st->depth] = op;
		st->extent[st->depth++] = n;
		st->body = pb_ir_entry_block(op);
		op = only_op(st->body);
		if (mlirOperationIsNull(op) || !pb_ir_op_is(op, "affine.for"))
			break;
	}
	if (simple_body(st->body))
		return 1;
not_nest:
	free(st->loops);
	free(st->extent);
	st->loops = NULL;
	st->extent = NULL;
	st->depth = 0;
	st->body = (MlirBlock){NULL};
	return 0;
}

/* The size in bytes of one element of type "t" (0 when unknown). */
static int elem_bytes(MlirType t)
{
	if (mlirTypeIsAInteger(t))
		return (int)(mlirIntegerTypeGetWidth(t) + 7) / 8;
	if (mlirTypeIsAFloat(t))
		return (int)(mlirFloatTypeGetWidth(t) + 7) / 8;
	if (mlirTypeIsAIndex(t))
		return 8;
	if (mlirTypeIsAComplex(t))
		return 2 * elem_bytes(mlirComplexTypeGetElementType(t));
	if (mlirTypeIsAVector(t) && mlirShapedTypeHasStaticShape(t)) {
		int64_t n = 1;
		for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
			n *= mlirShapedTypeGetDimSize(t, i);
		return (int)n * elem_bytes(mlirShapedTypeGetElementType(t));
	}
	return 0;
}

/* The buffer of root "root", added to "s" when new. */
static int buf_get(struct pb_poly_scop *s, MlirValue root)
{
	for (int i = 0; i < s->nbuf; i++)
		if (mlirValueEqual(s->buf[i].root, root))
			return i;
	s->buf = realloc(s->buf, (s->nbuf + 1) * sizeof(*s->buf));
	if (!s->buf)
		abort();
	struct pb_poly_buf *b = &s->buf[s->nbuf];
	MlirType t = mlirValueGetType(root);
	memset(b, 0, sizeof(*b));
	b->id = s->nbuf;
	b->root = root;
	b->is_arg = mlirValueIsABlockArgument(root);
	b->elem_bytes = elem_bytes(mlirShapedTypeGetElementType(t));
	if (mlirTypeIsAMemRef(t)) {
		b->rank = (int)mlirShapedTypeGetRank(t);
		b->shape = calloc(b->rank ? b->rank : 1, sizeof(*b->shape));
		for (int i = 0; i < b->rank; i++)
			b->shape[i] = mlirShapedTypeIsDynamicDim(t, i)
				? -1 : mlirShapedTypeGetDimSize(t, i);
	}
	return s->nbuf++;
}

/* Register the memref roots among the arguments of "block" and the
 * results of its operations, in order. */
static void bufs_in_order(struct pb_poly_scop *s, MlirBlock block)
{
	for (intptr_t i = 0; i < mlirBlockGetNumArguments(block); i++)
		if (pb_poly_is_memref(mlirBlockGetArgument(block, i)))
			buf_get(s, mlirBlockGetArgument(block, i));
	for (MlirOperation op = mlirBlockGetFirstOperation(block);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++) {
			MlirValue v = mlirOperationGetResult(op, i);
			if (pb_poly_is_memref(v) &&
			    mlirValueEqual(pb_poly_root(v), v))
				buf_get(s, v);
		}
}

/* "{ S<id>[i0, ..] -> B<b>[..] : 0 <= bk < shape_k }" restricted to the
 * domain of "st": every element of buffer "b", may-accessed. */
static __isl_give isl_map *whole(struct pb_poly_scop *s,
				 const struct pb_poly_stmt *st, int b)
{
	const struct pb_poly_buf *bf = &s->buf[b];
	struct pb_buf str = {0};
	char in[32], out[32];
	pb_buf_puts(&str, "{ S[");
	for (int k = 0; k < st->depth; k++)
		pb_buf_printf(&str, "%si%d", k ? ", " : "", k);
	pb_buf_puts(&str, "] -> B[");
	for (int k = 0; k < bf->rank; k++)
		pb_buf_printf(&str, "%sb%d", k ? ", " : "", k);
	pb_buf_puts(&str, "] : ");
	for (int k = 0; k < bf->rank; k++)
		if (bf->shape[k] >= 0)
			pb_buf_printf(&str, "0 <= b%d < %lld and ", k,
				      (long long)bf->shape[k]);
		else
			pb_buf_printf(&str, "b%d >= 0 and ", k);
	pb_buf_puts(&str, "1 = 1 }");
	snprintf(in, sizeof(in), "S%d", st->id);
	snprintf(out, sizeof(out), "B%d", b);
	isl_map *m = pb_poly_cache_map(s->cache, str.data, in, out);
	pb_buf_free(&str);
	return isl_map_intersect_domain(m, isl_set_copy(st->domain));
}

/* The domain "{ S<id>[i0, ..] : 0 <= ik < extent_k }" of "st". */
static __isl_give isl_set *domain_of(struct pb_poly_scop *s,
				     const struct pb_poly_stmt *st)
{
	struct pb_buf str = {0};
	char name[32];
	pb_buf_puts(&str, "{ S[");
	for (int k = 0; k < st->depth; k++)
		pb_buf_printf(&str, "%si%d", k ? ", " : "", k);
	pb_buf_puts(&str, "] : ");
	for (int k = 0; k < st->depth; k++)
		pb_buf_printf(&str, "0 <= i%d < %lld and ", k,
			      (long long)st->extent[k]);
	pb_buf_puts(&str, "1 = 1 }");
	snprintf(name, sizeof(name), "S%d", st->id);
	isl_set *d = pb_poly_cache_set(s->cache, str.data, name);
	pb_buf_free(&str);
	return d;
}

/* An empty union map in "ctx". */
static __isl_give isl_union_map *empty(isl_ctx *ctx)
{
	return isl_union_map_empty(isl_space_params_alloc(ctx, 0));
}

/* Add the relation of access "a" to the access unions of "st". */
static void add_rel(struct pb_poly_stmt *st, const struct pb_poly_access *a)
{
	isl_union_map *u = isl_union_map_from_map(isl_map_copy(a->rel));
	if (!a->write) {
		st->reads = isl_union_map_union(st->reads, u);
		return;
	}
	if (a->exact)
		st->must_writes = isl_union_map_union(st->must_writes,
						      isl_union_map_copy(u));
	st->may_writes = isl_union_map_union(st->may_writes, u);
}

/* The accesses of NEST "st" in its innermost body, in order. */
static void nest_accesses(struct pb_poly_scop *s, struct pb_poly_stmt *st)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(st->body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int write;
		MlirValue mem;
		if (!is_access(op, &write, &mem))
			continue;
		st->access = realloc(st->access,
				     (st->naccess + 1) * sizeof(*st->access));
		if (!st->access)
			abort();
		struct pb_poly_access *a = &st->access[st->naccess++];
		MlirValue root = pb_poly_root(mem);
		a->op = op;
		a->write = write;
		a->buf = buf_get(s, root);
		a->direct = mlirValueEqual(root, mem);
		a->rel = pb_poly_access_exact(st, &s->buf[a->buf], op, mem);
		a->exact = a->rel != NULL;
		if (!a->rel)
			a->rel = whole(s, st, a->buf);
		add_rel(st, a);
	}
}

/* Data for opaque_cb: the operation and the buffers found so far. */
struct opaque_data {
	struct pb_poly_scop *s;
	struct pb_poly_stmt *st;
	int *seen; /* [nbuf at the start], grown as buffers are added */
	int nseen;
};

/* Walk callback for OPAQUE statements: make every memref operand defined
 * outside the statement's operation a read and a may-write of its root. */
static MlirWalkResult opaque_cb(MlirOperation op, void *user)
{
	struct opaque_data *d = user;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		if (!pb_poly_is_memref(v) ||
		    pb_ir_is_inside(pb_ir_value_parent(v), d->st->op))
			continue;
		int b = buf_get(d->s, pb_poly_root(v));
		if (b >= d->nseen) {
			d->seen = realloc(d->seen, (b + 1) * sizeof(*d->seen));
			if (!d->seen)
				abort();
			memset(d->seen + d->nseen, 0,
			       (b + 1 - d->nseen) * sizeof(int));
			d->nseen = b + 1;
		}
		if (d->seen[b]++)
			continue;
		isl_map *m = whole(d->s, d->st, b);
		d->st->reads = isl_union_map_union(d->st->reads,
			isl_union_map_from_map(isl_map_copy(m)));
		d->st->may_writes = isl_union_map_union(d->st->may_writes,
			isl_union_map_from_map(m));
	}
	return MlirWalkResultAdvance;
}

/* Build statement "st" of top-level operation "op": its kind, loops,
 * domain and accesses. */
static void stmt_build(struct pb_poly_scop *s, struct pb_poly_stmt *st,
		       MlirOperation op)
{
	st->op = op;
	st->kind = nest_of(st, op) ? PB_POLY_NEST : PB_POLY_OPAQUE;
	st->domain = domain_of(s, st);
	st->reads = empty(s->ctx);
	st->must_writes = empty(s->ctx);
	st->may_writes = empty(s->ctx);
	if (st->kind == PB_POLY_NEST) {
		nest_accesses(s, st);
		return;
	}
	struct opaque_data d = {s, st, NULL, 0};
	mlirOperationWalk(op, opaque_cb, &d, MlirWalkPreOrder);
	free(d.seen);
}

/* Gather the statement sets and relations of "s" into its unions. */
static void unions(struct pb_poly_scop *s)
{
	s->domain = isl_union_set_empty(isl_space_params_alloc(s->ctx, 0));
	s->reads = empty(s->ctx);
	s->must_writes = empty(s->ctx);
	s->may_writes = empty(s->ctx);
	for (int i = 0; i < s->nstmt; i++) {
		struct pb_poly_stmt *st = &s->stmt[i];
		s->domain = isl_union_set_union(s->domain,
			isl_union_set_from_set(isl_set_copy(st->domain)));
		s->reads = isl_union_map_union(s->reads,
					       isl_union_map_copy(st->reads));
		s->must_writes = isl_union_map_union(s->must_writes,
			isl_union_map_copy(st->must_writes));
		s->may_writes = isl_union_map_union(s->may_writes,
			isl_union_map_copy(st->may_writes));
	}
}

/* Did every isl object of "s" get built? */
static int complete(const struct pb_poly_scop *s)
{
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		if (!st->domain || !st->reads || !st->must_writes ||
		    !st->may_writes)
			return 0;
		for (int j = 0; j < st->naccess; j++)
			if (!st->access[j].rel)
				return 0;
	}
	return s->domain && s->reads && s->must_writes && s->may_writes &&
	       s->dep_flow && s->dep_mem &&
	       s->no_source;
}

/* pb_poly_extract, reusing what "old" (with "dirty") still knows. */
static struct pb_poly_scop *extract(struct pb_ctx *ctx, isl_ctx *ictx,
				    MlirBlock block,
				    const struct pb_poly_scop *old)
{
	if (!ictx || mlirBlockIsNull(block)) {
		if (ctx)
			pb_error(ctx, "poly: no isl context or block");
		return NULL;
	}
	struct pb_poly_scop *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->ctx = ictx;
	s->block = block;
	s->cache = old ? old->cache : pb_poly_cache_new(ictx);
	bufs_in_order(s, block);
	for (MlirOperation op = mlirBlockGetFirstOperation(block);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (is_skipped(op) || !touches_memref(op))
			continue;
		s->stmt = realloc(s->stmt, (s->nstmt + 1) * sizeof(*s->stmt));
		if (!s->stmt)
			abort();
		struct pb_poly_stmt *st = &s->stmt[s->nstmt];
		memset(st, 0, sizeof(*st));
		st->id = s->nstmt++;
		stmt_build(s, st, op);
	}
	unions(s);
	pb_poly_deps_build(s, old);
	if (!complete(s)) {
		if (ctx)
			pb_error(ctx, "poly: isl failed to build the polyhedral "
				      "model of a block");
		if (old)
			s->cache = NULL; /* still old's */
		pb_poly_scop_free(s);
		return NULL;
	}
	return s;
}

int pb_poly_scop_schedule(struct pb_poly_scop *s)
{
	if (!s->schedule)
		pb_poly_sched_build(s);
	return s->schedule && s->schedule_map ? 0 : -1;
}

struct pb_poly_scop *pb_poly_extract(struct pb_ctx *ctx, isl_ctx *ictx,
				     MlirBlock block)
{
	return extract(ctx, ictx, block, NULL);
}

struct pb_poly_scop *pb_poly_extract_update(struct pb_ctx *ctx,
					    __isl_take struct pb_poly_scop *old)
{
	if (!old)
		return NULL;
	struct pb_poly_scop *s = extract(ctx, old->ctx, old->block, old);
	if (s)
		old->cache = NULL; /* handed on */
	pb_poly_scop_free(old);
	return s;
}

void pb_poly_scop_free(struct pb_poly_scop *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nstmt; i++) {
		struct pb_poly_stmt *st = &s->stmt[i];
		for (int j = 0; j < st->naccess; j++)
			isl_map_free(st->access[j].rel);
		free(st->access);
		free(st->loops);
		free(st->extent);
		isl_set_free(st->domain);
		isl_union_map_free(st->reads);
		isl_union_map_free(st->must_writes);
		isl_union_map_free(st->may_writes);
		pb_poly_deps_free(st);
	}
	free(s->stmt);
	for (int i = 0; i < s->nbuf; i++) {
		free(s->buf[i].shape);
		free(s->buf[i].acc);
		for (int k = 0; k < 3; k++)
			isl_union_map_free(s->buf[i].bacc[k]);
		isl_union_map_free(s->buf[i].no_source);
		isl_union_map_free(s->buf[i].flow);
		isl_union_map_free(s->buf[i].mem);
	}
	free(s->buf);
	isl_union_set_free(s->domain);
	isl_union_map_free(s->reads);
	isl_union_map_free(s->must_writes);
	isl_union_map_free(s->may_writes);
	isl_schedule_free(s->schedule);
	isl_union_map_free(s->schedule_map);
	isl_union_map_free(s->dep_flow);
	isl_union_map_free(s->dep_mem);
	isl_union_map_free(s->no_source);
	pb_poly_cache_free(s->cache);
	free(s);
}

int pb_poly_stmt_of(const struct pb_poly_scop *s, MlirOperation op)
{
	for (int i = 0; i < s->nstmt; i++)
		if (mlirOperationEqual(s->stmt[i].op, op))
			return i;
	return -1;
}

int pb_poly_buf_of(const struct pb_poly_scop *s, MlirValue v)
{
	MlirValue root = pb_poly_root(v);
	for (int i = 0; i < s->nbuf; i++)
		if (mlirValueEqual(s->buf[i].root, root))
			return i;
	return -1;
}

/* Applying fusion decisions to the IR: merging the nests of each group
 * under their shared loops, and contracting the buffers that became local
 * (the rules are in fusion.c's file comment). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

/* The body block of loop "l". */
static MlirBlock loop_body(MlirOperation l)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(l, 0));
}

MlirOperation pb_fuse_node_op(const struct pb_fusion *f, int i)
{
	const struct pb_fuse_node *n = &f->node[i];
	return f->s->stmt[n->creator].loops[n->level];
}

/* Move the nest of "root" to just before statement "n"'s nest, and merge
 * n's first "t" loops into the loops "shared" of root's nest: n's loop t
 * (or its body when t is its depth) goes to the end of shared[t - 1]'s
 * body with the induction variables remapped; n's outer loops go. */
static void merge(struct pb_fusion *f, MlirOperation root, int n,
		  const MlirOperation *shared, int t)
{
	const struct pb_poly_stmt *s = &f->s->stmt[n];
	MlirBlock dst = loop_body(shared[t - 1]);
	MlirOperation term = mlirBlockGetTerminator(dst);
	struct pb_ir_map map = {0};
	struct pb_ir_ops moved = {0};

	mlirOperationMoveBefore(root, s->loops[0]);
	for (int k = 0; k < t; k++)
		pb_ir_map_add(&map, mlirBlockGetArgument(loop_body(s->loops[k]), 0),
			      mlirBlockGetArgument(loop_body(shared[k]), 0));
	if (t < s->depth) {
		pb_ir_ops_push(&moved, s->loops[t]);
	} else {
		MlirBlock src = loop_body(s->loops[s->depth - 1]);
		MlirOperation st = mlirBlockGetTerminator(src);
		for (MlirOperation op = mlirBlockGetFirstOperation(src);
		     !mlirOperationEqual(op, st);
		     op = mlirOperationGetNextInBlock(op))
			pb_ir_ops_push(&moved, op);
	}
	for (int i = 0; i < moved.n; i++) {
		mlirOperationMoveBefore(moved.v[i], term);
		pb_ir_remap_operands(moved.v[i], &map);
	}
	MlirOperation shell = s->loops[0];
	mlirOperationRemoveFromParent(shell);
	mlirOperationDestroy(shell);
	pb_ir_map_free(&map);
	pb_ir_ops_free(&moved);
}

void pb_fuse_apply(struct pb_fusion *f)
{
	MlirOperation *shared = malloc(sizeof(*shared) * (f->depth + 1));
	if (!shared)
		abort();
	for (int gi = 0; gi < f->ng; gi++) {
		const struct pb_fuse_group *g = &f->g[gi];
		MlirOperation root = f->s->stmt[g->stmt[0]].op;
		for (int k = 1; k < g->n; k++) {
			int n = g->stmt[k], t = 0;
			const int *path = &f->path[n * f->depth];
			while (t < f->s->stmt[n].depth &&
			       f->node[path[t]].creator != n) {
				shared[t] = pb_fuse_node_op(f, path[t]);
				t++;
			}
			merge(f, root, n, shared, t);
		}
	}
	free(shared);
}

/* The position of the result of access "a" indexed by exactly the
 * induction variable "iv", or -1. */
static int dim_indexed_by(const struct pb_poly_access *a, MlirValue iv)
{
	MlirAttribute ma = pb_ir_attr(a->op, "map");
	if (mlirAttributeIsNull(ma) || !mlirAttributeIsAAffineMap(ma))
		return -1;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	int first = a->write ? 2 : 1;
	for (intptr_t k = 0; k < mlirAffineMapGetNumResults(map); k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		if (!mlirAffineExprIsADim(e))
			continue;
		intptr_t d = mlirAffineDimExprGetPosition(e);
		if (first + d < mlirOperationGetNumOperands(a->op) &&
		    mlirValueEqual(mlirOperationGetOperand(a->op, first + d), iv))
			return (int)k;
	}
	return -1;
}

/* Is access "k" of "st" its first to that buffer? */
static int first_access(const struct pb_poly_stmt *st, int k)
{
	for (int j = 0; j < k; j++)
		if (st->access[j].buf == st->access[k].buf)
			return 0;
	return 1;
}

void pb_fuse_users_build(struct pb_fuse_users *u,
			 const struct pb_poly_scop *s)
{
	u->start = calloc(s->nbuf + 2, sizeof(*u->start));
	if (!u->start)
		abort();
	/* each buffer's statements counted into start[b + 2] (pass 0),
	 * summed, then put at start[b + 1] on (pass 1), which ends at the
	 * start of b + 1 */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->nstmt; i++)
			for (int k = 0; k < s->stmt[i].naccess; k++) {
				int b = s->stmt[i].access[k].buf;
				if (!first_access(&s->stmt[i], k))
					continue;
				if (pass)
					u->stmt[u->start[b + 1]++] = i;
				else
					u->start[b + 2]++;
			}
		if (pass)
			break;
		for (int b = 0; b < s->nbuf; b++)
			u->start[b + 2] += u->start[b + 1];
		u->stmt = malloc(sizeof(*u->stmt) *
				 (u->start[s->nbuf + 1] + 1));
		if (!u->stmt)
			abort();
	}
}

void pb_fuse_users_free(struct pb_fuse_users *u)
{
	free(u->start);
	free(u->stmt);
	u->start = u->stmt = NULL;
}

/* The accesses to buffer "b" in "f": appended to "acc" (pointers), their
 * statements to "stm"; returns the count. */
static int accesses_of(struct pb_fusion *f, int b, struct pb_poly_access **acc,
		       int *stm)
{
	int n = 0;
	for (int u = f->users.start[b]; u < f->users.start[b + 1]; u++) {
		int i = f->users.stmt[u];
		for (int k = 0; k < f->s->stmt[i].naccess; k++)
			if (f->s->stmt[i].access[k].buf == b) {
				acc[n] = &f->s->stmt[i].access[k];
				stm[n++] = i;
			}
	}
	return n;
}

/* Does some read of buffer "b" see a value from before the block? */
static int reads_live_in(struct pb_fusion *f, int b)
{
	return isl_union_map_is_empty(f->s->buf[b].no_source) != isl_bool_true;
}

void pb_fuse_splice_body(MlirOperation l, MlirValue iv, MlirOperation before)
{
	MlirBlock from = loop_body(l);
	MlirOperation term = mlirBlockGetTerminator(from);
	mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(from, 0), iv);
	for (MlirOperation op = mlirBlockGetFirstOperation(from);
	     !mlirOperationEqual(op, term);) {
		MlirOperation next = mlirOperationGetNextInBlock(op);
		mlirOperationMoveBefore(op, before);
		op = next;
	}
}

MlirOperation pb_fuse_loop(MlirOperation at, int64_t extent, int par,
			   MlirLocation loc, MlirValue *iv)
{
	char text[200];
	if (par)
		snprintf(text, sizeof(text),
			 "func.func @f() {\n  affine.parallel (%%i) = (0) to "
			 "(%lld) {\n  }\n  return\n}\n",
			 (long long)extent);
	else
		snprintf(text, sizeof(text),
			 "func.func @f() {\n  affine.for %%i = 0 to %lld {\n"
			 "  }\n  return\n}\n",
			 (long long)extent);
	MlirOperation l = pb_ir_clone_from_text(
		mlirOperationGetContext(at), text,
		par ? "affine.parallel" : "affine.for", 0, NULL);
	if (mlirOperationIsNull(l))
		abort();
	mlirOperationSetLocation(l, loc);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(at), at, l);
	MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(l, 0));
	*iv = mlirBlockGetArgument(b, 0);
	/* what is built inside gets the location of the terminator */
	mlirOperationSetLocation(mlirBlockGetTerminator(b), loc);
	return mlirBlockGetTerminator(b);
}

int pb_fuse_only_loads(MlirOperation op, MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation w = mlirOpOperandGetOwner(u);
		if (pb_ir_is_inside(w, op)) {
			if ((!pb_ir_op_is(w, "affine.load") &&
			     !pb_ir_op_is(w, "memref.load")) ||
			    mlirOpOperandGetOperandNumber(u))
				return 0;
			continue;
		}
		/* a view of "v" outside "op" */
		for (intptr_t r = 0; r < mlirOperationGetNumResults(w); r++)
			if (mlirTypeIsAMemRef(mlirValueGetType(
				    mlirOperationGetResult(w, r))) &&
			    !pb_fuse_only_loads(op, mlirOperationGetResult(w, r)))
				return 0;
	}
	return 1;
}

int pb_fuse_unwritten(const struct pb_poly_scop *s, int from, int to, int b)
{
	for (int i = from; i <= to; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		if (st->kind != PB_POLY_NEST) {
			if (!pb_fuse_only_loads(st->op, s->buf[b].root))
				return 0;
			continue;
		}
		for (int k = 0; k < st->naccess; k++)
			if (st->access[k].write && st->access[k].buf == b)
				return 0;
	}
	return 1;
}

void pb_fuse_foreach_access(const struct pb_poly_scop *s, int from, int to,
			    int b, void (*fn)(MlirOperation op, void *user),
			    void *user)
{
	for (int i = from; i <= to; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		for (int k = 0; k < st->naccess; k++)
			if (st->access[k].buf == b)
				fn(st->access[k].op, user);
	}
}

/* Index the buffers of "s" by root into "roots" (the first of a root). */
static void index_roots(const struct pb_poly_scop *s, struct pb_ptrmap *roots)
{
	for (int i = s->nbuf - 1; i >= 0; i--)
		pb_ptrmap_put(roots, s->buf[i].root.ptr, i);
}

/* Does a statement marked in "dirty" access buffer "b" ("u": the users
 * of the buffers)? With "mark", mark every statement that accesses "b"
 * instead. */
static int touches(const struct pb_fuse_users *u, int b, char *dirty,
		   int mark)
{
	for (int k = u->start[b]; k < u->start[b + 1]; k++) {
		if (mark)
			dirty[u->stmt[k]] = 1;
		else if (dirty[u->stmt[k]])
			return 1;
	}
	return 0;
}

int pb_fuse_fold_each(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      struct pb_poly_scop **s, pb_fuse_fold_fn fold)
{
	int n = 0, npending = (*s)->nbuf;
	MlirValue *pending = malloc(sizeof(*pending) * (npending + 1));
	if (!pending)
		abort();
	for (int b = 0; b < npending; b++)
		pending[b] = (*s)->buf[b].root;
	/* a fold erases and rewrites the statements that access its buffer:
	 * they are dirty, and a buffer that a dirty statement accesses waits
	 * for the next round, on a new extraction; the roots find the
	 * buffers there (only compared: a folded one's operation is gone) */
	while (npending) {
		int nnext = 0, folded = 0;
		char *dirty = calloc((*s)->nstmt + 1, 1);
		struct pb_fuse_users u;
		struct pb_ptrmap roots = {0};
		if (!dirty)
			abort();
		pb_fuse_users_build(&u, *s);
		index_roots(*s, &roots);
		for (int i = 0; i < npending; i++) {
			int b = pb_ptrmap_get(&roots, pending[i].ptr);
			if (b < 0)
				continue;
			if (touches(&u, b, dirty, 0))
				pending[nnext++] = pending[i];
			else if (fold(ctx, o, *s, b)) {
				folded++;
				touches(&u, b, dirty, 1);
			}
		}
		pb_fuse_users_free(&u);
		pb_ptrmap_free(&roots);
		free(dirty);
		if (!folded)
			break;
		n += folded;
		npending = nnext;
		/* only the buffers whose accesses changed are asked again */
		*s = pb_poly_extract_update(ctx, *s);
		if (!*s) {
			n = -1;
			break;
		}
	}
	free(pending);
	return n;
}

int pb_fuse_num_uses(MlirValue v)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		n++;
	return n;
}

/* Rewrite access "a" to use "buf" with the results "drop" (a mask over
 * the old map's results) removed from its map. */
static void retarget(const struct pb_poly_access *a, MlirValue buf,
		     const char *drop)
{
	MlirAffineMap map =
		mlirAffineMapAttrGetValue(pb_ir_attr(a->op, "map"));
	intptr_t n = mlirAffineMapGetNumResults(map), m = 0;
	MlirAffineExpr *e = malloc(sizeof(*e) * (n ? n : 1));
	if (!e)
		abort();
	for (intptr_t k = 0; k < n; k++)
		if (!drop[k])
			e[m++] = mlirAffineMapGetResult(map, k);
	MlirAffineMap nm = mlirAffineMapGet(
		mlirAffineMapGetContext(map), mlirAffineMapGetNumDims(map),
		mlirAffineMapGetNumSymbols(map), m, e);
	free(e);
	mlirOperationSetOperand(a->op, a->write ? 1 : 0, buf);
	pb_ir_set_access_map(a->op, a->write, nm);
}

int64_t pb_fuse_contract(struct pb_fusion *f, int b, int *group_out)
{
	const struct pb_poly_buf *buf = &f->s->buf[b];
	int total = 0;
	if (!f->users.start)
		pb_fuse_users_build(&f->users, f->s);
	for (int u = f->users.start[b]; u < f->users.start[b + 1]; u++)
		total += f->s->stmt[f->users.stmt[u]].naccess;
	struct pb_poly_access **acc = malloc(sizeof(*acc) * (total + 1));
	int *stm = malloc(sizeof(*stm) * (total + 1));
	char *drop = calloc(buf->rank + 1, 1);
	int64_t bytes = -1;
	if (!acc || !stm || !drop)
		abort();
	int n = accesses_of(f, b, acc, stm);
	MlirOperation def = pb_ir_value_parent(buf->root);
	if (n == 0 || buf->is_arg || !pb_ir_op_is(def, "memref.alloc") ||
	    pb_fuse_num_uses(buf->root) != n || reads_live_in(f, b))
		goto out;
	int g = f->group[stm[0]];
	for (int i = 0; i < n; i++)
		if (!acc[i]->direct || !acc[i]->exact ||
		    f->group[stm[i]] != g ||
		    f->s->stmt[stm[i]].kind != PB_POLY_NEST)
			goto out;
	/* the loops shared by every accessing statement, each indexing one
	 * dimension of the buffer the same way in every access */
	int e = 0;
	for (;; e++) {
		int l = -1, k = -1, ok = 1;
		for (int i = 0; i < n && ok; i++) {
			const int *path = &f->path[stm[i] * f->depth];
			if (f->s->stmt[stm[i]].depth <= e) {
				ok = 0;
				break;
			}
			if (l < 0)
				l = path[e];
			ok = l == path[e];
			int ki = ok ? dim_indexed_by(
					      acc[i],
					      mlirBlockGetArgument(
						      loop_body(pb_fuse_node_op(f, l)),
						      0))
				    : -1;
			if (i == 0)
				k = ki;
			ok = ok && ki >= 0 && ki == k && !drop[k];
		}
		if (!ok)
			break;
		drop[k] = 1;
	}
	if (e == 0)
		goto out;
	bytes = buf->elem_bytes;
	int rank = 0;
	int64_t *shape = malloc(sizeof(*shape) * (buf->rank + 1));
	if (!shape)
		abort();
	for (int k = 0; k < buf->rank; k++)
		if (!drop[k]) {
			shape[rank++] = buf->shape[k];
			bytes *= buf->shape[k];
		}
	if (bytes > f->max_local) {
		if (f->o->remarks)
			pb_remark_at(f->ctx, mlirOperationGetLocation(def),
				     "buffer not contracted: %lld bytes per "
				     "iteration exceed --max-local-bytes=%ld",
				     (long long)bytes, f->max_local);
		free(shape);
		bytes = -1;
		goto out;
	}
	/* a memref.alloca at the start of the innermost shared loop */
	MlirType et = mlirShapedTypeGetElementType(mlirValueGetType(buf->root));
	MlirType t = mlirMemRefTypeContiguousGet(et, rank, shape,
						 mlirAttributeGetNull());
	free(shape);
	MlirOperation inner = pb_fuse_node_op(f, f->path[stm[0] * f->depth + e - 1]);
	MlirOperationState st = mlirOperationStateGet(
		pb_str("memref.alloca"), mlirOperationGetLocation(def));
	MlirContext mctx = mlirOperationGetContext(def);
	int32_t seg[2] = {0, 0};
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("operandSegmentSizes")),
		mlirDenseI32ArrayGet(mctx, 2, seg));
	mlirOperationStateAddResults(&st, 1, &t);
	mlirOperationStateAddAttributes(&st, 1, &na);
	MlirOperation al = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperation(loop_body(inner), 0, al);
	for (int i = 0; i < n; i++)
		retarget(acc[i], mlirOperationGetResult(al, 0), drop);
	if (pb_fuse_num_uses(buf->root) == 0) {
		mlirOperationRemoveFromParent(def);
		mlirOperationDestroy(def);
	}
	*group_out = g;
out:
	free(acc);
	free(stm);
	free(drop);
	return bytes;
}


/* Replace the affine.for "l" (from 0 to a constant, step 1) by an
 * affine.parallel over the same range holding the same body; returns it
 * ("l" itself if that fails). */
static MlirOperation to_parallel(MlirOperation l, int64_t extent)
{
	char text[160];
	snprintf(text, sizeof(text),
		 "func.func @f() {\n  affine.parallel (%%i) = (0) to (%lld) {\n"
		 "  }\n  return\n}\n",
		 (long long)extent);
	MlirOperation par = pb_ir_clone_from_text(mlirOperationGetContext(l),
						  text, "affine.parallel", 0, NULL);
	if (mlirOperationIsNull(par))
		return l;
	mlirOperationSetLocation(par, mlirOperationGetLocation(l));
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(l), l, par);
	MlirBlock to = loop_body(par);
	pb_fuse_splice_body(l, mlirBlockGetArgument(to, 0),
			    mlirBlockGetTerminator(to));
	mlirOperationDestroy(l);
	return par;
}

void pb_fuse_parallelize(struct pb_fusion *f, int gi, const int *chain, int n)
{
	/* innermost first: each loop's body moves into its replacement */
	MlirOperation par = (MlirOperation){NULL};
	for (int i = n - 1; i >= 0; i--)
		par = to_parallel(pb_fuse_node_op(f, chain[i]),
				  f->node[chain[i]].extent);
	if (n > 0)
		f->s->stmt[f->g[gi].stmt[0]].op = par;
}

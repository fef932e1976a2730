/* Moving reduction loops inward (docs/pb-fuse.md, "Loop order").
 *
 * Nests are aligned by loop position, so a reduction whose reduced loop
 * is not innermost (softmax over axis 0 or 1 of a 3-d tensor: loops
 * r, i, j with r reduced) cannot share its parallel loops with the nests
 * around it. When a nest's dependences on itself have non-negative
 * distances in every loop (its band is permutable, checked with isl),
 * the loops that carry none of them move outward in their order and the
 * others inward: r, i, j becomes i, j, r. Loop bounds are constants, so a
 * permutation only exchanges trip counts and counters. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"

#include "fuse/internal.h"

/* The self-dependences of statement "i" of "s" (a map S_i -> S_i). */
static __isl_give isl_map *self_deps(const struct pb_poly_scop *s, int i)
{
	return pb_poly_deps_between(s, PB_POLY_DEP_MEM, i, i);
}

/* Is every distance of "d" non-negative in every dimension? */
static int permutable(__isl_keep isl_map *d)
{
	isl_set *delta = isl_map_deltas(isl_map_copy(d));
	isl_set *pos = isl_set_universe(isl_set_get_space(delta));
	for (int k = 0; k < isl_set_dim(pos, isl_dim_set); k++)
		pos = isl_set_lower_bound_si(pos, isl_dim_set, k, 0);
	isl_bool ok = isl_set_is_subset(delta, pos);
	isl_set_free(delta);
	isl_set_free(pos);
	return ok == isl_bool_true;
}

/* Does some distance of "d" differ from 0 in dimension "k"? */
static int carries(__isl_keep isl_map *d, int k)
{
	isl_map *eq = isl_map_equate(isl_map_universe(isl_map_get_space(d)),
				     isl_dim_in, k, isl_dim_out, k);
	isl_bool sub = isl_map_is_subset(d, eq);
	isl_map_free(eq);
	return sub != isl_bool_true;
}

/* Give the loops of statement "st" the trip counts and counters of the
 * loops "perm" (perm[p]: the old position of the loop now at p). */
static void apply(const struct pb_poly_stmt *st, const int *perm)
{
	int n = st->depth;
	MlirValue *iv = malloc(sizeof(*iv) * n);
	struct pb_ir_ops *owners = calloc(n, sizeof(*owners));
	int **pos = calloc(n, sizeof(*pos));
	if (!iv || !owners || !pos)
		abort();
	for (int k = 0; k < n; k++)
		iv[k] = mlirBlockGetArgument(
			mlirRegionGetFirstBlock(
				mlirOperationGetRegion(st->loops[k], 0)),
			0);
	/* record every use first: rewriting them changes the use lists */
	for (int k = 0; k < n; k++) {
		int cnt = 0;
		for (MlirOpOperand u = mlirValueGetFirstUse(iv[k]);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			cnt++;
		pos[k] = malloc(sizeof(int) * (cnt + 1));
		if (!pos[k])
			abort();
		cnt = 0;
		for (MlirOpOperand u = mlirValueGetFirstUse(iv[k]);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
			pb_ir_ops_push(&owners[k], mlirOpOperandGetOwner(u));
			pos[k][cnt++] = mlirOpOperandGetOperandNumber(u);
		}
	}
	for (int p = 0; p < n; p++) {
		int old = perm[p];
		MlirContext mctx = mlirOperationGetContext(st->loops[p]);
		pb_ir_set_attr(st->loops[p], "upperBoundMap",
			       mlirAffineMapAttrGet(mlirAffineMapConstantGet(
				       mctx, st->extent[old])));
		for (int i = 0; i < owners[old].n; i++)
			mlirOperationSetOperand(owners[old].v[i], pos[old][i],
						iv[p]);
	}
	for (int k = 0; k < n; k++) {
		pb_ir_ops_free(&owners[k]);
		free(pos[k]);
	}
	free(owners);
	free(pos);
	free(iv);
}

/* Set perm[0..n) to the order that puts the loops "red" marks after the
 * others; 1 when it is not the identity. */
static int inward(int n, const char *red, int *perm)
{
	int np = 0, moved = 0;
	for (int k = 0; k < n; k++)
		if (!red[k])
			perm[np++] = k;
	for (int k = 0; k < n; k++)
		if (red[k])
			perm[np++] = k;
	for (int k = 0; k < n; k++)
		moved |= perm[k] != k;
	return moved;
}

int pb_fuse_reductions_inward(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			      const struct pb_poly_scop *s)
{
	int done = 0, last = -1, lperm[64];
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		int n = st->depth, perm[64], moved = 0;
		if (st->kind != PB_POLY_NEST || n < 2 || n > 64)
			continue;
		isl_map *d = self_deps(s, i);
		if (!d || !permutable(d)) {
			isl_map_free(d);
			continue;
		}
		char red[64];
		for (int k = 0; k < n; k++)
			red[k] = carries(d, k);
		isl_map_free(d);
		moved = inward(n, red, perm);
		/* a fully parallel nest of the same shape as the nest just
		 * reordered follows it (softmax's exp after its max) */
		if (!moved && last >= 0 && s->stmt[last].depth == n &&
		    !memcmp(s->stmt[last].extent, st->extent,
			    sizeof(*st->extent) * n) &&
		    !memchr(red, 1, n)) {
			memcpy(perm, lperm, sizeof(*perm) * n);
			moved = 1;
		}
		last = -1;
		if (!moved)
			continue;
		if (o->remarks)
			pb_remark_at(ctx, mlirOperationGetLocation(st->op),
				     "loops reordered: reduction loops inward "
				     "(the nest is permutable)");
		apply(st, perm);
		memcpy(lperm, perm, sizeof(*perm) * n);
		last = i;
		done++;
	}
	return done;
}

/* The one nest of an attention chain with FlashAttention's online softmax
 * (attention.c's file comment): loops, private buffers and the clones of
 * the chain's operations, built with the C API; also the queries of the
 * chain's statements that attention.c's matcher shares (attention.c calls
 * this file, never the other way). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/attention.h"
#include "ir/contract.h"

#define make pb_fuse_build

/* The counter of loop "k" of "st". */
MlirValue pb_attn_iv(const struct pb_poly_stmt *st, int k)
{
	MlirRegion r = mlirOperationGetRegion(st->loops[k], 0);
	return mlirBlockGetArgument(mlirRegionGetFirstBlock(r), 0);
}

/* The operation defining "v" when it is a result, else null. */
MlirOperation pb_attn_def(MlirValue v)
{
	return mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
				       : (MlirOperation){NULL};
}

/* The access of "st" whose load gives "v", or -1. */
int pb_attn_load_of(const struct pb_poly_stmt *st, MlirValue v)
{
	MlirOperation d = pb_attn_def(v);
	for (int k = 0; k < st->naccess; k++)
		if (!st->access[k].write && !mlirOperationIsNull(d) &&
		    mlirOperationEqual(st->access[k].op, d))
			return k;
	return -1;
}

/* Is "v" a float constant? Its value in *c. */
int pb_attn_float_constant(MlirValue v, double *c)
{
	MlirOperation d = pb_attn_def(v);
	MlirAttribute a = mlirOperationIsNull(d) ? (MlirAttribute){NULL}
						 : pb_ir_attr(d, "value");
	if (!pb_ir_op_is(d, "arith.constant") || mlirAttributeIsNull(a) ||
	    !mlirAttributeIsAFloat(a))
		return 0;
	*c = mlirFloatAttrGetValueDouble(a);
	return 1;
}

/* The operation of the body of "st" defining "v" when it is "name". */
static MlirOperation body_def(const struct pb_poly_stmt *st, MlirValue v,
			      const char *name)
{
	MlirOperation d = pb_attn_def(v);
	return !mlirOperationIsNull(d) && pb_ir_op_is(d, name) &&
			       pb_ir_is_inside(d, st->op)
		       ? d
		       : (MlirOperation){NULL};
}

int pb_attn_factor(const struct pb_poly_stmt *st, MlirValue v,
		   struct pb_attn_factor *f)
{
	MlirOperation d;
	f->ext = f->scale = (MlirOperation){NULL};
	f->nops = 0;
	f->value = 1;
	if (!mlirOperationIsNull(d = body_def(st, v, "arith.extf"))) {
		f->ext = d;
		v = mlirOperationGetOperand(d, 0);
		f->nops++;
	}
	/* ([truncf] (x * c | c * x | x / c) [extf]) */
	MlirValue below = v;
	int trunc = !mlirOperationIsNull(d = body_def(st, v, "arith.truncf"));
	if (trunc)
		below = mlirOperationGetOperand(d, 0);
	int mul = !mlirOperationIsNull(d = body_def(st, below, "arith.mulf"));
	if (mul || !mlirOperationIsNull(d = body_def(st, below, "arith.divf"))) {
		for (int i = 0; i < 2 - !mul; i++) {
			double c;
			if (!pb_attn_float_constant(mlirOperationGetOperand(
							    d, 1 - i),
						    &c) ||
			    c == 0 || !isfinite(c))
				continue;
			f->scale = d;
			f->value = mul ? c : 1 / c;
			v = mlirOperationGetOperand(d, i);
			f->nops += 1 + trunc;
			f->ext = body_def(st, v, "arith.extf");
			if (!mlirOperationIsNull(f->ext)) {
				v = mlirOperationGetOperand(f->ext, 0);
				f->nops++;
			}
			break;
		}
	}
	f->k = pb_attn_load_of(st, v);
	return f->k;
}

int pb_attn_factor_of(const struct pb_poly_stmt *st, MlirValue v,
		      MlirOperation *ext)
{
	struct pb_attn_factor f;
	int k = pb_attn_factor(st, v, &f);
	*ext = f.ext;
	return mlirOperationIsNull(f.scale) ? k : -1;
}

/* The only store of "st" (*k its access), the operation computing its
 * value in the body (null when none or not one store). */
MlirOperation pb_attn_stored(const struct pb_poly_stmt *st, int *k)
{
	int n = 0;
	for (int i = 0; i < st->naccess; i++)
		if (st->access[i].write) {
			*k = i;
			n++;
		}
	if (st->kind != PB_POLY_NEST || n != 1)
		return (MlirOperation){NULL};
	MlirValue v = mlirOperationGetOperand(st->access[*k].op, 0);
	MlirOperation d = pb_attn_def(v);
	if (mlirOperationIsNull(d) || !pb_ir_is_inside(d, st->op))
		return (MlirOperation){NULL};
	return d;
}

/* The binary operation "name" of "a" and "b" (of a's type) before "at". */
static MlirValue binop(MlirOperation at, const char *name, MlirValue a,
		       MlirValue b)
{
	MlirValue ops[2] = {a, b};
	return make(at, name, 2, ops, mlirValueGetType(a), 0, NULL, NULL);
}

/* affine.load / affine.store of buffer "mem" (an alloca) at "idx". */
static MlirValue load(MlirOperation at, MlirValue mem, int n, MlirValue idx)
{
	MlirContext mctx = mlirOperationGetContext(at);
	MlirValue ops[2] = {mem, idx};
	const char *name = "map";
	MlirAttribute map =
		mlirAffineMapAttrGet(mlirAffineMapMultiDimIdentityGet(mctx, n));
	return make(at, "affine.load", 1 + n, ops,
		    mlirShapedTypeGetElementType(mlirValueGetType(mem)), 1,
		    &name, &map);
}

static void store(MlirOperation at, MlirValue v, MlirValue mem, int n,
		  MlirValue idx)
{
	MlirContext mctx = mlirOperationGetContext(at);
	MlirValue ops[3] = {v, mem, idx};
	const char *name = "map";
	MlirAttribute map =
		mlirAffineMapAttrGet(mlirAffineMapMultiDimIdentityGet(mctx, n));
	make(at, "affine.store", 2 + n, ops, (MlirType){NULL}, 1, &name, &map);
}

/* memref.alloca of "n" (0: rank 0) elements of type "t" before "at". */
static MlirValue alloca_(MlirOperation at, int64_t n, MlirType t)
{
	struct pb_buf tb = {0};
	char text[200];
	pb_ir_type_print(t, &tb);
	if (n)
		snprintf(text, sizeof(text),
			 "func.func @f() {\n  %%a = memref.alloca() : "
			 "memref<%lldx%s>\n  return\n}\n",
			 (long long)n, tb.data);
	else
		snprintf(text, sizeof(text),
			 "func.func @f() {\n  %%a = memref.alloca() : "
			 "memref<%s>\n  return\n}\n",
			 tb.data);
	pb_buf_free(&tb);
	MlirOperation op = pb_ir_clone_from_text(
		mlirOperationGetContext(at), text, "memref.alloca", 0, NULL);
	if (mlirOperationIsNull(op))
		abort();
	mlirOperationSetLocation(op, mlirOperationGetLocation(at));
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(at), at, op);
	return mlirOperationGetResult(op, 0);
}

/* Map "from" to "to" in "m", replacing an earlier image. */
static void put(struct pb_ir_map *m, MlirValue from, MlirValue to)
{
	for (int i = 0; i < m->n; i++)
		if (mlirValueEqual(m->from[i], from)) {
			m->to[i] = to;
			return;
		}
	pb_ir_map_add(m, from, to);
}

/* Clone "op" before "at" with its operands mapped through "m"; the
 * original's result maps to the clone's. Returns the clone's result. */
static MlirValue clone(MlirOperation at, MlirOperation op, struct pb_ir_map *m)
{
	MlirOperation c = mlirOperationClone(op);
	mlirOperationSetLocation(c, mlirOperationGetLocation(op));
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(at), at, c);
	pb_ir_remap_operands(c, m);
	if (mlirOperationGetNumResults(c) == 0)
		return (MlirValue){NULL};
	put(m, mlirOperationGetResult(op, 0), mlirOperationGetResult(c, 0));
	return mlirOperationGetResult(c, 0);
}

/* The float constant "v" of type "t" before "at". */
static MlirValue fconst(MlirOperation at, MlirType t, double v)
{
	const char *name = "value";
	MlirAttribute a = mlirFloatAttrDoubleGet(mlirTypeGetContext(t), t, v);
	return make(at, "arith.constant", 0, NULL, t, 1, &name, &a);
}

/* Fold the subscripts of the affine.load "ld" that are index constants
 * (the counters of unit loops the nest replaced) into its map, as the
 * canonicalizer would: it replaces the load by a new one and drops its
 * discardable attributes, so a fact set on the load must find it in its
 * final form. */
static void fold_constant_subscripts(MlirOperation ld)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(ld, "map"));
	int nd = (int)mlirAffineMapGetNumDims(map), nk = 0;
	int nr = (int)mlirAffineMapGetNumResults(map);
	MlirContext mctx = mlirOperationGetContext(ld);
	MlirValue ops[1 + PB_FUSE_MAXR];
	MlirAffineExpr sub[PB_FUSE_MAXR], res[PB_FUSE_MAXR];
	if (mlirAffineMapGetNumSymbols(map) || nd > PB_FUSE_MAXR ||
	    nr > PB_FUSE_MAXR)
		return;
	ops[0] = mlirOperationGetOperand(ld, 0);
	for (int k = 0; k < nd; k++) {
		MlirValue v = mlirOperationGetOperand(ld, 1 + k);
		MlirOperation d = pb_attn_def(v);
		MlirAttribute at = mlirOperationIsNull(d) ||
					   !pb_ir_op_is(d, "arith.constant")
				   ? (MlirAttribute){NULL}
				   : pb_ir_attr(d, "value");
		if (!mlirAttributeIsNull(at) && mlirAttributeIsAInteger(at)) {
			sub[k] = mlirAffineConstantExprGet(
				mctx, mlirIntegerAttrGetValueInt(at));
		} else {
			sub[k] = mlirAffineDimExprGet(mctx, nk);
			ops[1 + nk++] = v;
		}
	}
	if (nk == nd)
		return;
	MlirAffineMap s = mlirAffineMapGet(mctx, nk, 0, nd, sub);
	for (int r = 0; r < nr; r++)
		res[r] = mlirAffineExprCompose(mlirAffineMapGetResult(map, r), s);
	mlirOperationSetOperands(ld, 1 + nk, ops);
	pb_ir_set_attr(ld, "map",
		       mlirAffineMapAttrGet(mlirAffineMapGet(mctx, nk, 0, nr,
							     res)));
}

/* Mark the load "ld" of buffer "b" of "s" pb.causal (or pb.future) when
 * "b" is an argument of the function marked so (a causal mask or its
 * complement, ir/contract.h). */
static void causal_fact(const struct pb_poly_scop *s, int b, MlirOperation ld)
{
	static const char *const names[] = {PB_ATTR_CAUSAL, PB_ATTR_FUTURE};
	MlirValue root = s->buf[b].root;
	if (!mlirValueIsABlockArgument(root))
		return;
	MlirBlock blk = mlirBlockArgumentGetOwner(root);
	MlirOperation f = mlirBlockGetParentOperation(blk);
	if (!pb_ir_op_is(f, "func.func"))
		return;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		MlirAttribute c = pb_ir_func_arg_attr(
			f, (int)mlirBlockArgumentGetArgNumber(root), names[k]);
		if (mlirAttributeIsNull(c))
			continue;
		fold_constant_subscripts(ld);
		pb_ir_set_attr(ld, names[k], c);
	}
}

/* Map the counters of the first "n" loops of "st" to "to" in "m". */
static void map_ivs(struct pb_ir_map *m, const struct pb_poly_stmt *st, int n,
		    const MlirValue *to)
{
	for (int k = 0; k < n; k++)
		put(m, pb_attn_iv(st, k), to[k]);
}

/* Replace the store "os" (of value v at subscripts e) by the store of
 * the copy "C" (a nest loading every element of os's buffer once and
 * storing it, maybe rounded, elsewhere): C's roundings applied to v,
 * stored where C stores the element e, at C's subscripts with each loop
 * counter of C replaced by the subscript of e it loads along. Returns the
 * new store. */
static MlirOperation in_place(MlirOperation os, const struct pb_poly_stmt *C)
{
	MlirContext mctx = mlirOperationGetContext(os);
	const struct pb_poly_access *ld = &C->access[0], *st = &C->access[1];
	int lo[PB_FUSE_MAXR], so[PB_FUSE_MAXR], pos[PB_FUSE_MAXR];
	int nl = pb_fuse_result_loops(C, ld, lo);
	int ns = pb_fuse_result_loops(C, st, so);
	for (int k = 0; k < nl; k++)
		if (lo[k] >= 0)
			pos[lo[k]] = k;
	MlirAffineMap om = mlirAffineMapAttrGetValue(pb_ir_attr(os, "map"));
	MlirAffineExpr res[PB_FUSE_MAXR];
	for (int k = 0; k < ns; k++)
		res[k] = so[k] >= 0 ? mlirAffineMapGetResult(om, pos[so[k]])
				    : mlirAffineConstantExprGet(mctx, 0);
	MlirAffineMap nm = mlirAffineMapGet(mctx, mlirAffineMapGetNumDims(om),
					    0, ns, res);
	/* the value, rounded as C rounds it */
	struct pb_ir_map m = {0};
	put(&m, mlirOperationGetResult(ld->op, 0),
	    mlirOperationGetOperand(os, 0));
	for (MlirOperation op = mlirOperationGetNextInBlock(ld->op);
	     !mlirOperationEqual(op, st->op); op = mlirOperationGetNextInBlock(op))
		clone(os, op, &m);
	int n = mlirOperationGetNumOperands(os);
	MlirValue *ops = malloc(sizeof(*ops) * n);
	if (!ops)
		abort();
	for (int i = 0; i < n; i++)
		ops[i] = mlirOperationGetOperand(os, i);
	ops[0] = pb_ir_map_lookup(&m, mlirOperationGetOperand(st->op, 0));
	ops[1] = pb_fuse_access_memref(st);
	MlirOperationState state = mlirOperationStateGet(
		pb_str("affine.store"), mlirOperationGetLocation(st->op));
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("map")), mlirAffineMapAttrGet(nm));
	mlirOperationStateAddOperands(&state, n, ops);
	mlirOperationStateAddAttributes(&state, 1, &na);
	MlirOperation sto = mlirOperationCreate(&state);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(os), os, sto);
	mlirOperationDestroy(os);
	free(ops);
	pb_ir_map_free(&m);
	return sto;
}

/* Apply mask "mk" of "s" to the scores "sv" (of type "ft") before "jb",
 * in the key loop whose counters (and those of the rows) are "ivs",
 * constants before "at": x = sv + mask[..], the mask widened as its nest
 * widens it, or x = cond[..] ? sv : fill (either way round, as the
 * Where). Returns x. */
static MlirValue apply_mask(const struct pb_poly_scop *s,
			    const struct pb_attn_mask *mk, MlirOperation jb,
			    MlirOperation at, MlirType ft, MlirValue sv,
			    const MlirValue *ivs, struct pb_ir_map *m)
{
	const struct pb_poly_stmt *M = &s->stmt[mk->stmt];
	MlirOperation ml = M->access[mk->acc].op;
	MlirValue mv = mlirOperationGetResult(ml, 0);
	map_ivs(m, M, M->depth, ivs);
	MlirValue v = clone(jb, ml, m);
	causal_fact(s, mk->buf, pb_attn_def(v));
	if (pb_ir_op_is(mk->op, "arith.select")) {
		MlirValue f = mlirOperationGetOperand(mk->op, 1);
		int first = !pb_ir_defined_in(f, M->op) ||
			    (mk->fill >= 0 &&
			     mlirValueEqual(f, mlirOperationGetResult(
						       M->access[mk->fill].op, 0)));
		if (!first)
			f = mlirOperationGetOperand(mk->op, 2);
		if (mk->fill >= 0)
			f = clone(jb, M->access[mk->fill].op, m);
		/* a Where of f16 or bf16 scores: its other value in the
		   scores' type, as they are kept unrounded */
		double fv;
		if (!mlirTypeEqual(mlirValueGetType(f), ft) && mk->fill < 0 &&
		    pb_attn_float_constant(f, &fv))
			f = fconst(at, ft, fv);
		else if (!mlirTypeEqual(mlirValueGetType(f), ft))
			f = make(jb, "arith.extf", 1, &f, ft, 0, NULL, NULL);
		MlirValue ops[3] = {v, first ? f : sv, first ? sv : f};
		sv = make(jb, "arith.select", 3, ops, mlirValueGetType(sv), 0,
			  NULL, NULL);
	} else {
		for (MlirOpOperand u = mlirValueGetFirstUse(mv);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			if (pb_ir_op_is(mlirOpOperandGetOwner(u), "arith.extf"))
				v = clone(jb, mlirOpOperandGetOwner(u), m);
		sv = binop(jb, "arith.addf", sv, v);
	}
	mlirOperationSetLocation(pb_attn_def(sv),
				 mlirOperationGetLocation(M->op));
	return sv;
}

/* Replace the chain "t" by the one nest of the file comment, before PV. */
void pb_attn_build(const struct pb_poly_scop *s, const struct pb_attn *t)
{
	const struct pb_poly_stmt *A = &s->stmt[t->a], *PV = &s->stmt[t->pv];
	const struct pb_poly_stmt *R1 = &s->stmt[t->r1], *E = &s->stmt[t->e];
	const struct pb_poly_stmt *D = &s->stmt[t->d];
	int R = t->rows, k;
	MlirContext mctx = mlirOperationGetContext(A->op);
	MlirValue ivs[18], jv, dv, ev, z = {NULL};
	MlirOperation at = PV->op;
	MlirType ft = mlirValueGetType(t->zero);
	struct pb_ir_map m = {0};

	for (k = 0; k < R; k++)
		at = pb_fuse_loop(at, A->extent[k], 1,
				  mlirOperationGetLocation(A->op), &ivs[k]);
	MlirValue mm = alloca_(at, 0, ft), ll = alloca_(at, 0, ft);
	MlirValue acc = alloca_(at, PV->extent[R], ft), ss = alloca_(at, 0, ft);
	store(at, t->m0, mm, 0, z);
	store(at, t->zero, ll, 0, z);
	MlirOperation in = pb_fuse_loop(at, PV->extent[R], 0,
				mlirOperationGetLocation(PV->op), &ev);
	store(in, t->zero, acc, 1, ev);

	/* s = sum_d x * y, as A computes it (scaled as T does) */
	MlirOperation jb = pb_fuse_loop(at, A->extent[R], 0,
				mlirOperationGetLocation(R1->op), &jv);
	store(jb, t->zero, ss, 0, z);
	MlirOperation db = pb_fuse_loop(jb, A->extent[R + 1], 0,
				mlirOperationGetLocation(A->op), &dv);
	ivs[R] = jv;
	ivs[R + 1] = dv;
	map_ivs(&m, A, R + 2, ivs);
	put(&m, mlirOperationGetResult(A->access[t->aacc].op, 0),
	    load(db, ss, 0, z));
	/* each factor's load and its widening, then the product and the
	 * sum: the order lib/kernel/attention.c reads */
	MlirOperation add = pb_attn_stored(A, &k);
	MlirValue p0 = mlirOperationGetOperand(add, 0);
	MlirOperation mul = pb_attn_def(mlirOperationGetOperand(
		add, pb_attn_load_of(A, p0) == t->aacc ? 1 : 0));
	for (int i = 0; i < 2; i++) {
		struct pb_attn_factor f;
		MlirValue v = mlirOperationGetOperand(mul, i);
		pb_attn_factor(A, v, &f);
		MlirValue x = clone(db, A->access[f.k].op, &m);
		if (!mlirOperationIsNull(f.ext))
			x = clone(db, f.ext, &m);
		/* a prescale goes into the scale below, in the sum's type */
		if (!mlirTypeEqual(mlirValueGetType(x), mlirValueGetType(v)))
			x = make(db, "arith.extf", 1, &x, mlirValueGetType(v),
				 0, NULL, NULL);
		put(&m, v, x);
	}
	clone(db, mul, &m);
	store(db, clone(db, add, &m), ss, 0, z);
	MlirValue sv = load(jb, ss, 0, z);
	/* the scale; the roundings of S between the ops are dropped: the
	 * nest keeps S in its sum's type, as FlashAttention does */
	int folded = 0;
	for (int i = 0; i < t->npre && !mlirOperationIsNull(t->scale); i++) {
		const struct pb_poly_stmt *T = &s->stmt[t->pre[i]];
		if (!pb_ir_is_inside(t->scale, T->op))
			continue;
		/* s * c or s / c: the scores first, as pb-mma reads it; with
		   prescales, one product by a constant, all of them */
		MlirValue c = mlirOperationGetOperand(t->scale, 1);
		if (pb_ir_defined_in(c, T->op))
			c = mlirOperationGetOperand(t->scale, 0);
		int div = pb_ir_op_is(t->scale, "arith.divf");
		double cv;
		if (t->prescale != 1 && pb_attn_float_constant(c, &cv)) {
			c = fconst(PV->op, ft,
				   div ? t->prescale / cv : t->prescale * cv);
			div = 0;
			folded = 1;
		}
		sv = binop(jb, div ? "arith.divf" : "arith.mulf", sv, c);
		mlirOperationSetLocation(pb_attn_def(sv),
					 mlirOperationGetLocation(T->op));
	}
	if (t->prescale != 1 && !folded)
		sv = binop(jb, "arith.mulf", sv,
			   fconst(PV->op, ft, t->prescale));

	/* x = s (* c) + mask[..], the mask widened as its nest widens it,
	 * or x = cond[..] ? x : fill (either way round, as the Where); each
	 * mask in the chain's order */
	for (int i = 0; i < t->nmask; i++) {
		ivs[R] = jv;
		sv = apply_mask(s, &t->mask[i], jb, PV->op, ft, sv, ivs, &m);
	}

	/* mn = max(m, s); k = mn == -inf ? 0 : mn;
	 * a = exp(m - k), p = exp(s - k) */
	MlirValue mo = load(jb, mm, 0, z);
	MlirOperation mx = pb_attn_stored(R1, &k);
	for (int i = 0; i < 2; i++) {
		MlirValue x = mlirOperationGetOperand(mx, i);
		int b = R1->access[pb_attn_load_of(R1, x)].buf;
		put(&m, mlirOperationGetOperand(mx, i),
			      b == t->bm ? mo : sv);
	}
	MlirValue mn = clone(jb, mx, &m);
	const char *pname = "predicate";
	MlirValue nv = fconst(jb, ft, -INFINITY);
	MlirAttribute oeq = mlirIntegerAttrGet(mlirIntegerTypeGet(mctx, 64), 1);
	MlirValue two[3] = {mn, nv};
	MlirValue isinf = make(jb, "arith.cmpf", 2, two,
			       mlirIntegerTypeGet(mctx, 1), 1, &pname, &oeq);
	MlirValue sel[3] = {isinf, t->zero, mn};
	MlirValue kv = make(jb, "arith.select", 3, sel, ft, 0, NULL, NULL);
	MlirOperation ex = pb_attn_stored(E, &k);
	MlirOperation sub = pb_attn_def(mlirOperationGetOperand(ex, 0));
	MlirValue ex_x = mlirOperationGetOperand(sub, 0);
	MlirValue ex_m = mlirOperationGetOperand(sub, 1);
	put(&m, ex_x, mo);
	put(&m, ex_m, kv);
	clone(jb, sub, &m);
	MlirValue av = clone(jb, ex, &m);
	put(&m, ex_x, sv);
	clone(jb, sub, &m);
	MlirValue pv = clone(jb, ex, &m);

	/* l = l * a + p; acc[e] = acc[e] * a + p * v[e]; m = mn */
	MlirValue lv = binop(jb, "arith.mulf", load(jb, ll, 0, z), av);
	store(jb, binop(jb, "arith.addf", lv, pv), ll, 0, z);
	MlirOperation eb = pb_fuse_loop(jb, PV->extent[R], 0,
				mlirOperationGetLocation(PV->op), &ev);
	ivs[R] = ev;
	ivs[R + 1] = jv;
	map_ivs(&m, PV, R + 2, ivs);
	MlirValue cur = load(eb, acc, 1, ev);
	/* p * v, P not rounded to the data type (P.V's operand) */
	MlirOperation ext, padd = pb_attn_stored(PV, &k);
	MlirValue p0v = mlirOperationGetOperand(padd, 0);
	MlirOperation pmul = pb_attn_def(mlirOperationGetOperand(
		padd, pb_attn_load_of(PV, p0v) == t->vo ? 1 : 0));
	MlirValue vv = {NULL};
	for (int i = 0; i < 2; i++)
		if (pb_attn_factor_of(PV, mlirOperationGetOperand(pmul, i),
				      &ext) == t->vv) {
			vv = clone(eb, PV->access[t->vv].op, &m);
			if (!mlirOperationIsNull(ext))
				vv = clone(eb, ext, &m);
		}
	MlirValue prod = binop(eb, "arith.mulf", pv, vv);
	mlirOperationSetLocation(pb_attn_def(prod),
				 mlirOperationGetLocation(pmul));
	MlirValue scaled = binop(eb, "arith.mulf", cur, av);
	store(eb, binop(eb, "arith.addf", scaled, prod), acc, 1, ev);
	store(jb, mn, mm, 0, z);

	/* O[r, e] = acc[e] / l */
	MlirValue lf = load(at, ll, 0, z);
	MlirOperation ob = pb_fuse_loop(at, PV->extent[R], 0,
				mlirOperationGetLocation(PV->op), &ev);
	ivs[R] = ev;
	map_ivs(&m, PV, R + 1, ivs);
	MlirOperation div = pb_attn_stored(D, &k);
	put(&m, mlirOperationGetOperand(div, 0), load(ob, acc, 1, ev));
	put(&m, mlirOperationGetOperand(div, 1), lf);
	MlirValue ov = clone(ob, div, &m);
	put(&m, mlirOperationGetResult(padd, 0), ov);
	pb_attn_stored(PV, &k);
	MlirOperation os = mlirOperationClone(PV->access[k].op);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(ob), ob, os);
	pb_ir_remap_operands(os, &m);
	for (int i = 0; i < t->nout; i++)
		os = in_place(os, &s->stmt[t->out[i]]);
	pb_ir_map_free(&m);
}


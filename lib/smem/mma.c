/* pb-mma's warp tiles staged in shared memory (docs/pb-smem.md, "Tensor-
 * core tiles").
 *
 * pb-mma's nest is a block loop around one warp loop whose body carries
 * the accumulator fragments through a reduction loop
 *
 *   %acc:F = affine.for %k = 0 to K step 16 iter_args(...)
 *     vector.transfer_read A[.., %i0 + %wm + 16 i, %k]   (16x16)
 *     vector.transfer_read B[.., %k, %j0 + %wn + 8 j]    (16x8)
 *     vector.contract ...
 *
 * The block's operand tiles (BM x KT of A, KT x BN of B per k-tile of KT:
 * the rows and columns of all its warps) go through one ring of S slots
 * per operand in workgroup memory, filled with 16-byte copies
 * (asynchronous on sm_80+: pb.async, lowered to cp.async by pb-codegen),
 * S - 1 k-tiles ahead:
 *
 *   prologue: k-tiles 0 .. S-2 into slots 0 .. S-2
 *   %acc:F = affine.for %kk = 0 to K step KT iter_args(...)
 *     gpu.barrier {pb.wait = (S-2) x operands}   k-tile kk has landed
 *     k-tile (kk + (S-1) KT) mod K into slot (kk / KT + S - 1) mod S
 *     affine.for %k = 0 to KT step 16 iter_args(...)     {pb.unroll}
 *       the reads, from slot (kk / KT) mod S at the warp's offsets
 *   gpu.barrier {pb.wait = 0}
 *
 * The copies are the block's, done by all its warps: a loop over the
 * warps marked pb.share (lib/ir/contract.h) around a thread loop of 32
 * lanes, chunk (q NW + w) 32 + l in round q. On the GPU warp w runs
 * iteration w of it only, so each chunk is copied once; on the CPU,
 * where the warps of the warp loop run one after another, each copies
 * the whole tile before reading its part, so the warp-level code keeps
 * its meaning. Rows are padded by 16 bytes, so that the 8 rows of an
 * ldmatrix phase fall in distinct banks and stay 16-byte aligned; the
 * reads of workgroup memory become ldmatrix in pb-codegen. f32 operands
 * (tf32: k steps of 8) are staged alike; a tile whose rows run along k
 * is read with ldmatrix too, the other (A stored [k][m], B [k][n]) one
 * element per lane, rows 4 apart: its rows are padded by 32 bytes, so
 * that the 4 rows a warp reads fall 8 banks apart.
 *
 * On sm_90a a nest of pb-mma's wgmma shape (wgmma_nest) gets wgmma's
 * layout instead: unpadded rows of W bytes (2 KT along k; B stored [k][n]
 * in panels of 64 columns), every access marked pb.swizzle = W, the
 * k-tile loop pb.unroll; pb-codegen swizzles the copies and reads the
 * rings through wgmma's descriptors (lib/codegen/wgmma.c). */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "smem/internal.h"
#include "target/target.h"

#define MAXREAD 16
#define MAXTAP 4

/* One staged operand: the reads of global buffer "mem" in the reduction
 * loop, its two tile dimensions "p" < "q" (memref dimensions; one is the
 * reduction's, "kdim") and the tile's extent "ext" along the other. */
struct operand {
	MlirValue mem;
	MlirOperation read[MAXREAD];
	int64_t off[MAXREAD]; /* the read's offset along the tile dimension */
	int n, rank, p, q, kdim, tdim;
	MlirValue bops[2];    /* the warp tile's origin along tdim: bops[0] (the
				 block's) + bops[1] (the warp's) + boff */
	int64_t boff;
	MlirValue uni[PB_KERNEL_MAXD]; /* the other subscripts */
	int64_t ext;	      /* along tdim: the warp's reads' extent, then
				 (find) the block's: all its warps' */
	int64_t limit;	      /* >0: the buffer's size along tdim, which the
				 tile may overrun (copies guarded) */
	int64_t klimit;	      /* >0: likewise along kdim (K is not a
				 multiple of the mma step) */
	int64_t eb;	      /* bytes per element: 2 or 4 */
	int isa;	      /* the A operand (C's rows), not B */
	int wd;		      /* the warp loop dimension of its origin */
	int64_t sw;	      /* >0: wgmma's layout, rows of "sw" bytes (the
				 swizzle's width: 128, 64 or 32), unpadded */
	int64_t panel;	      /* >0: the tile dimension cut into panels of
				 this many elements, one after another (B
				 stored [k][n] for wgmma) */
	MlirValue ring;
	/* a convolution's window read (pb-mma's implicit GEMM): the tile
	   starts at the origin + "tap" + "woff" along tdim, its rows are
	   zeros where that lies outside the buffer or "wok" is false */
	int win;
	MlirValue tap, wok;
	int64_t woff;
	int64_t st;	      /* >1: a strided window (pb-mma's read of the
				 view (W / S, S) of "mem", docs/pb-mma.md):
				 the stride S, the tile along tdim in
				 columns of "mem" (S per row of C) */
	int elem;	      /* copied element by element (synchronous) into
				 a ring of [tile][k], k innermost: a window
				 operand, or a convolution's weights whose
				 tile rows are not rows of the buffer */
	/* all the window's positions staged at once (mnest.shared): what
	   each tap loop t of the nest moves: TAP_DIM, a ring dimension of
	   its own (subscript "tsub" is the tap's counter, the weights'
	   r or s, or, "tbase" not null, the window row
	   clamp(tbase + tap + toff) into the buffer); TAP_TILE, the tile
	   dimension (the window's columns: the tile extended by "halo",
	   the tap's extent - 1) */
	int tmode[MAXTAP];
	int tsub[MAXTAP];
	MlirValue tbase[MAXTAP];
	int64_t toff[MAXTAP];
	int64_t tstr[MAXTAP];	/* the window row is tstr tbase + tap + toff */
	int twarp[MAXTAP];	/* tbase is the block's row + the warp's
				   (mnest.hw > 1): the ring holds the
				   block's hw rows' window rows, hw - 1 more */
	int64_t halo;
	int64_t vw;	      /* shared: the elements of one copy along the
				 tile (a vector load when more than 1) */
	int64_t sh;	      /* shared: the staged tile starts "sh" elements
				 before the window's first column, so that
				 its copies are aligned to "vw" */
};

#define TAP_DIM 1
#define TAP_TILE 2

struct mnest {
	MlirOperation block, warp, kloop;
	int win;	/* a convolution's: an operand is a window read */
	int64_t bm[2], wt[2], nw, k, kt, stages, bytes;
	int64_t fk;	/* the k of one mma step: 16, or 8 for tf32 */
	struct operand op[2];
	int nop;
	int wg;		/* the rings in wgmma's layout (wgmma_nest) */
	/* a convolution's window loops around the k loop (outermost
	   first) and their extents */
	int nt;
	MlirOperation tloop[MAXTAP];
	int64_t text[MAXTAP];
	int shared;	/* one staged tile of each operand serves all the
			   window's positions of a k-tile: the window loops
			   move into the k-tile loop (shared_nest) */
	/* a convolution's block of several image rows (pb-mma's warp
	   loop (%wh, %wm, %wn), docs/pb-mma.md): "hw" rows of warps, the
	   row's counter "hiv"; hw 1 otherwise */
	int64_t hw;
	MlirValue hiv;
};

/* The operation named "name" defining "v", else null. */
static MlirOperation def_of(MlirValue v, const char *name)
{
	MlirOperation d = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
						  : (MlirOperation){NULL};
	return !mlirOperationIsNull(d) && pb_ir_op_is(d, name)
		       ? d
		       : (MlirOperation){NULL};
}

/* The linear form c0 d0 + c1 d1 + c of "e" into "c" (3 entries); 0 when
 * it is not one. */
static int linear(MlirAffineExpr e, int64_t *c)
{
	if (mlirAffineExprIsAConstant(e)) {
		c[2] += mlirAffineConstantExprGetValue(e);
		return 1;
	}
	if (mlirAffineExprIsADim(e)) {
		intptr_t p = mlirAffineDimExprGetPosition(e);
		if (p > 1)
			return 0;
		c[p] += 1;
		return 1;
	}
	if (mlirAffineExprIsAAdd(e))
		return linear(mlirAffineBinaryOpExprGetLHS(e), c) &&
		       linear(mlirAffineBinaryOpExprGetRHS(e), c);
	if (mlirAffineExprIsAMul(e) &&
	    mlirAffineExprIsADim(mlirAffineBinaryOpExprGetLHS(e)) &&
	    mlirAffineExprIsAConstant(mlirAffineBinaryOpExprGetRHS(e))) {
		intptr_t p = mlirAffineDimExprGetPosition(
			mlirAffineBinaryOpExprGetLHS(e));
		if (p > 1)
			return 0;
		c[p] += mlirAffineConstantExprGetValue(
			mlirAffineBinaryOpExprGetRHS(e));
		return 1;
	}
	return 0;
}

/* Is "e" (b + off) floordiv S, S > 1, b dimension 1? S into "*st", off
 * into "*off". */
static int strided_tap(MlirAffineExpr e, int64_t *st, int64_t *off)
{
	int64_t c[3] = {0, 0, 0};
	if (!mlirAffineExprIsAFloorDiv(e) ||
	    !mlirAffineExprIsAConstant(mlirAffineBinaryOpExprGetRHS(e)) ||
	    !linear(mlirAffineBinaryOpExprGetLHS(e), c) || c[0] || c[1] != 1)
		return 0;
	*st = mlirAffineConstantExprGetValue(mlirAffineBinaryOpExprGetRHS(e));
	*off = c[2];
	return *st > 1;
}

/* Is "v" pb-mma's strided window column, an affine.apply
 * (a + (b + off) floordiv S) of two operands (docs/pb-mma.md, "Strided
 * convolutions")? The apply (else null), off into "*off", S into
 * "*st". */
static MlirOperation strided_sum(MlirValue v, int64_t *off, int64_t *st)
{
	MlirOperation a = def_of(v, "affine.apply");
	if (mlirOperationIsNull(a) || mlirOperationGetNumOperands(a) != 2)
		return (MlirOperation){NULL};
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(a, "map"));
	if (mlirAffineMapGetNumResults(m) != 1 || mlirAffineMapGetNumSymbols(m))
		return (MlirOperation){NULL};
	MlirAffineExpr e = mlirAffineMapGetResult(m, 0);
	if (!mlirAffineExprIsAAdd(e))
		return (MlirOperation){NULL};
	for (int i = 0; i < 2; i++) {
		MlirAffineExpr l = i ? mlirAffineBinaryOpExprGetRHS(e)
				     : mlirAffineBinaryOpExprGetLHS(e);
		MlirAffineExpr r = i ? mlirAffineBinaryOpExprGetLHS(e)
				     : mlirAffineBinaryOpExprGetRHS(e);
		if (mlirAffineExprIsADim(l) &&
		    mlirAffineDimExprGetPosition(l) == 0 &&
		    strided_tap(r, st, off))
			return a;
	}
	return (MlirOperation){NULL};
}

/* Is "v" an affine.apply (a + b + c) of two operands? The apply (else
 * null), c into "*off". */
static MlirOperation unit_sum(MlirValue v, int64_t *off)
{
	MlirOperation a = def_of(v, "affine.apply");
	if (mlirOperationIsNull(a) || mlirOperationGetNumOperands(a) != 2)
		return (MlirOperation){NULL};
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(a, "map"));
	int64_t c[3] = {0, 0, 0};
	if (mlirAffineMapGetNumResults(m) != 1 ||
	    mlirAffineMapGetNumSymbols(m) ||
	    !linear(mlirAffineMapGetResult(m, 0), c) || c[0] != 1 || c[1] != 1)
		return (MlirOperation){NULL};
	*off = c[2];
	return a;
}

/* Is "v" %blockiv + %warpiv + c (an affine.apply of pb-mma's)? The sum's
 * two operands into "ops", c into "*off". */
static int tile_index(MlirValue v, MlirValue *ops, int64_t *off)
{
	MlirOperation a = unit_sum(v, off);
	if (mlirOperationIsNull(a))
		return 0;
	ops[0] = mlirOperationGetOperand(a, 0);
	ops[1] = mlirOperationGetOperand(a, 1);
	return 1;
}

/* The window of transfer_read "r" (pb-mma's read of a convolution's
 * input, docs/pb-mma.md, "Convolutions"): its subscript along the tile
 * "v" is affine.apply (a + b + off)(row, tap) with "row" a tile_index;
 * its mask xori(create_mask(select(wok, lo, 16), 16), true). The row's
 * parts into "ops" and "*off" (the fragment's offset), the tap, "off"
 * and wok into "o". */
static int window_index(MlirOperation r, MlirValue v, MlirValue *ops,
			int64_t *off, struct operand *o)
{
	int64_t woff, st = 1;
	int rank = (int)mlirShapedTypeGetRank(
		mlirValueGetType(mlirOperationGetOperand(r, 0)));
	MlirOperation a = unit_sum(v, &woff);
	if (mlirOperationIsNull(a))
		a = strided_sum(v, &woff, &st);
	if (mlirOperationIsNull(a) ||
	    !tile_index(mlirOperationGetOperand(a, 0), ops, off))
		return 0;
	/* the mask's parts */
	MlirOperation x = def_of(mlirOperationGetOperand(r, 2 + rank),
				 "arith.xori");
	MlirOperation cm = mlirOperationIsNull(x)
				   ? x
				   : def_of(mlirOperationGetOperand(x, 0),
					    "vector.create_mask");
	MlirOperation sel = mlirOperationIsNull(cm)
				    ? cm
				    : def_of(mlirOperationGetOperand(cm, 0),
					     "arith.select");
	if (mlirOperationIsNull(sel))
		return 0;
	o->win = 1;
	o->st = st;
	o->tap = mlirOperationGetOperand(a, 1);
	o->woff = woff;
	o->wok = mlirOperationGetOperand(sel, 0);
	return 1;
}

/* Add transfer_read "r" (of the reduction loop with counter "k") to the
 * operands of "n"; 0 when it does not fit the staging. */
static int add_read(struct mnest *n, MlirOperation r, MlirValue k)
{
	MlirValue mem = mlirOperationGetOperand(r, 0);
	MlirType mt = mlirValueGetType(mem);
	MlirType vt = mlirValueGetType(mlirOperationGetResult(r, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	int masked = mlirOperationGetNumOperands(r) == (intptr_t)(3 + rank);
	if (pb_kernel_is_workgroup(mt) || rank > PB_KERNEL_MAXD ||
	    (!masked && mlirOperationGetNumOperands(r) != (intptr_t)(2 + rank)) ||
	    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(mt)) ||
	    !mlirTypeIsAFloat(mlirShapedTypeGetElementType(mt)))
		return 0;
	/* 16-bit operands, or 32-bit ones (tf32 steps of 8, or rounded to
	   16 bits in registers: --precision=fp16|bf16) */
	unsigned width = mlirFloatTypeGetWidth(mlirShapedTypeGetElementType(mt));
	if (width != 32 && (width != 16 || n->fk != 16))
		return 0;
	int d0 = pb_kernel_transfer_dim(r, 0), d1 = pb_kernel_transfer_dim(r, 1);
	if (d0 < 0 || d1 < 0)
		return 0;
	/* A (16 x fk, rows along the tile) or B (fk x 8, rows along k) */
	int isa = mlirShapedTypeGetDimSize(vt, 0) == 16 &&
		  mlirShapedTypeGetDimSize(vt, 1) == n->fk;
	int kd = isa ? d1 : d0, td = isa ? d0 : d1;
	int64_t fext = isa ? 16 : 8;
	MlirValue ops[2];
	int64_t off;
	struct operand w;
	memset(&w, 0, sizeof(w));
	if (!mlirValueEqual(mlirOperationGetOperand(r, 1 + kd), k) ||
	    !(masked ? isa && window_index(r, mlirOperationGetOperand(r, 1 + td),
					   ops, &off, &w)
		     : tile_index(mlirOperationGetOperand(r, 1 + td), ops,
				  &off)) ||
	    off < 0)
		return 0;
	/* a strided 1x1 convolution reads the view (W / S, S) at a
	   constant phase, its window offset */
	MlirOperation xv = def_of(mem, "memref.expand_shape");
	int64_t ph;
	if (!masked && isa && !mlirOperationIsNull(xv) && td == rank - 2 &&
	    !pb_ir_const_int(mlirOperationGetOperand(r, rank), &ph)) {
		w.st = mlirShapedTypeGetDimSize(mt, rank - 1);
		w.woff = ph;
	}
	/* a strided window reads the view (W / S, S) of a buffer: its
	   tile is that buffer's, its last dimension the view's first two */
	if (w.st > 1) {
		MlirOperation x = def_of(mem, "memref.expand_shape");
		if (mlirOperationIsNull(x) || td != rank - 2)
			return 0;
		mem = mlirOperationGetOperand(x, 0);
		mt = mlirValueGetType(mem);
		rank--;
		if (mlirShapedTypeGetDimSize(mt, td) % w.st ||
		    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(mt)))
			return 0;
	}
	struct operand *o = NULL;
	for (int i = 0; i < n->nop; i++)
		if (mlirValueEqual(n->op[i].mem, mem) && n->op[i].kdim == kd &&
		    n->op[i].tdim == td)
			o = &n->op[i];
	if (!o) {
		if (n->nop == 2)
			return 0;
		o = &n->op[n->nop++];
		memset(o, 0, sizeof(*o));
		o->mem = mem;
		o->rank = rank;
		o->kdim = kd;
		o->tdim = td;
		o->p = kd < td ? kd : td;
		o->q = kd < td ? td : kd;
		o->bops[0] = ops[0];
		o->bops[1] = ops[1];
		o->boff = off;
		o->eb = width / 8;
		o->isa = isa;
		o->win = w.win;
		o->tap = w.tap;
		o->woff = w.woff;
		o->wok = w.wok;
		o->st = w.st > 1 ? w.st : 1;
		n->win |= w.win;
		for (int d = 0; d < rank; d++)
			o->uni[d] = mlirOperationGetOperand(r, 1 + d);
	}
	/* a tile that may overrun the buffer along its tile dimension or
	   along k */
	MlirAttribute ib = pb_ir_attr(r, "in_bounds");
	int tv = isa ? 0 : 1; /* the vector dimension along td */
	if (!mlirAttributeIsNull(ib) && mlirAttributeIsAArray(ib) &&
	    !mlirBoolAttrGetValue(mlirArrayAttrGetElement(ib, tv)))
		o->limit = mlirShapedTypeGetDimSize(mt, td);
	if (!mlirAttributeIsNull(ib) && mlirAttributeIsAArray(ib) &&
	    !mlirBoolAttrGetValue(mlirArrayAttrGetElement(ib, 1 - tv)))
		o->klimit = mlirShapedTypeGetDimSize(mt, kd);
	/* the same origin, the same other subscripts */
	int64_t x = o->boff;
	if (o->win != w.win ||
	    (w.win && (!mlirValueEqual(o->tap, w.tap) || o->woff != w.woff ||
		       o->st != (w.st > 1 ? w.st : 1) ||
		       !mlirValueEqual(o->wok, w.wok) ||
		       pb_ir_defined_in(w.tap, n->kloop) ||
		       pb_ir_defined_in(w.wok, n->kloop))))
		return 0;
	if (w.win)
		o->limit = mlirShapedTypeGetDimSize(mt, td);
	if (!mlirValueEqual(o->bops[0], ops[0]) ||
	    !mlirValueEqual(o->bops[1], ops[1]) || o->n == MAXREAD ||
	    off < x || pb_ir_defined_in(ops[0], n->kloop) ||
	    pb_ir_defined_in(ops[1], n->kloop))
		return 0;
	for (int d = 0; d < rank; d++)
		if (d != kd && d != td &&
		    (!mlirValueEqual(o->uni[d], mlirOperationGetOperand(r, 1 + d)) ||
		     pb_ir_defined_in(o->uni[d], n->kloop)))
			return 0;
	o->read[o->n] = r;
	o->off[o->n++] = off - x;
	if (off - x + fext > o->ext)
		o->ext = off - x + fext;
	return 1;
}

/* Is "block" pb-mma's nest (a block loop around one warp loop around a
 * reduction loop on fragments)? "n" filled. */
static int find(MlirOperation block, struct mnest *n, const char **why)
{
	struct pb_ir_ops l = {0};
	memset(n, 0, sizeof(*n));
	n->block = block;
	*why = "no warp tiles of pb-mma";
	pb_ir_collect(block, "affine.parallel", &l);
	for (int i = 0; i < l.n; i++)
		if (pb_contract_map_of(l.v[i]) == PB_MAP_WARP)
			n->warp = mlirOperationIsNull(n->warp) ? l.v[i]
							      : (MlirOperation){NULL};
	pb_ir_ops_free(&l);
	if (mlirOperationIsNull(n->warp))
		return 0;
	MlirBlock wb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->warp, 0));
	for (MlirOperation o = mlirBlockGetFirstOperation(wb);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (pb_ir_op_is(o, "affine.for") &&
		    mlirOperationGetNumResults(o) > 0)
			n->kloop = o;
	if (mlirOperationIsNull(n->kloop))
		return 0;
	/* a convolution's window loops (step 1) around the k loop: the
	   rings stage the k loop of each window position */
	for (int d = 0; d < 4; d++) {
		int64_t st = mlirIntegerAttrGetValueInt(
			pb_ir_attr(n->kloop, "step"));
		MlirOperation in = {NULL};
		if (st != 1)
			break;
		MlirBlock tb = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(n->kloop, 0));
		for (MlirOperation o = mlirBlockGetFirstOperation(tb);
		     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
			if (pb_ir_op_is(o, "affine.for") &&
			    mlirOperationGetNumResults(o) > 0)
				in = mlirOperationIsNull(in) ? o
							      : (MlirOperation){NULL};
		if (mlirOperationIsNull(in))
			return 0;
		int64_t te;
		if (pb_ir_const_map(n->kloop, "lowerBoundMap", 1, &te) || te ||
		    pb_ir_const_map(n->kloop, "upperBoundMap", 1, &te))
			return 0;
		n->tloop[n->nt] = n->kloop;
		n->text[n->nt++] = te;
		n->kloop = in;
	}
	int64_t lb, ub, wlb[3], wst[3], wct[3];
	MlirValue wv[3], *wiv = wv;
	int64_t step = mlirIntegerAttrGetValueInt(pb_ir_attr(n->kloop, "step"));
	int nwd = pb_ir_parallel_dims(n->warp, 3, wlb, wst, wct, wv);
	if (pb_ir_const_map(n->kloop, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(n->kloop, "upperBoundMap", 1, &ub) || lb != 0 ||
	    (step != 16 && step != 8) || nwd < 2 ||
	    (nwd == 3 && (!n->nt || wst[0] != 1)))
		return 0;
	n->k = ub;
	n->fk = step;
	n->hw = 1;
	if (nwd == 3) {
		/* several image rows a block: the rows of warps first */
		n->hw = wct[0];
		n->hiv = wv[0];
		wst[0] = wst[1], wct[0] = wct[1];
		wst[1] = wst[2], wct[1] = wct[2];
		wiv = wv + 1;
	}
	n->nw = n->hw * wct[0] * wct[1];
	for (int d = 0; d < 2; d++) {
		n->wt[d] = wst[d];
		n->bm[d] = wst[d] * wct[d];
	}
	MlirBlock kb = mlirRegionGetFirstBlock(
		mlirOperationGetRegion(n->kloop, 0));
	MlirValue k = mlirBlockGetArgument(kb, 0);
	*why = "an operand read the staging does not model";
	for (MlirOperation o = mlirBlockGetFirstOperation(kb);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (pb_ir_op_is(o, "vector.transfer_read") &&
		    !add_read(n, o, k))
			return 0;
	*why = "no operand reads in the reduction loop";
	if (!n->nop)
		return 0;
	/* the block's tile: the warps' tiles along the warp dimension the
	   origin has, one after another */
	*why = "an operand tile not at a warp loop's origin";
	for (int i = 0; i < n->nop; i++) {
		struct operand *x = &n->op[i];
		int wd = mlirValueEqual(x->bops[1], wiv[0]) ? 0
			 : mlirValueEqual(x->bops[1], wiv[1]) ? 1
							    : -1;
		if (wd < 0)
			return 0;
		x->wd = wd;
		x->ext += n->bm[wd] - n->wt[wd];
	}
	return 1;
}

/* The counter of window loop "t" of "n". */
static MlirValue tap_iv(const struct mnest *n, int t)
{
	return mlirBlockGetArgument(
		mlirRegionGetFirstBlock(mlirOperationGetRegion(n->tloop[t], 0)),
		0);
}

/* The window loop of "n" whose counter is "v", -1 if none. */
static int tap_of(const struct mnest *n, MlirValue v)
{
	for (int t = 0; t < n->nt; t++)
		if (mlirValueEqual(v, tap_iv(n, t)))
			return t;
	return -1;
}

/* The constant result of two-result map "m" (its other one into "*e");
 * 0 when it has none. */
static int const_beside(MlirAffineMap m, int64_t *k, MlirAffineExpr *e)
{
	if (mlirAffineMapGetNumResults(m) != 2 || mlirAffineMapGetNumSymbols(m))
		return 0;
	for (int i = 0; i < 2; i++)
		if (mlirAffineExprIsAConstant(mlirAffineMapGetResult(m, i))) {
			*k = mlirAffineConstantExprGetValue(
				mlirAffineMapGetResult(m, i));
			*e = mlirAffineMapGetResult(m, 1 - i);
			return 1;
		}
	return 0;
}

/* Is "v" pb-mma's window row (docs/pb-mma.md, "Convolutions"):
 * affine.min(size - 1, affine.max(0, S base + tap + off)) with "tap" the
 * counter of a window loop of "n", "base" defined outside them and S >= 1
 * the stride? Its parts into "*base", "*t", "*off", "*st". */
static int clamp_index(const struct mnest *n, MlirValue v, int64_t size,
		       MlirValue *base, int *t, int64_t *off, int64_t *st)
{
	MlirOperation mn = def_of(v, "affine.min");
	MlirAffineExpr e;
	int64_t k, c[3] = {0, 0, 0};
	if (mlirOperationIsNull(mn) || mlirOperationGetNumOperands(mn) != 1 ||
	    !const_beside(mlirAffineMapAttrGetValue(pb_ir_attr(mn, "map")), &k,
			  &e) ||
	    k != size - 1 || !mlirAffineExprIsADim(e))
		return 0;
	MlirOperation mx = def_of(mlirOperationGetOperand(mn, 0), "affine.max");
	if (mlirOperationIsNull(mx) || mlirOperationGetNumOperands(mx) != 2 ||
	    !const_beside(mlirAffineMapAttrGetValue(pb_ir_attr(mx, "map")), &k,
			  &e) ||
	    k != 0 || !linear(e, c) || c[0] < 1 || c[1] != 1)
		return 0;
	*st = c[0];
	*base = mlirOperationGetOperand(mx, 0);
	*t = tap_of(n, mlirOperationGetOperand(mx, 1));
	*off = c[2];
	return *t >= 0 && !pb_ir_defined_in(*base, n->tloop[0]);
}

/* What the window loops of "n" move in operand "x" (operand.tmode); 0
 * when a subscript depends on them otherwise. */
static int shared_operand(const struct mnest *n, struct operand *x)
{
	MlirType mt = mlirValueGetType(x->mem);
	memset(x->tmode, 0, sizeof(x->tmode));
	x->halo = 0;
	if (pb_ir_defined_in(x->bops[0], n->tloop[0]) ||
	    pb_ir_defined_in(x->bops[1], n->tloop[0]))
		return 0;
	if (x->win) {
		int t = tap_of(n, x->tap);
		if (t < 0)
			return 0;
		x->tmode[t] = TAP_TILE;
		x->halo = n->text[t] - 1;
	}
	for (int d = 0; d < x->rank; d++) {
		MlirValue v = x->uni[d], base = {NULL};
		int64_t off = 0, st = 1;
		if (d == x->kdim || d == x->tdim ||
		    !pb_ir_defined_in(v, n->tloop[0]))
			continue;
		int t = tap_of(n, v);
		if (t < 0 && !clamp_index(n, v, mlirShapedTypeGetDimSize(mt, d),
					  &base, &t, &off, &st))
			return 0;
		if (x->tmode[t])
			return 0;
		x->tmode[t] = TAP_DIM;
		x->tsub[t] = d;
		x->twarp[t] = 0;
		/* a block of several image rows: the window row of the
		   block's row + the warp's (an affine.apply (a + b)) */
		MlirOperation hs;
		int64_t hoff;
		if (n->hw > 1 && !mlirValueIsNull(base) &&
		    !mlirOperationIsNull(hs = unit_sum(base, &hoff)) &&
		    !hoff && st == 1 &&
		    mlirValueEqual(mlirOperationGetOperand(hs, 1), n->hiv) &&
		    !pb_ir_defined_in(mlirOperationGetOperand(hs, 0), n->warp)) {
			base = mlirOperationGetOperand(hs, 0);
			x->twarp[t] = 1;
		}
		x->tbase[t] = base;
		x->toff[t] = off;
		x->tstr[t] = st;
	}
	return 1;
}

/* Is "o" index arithmetic of pb-mma's window (or a loop's yield): an
 * arith operation, affine.apply, affine.min or affine.max? */
static int index_op(MlirOperation o)
{
	MlirStringRef nm = mlirIdentifierStr(mlirOperationGetName(o));
	return !mlirOperationGetNumRegions(o) &&
	       ((nm.length > 6 && !strncmp(nm.data, "arith.", 6)) ||
		pb_ir_op_is(o, "affine.apply") || pb_ir_op_is(o, "affine.min") ||
		pb_ir_op_is(o, "affine.max") || pb_ir_op_is(o, "affine.yield"));
}

/* Can all the window positions of "n" share one staged tile of each
 * operand a k-tile (docs/pb-smem.md, "Tensor-core tiles")? The window
 * loops hold only index arithmetic besides the next loop, and every
 * operand's subscripts depend on them as shared_operand reads. */
static int shared_nest(struct mnest *n)
{
	if (!n->nt || n->nt > 2)
		return 0;
	/* several image rows a block: the input's window rows at the
	   warp's row, nothing else of the warp's row */
	if (n->hw > 1) {
		int rows = 0;
		for (int i = 0; i < n->nop; i++) {
			if (!shared_operand(n, &n->op[i]))
				return 0;
			for (int t = 0; t < n->nt; t++)
				rows += n->op[i].twarp[t];
		}
		if (rows != 1)
			return 0;
	}
	for (int t = 0; t < n->nt; t++) {
		MlirOperation next = t + 1 < n->nt ? n->tloop[t + 1] : n->kloop;
		MlirBlock b = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(n->tloop[t], 0));
		for (MlirOperation o = mlirBlockGetFirstOperation(b);
		     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
			if (!mlirOperationEqual(o, next) &&
			    !index_op(o))
				return 0;
	}
	for (int i = 0; i < n->nop; i++)
		if (!shared_operand(n, &n->op[i]))
			return 0;
	return 1;
}

/* The extent of the ring dimension window loop "t" gives operand "x":
 * the loop's, and with a block of several image rows whose window rows
 * it holds, the rows' hw - 1 more. */
static int64_t row_ext(const struct mnest *n, const struct operand *x,
		       int t)
{
	return n->text[t] + (x->twarp[t] ? n->hw - 1 : 0);
}

/* The ring dimensions of operand "x" that window loops give it
 * (TAP_DIM), their extents into "ext"; their number. */
static int tap_dims(const struct mnest *n, const struct operand *x,
		    int64_t *ext)
{
	int nd = 0;
	for (int t = 0; n->shared && t < n->nt; t++)
		if (x->tmode[t] == TAP_DIM)
			ext[nd++] = row_ext(n, x, t);
	return nd;
}

/* The points of the window's positions in a slot of "x". */
static int64_t tap_points(const struct mnest *n, const struct operand *x)
{
	int64_t e[MAXTAP], p = 1;
	int nd = tap_dims(n, x, e);
	for (int i = 0; i < nd; i++)
		p *= e[i];
	return p;
}

/* The extent of the staged tile of "x" along its tile dimension: the
 * block's, and the window's columns when they are staged at once. */
static int64_t tile_ext(const struct mnest *n, const struct operand *x)
{
	if (!n->shared)
		return x->ext;
	int64_t e = x->sh + x->st * x->ext + x->halo, u = x->st * x->vw;
	return (e + u - 1) / u * u;
}

/* The pixels of one phase of the staged tile of strided window "x"
 * (docs/pb-smem.md, "Strided convolutions"): column q of the tile is at
 * (q mod S) PP + q floordiv S, so that the columns S apart that a window
 * position reads are consecutive rows of the ring. */
static int64_t phase_px(const struct mnest *n, const struct operand *x)
{
	return tile_ext(n, x) / x->st;
}

/* The copies of operand "x" of a nest whose window positions share a
 * staged tile: along the tile, the widest of 8, 4, 2 elements that the
 * buffer's rows and the tile's start keep aligned when the tile runs
 * along the buffer's innermost dimension (the image columns: a window's
 * columns outside the image are then whole copies), else 1. */
static void shared_copies(struct operand *x)
{
	int64_t last = mlirShapedTypeGetDimSize(mlirValueGetType(x->mem),
						x->rank - 1);
	int direct = 0;
	for (int t = 0; t < MAXTAP; t++)
		direct |= x->tmode[t] == TAP_DIM && mlirValueIsNull(x->tbase[t]);
	x->vw = 1;
	x->sh = 0;
	for (int64_t v = 8; !direct && x->tdim == x->rank - 1 && v > 1; v /= 2)
		if (last % v == 0 && (x->st * x->boff) % v == 0) {
			x->vw = v;
			break;
		}
	/* the window's first column woff (negative: the padding) rounded
	   down to vw */
	int64_t w = x->win ? x->woff : 0, a = w >= 0 ? w / x->vw * x->vw
						     : -((-w + x->vw - 1) /
							 x->vw * x->vw);
	x->sh = w - a;
}

/* Can operand "x" of a nest whose window positions share a staged tile
 * be copied in 16-byte chunks (copy_text): weights stored with k
 * innermost ([o][r][s][c], pb-mma's pb.perm), whose window dimensions
 * are the window loops' counters themselves? Its ring is then
 * [slot][window..][tile][k], as the element copies' is. */
static int shared_chunks(const struct mnest *n, const struct operand *x)
{
	if (x->win || x->st > 1 || x->q != x->kdim || x->p != x->tdim)
		return 0;
	for (int t = 0; t < n->nt; t++)
		if (x->tmode[t] != TAP_DIM || !mlirValueIsNull(x->tbase[t]))
			return 0;
	return 1;
}

/* The padding of the rows of operand "o" in elements: 16 bytes, 32 for
 * 4-byte elements read one per lane (rows along the tile, not k). */
static int64_t pad_of(const struct operand *o)
{
	if (o->sw)
		return 0;
	if (o->elem)
		return 16 / o->eb;
	return (o->eb == 4 && o->q != o->kdim ? 32 : 16) / o->eb;
}

/* The elements in one 16-byte copy of operand "o". */
static int64_t chunk_of(const struct operand *o)
{
	return o->elem ? 1 : 16 / o->eb;
}

/* The elements of one slot of operand "o" of "n" for a k-tile of
 * "kt". */
static int64_t slot_elems(const struct mnest *n, const struct operand *o,
			  int64_t kt)
{
	int64_t ep = o->p == o->kdim ? kt : tile_ext(n, o);
	int64_t eq = o->q == o->kdim ? kt : tile_ext(n, o);
	return tap_points(n, o) * ep * (eq + pad_of(o));
}

/* Do the warp tiles of "n" take wgmma on "t" (docs/pb-smem.md, "wgmma
 * on sm_90a"): pb-mma's wgmma shape (warp tiles of 16 rows by the
 * block's columns, warpgroups of 4 warps over 64 rows), two 16-bit
 * operands, A stored with k innermost? B may be stored either way. An
 * operand may overrun its buffer along its tile dimension (C's last
 * rows or columns: the copies guarded, zeros past the end, stored
 * swizzled like the chunks they stand for); not along k. */
static int wgmma_nest(const struct pb_target *t, const struct mnest *n)
{
	if (!pb_target_has_wgmma(t) || n->fk != 16 || n->nop != 2 || n->win ||
	    n->wt[0] != 16 || n->bm[1] != n->wt[1] || n->bm[0] % 64 ||
	    n->wt[1] % 16 || n->wt[1] > 256)
		return 0;
	for (int i = 0; i < 2; i++) {
		const struct operand *x = &n->op[i];
		if (x->eb != 2 || x->klimit || x->wd != !x->isa ||
		    (x->isa && x->q != x->kdim))
			return 0;
	}
	return n->op[0].isa != n->op[1].isa;
}

/* The wgmma layout of operand "x" for a k-tile of "kt": rows of the
 * swizzle's width, along k (kt elements) when k is innermost, else
 * panels of the tile dimension of 64, 32 or 16 elements. */
static void wgmma_layout(struct operand *x, int64_t kt)
{
	x->panel = 0;
	if (x->q == x->kdim) {
		x->sw = kt * x->eb;
		return;
	}
	x->panel = x->ext % 64 == 0 ? 64 : x->ext % 32 == 0 ? 32 : 16;
	x->sw = x->panel * x->eb;
}

/* Choose the k-tile and the ring depth: the largest that fit the
 * target's shared memory per block beside what the block has already;
 * the innermost tile dimension must hold whole 16-byte chunks that the
 * warp's lanes copy evenly. An operand whose tile rows are not rows of
 * its buffer, or not 16-byte aligned ones, is left in global memory (a
 * 1x1 convolution's weights [oc][ic][1][1]; rows of 12 halves). 0 when
 * nothing is staged. */
static int plan(const struct pb_target *t, const struct pb_smem_opts *o,
		struct mnest *n, int64_t used, const char **why)
{
	static const int64_t kts[] = {32, 16, 8}, wkts[] = {64, 32, 16};
	static const int64_t sts[] = {3, 2, 1}, wsts[] = {4, 3, 2, 1};
	int keep = 0;
	for (int i = 0; i < n->nop; i++) {
		const struct operand *x = &n->op[i];
		int64_t last = mlirShapedTypeGetDimSize(mlirValueGetType(x->mem),
							x->rank - 1);
		if (!x->win && x->st == 1 && x->q == x->rank - 1 &&
		    last % chunk_of(x) == 0)
			n->op[keep++] = *x;
		else if (n->win || x->st > 1) {
			/* a convolution's: its window, or its weights
			   [o][c][r][s], element by element into [tile][k] */
			n->op[keep] = *x;
			n->op[keep].elem = 1;
			n->op[keep].p = x->tdim;
			n->op[keep++].q = x->kdim;
		}
	}
	n->nop = keep;
	*why = "no operand tile is rows of whole 16-byte copies of its buffer";
	if (!n->nop)
		return 0;
	n->wg = wgmma_nest(t, n);
	/* a convolution's: the window's positions inside each k-tile,
	   one staged tile for all of them, when its rings fit; else a
	   ring fill per position */
	n->shared = n->win && shared_nest(n);
	for (int i = 0; i < n->nop; i++) {
		n->shared &= n->op[i].elem || shared_chunks(n, &n->op[i]);
		shared_copies(&n->op[i]);
	}
	/* several image rows a block: their warps read different rows
	   of the input, which only the window's shared tile holds */
	*why = "a block of several image rows needs the window's shared "
	       "tile, which does not fit";
	if (n->hw > 1 && !n->shared)
		return 0;
	*why = "the warps' rings do not fit the shared memory";
retry:
	/* wgmma: k-tiles of 64 in 4, 3 or 2 stages within the static
	   shared memory; else, with the opt-in where an SM keeps enough
	   warps (pb_target_smem_fits), the longest k-tile in 4, 3 or 2
	   stages (more wgmma per barrier and copy); 1 stage last */
	for (int c = 0; c < (n->wg ? 15 : 9); c++) {
		int a = !n->wg ? c / 3 : c < 3 ? c : c < 12 ? (c - 3) % 3 : 3;
		int b = !n->wg ? c % 3 : c < 3 ? 0 : c < 12 ? (c - 3) / 3 : c - 12;
		int optin = n->wg && c >= 3;
		int64_t s = o->stages ? o->stages : n->wg ? wsts[a] : sts[a];
		int64_t kt = o->k_tile ? o->k_tile : n->wg ? wkts[b] : kts[b];
		int64_t bytes = used,
			ok = n->k % kt == 0 && kt % n->fk == 0 &&
			     (!n->wg || kt <= 64);
		for (int i = 0; i < n->nop && ok && n->wg; i++)
			wgmma_layout(&n->op[i], kt);
		for (int i = 0; i < n->nop && ok; i++) {
			const struct operand *x = &n->op[i];
			int64_t eq = x->q == x->kdim ? kt : tile_ext(n, x);
			int64_t ep = x->p == x->kdim ? kt : tile_ext(n, x);
			int64_t ce = chunk_of(x), ch = ep * eq / ce;
			ok = eq % ce == 0 && ch > 0;
			bytes += x->eb * s * slot_elems(n, x, kt);
		}
		if (ok && n->wg && !o->stages && s > 1 && s > n->k / kt)
			ok = 0; /* never more slots than k-tiles */
		/* shared: each thread copies one channel of the k-tile */
		if (n->shared && (32 * n->nw) % kt)
			ok = 0;
		if (ok && (optin ? pb_target_smem_fits(t, bytes, (int)n->nw)
				 : bytes <= t->smem_per_block)) {
			n->kt = kt;
			n->stages = s;
			n->bytes = bytes;
			return 1;
		}
	}
	if (n->shared && n->hw == 1) {
		n->shared = 0;
		goto retry;
	}
	return 0;
}

/* The ring type of operand "x": S x (the block's tile with the padded
 * innermost dimension), in workgroup memory. */
static void ring_type(struct pb_buf *t, const struct mnest *n,
		      const struct operand *x)
{
	int64_t ep = x->p == x->kdim ? n->kt : tile_ext(n, x);
	int64_t eq = x->q == x->kdim ? n->kt : tile_ext(n, x);
	int64_t td[MAXTAP];
	int nd = tap_dims(n, x, td);
	if (nd) {
		pb_buf_printf(t, "memref<%lldx", (long long)n->stages);
		for (int i = 0; i < nd; i++)
			pb_buf_printf(t, "%lldx", (long long)td[i]);
		pb_buf_printf(t, "%lldx%lldx", (long long)ep,
			      (long long)(eq + pad_of(x)));
	} else if (x->panel)
		pb_buf_printf(t, "memref<%lldx%lldx%lldx%lldx",
			      (long long)n->stages, (long long)(eq / x->panel),
			      (long long)ep, (long long)x->panel);
	else
		pb_buf_printf(t, "memref<%lldx%lldx%lldx",
			      (long long)n->stages, (long long)ep,
			      (long long)(eq + pad_of(x)));
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(x->mem)), t);
	pb_buf_puts(t, ", #gpu.address_space<workgroup>>");
}

/* The text of the store of "val" (a vector of "ce" elements of type
 * "e") into operand "x"'s ring %S<i> of type "r" at chunk (%r, %c) of
 * slot "slot" (window positions "taps"): wgmma's rings swizzled
 * (pb.swizzle), in panels of "x->panel" elements where B is stored
 * [k][n]. */
static void chunk_store_text(struct pb_buf *t, const struct operand *x,
			     int i, const char *val, const char *slot,
			     const char *taps, const struct pb_buf *r,
			     int64_t ce, const struct pb_buf *e)
{
	pb_buf_printf(t, "affine.vector_store %%%s, %%S%d[%%%s", val, i, slot);
	if (x->panel)
		pb_buf_printf(t, ", %%c floordiv %lld, %%r, %%c mod %lld] "
			      "{" PB_ATTR_SWIZZLE " = %lld : i64}",
			      (long long)x->panel, (long long)x->panel,
			      (long long)x->sw);
	else if (x->sw)
		pb_buf_printf(t, ", %%r, %%c] {" PB_ATTR_SWIZZLE
			      " = %lld : i64}", (long long)x->sw);
	else
		pb_buf_printf(t, "%s, %%r, %%c]", taps);
	pb_buf_printf(t, " : %s, vector<%lldx%s>\n", r->data, (long long)ce,
		      e->data);
}

/* The copy of operand "i" at k-tile origin "%<kt>" into slot "%<slot>":
 * 16-byte chunks, row-major over the block's tile, shared by its warps.
 * The loop over the warps is pb.share: on the GPU warp w runs iteration
 * w (pb-codegen), so the block's threads copy each chunk once; run
 * whole, as on the CPU, it copies the tile, which is what each warp
 * reads. */
static void elem_copy_text(struct pb_buf *t, const struct mnest *n, int i,
			   const char *kt, const char *slot);
static void tap_copy_text(struct pb_buf *t, const struct mnest *n, int i,
			  const char *kt, const char *slot);

static void copy_text(struct pb_buf *t, const struct mnest *n, int i,
		      const char *kt, const char *slot, int async)
{
	const struct operand *x = &n->op[i];
	if (x->elem && n->shared) {
		tap_copy_text(t, n, i, kt, slot);
		return;
	}
	if (x->elem) {
		elem_copy_text(t, n, i, kt, slot);
		return;
	}
	int64_t ep = x->p == x->kdim ? n->kt : x->ext;
	int64_t eq = x->q == x->kdim ? n->kt : x->ext;
	int64_t ce = chunk_of(x), cpr = eq / ce, ch = ep * cpr;
	int64_t per = 32 * n->nw, nq;
	struct pb_buf g = {0}, r = {0}, e = {0};
	pb_ir_type_print(mlirValueGetType(x->mem), &g);
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(x->mem)), &e);
	ring_type(&r, n, x);
	/* the window's positions of a shared tile (shared_chunks): digits
	   "%t<j>" of their own before the tile's, ring [slot][t..][r][c] */
	static const char *const rc[] = {"t0", "t1", "t2", "t3", "r", "c"};
	int64_t ext[MAXTAP + 2], scale[MAXTAP + 2];
	int tsub[MAXTAP], nd = 0;
	for (int tt = 0; n->shared && tt < n->nt; tt++)
		if (x->tmode[tt] == TAP_DIM) {
			tsub[nd] = x->tsub[tt];
			scale[nd] = 1;
			ext[nd++] = n->text[tt];
			ch *= n->text[tt];
		}
	ext[nd] = ep;
	ext[nd + 1] = cpr;
	scale[nd] = 1;
	scale[nd + 1] = ce;
	nq = (ch + per - 1) / per;
	const char *names[MAXTAP + 2];
	for (int j = 0; j < nd; j++)
		names[j] = rc[j];
	names[nd] = "r";
	names[nd + 1] = "c";
	char taps[32] = "";
	for (int j = 0, w = 0; j < nd; j++)
		w += snprintf(taps + w, sizeof(taps) - w, ", %%%s", rc[j]);
	struct pb_smem_digits dg;
	pb_smem_digits_init(&dg, nd + 2, ext, scale, per, nq);
	pb_smem_rounds_text(t, 6, n->nw, nq, &dg, names);
	if (ch % per)
		/* the last round's threads past the tile's chunks: none */
		pb_buf_printf(t, "          affine.if affine_set<(i) : (%lld - i "
			      ">= 0)>(%%ci) {\n", (long long)(ch - 1));
	if (x->limit || x->klimit) {
		/* chunks past the buffer's end (along the tile or along k):
		   zeros; a chunk is wholly in or out, as the buffer's
		   innermost dimension holds whole chunks (plan) */
		pb_buf_printf(t, "          %%g = affine.apply affine_map<(a, "
			      "b) -> (a + b)>(%%base%d, %s)\n"
			      "          %%gk = affine.apply affine_map<(a, "
			      "b) -> (a + b)>(%%%s, %s)\n"
			      "          affine.if affine_set<(d0, d1) : (", i,
			      x->tdim == x->p ? "%r" : "%c", kt,
			      x->kdim == x->p ? "%r" : "%c");
		if (x->limit)
			pb_buf_printf(t, "%lld - d0 >= 0%s",
				      (long long)(x->limit - 1),
				      x->klimit ? ", " : "");
		if (x->klimit)
			pb_buf_printf(t, "%lld - d1 >= 0",
				      (long long)(x->klimit - 1));
		pb_buf_puts(t, ")>(%g, %gk) {\n");
	}
	pb_buf_printf(t, "          %%v = affine.vector_load %%G%d[", i);
	for (int d = 0; d < x->rank; d++) {
		pb_buf_puts(t, d ? ", " : "");
		const char *within = d == x->p ? "%r" : "%c";
		int tj = -1;
		for (int j = 0; j < nd; j++)
			if (tsub[j] == d)
				tj = j;
		if (d == x->kdim)
			pb_buf_printf(t, "%%%s + %s", kt, within);
		else if (d == x->tdim)
			pb_buf_printf(t, "%%base%d + %s", i, within);
		else if (tj >= 0)
			pb_buf_printf(t, "%%%s", rc[tj]);
		else
			pb_buf_printf(t, "%%u%d_%d", i, d);
	}
	pb_buf_printf(t, "] : %s, vector<%lldx%s>\n", g.data, (long long)ce,
		      e.data);
	pb_buf_puts(t, "          ");
	chunk_store_text(t, x, i, "v", slot, taps, &r, ce, &e);
	/* zeros past the buffer's end, where the chunk would have gone:
	   in wgmma's rings swizzled alike (pb.swizzle), as the zeros of
	   C's last columns are chunks of rows that hold C's others (B
	   stored [k][n]) */
	if (x->limit || x->klimit) {
		pb_buf_printf(t, "          } else {\n"
			      "            %%z = arith.constant dense<0.000000e+00> "
			      ": vector<%lldx%s>\n            ",
			      (long long)ce, e.data);
		chunk_store_text(t, x, i, "z", slot, taps, &r, ce, &e);
		pb_buf_puts(t, "          }\n");
	}
	if (ch % per)
		pb_buf_puts(t, "          }\n");
	pb_buf_printf(t, "        }\n      } {" PB_ATTR_MAP " = \"thread\"%s}\n"
		      "      } {" PB_ATTR_SHARE "}\n",
		      async ? ", pb.async" : "");
	pb_buf_free(&g);
	pb_buf_free(&r);
	pb_buf_free(&e);
}

/* The copy of element-wise operand "i" (x->elem) at k-tile origin
 * "%<kt>" into slot "%<slot>" of its ring [tile][k]: one element a thread,
 * consecutive threads along the buffer's inner of the two dimensions (a
 * convolution's input: the image columns; its weights: the input
 * channels), synchronous (a global load and a shared store: cp.async
 * moves 4 bytes at least, and these are 2-byte elements transposed).
 * Elements outside the buffer (the window's left and right parts, window
 * rows above or below the image, K past its end) are zeros: the load is
 * guarded (scf.if, a predicated load on the GPU), so that the subscripts
 * stay affine in the round and the addresses of a thread's rounds differ
 * by constants (clamped subscripts, one select each, spilled on sm_80). */
static void elem_copy_text(struct pb_buf *t, const struct mnest *n, int i,
			   const char *kt, const char *slot)
{
	const struct operand *x = &n->op[i];
	int64_t ch = x->ext * n->kt, per = 32 * n->nw, nq = (ch + per - 1) / per;
	int along = x->tdim > x->kdim; /* threads along the tile */
	struct pb_buf g = {0}, r = {0}, e = {0};
	pb_ir_type_print(mlirValueGetType(x->mem), &g);
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(x->mem)), &e);
	ring_type(&r, n, x);
	/* the digits of a unit: [k][tile] when the threads run along the
	   tile, else [tile][k] */
	static const char *const tk[2][2] = {{"tp", "kc"}, {"kc", "tp"}};
	struct pb_smem_digits dg;
	pb_smem_digits_init(&dg, 2,
			    along ? (int64_t[]){n->kt, x->ext}
				  : (int64_t[]){x->ext, n->kt},
			    NULL, per, nq);
	pb_smem_rounds_text(t, 6, n->nw, nq, &dg, tk[along]);
	if (ch % per)
		pb_buf_printf(t, "          affine.if affine_set<(i) : (%lld - i "
			      ">= 0)>(%%ci) {\n", (long long)(ch - 1));
	pb_buf_printf(t, "          %%g = affine.apply affine_map<(a, b) -> "
		      "(a + b * %lld)>(%%base%d, %%tp)\n"
		      "          %%gk = affine.apply affine_map<(a, b) -> (a + b)>"
		      "(%%%s, %%kc)\n"
		      "          %%ok0 = arith.constant true\n"
		      "          %%z0 = arith.constant 0 : index\n",
		      (long long)x->st, i, kt);
	const char *ok = "%ok0";
	if (x->limit) {
		pb_buf_printf(t, "          %%lim = arith.constant %lld : index\n"
			      "          %%ok1 = arith.cmpi slt, %%g, %%lim : "
			      "index\n", (long long)x->limit);
		ok = "%ok1";
	}
	if (x->win) {
		/* the window's left part, before the image: negative */
		pb_buf_printf(t, "          %%ok2 = arith.cmpi sge, %%g, %%z0 : "
			      "index\n"
			      "          %%ok3 = arith.andi %s, %%ok2 : i1\n"
			      "          %%ok4 = arith.andi %%ok3, %%wok%d : i1\n",
			      ok, i);
		ok = "%ok4";
	}
	if (x->klimit) {
		pb_buf_printf(t, "          %%klim = arith.constant %lld : index\n"
			      "          %%ok5 = arith.cmpi slt, %%gk, %%klim : "
			      "index\n"
			      "          %%ok6 = arith.andi %%ok5, %s : i1\n",
			      (long long)x->klimit, ok);
		ok = "%ok6";
	}
	pb_buf_printf(t, "          %%vz = scf.if %s -> (%s) {\n"
		      "            %%v = memref.load %%G%d[", ok, e.data, i);
	for (int d = 0; d < x->rank; d++) {
		pb_buf_puts(t, d ? ", " : "");
		if (d == x->kdim)
			pb_buf_puts(t, "%gk");
		else if (d == x->tdim)
			pb_buf_puts(t, "%g");
		else
			pb_buf_printf(t, "%%u%d_%d", i, d);
	}
	pb_buf_printf(t, "] : %s\n            scf.yield %%v : %s\n"
		      "          } else {\n"
		      "            %%zero = arith.constant 0.000000e+00 : %s\n"
		      "            scf.yield %%zero : %s\n          }\n"
		      "          memref.store %%vz, %%S%d[%%%s, %%tp, %%kc] : %s\n",
		      g.data, e.data, e.data, e.data, i, slot, r.data);
	if (ch % per)
		pb_buf_puts(t, "          }\n");
	pb_buf_printf(t, "        }\n      } {" PB_ATTR_MAP " = \"thread\"}\n"
		      "      } {" PB_ATTR_SHARE "}\n");
	pb_buf_free(&g);
	pb_buf_free(&r);
	pb_buf_free(&e);
}

/* The copy of operand "i" of a nest whose window positions share one
 * staged tile a k-tile (n->shared) at k-tile origin "%<kt>" into slot
 * "%<slot>". Thread t of the block copies channel (k) t mod KT of
 *
 * - "vw" consecutive elements along the tile (the image columns of one
 *   window row: a vector load of 16, 8 or 4 bytes where aligned), or
 * - all the window positions the ring has dimensions for without a
 *   bound of their own (the weights' r and s: KHxKW loads at constant
 *   offsets from one address),
 *
 * at tile position t / KT, then J = threads / KT positions on, and so
 * on, for each window row; each is stored element by element into the
 * ring [slot][window..][tile][k] (the transpose to k innermost done in
 * registers). All of it is unrolled here, so that a thread's addresses
 * are one base and constants, and consecutive threads' shared stores
 * are consecutive. Elements outside the buffer (a window row above or
 * below the image, columns before or after it, k past K) are zeros: the
 * load is guarded as a whole (a copy's elements lie all inside or all
 * outside). */
static void tap_copy_text(struct pb_buf *t, const struct mnest *n, int i,
			  const char *kt, const char *slot)
{
	const struct operand *x = &n->op[i];
	MlirType mt = mlirValueGetType(x->mem);
	int64_t vw = x->vw, te = tile_ext(n, x), tcn = te / vw;
	int64_t threads = 32 * n->nw, jn = threads / n->kt;
	int rw[MAXTAP], nr = 0, ur[MAXTAP], nu = 0;
	int64_t nrows = 1, unr = 1;
	int64_t rext[MAXTAP];
	for (int tt = 0; tt < n->nt; tt++)
		if (x->tmode[tt] == TAP_DIM && !mlirValueIsNull(x->tbase[tt])) {
			rext[nr] = row_ext(n, x, tt);
			rw[nr++] = tt;
			nrows *= rext[nr - 1];
		} else if (x->tmode[tt] == TAP_DIM) {
			ur[nu++] = tt;
			unr *= n->text[tt];
		}
	int nl = vw > 1 ? 1 : (int)unr; /* loads a copy */
	struct pb_buf g = {0}, r = {0}, e = {0}, vt = {0};
	pb_ir_type_print(mt, &g);
	pb_ir_type_print(mlirShapedTypeGetElementType(mt), &e);
	ring_type(&r, n, x);
	if (vw > 1)
		pb_buf_printf(&vt, "vector<%lldx%s>", (long long)vw, e.data);
	for (int u = 0; vw == 1 && u < nl; u++)
		pb_buf_printf(&vt, "%s%s", u ? ", " : "", e.data);
	pb_buf_printf(t, "      affine.for %%ws = 0 to %lld {\n"
		      "      affine.parallel (%%l) = (0) to (32) {\n"
		      "          %%xk = affine.apply affine_map<(w, l) -> "
		      "((w * 32 + l) mod %lld)>(%%ws, %%l)\n"
		      "          %%xc = affine.apply affine_map<(w, l) -> "
		      "((w * 32 + l) floordiv %lld)>(%%ws, %%l)\n"
		      "          %%gk = affine.apply affine_map<(a, b) -> "
		      "(a + b)>(%%%s, %%xk)\n"
		      "          %%z0 = arith.constant 0 : index\n"
		      "          %%okk = arith.constant true\n",
		      (long long)n->nw, (long long)n->kt, (long long)n->kt, kt);
	if (x->klimit)
		pb_buf_printf(t, "          %%klim = arith.constant %lld : index\n"
			      "          %%okk1 = arith.cmpi slt, %%gk, %%klim : "
			      "index\n", (long long)x->klimit);
	if (x->limit)
		pb_buf_printf(t, "          %%lim = arith.constant %lld : index\n",
			      (long long)x->limit);
	for (int j = 0; j < nu; j++)
		for (int64_t v = 0; v < n->text[ur[j]]; v++)
			pb_buf_printf(t, "          %%k%lld_%d = arith.constant "
				      "%lld : index\n", (long long)v,
				      x->tsub[ur[j]], (long long)v);
	for (int j = 0; j < nr; j++)
		for (int64_t v = 0; v < rext[j]; v++)
			if (!j || v >= rext[j - 1])
				pb_buf_printf(t, "          %%kr%lld = arith.constant "
					      "%lld : index\n", (long long)v,
					      (long long)v);
	for (int64_t row = 0; row < nrows; row++) {
		/* the window rows' values, their subscripts and bounds */
		int64_t rv[MAXTAP], rem = row;
		for (int j = nr - 1; j >= 0; j--) {
			rv[j] = rem % rext[j];
			rem /= rext[j];
		}
		pb_buf_printf(t, "          %%okr%lld_0 = arith.constant true\n",
			      (long long)row);
		for (int j = 0; j < nr; j++) {
			int tt = rw[j];
			long long ro = (long long)row;
			pb_buf_printf(t, "          %%h%lld_%d = affine.apply "
				      "affine_map<(a) -> (a * %lld + %lld)>"
				      "(%%tb%d_%d)\n", ro, j,
				      (long long)x->tstr[tt],
				      (long long)(rv[j] + x->toff[tt]), i, tt);
			pb_buf_printf(t, "          %%hn%lld_%d = arith.constant %lld "
				      ": index\n", ro, j,
				      (long long)mlirShapedTypeGetDimSize(
					      mt, x->tsub[tt]));
			pb_buf_printf(t, "          %%hl%lld_%d = arith.cmpi sge, "
				      "%%h%lld_%d, %%z0 : index\n", ro, j, ro, j);
			pb_buf_printf(t, "          %%hh%lld_%d = arith.cmpi slt, "
				      "%%h%lld_%d, %%hn%lld_%d : index\n", ro, j,
				      ro, j, ro, j);
			pb_buf_printf(t, "          %%hb%lld_%d = arith.andi "
				      "%%hl%lld_%d, %%hh%lld_%d : i1\n", ro, j, ro,
				      j, ro, j);
			pb_buf_printf(t, "          %%okr%lld_%d = arith.andi "
				      "%%okr%lld_%d, %%hb%lld_%d : i1\n", ro, j + 1,
				      ro, j, ro, j);
		}
		for (int64_t c0 = 0; c0 < tcn; c0 += jn) {
			char id[48];
			snprintf(id, sizeof(id), "%lld_%lld", (long long)row,
				 (long long)c0);
			/* the last positions may lie past the tile */
			if (c0 + jn > tcn)
				pb_buf_printf(t, "          affine.if affine_set<(c) : "
					      "(%lld - c >= 0)>(%%xc) {\n",
					      (long long)(tcn - 1 - c0));
			pb_buf_printf(t, "          %%tp%s = affine.apply affine_map<"
				      "(c) -> (c * %lld + %lld)>(%%xc)\n"
				      "          %%g%s = affine.apply affine_map<"
				      "(a, b) -> (a + b)>(%%base%d, %%tp%s)\n",
				      id, (long long)vw, (long long)(c0 * vw),
				      id, i, id);
			char ok[80];
			snprintf(ok, sizeof(ok), "%%okr%lld_%d", (long long)row,
				 nr);
			if (x->klimit) {
				pb_buf_printf(t, "          %%oa%s = arith.andi %s, "
					      "%%okk1 : i1\n", id, ok);
				snprintf(ok, sizeof(ok), "%%oa%s", id);
			}
			if (x->limit) {
				pb_buf_printf(t, "          %%ol%s = arith.cmpi slt, "
					      "%%g%s, %%lim : index\n"
					      "          %%ob%s = arith.andi %s, "
					      "%%ol%s : i1\n", id, id, id, ok, id);
				snprintf(ok, sizeof(ok), "%%ob%s", id);
			}
			if (x->win) {
				pb_buf_printf(t, "          %%ow%s = arith.cmpi sge, "
					      "%%g%s, %%z0 : index\n"
					      "          %%oc%s = arith.andi %s, "
					      "%%ow%s : i1\n", id, id, id, ok, id);
				snprintf(ok, sizeof(ok), "%%oc%s", id);
			}
			pb_buf_printf(t, "          %%vz%s:%d = scf.if %s -> (%s) "
				      "{\n", id, nl, ok, vt.data);
			for (int u = 0; u < nl; u++) {
				pb_buf_printf(t, "            %%v%d = %s %%G%d[", u,
					      vw > 1 ? "vector.load"
						     : "memref.load", i);
				for (int d = 0; d < x->rank; d++) {
					int64_t urem = u, uv = -1;
					int rj = -1;
					for (int j = 0; j < nr; j++)
						if (x->tsub[rw[j]] == d)
							rj = j;
					for (int j = nu - 1; j >= 0; j--) {
						if (x->tsub[ur[j]] == d)
							uv = urem % n->text[ur[j]];
						urem /= n->text[ur[j]];
					}
					pb_buf_puts(t, d ? ", " : "");
					if (d == x->kdim)
						pb_buf_puts(t, "%gk");
					else if (d == x->tdim)
						pb_buf_printf(t, "%%g%s", id);
					else if (rj >= 0)
						pb_buf_printf(t, "%%h%lld_%d",
							      (long long)row, rj);
					else if (uv >= 0)
						pb_buf_printf(t, "%%k%lld_%d",
							      (long long)uv, d);
					else
						pb_buf_printf(t, "%%u%d_%d", i, d);
				}
				if (vw > 1)
					pb_buf_printf(t, "] {alignment = %lld} : "
						      "%s, %s\n",
						      (long long)(vw * x->eb),
						      g.data, vt.data);
				else
					pb_buf_printf(t, "] : %s\n", g.data);
			}
			pb_buf_puts(t, "            scf.yield ");
			for (int u = 0; u < nl; u++)
				pb_buf_printf(t, "%s%%v%d", u ? ", " : "", u);
			pb_buf_printf(t, " : %s\n          } else {\n", vt.data);
			if (vw > 1)
				pb_buf_printf(t, "            %%zero = arith.constant "
					      "dense<0.000000e+00> : %s\n",
					      vt.data);
			else
				pb_buf_printf(t, "            %%zero = arith.constant "
					      "0.000000e+00 : %s\n", e.data);
			pb_buf_puts(t, "            scf.yield ");
			for (int u = 0; u < nl; u++)
				pb_buf_printf(t, "%s%%zero", u ? ", " : "");
			pb_buf_printf(t, " : %s\n          }\n", vt.data);
			/* the stores, element by element */
			for (int64_t v = 0; v < vw * nl; v++) {
				char val[96];
				if (vw > 1) {
					pb_buf_printf(t, "          %%e%s_%lld = "
						      "vector.extract %%vz%s#0[%lld] "
						      ": %s from %s\n", id,
						      (long long)v, id, (long long)v,
						      e.data, vt.data);
					snprintf(val, sizeof(val), "%%e%s_%lld", id,
						 (long long)v);
				} else {
					snprintf(val, sizeof(val), "%%vz%s#%lld", id,
						 (long long)v);
				}
				long long pv = (long long)(vw > 1 ? v : 0);
				if (x->st > 1)
					/* by phase (phase_px) */
					pb_buf_printf(t, "          %%p%s_%lld = "
						      "affine.apply affine_map<(a) "
						      "-> (((a + %lld) mod %lld) * "
						      "%lld + (a + %lld) floordiv "
						      "%lld)>(%%tp%s)\n", id,
						      (long long)v, pv,
						      (long long)x->st,
						      (long long)phase_px(n, x),
						      pv, (long long)x->st, id);
				else
					pb_buf_printf(t, "          %%p%s_%lld = "
						      "affine.apply affine_map<(a) "
						      "-> (a + %lld)>(%%tp%s)\n",
						      id, (long long)v, pv, id);
				int64_t urem = v, uvs[MAXTAP];
				for (int j = nu - 1; j >= 0; j--) {
					uvs[j] = urem % n->text[ur[j]];
					urem /= n->text[ur[j]];
				}
				pb_buf_printf(t, "          memref.store %s, %%S%d[%%%s",
					      val, i, slot);
				for (int tt = 0, j = 0, k = 0; tt < n->nt; tt++) {
					if (x->tmode[tt] != TAP_DIM)
						continue;
					if (!mlirValueIsNull(x->tbase[tt]))
						pb_buf_printf(t, ", %%kr%lld",
							      (long long)rv[k++]);
					else
						pb_buf_printf(t, ", %%k%lld_%d",
							      (long long)uvs[j++],
							      x->tsub[tt]);
				}
				pb_buf_printf(t, ", %%p%s_%lld, %%xk] : %s\n", id,
					      (long long)v, r.data);
			}
			if (c0 + jn > tcn)
				pb_buf_puts(t, "          }\n");
		}
	}
	pb_buf_printf(t, "      } {" PB_ATTR_MAP " = \"thread\"}\n"
		      "      } {" PB_ATTR_SHARE "}\n");
	pb_buf_free(&g);
	pb_buf_free(&r);
	pb_buf_free(&e);
	pb_buf_free(&vt);
}

/* Does the pipelined loop of "n" run as two loops, over rounds of S
 * k-tiles and over the S slots (pb_smem_slot_bound_text), so that a
 * k-tile's slot is a loop counter rather than (kk floordiv KT) mod S? */
static int ring_loops(const struct mnest *n)
{
	/* not wgmma's: its descriptors' k offsets are built from kk
	   (tests/lit/pb-smem/stage-wgmma.mlir) */
	return n->stages > 1 && !n->wg;
}

/* The body of the pipelined loop "outer" (loop_text's) that holds a
 * k-tile's copies and reads: the k-tile loop's, or the slot loop's with
 * ring_loops; its k-tile origin into "*kk" and its slot into "*slot". */
static MlirBlock pipelined_body(const struct mnest *n, MlirOperation outer,
				MlirValue *kk, MlirValue *slot)
{
	MlirBlock ob = mlirRegionGetFirstBlock(mlirOperationGetRegion(outer, 0));
	if (!ring_loops(n)) {
		*kk = mlirBlockGetArgument(ob, 0);
		*slot = mlirOperationGetResult(mlirBlockGetFirstOperation(ob), 0);
		return ob;
	}
	MlirOperation sl = mlirBlockGetFirstOperation(ob);
	MlirBlock sb = mlirRegionGetFirstBlock(mlirOperationGetRegion(sl, 0));
	*slot = mlirBlockGetArgument(sb, 0);
	*kk = mlirOperationGetResult(mlirBlockGetFirstOperation(sb), 0);
	return sb;
}

/* Append to "t" the yield of "nacc" values "%<v><i>" of type "acct". */
static void yield_text(struct pb_buf *t, const char *ind, const char *v,
		       int nacc, const char *acct)
{
	pb_buf_printf(t, "%saffine.yield ", ind);
	for (int i = 0; i < nacc; i++)
		pb_buf_printf(t, "%s%s%d", i ? ", " : "", v, i);
	pb_buf_printf(t, " : %s\n", acct);
}

/* The end of the pipelined loop's text: the k-tile (or slot) loop
 * yields the accumulators "<v>0 .." and closes, then the rounds' loop
 * when "rl", then with "s" stages a wait for every copy in flight. */
static void loop_end_text(struct pb_buf *t, const char *v, int nacc,
			  const char *acct, int rl, int s)
{
	yield_text(t, "    ", v, nacc, acct);
	pb_buf_puts(t, "  }\n");
	if (rl) {
		yield_text(t, "    ", "%q#", nacc, acct);
		pb_buf_puts(t, "  }\n");
	}
	if (s > 1)
		pb_buf_puts(t, "  gpu.barrier {pb.wait = 0 : i64}\n");
	pb_buf_puts(t, "  return\n}\n");
}

/* The text of the pipelined loop: its arguments are the accumulators'
 * initial values, the global buffers, the rings, the warp loop's
 * counters, the operands' origins and other subscripts. */
static void loop_text(struct pb_buf *t, const struct mnest *n, int nacc,
		      MlirValue *args, int *nargs)
{
	int s = (int)n->stages;
	int64_t kt = n->kt;
	struct pb_buf acct = {0};
	*nargs = 0;
	/* shared: the window loops move into the k-tile loop */
	MlirOperation top = n->shared ? n->tloop[0] : n->kloop;
	pb_buf_puts(t, "func.func @t(");
	for (int i = 0; i < nacc; i++) {
		args[(*nargs)++] = mlirOperationGetOperand(top, i);
		pb_buf_printf(t, "%s%%i%d: vector<16x8xf32>", i ? ", " : "", i);
	}
	for (int i = 0; i < n->nop; i++) {
		const struct operand *x = &n->op[i];
		struct pb_buf r = {0};
		ring_type(&r, n, x);
		args[(*nargs)++] = x->mem;
		args[(*nargs)++] = x->ring;
		args[(*nargs)++] = x->bops[0];
		pb_buf_printf(t, ", %%G%d: ", i);
		pb_ir_type_print(mlirValueGetType(x->mem), t);
		pb_buf_printf(t, ", %%S%d: %s, %%bo%d: index", i, r.data, i);
		if (x->win && !n->shared) {
			args[(*nargs)++] = x->tap;
			args[(*nargs)++] = x->wok;
			pb_buf_printf(t, ", %%tap%d: index, %%wok%d: i1", i, i);
		}
		for (int tt = 0; n->shared && tt < n->nt; tt++)
			if (x->tmode[tt] == TAP_DIM &&
			    !mlirValueIsNull(x->tbase[tt])) {
				args[(*nargs)++] = x->tbase[tt];
				pb_buf_printf(t, ", %%tb%d_%d: index", i, tt);
			}
		for (int d = 0; d < x->rank; d++)
			if (d != x->kdim && d != x->tdim &&
			    !(n->shared &&
			      pb_ir_defined_in(x->uni[d], n->tloop[0]))) {
				args[(*nargs)++] = x->uni[d];
				pb_buf_printf(t, ", %%u%d_%d: index", i, d);
			}
		pb_buf_free(&r);
	}
	pb_buf_puts(t, ") {\n");
	/* the block's tiles start at the block's origin (the warps' at the
	   warp's, read there) */
	for (int i = 0; i < n->nop; i++)
		if (n->op[i].win && n->shared)
			/* a window staged for all its positions: from the
			   first column of the first one */
			pb_buf_printf(t, "  %%base%d = affine.apply affine_map<(a) "
				      "-> (a * %lld + %lld)>(%%bo%d)\n", i,
				      (long long)n->op[i].st,
				      (long long)(n->op[i].st * n->op[i].boff +
						  n->op[i].woff - n->op[i].sh),
				      i);
		else if (n->op[i].win)
			/* a window: shifted by the window position (columns
			   S (origin + row) + tap + woff when strided) */
			pb_buf_printf(t, "  %%base%d = affine.apply affine_map<(a, "
				      "b) -> (a * %lld + b + %lld)>(%%bo%d, "
				      "%%tap%d)\n", i, (long long)n->op[i].st,
				      (long long)(n->op[i].st * n->op[i].boff +
						  n->op[i].woff),
				      i, i);
		else
			pb_buf_printf(t, "  %%base%d = affine.apply affine_map<(a) "
				      "-> (a * %lld + %lld)>(%%bo%d)\n", i,
				      (long long)n->op[i].st,
				      (long long)(n->op[i].st * n->op[i].boff +
						  n->op[i].woff), i);
	for (int i = 0; i < nacc; i++)
		pb_buf_printf(&acct, "%svector<16x8xf32>", i ? ", " : "");
	/* the prologue */
	for (int p = 0; p + 1 < s; p++) {
		pb_buf_printf(t, "  %%pk%d = arith.constant %lld : index\n"
			      "  %%ps%d = arith.constant %d : index\n", p,
			      (long long)(p * kt), p, p);
		char kts[16], sls[16];
		snprintf(kts, sizeof(kts), "pk%d", p);
		snprintf(sls, sizeof(sls), "ps%d", p);
		for (int i = 0; i < n->nop; i++)
			copy_text(t, n, i, kts, sls, 1);
	}
	int rl = ring_loops(n);
	if (rl) {
		/* rounds of S k-tiles, the slot a loop counter */
		pb_buf_printf(t, "  %%o:%d = affine.for %%k0 = 0 to %lld step "
			      "%lld iter_args(", nacc, (long long)n->k,
			      (long long)(s * kt));
		for (int i = 0; i < nacc; i++)
			pb_buf_printf(t, "%s%%c%d = %%i%d", i ? ", " : "", i, i);
		pb_buf_printf(t, ") -> (%s) {\n  %%q:%d = affine.for %%slot = 0 "
			      "to ", acct.data, nacc);
		pb_smem_slot_bound_text(t, n->k, kt, s);
		pb_buf_puts(t, " iter_args(");
		for (int i = 0; i < nacc; i++)
			pb_buf_printf(t, "%s%%a%d = %%c%d", i ? ", " : "", i, i);
		pb_buf_printf(t, ") -> (%s) {\n"
			      "    %%kk = affine.apply affine_map<(a, b) -> "
			      "(a + b * %lld)>(%%k0, %%slot)\n", acct.data,
			      (long long)kt);
	} else {
		pb_buf_printf(t, "  %%o:%d = affine.for %%kk = 0 to %lld step "
			      "%lld iter_args(", nacc, (long long)n->k,
			      (long long)kt);
		for (int i = 0; i < nacc; i++)
			pb_buf_printf(t, "%s%%a%d = %%i%d", i ? ", " : "", i, i);
		pb_buf_printf(t, ") -> (%s) {\n", acct.data);
		pb_buf_printf(t, "    %%slot = affine.apply affine_map<(k) -> "
			      "((k floordiv %lld) mod %d)>(%%kk)\n",
			      (long long)kt, s);
	}
	if (rl) {
		int nasync = 0;
		for (int i = 0; i < n->nop; i++)
			nasync += !n->op[i].elem;
		pb_buf_printf(t, "    gpu.barrier {pb.wait = %d : i64}\n"
			      "    %%nk = affine.apply affine_map<(k) -> ((k + "
			      "%lld) mod %lld)>(%%kk)\n"
			      "    %%ns = affine.apply affine_map<(s) -> ((s + "
			      "%d) mod %d)>(%%slot)\n",
			      (s - 2) * nasync, (long long)((s - 1) * kt),
			      (long long)n->k, s - 1, s);
		for (int i = 0; i < n->nop; i++)
			copy_text(t, n, i, "nk", "ns", 1);
	} else if (s > 1) {
		/* each operand's copy is a group of its own: the k-tiles
		   after this one may leave (S - 2) x operands pending */
		int nasync = 0;
		for (int i = 0; i < n->nop; i++)
			nasync += !n->op[i].elem;
		pb_buf_printf(t, "    gpu.barrier {pb.wait = %d : i64}\n",
			      (s - 2) * nasync);
		pb_buf_printf(t, "    %%nk = affine.apply affine_map<(k) -> ((k + "
			      "%lld) mod %lld)>(%%kk)\n"
			      "    %%ns = affine.apply affine_map<(k) -> ((k "
			      "floordiv %lld + %d) mod %d)>(%%kk)\n",
			      (long long)((s - 1) * kt), (long long)n->k,
			      (long long)kt, s - 1, s);
		for (int i = 0; i < n->nop; i++)
			copy_text(t, n, i, "nk", "ns", 1);
	} else {
		pb_buf_puts(t, "    gpu.barrier\n");
		for (int i = 0; i < n->nop; i++)
			copy_text(t, n, i, "kk", "slot", 0);
		pb_buf_puts(t, "    gpu.barrier\n");
	}
	if (n->shared) {
		/* the window loops go here (stage_shared) */
		loop_end_text(t, "%a", nacc, acct.data, rl, s);
		pb_buf_free(&acct);
		return;
	}
	pb_buf_printf(t, "    %%in:%d = affine.for %%k = 0 to %lld step %lld "
		      "iter_args(", nacc, (long long)kt, (long long)n->fk);
	for (int i = 0; i < nacc; i++)
		pb_buf_printf(t, "%s%%b%d = %%a%d", i ? ", " : "", i, i);
	pb_buf_printf(t, ") -> (%s) {\n"
		      "      %%kabs = affine.apply affine_map<(a, b) -> (a + b)>"
		      "(%%kk, %%k)\n      affine.yield ", acct.data);
	for (int i = 0; i < nacc; i++)
		pb_buf_printf(t, "%s%%b%d", i ? ", " : "", i);
	/* wgmma's k-tile unrolled (pb-codegen): its descriptors' k offsets
	   constants, its wgmmas issued back to back */
	pb_buf_printf(t, " : %s\n    }%s\n", acct.data,
		      n->wg ? " {pb.unroll}" : "");
	loop_end_text(t, "%in#", nacc, acct.data, rl, s);
	pb_buf_free(&acct);
}

/* Read "r" of operand "i" from its ring: slot "slot", the tile's
 * offsets (the warp's origin plus the read's along the tile dimension,
 * "k" along k). */
static int ring_read(struct pb_ctx *ctx, const struct mnest *n, int i, int j,
		     MlirValue slot, MlirValue k)
{
	const struct operand *x = &n->op[i];
	MlirOperation r = x->read[j];
	MlirType vt = mlirValueGetType(mlirOperationGetResult(r, 0));
	struct pb_buf t = {0}, rt = {0};
	struct pb_ir_ops out = {0};
	ring_type(&rt, n, x);
	/* vector dimension 0 along the ring's dimension 1 or 2 */
	int v0 = pb_kernel_transfer_dim(r, 0) == x->p ? 1 : 2;
	char sw[64] = "";
	if (x->sw)
		snprintf(sw, sizeof(sw), ", " PB_ATTR_SWIZZLE " = %lld : i64",
			 (long long)x->sw);
	pb_buf_printf(&t, "func.func @t(%%S: %s, %%s: index, %%k: index, "
		      "%%w: index, %%p: ", rt.data);
	pb_ir_type_print(mlirShapedTypeGetElementType(vt), &t);
	/* all the window's positions in the ring: its dimensions at the
	   window loops' counters, its columns shifting the tile */
	/* the padding value, after the read's subscripts (of A's view when
	   strided) */
	int rr = (int)mlirShapedTypeGetRank(
		mlirValueGetType(mlirOperationGetOperand(r, 0)));
	MlirValue args[6 + 2 * MAXTAP] = {x->ring, slot, k, x->bops[1],
					  mlirOperationGetOperand(r, 1 + rr)};
	int na = 5, nd = 0, tc = -1, hd = -1;
	for (int tt = 0; n->shared && tt < n->nt; tt++)
		if (x->tmode[tt] == TAP_TILE)
			tc = tt;
	if (tc >= 0) {
		args[na++] = tap_iv(n, tc);
		pb_buf_puts(&t, ", %tc: index");
	}
	for (int tt = 0; n->shared && tt < n->nt; tt++)
		if (x->tmode[tt] == TAP_DIM && x->twarp[tt]) {
			/* the window row of the warp's image row: the
			   ring's row tap + the warp's */
			args[na++] = tap_iv(n, tt);
			args[na++] = n->hiv;
			hd = nd;
			pb_buf_printf(&t, ", %%t%dt: index, %%t%dh: index", nd,
				      nd);
			nd++;
		} else if (x->tmode[tt] == TAP_DIM) {
			args[na++] = tap_iv(n, tt);
			pb_buf_printf(&t, ", %%t%d: index", nd++);
		}
	if (tc >= 0 && x->st > 1)
		/* the window column's phase, its rows consecutive there */
		pb_buf_printf(&t, ") {\n  %%o = affine.apply affine_map<(w, c) -> "
			      "(w + %lld + (c + %lld) floordiv %lld + ((c + %lld) "
			      "mod %lld) * %lld)>(%%w, %%tc)\n",
			      (long long)x->off[j], (long long)x->sh,
			      (long long)x->st, (long long)x->sh,
			      (long long)x->st, (long long)phase_px(n, x));
	else if (tc >= 0)
		pb_buf_printf(&t, ") {\n  %%o = affine.apply affine_map<(w, c) -> "
			      "(w + c + %lld)>(%%w, %%tc)\n",
			      (long long)(x->off[j] + x->sh));
	else
		pb_buf_printf(&t, ") {\n  %%o = affine.apply affine_map<(w) -> "
			      "(w + %lld)>(%%w)\n", (long long)x->off[j]);
	if (hd >= 0)
		pb_buf_printf(&t, "  %%t%d = affine.apply affine_map<(a, b) -> "
			      "(a + b)>(%%t%dt, %%t%dh)\n", hd, hd, hd);
	if (nd) {
		/* [slot][window..][tile][k] */
		pb_buf_puts(&t, "  %v = vector.transfer_read %S[%s");
		for (int d = 0; d < nd; d++)
			pb_buf_printf(&t, ", %%t%d", d);
		pb_buf_puts(&t, ", %o, %k], %p {in_bounds = [true, true], "
			    "permutation_map = affine_map<(a");
		for (int d = 0; d < nd; d++)
			pb_buf_printf(&t, ", b%d", d);
		pb_buf_printf(&t, ", y, z) -> (%s)>} : %s, ",
			      v0 == 1 ? "y, z" : "z, y", rt.data);
	} else if (x->panel)
		/* B [k][n] in panels: [slot][n / P][k][n mod P] */
		pb_buf_printf(&t, "  %%pn = affine.apply affine_map<(o) -> (o "
			      "floordiv %lld)>(%%o)\n"
			      "  %%pc = affine.apply affine_map<(o) -> (o mod "
			      "%lld)>(%%o)\n"
			      "  %%v = vector.transfer_read %%S[%%s, %%pn, %%k, "
			      "%%pc], %%p {in_bounds = [true, true], "
			      "permutation_map = affine_map<(a, b, c, d) -> "
			      "(c, d)>%s} : %s, ",
			      (long long)x->panel, (long long)x->panel, sw,
			      rt.data);
	else
		pb_buf_printf(&t, "  %%v = vector.transfer_read %%S[%%s, %s, "
			      "%s], %%p {in_bounds = [true, true], "
			      "permutation_map = affine_map<(a, b, c) -> (%s, "
			      "%s)>%s} : %s, ",
			      x->p == x->kdim ? "%k" : "%o",
			      x->q == x->kdim ? "%k" : "%o",
			      v0 == 1 ? "b" : "c", v0 == 1 ? "c" : "b", sw,
			      rt.data);
	pb_ir_type_print(vt, &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, r, na, args,
				   mlirOperationGetLocation(r), &out);
	MlirValue mask = x->win ? mlirOperationGetOperand(r, 2 + rr)
				: (MlirValue){NULL};
	if (rc == PB_OK) {
		mlirValueReplaceAllUsesOfWith(
			mlirOperationGetResult(r, 0),
			mlirOperationGetResult(out.v[out.n - 1], 0));
		mlirOperationDestroy(r);
	}
	/* a window's mask: the ring holds its zeros; its vector
	   operations go with the read (the index ones fold away) */
	while (rc == PB_OK && !mlirValueIsNull(mask) &&
	       mlirValueIsAOpResult(mask) &&
	       mlirOpOperandIsNull(mlirValueGetFirstUse(mask))) {
		MlirOperation d = mlirOpResultGetOwner(mask);
		MlirValue next = {NULL};
		for (intptr_t j = 0; j < mlirOperationGetNumOperands(d); j++) {
			MlirValue v = mlirOperationGetOperand(d, j);
			if (mlirTypeIsAVector(mlirValueGetType(v)) &&
			    mlirValueIsAOpResult(v) &&
			    !pb_ir_op_is(mlirOpResultGetOwner(v),
					 "arith.constant"))
				next = v;
		}
		mlirOperationDestroy(d);
		mask = next;
	}
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	pb_buf_free(&rt);
	return rc;
}

/* The window loops of "n" (n->shared) moved into the k-tile loop of
 * the pipelined loop "out" (loop_text's, instantiated before them):
 *
 *   %acc = affine.for %kk = 0 to K step KT iter_args(..)
 *     barrier, copies of the k-tile of all the window's positions
 *     affine.for %r .. affine.for %s ..          (pb-mma's, moved here)
 *       affine.for %k = 0 to KT step 16 ..       (was 0 to K)
 *         the reads, from the ring at [slot][r..][tile + s][k]
 *
 * so that each k-tile is staged once for all KHxKW positions. */
static int stage_shared(struct pb_ctx *ctx, struct mnest *n,
			struct pb_ir_ops *out)
{
	MlirOperation outer = {NULL}, top = n->tloop[0];
	int nacc = (int)mlirOperationGetNumResults(top), rc = PB_OK;
	for (int i = 0; i < out->n; i++)
		if (pb_ir_op_is(out->v[i], "affine.for") &&
		    mlirOperationGetNumResults(out->v[i]))
			outer = out->v[i];
	pb_ir_ops_free(out);
	MlirValue kk, slot;
	MlirBlock ob = pipelined_body(n, outer, &kk, &slot);
	MlirOperation oyield = mlirBlockGetTerminator(ob);
	for (int i = 0; i < nacc; i++)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(top, i),
					      mlirOperationGetResult(outer, i));
	mlirOperationMoveBefore(top, oyield);
	for (int i = 0; i < nacc; i++) {
		mlirOperationSetOperand(top, i, mlirBlockGetArgument(ob, 1 + i));
		mlirOperationSetOperand(oyield, i, mlirOperationGetResult(top, i));
	}
	/* the k loop over one k-tile, at kk + k */
	MlirContext mc = mlirOperationGetContext(n->kloop);
	mlirOperationSetAttributeByName(
		n->kloop, mlirStringRefCreateFromCString("upperBoundMap"),
		mlirAffineMapAttrGet(mlirAffineMapConstantGet(mc, n->kt)));
	MlirBlock kb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->kloop, 0));
	MlirValue k = mlirBlockGetArgument(kb, 0), ka[2] = {kk, k};
	struct pb_ir_ops ko = {0};
	rc = pb_ir_instantiate(ctx, "func.func @t(%a: index, %b: index) {\n"
			       "  %r = affine.apply affine_map<(a, b) -> "
			       "(a + b)>(%a, %b)\n  return\n}\n",
			       mlirBlockGetFirstOperation(kb), 2, ka,
			       mlirOperationGetLocation(n->kloop), &ko);
	if (rc != PB_OK || ko.n != 1) {
		pb_ir_ops_free(&ko);
		return PB_ERR;
	}
	MlirOperation kabs = ko.v[0];
	pb_ir_ops_free(&ko);
	mlirValueReplaceAllUsesOfWith(k, mlirOperationGetResult(kabs, 0));
	mlirOperationSetOperand(kabs, 1, k);
	for (int i = 0; i < n->nop && rc == PB_OK; i++)
		for (int j = 0; j < n->op[i].n && rc == PB_OK; j++)
			rc = ring_read(ctx, n, i, j, slot, k);
	return rc;
}

/* Stage the operands of "n": the rings, the pipelined loop, the old
 * reduction loop's body moved into its inner loop. */
static int stage(struct pb_ctx *ctx, struct mnest *n)
{
	MlirLocation loc = mlirOperationGetLocation(n->kloop);
	MlirBlock bb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->block, 0));
	int nacc = (int)mlirOperationGetNumResults(n->kloop), nargs, rc = PB_OK;
	MlirValue args[64 + 6 * PB_KERNEL_MAXD];
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	if (nacc > 32)
		return PB_OK;
	for (int i = 0; i < n->nop && rc == PB_OK; i++) {
		struct pb_buf r = {0};
		MlirOperation a;
		ring_type(&r, n, &n->op[i]);
		rc = pb_kernel_workgroup_alloc(ctx, r.data,
					       mlirBlockGetFirstOperation(bb),
					       loc, &a);
		pb_buf_free(&r);
		if (rc == PB_OK) {
			n->op[i].ring = mlirOperationGetResult(a, 0);
			MlirOperation d = pb_ir_op_create(loc, "memref.dealloc",
							  1, &n->op[i].ring);
			mlirBlockInsertOwnedOperationBefore(
				bb, mlirBlockGetTerminator(bb), d);
		}
	}
	if (rc != PB_OK)
		return rc;
	loop_text(&t, n, nacc, args, &nargs);
	rc = pb_ir_instantiate(ctx, t.data, n->shared ? n->tloop[0] : n->kloop,
			       nargs, args, loc, &out);
	pb_buf_free(&t);
	if (rc != PB_OK) {
		pb_ir_ops_free(&out);
		return rc;
	}
	if (n->shared)
		return stage_shared(ctx, n, &out);
	/* the new loops */
	MlirOperation outer = {NULL}, inner = {NULL};
	for (int i = 0; i < out.n; i++)
		if (pb_ir_op_is(out.v[i], "affine.for") &&
		    mlirOperationGetNumResults(out.v[i]))
			outer = out.v[i];
	pb_ir_ops_free(&out);
	MlirValue kk, slot;
	MlirBlock ob = pipelined_body(n, outer, &kk, &slot);
	for (MlirOperation o = mlirBlockGetFirstOperation(ob);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (pb_ir_op_is(o, "affine.for") &&
		    mlirOperationGetNumResults(o))
			inner = o;
	MlirBlock ib = mlirRegionGetFirstBlock(mlirOperationGetRegion(inner, 0));
	MlirOperation kabs = mlirBlockGetFirstOperation(ib);
	MlirOperation iyield = mlirBlockGetTerminator(ib);
	MlirBlock kb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->kloop, 0));
	/* the old body into the inner loop: k becomes kk + k, the carried
	   values the inner loop's */
	mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(kb, 0),
				      mlirOperationGetResult(kabs, 0));
	for (int i = 0; i < nacc; i++)
		mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(kb, 1 + i),
					      mlirBlockGetArgument(ib, 1 + i));
	MlirOperation oyield = mlirBlockGetTerminator(kb);
	while (!mlirOperationEqual(mlirBlockGetFirstOperation(kb), oyield))
		mlirOperationMoveBefore(mlirBlockGetFirstOperation(kb), iyield);
	for (int i = 0; i < nacc; i++)
		mlirOperationSetOperand(iyield, i,
					mlirOperationGetOperand(oyield, i));
	for (int i = 0; i < nacc; i++)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(n->kloop, i),
					      mlirOperationGetResult(outer, i));
	mlirOperationDestroy(n->kloop);
	/* the reads from the rings, at the inner loop's k */
	MlirValue k = mlirBlockGetArgument(ib, 0);
	for (int i = 0; i < n->nop && rc == PB_OK; i++)
		for (int j = 0; j < n->op[i].n && rc == PB_OK; j++)
			rc = ring_read(ctx, n, i, j, slot, k);
	return rc;
}

int pb_smem_stage_mma(struct pb_ctx *ctx, MlirModule m,
		      const struct pb_smem_opts *o)
{
	const struct pb_target *t = pb_target_of(ctx);
	struct pb_ir_ops blocks = {0};
	int rc = t ? PB_OK : PB_ERR;
	pb_ir_collect(mlirModuleGetOperation(m), "affine.parallel", &blocks);
	for (int i = 0; i < blocks.n && rc == PB_OK; i++) {
		struct mnest n;
		const char *why;
		if (pb_contract_map_of(blocks.v[i]) != PB_MAP_BLOCK ||
		    !find(blocks.v[i], &n, &why))
			continue;
		MlirLocation loc = mlirOperationGetLocation(blocks.v[i]);
		if (!plan(t, o, &n, pb_kernel_workgroup_bytes(blocks.v[i]),
			  &why)) {
			if (o->remarks)
				pb_remark_at(ctx, loc, "warp tiles not staged: "
					     "%s", why);
			continue;
		}
		if (o->remarks)
			pb_remark_at(ctx, loc, "warp tiles staged: %lld "
				     "operands, %lld stages of k-tile %lld, "
				     "%lld bytes of shared memory for %lld "
				     "warps%s%s",
				     (long long)n.nop, (long long)n.stages,
				     (long long)n.kt, (long long)n.bytes,
				     (long long)n.nw,
				     n.wg ? ", in wgmma's swizzled layout"
					  : "",
				     n.shared ? ", one tile for all the "
						"window's positions"
					      : n.win ? ", a ring fill per "
							"window position"
						      : "");
		rc = stage(ctx, &n);
	}
	pb_ir_ops_free(&blocks);
	return rc;
}

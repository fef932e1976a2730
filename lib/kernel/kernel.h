/* The model of a mapped GPU kernel shared by the mapping stages (pb-tile,
 * pb-mma, pb-smem, pb-codegen), as PPCG's gpu.c and gpu_tree.c share one
 * (docs/kernel-model.md):
 *
 * - the band of a nest: its outermost perfectly nested parallel loops
 *   (band.c), what pb-tile tiles and pb-codegen's naive mapping spreads
 *   over threads;
 * - the levels of a mapped nest: affine.parallel loops with pb.map =
 *   "block", "warp" or "thread" (levels.c);
 * - the workgroup (shared-memory) buffers of a kernel (workgroup.c);
 * - the resources of a block and the occupancy and waves they allow on a
 *   target (resources.c). */
#ifndef PB_KERNEL_KERNEL_H
#define PB_KERNEL_KERNEL_H

#include <stdint.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/IR.h"

#include "core/pb.h"
#include "ir/contract.h"
#include "ir/ir.h"
#include "target/target.h"

/* The most dimensions of a band (and of a mapped loop) the model keeps. */
#define PB_KERNEL_MAXD 16
/* Threads per block of pb-codegen's naive mapping of a band, which
 * pb-tile's cost model predicts for the nests it leaves unmapped. */
#define PB_KERNEL_NAIVE_BLOCK 256
/* The most registers per thread a mapping may be estimated to need: the
 * estimates are rough, ptxas spills past 255, and bench/tile.sh showed a
 * 7x7 conv stem estimated at 45 taking 128. */
#define PB_KERNEL_REG_LIMIT 128

/* The band of a nest: the perfectly nested affine.parallel loops with
 * constant bounds at its top (pb-fuse writes one loop per dimension; an
 * n-d affine.parallel counts as n loops), outermost first. These loops
 * carry no dependence, so any tiling and mapping of them is legal. The
 * same structure describes the dimensions of one mapped loop. */
struct pb_kernel_band {
	MlirOperation root;  /* the nest: the outermost loop */
	MlirOperation inner; /* the innermost loop of the band */
	int n;
	int64_t lb[PB_KERNEL_MAXD], step[PB_KERNEL_MAXD];
	int64_t extent[PB_KERNEL_MAXD]; /* trip counts */
	MlirValue iv[PB_KERNEL_MAXD];
};

/* The band at the top of "op" into "b"; 0 when "op" starts none (b->n is
 * 0), 1 otherwise. Loops already mapped (pb.map) start no band. */
int pb_kernel_band_of(MlirOperation op, struct pb_kernel_band *b);
/* Add the dimensions of "op" to "b" (mapped or not) when "op" is an
 * affine.parallel with constant bounds, positive steps and no results
 * that fits in PB_KERNEL_MAXD dimensions; "op" becomes b->inner. Returns
 * 1 when added, 0 otherwise. */
int pb_kernel_band_add(MlirOperation op, struct pb_kernel_band *b);
/* The body of the innermost loop of the band. */
MlirBlock pb_kernel_band_body(const struct pb_kernel_band *b);
/* The number of points (iterations) of "b": the product of its extents,
 * 1 for a band of no dimensions. */
int64_t pb_kernel_band_points(const struct pb_kernel_band *b);

/* The loops of the mapped nest "root" (an affine.parallel with a pb.map)
 * below its block level, in pre-order, appended to "l": "root" itself
 * unless it is block-mapped, then every mapped loop nested in it (whose
 * pb_contract_map_of tells its level). Unmapped loops are left out. */
void pb_kernel_mapped_loops(MlirOperation root, struct pb_ir_ops *l);

/* Aliasing (alias.c). The number of the argument "v" is of kernel
 * "func", or -1. */
int pb_kernel_arg_no(MlirOperation func, MlirValue v);
/* May buffers "x" and "y" of kernel "func" be the same memory? Values of
 * the kernel's own are distinct roots (through views, pb_poly_root); two
 * arguments may alias unless every call of "func" in "module" (there is
 * at least one) binds them to different roots. */
int pb_kernel_may_alias(MlirOperation module, MlirOperation func,
			MlirValue x, MlirValue y);
/* Is every use of buffer "v" a load (affine.load, memref.load): memory
 * its kernel only reads? */
int pb_kernel_only_loaded(MlirValue v);

/* Private arrays (private.c): a block-level buffer each thread keeps its
 * own part of across sibling mapped nests, its leading dimensions indexed
 * by the normalized counters of the warp and thread loops around every
 * access (docs/kernel-model.md). */
/* The warp and thread loops between "block" and "op", outermost first,
 * as one band "b" (b->root the outermost); their number of dimensions,
 * -1 when one has no constant bounds or there are too many. */
int pb_kernel_private_loops(MlirOperation op, MlirOperation block,
			    struct pb_kernel_band *b);
/* The normalized counter (d<pos> - lb) floordiv step of a mapped loop's
 * dimension whose counter is map input "pos". */
MlirAffineExpr pb_kernel_private_expr(MlirContext c, int64_t lb,
				      int64_t step, int pos);
/* Does the affine.load or affine.store "op" index its buffer by the
 * normalized counters of the dimensions of "b" first? */
int pb_kernel_private_access(MlirOperation op, const struct pb_kernel_band *b);
/* Replace the affine.load or affine.store "op" by one of "buf": with the
 * normalized counters of "b" put in front of its subscripts, or with
 * "drop", its first b->n subscripts dropped. Returns the new operation
 * (null when the map is too large). */
MlirOperation pb_kernel_private_rewrite(MlirOperation op, MlirValue buf,
					const struct pb_kernel_band *b,
					int drop);

/* Is "t" a memref in GPU workgroup (shared) memory
 * (#gpu.address_space<workgroup>, or address space 3)? */
int pb_kernel_is_workgroup(MlirType t);
/* Append to "out" the type text of a workgroup buffer: "t" itself moved
 * to workgroup memory when "n" is 0 and "t" is a memref
 * ("memref<4x32xf32, #gpu.address_space<workgroup>>"), an "n"-element
 * buffer of element type "t" when "n" > 0. */
void pb_kernel_workgroup_type_text(struct pb_buf *out, MlirType t, int64_t n);
/* Create a memref.alloc of the workgroup type "type" (text, see
 * pb_kernel_workgroup_type_text) before "before" at "loc"; the operation
 * into "*alloc". Returns PB_OK, or PB_ERR when "type" does not parse. */
int pb_kernel_workgroup_alloc(struct pb_ctx *ctx, const char *type,
			      MlirOperation before, MlirLocation loc,
			      MlirOperation *alloc);
/* The workgroup buffers allocated in "root" (memref.alloc and
 * memref.alloca of workgroup type, in pre-order) appended to "l". */
void pb_kernel_workgroup_buffers(MlirOperation root, struct pb_ir_ops *l);
/* The bytes of a statically shaped memref type "t" (elements of index
 * type count 8 bytes); -1 when its shape or element size is not known. */
int64_t pb_kernel_type_bytes(MlirType t);
/* The bytes of workgroup memory "root" allocates (the sum over its
 * workgroup buffers); -1 when one of them has no static size. */
int64_t pb_kernel_workgroup_bytes(MlirOperation root);

/* What one block of a kernel holds on an SM: its threads, the registers
 * of each thread and its workgroup bytes. pb-tile estimates these for a
 * tiling, pb-mma adds the registers of its fragments, pb-smem the bytes
 * of its staged tiles. */
struct pb_kernel_resources {
	int64_t threads;
	int regs;
	int64_t smem;
};
/* What the resources allow on a target for a grid of blocks. */
struct pb_kernel_occupancy {
	int64_t blocks_per_sm; /* resident blocks per SM (at least 1) */
	double occupancy;      /* resident threads / max threads per SM,
				  at most 1 */
	double slots;	       /* resident blocks on the whole GPU */
	double waves;	       /* ceil(grid / slots) */
	double wave_blocks;    /* blocks one SM runs in a wave:
				  ceil(min(grid, slots) / SMs) */
};
/* The occupancy of a grid of "grid" blocks of resources "r" on "t" into
 * "o": blocks per SM limited by the target's blocks per SM, threads per
 * SM, registers per SM (allocated 256 at a time per block) and workgroup
 * memory per SM. */
void pb_kernel_occupancy(const struct pb_target *t,
			 const struct pb_kernel_resources *r, int64_t grid,
			 struct pb_kernel_occupancy *o);
/* Can a thread have "regs" registers on "t" without spilling, by the
 * model (at most PB_KERNEL_REG_LIMIT and the target's limit)? */
int pb_kernel_regs_fit(const struct pb_target *t, int regs);
/* Do the resources "r" fit one block on "t" (threads per block, workgroup
 * bytes with opt-in, registers)? */
int pb_kernel_fits(const struct pb_target *t,
		   const struct pb_kernel_resources *r);

/* --sizes of pb-tile and pb-mma (sizes.c), in PPCG's isl form:
 *   { kernel[3] -> tile[64, 128]; kernel[3] -> block[16, 32];
 *     kernel[5] -> reduce[256]; kernel[6] -> mma[128, 128, 64, 64] }
 * "kernel_3" (a tuple without brackets) is read as kernel[3]. */
struct pb_kernel_sizes;
/* Parse "text"; NULL (error reported) when it is not such a map. */
struct pb_kernel_sizes *pb_kernel_sizes_parse(struct pb_ctx *ctx,
					      const char *text);
void pb_kernel_sizes_free(struct pb_kernel_sizes *s);
/* The sizes named "what" ("tile", "block", "reduce", "mma") given for
 * nest "nest" of kernel "k" (kernel[k, nest], or kernel[k] for every
 * nest) into "v" (at most PB_KERNEL_MAXD); their number (0 for
 * "none[]"), -1 when none are given, -2 when several are. */
int pb_kernel_sizes_get(struct pb_kernel_sizes *s, int k, int nest,
			const char *what, int64_t *v);

/* Contractions for tensor cores (contraction.c). */
/* The tensor-core instruction shapes pb-mma writes its warp tiles in:
 * mma.sync m16n8k16 (f16 and bf16 operands) and m16n8k8 (f32 operands
 * rounded to tf32), f32 accumulation. A warp tile is a grid of FRAG_M x
 * FRAG_N accumulator fragments; pb_kernel_frag_k gives the k of one
 * step for the operands' element type. */
#define PB_KERNEL_FRAG_M 16
#define PB_KERNEL_FRAG_N 8
int64_t pb_kernel_frag_k(MlirType elt);
struct pb_kernel_contraction;
/* The reduction's trip count on tensor cores: the k of "c" rounded up to
 * a whole mma step (the last step's operands masked past K). */
int64_t pb_kernel_mma_k(const struct pb_kernel_contraction *c);
/* The points of the window loops of "c" (1 for a plain contraction). */
int64_t pb_kernel_taps(const struct pb_kernel_contraction *c);
/* An f32 operand as a tf32 tensor core reads it: bits & 0xffffe000 (the
 * 13 low mantissa bits dropped), the mask as an i32. pb-mma writes this
 * cut in the warp-level code, so that the CPU computes what the GPU does;
 * pb-codegen leaves it to the tensor core. */
#define PB_KERNEL_TF32_MASK (-8192)
/* What operands of element type "elt" are on tensor cores: "f16", "bf16"
 * or (f32 rounded) "tf32". */
const char *pb_kernel_mma_kind(MlirType elt);

/* What an operand's subscript "k" (of a load or store in a contraction
 * nest) is: band dimension "dim" (>= 0), the reduction loop's counter
 * (PB_KERNEL_SUB_K), or the constant "cst" (PB_KERNEL_SUB_CST). */
#define PB_KERNEL_SUB_K (-1)
#define PB_KERNEL_SUB_CST (-2)
/* No role: an index value an access may not be subscripted by. */
#define PB_KERNEL_SUB_NONE (-3)
/* The counter of a convolution's window loop t (0: its rows, 1: its
 * columns) inside the reduction loop: PB_KERNEL_SUB_TAP - t. */
#define PB_KERNEL_SUB_TAP (-4)
#define PB_KERNEL_MAXTAP 2
#define PB_KERNEL_MAXR 8

struct pb_kernel_access {
	MlirOperation op;	/* affine.load or affine.store */
	MlirValue mem;
	int rank;
	int sub[PB_KERNEL_MAXR];
	int64_t cst[PB_KERNEL_MAXR];
	/* a window read (a convolution's input, pb-fuse's padded read):
	   subscript r is sub[r] + window counter tap[r] - 1 (tap[r] > 0)
	   + off[r], zero outside the buffer; "sel" the arith.select that
	   gives the value (op is its clamped memref.load) */
	int tap[PB_KERNEL_MAXR];
	int64_t off[PB_KERNEL_MAXR];
	/* a strided convolution's input (docs/pb-mma.md, "Strided
	   convolutions"): subscript r is str[r] times band dimension
	   sub[r] (plus the window counter and off[r]) when str[r] > 1 */
	int64_t str[PB_KERNEL_MAXR];
	MlirOperation sel;
};
/* The stride of subscript "r" of "x" along its band dimension (1 when
 * it moves one element a step). */
int64_t pb_kernel_stride(const struct pb_kernel_access *x, int r);
/* The stride of the operand A of contraction "c" along C's rows (its
 * image columns; 1 unless a strided convolution's). */
int64_t pb_kernel_row_stride(const struct pb_kernel_contraction *c);

/* A contraction nest at the fuse level (unmapped, pb-fuse's form):
 *
 *   band (dims 0 .. n-1) {
 *     acc = memref.alloca() : memref<f32>;  acc[] = 0
 *     affine.for k = 0 to K { acc[] += ext(A[..]) * ext(B[..]) }
 *     post: pure operations on acc[] and on reads indexed by the band,
 *           ending in stores indexed by the band
 *   }
 *
 * The accumulator may start from a value other than 0, computed before
 * its store from reads indexed by the band ("pre": a convolution's bias);
 * it may live in an alloca of unit dimensions (memref<1xf32>); or in
 * place (starting from its contents when nothing is stored before the
 * loop: a bias another kernel put there), in an element C[..] of an f32
 * buffer
 * subscripted by every band dimension once (pb-fuse's form of a float32
 * MatMul): C[..] = 0; affine.for k { C[..] += A[..] * B[..] }; post, in
 * which C[..] is read and written like acc[]; C[..] holds the
 * accumulator's last value at the end.
 *
 * with A subscripted by the rows "m" of C, batch dimensions and k; B by
 * k, batch dimensions and the columns "n" of C (docs/pb-mma.md). */
struct pb_kernel_contraction {
	struct pb_kernel_band b;
	int m, n;		/* band dimensions of C's rows and columns */
	MlirOperation kloop;
	int64_t k;		/* the reduction's trip count */
	/* a convolution as implicit GEMM: "ntap" window loops nested in
	   the reduction loop (its rows, its columns), each of "tap_ext"
	   iterations; K is k times their product (docs/pb-mma.md) */
	int ntap;
	MlirOperation tloop[PB_KERNEL_MAXTAP];
	int64_t tap_ext[PB_KERNEL_MAXTAP];
	MlirOperation alloca;	/* the accumulator, or null when in place */
	MlirOperation init;	/* the accumulator's initial store: of 0, or
				   of a value computed by "pre"; null when it
				   starts from C's contents (in place) */
	MlirOperation accref;	/* the store naming the accumulator: "init",
				   or the reduction loop's */
	MlirOperation pre[16];	/* the operations before it: reads indexed
				   by the band (a bias) and element-wise */
	int npre;
	struct pb_kernel_access a, b_;	/* the operands */
	MlirType elt;		/* their element type: f16, bf16 or f32 */
	MlirType tc;		/* their type on tensor cores: "elt", or for
				   f32 operands f16 or bf16 (rounded by
				   pb-mma) or f32 (tf32), by the precision
				   (pb_kernel_mma_operands) */
	MlirOperation post[64];	/* the operations after the k loop */
	int npost;
};

/* Is "nest" a contraction that tensor cores can run? 1 with "c" filled;
 * 0 with "*why" saying why not (a static string). */
int pb_kernel_contraction_of(MlirOperation nest, struct pb_kernel_contraction *c,
		 const char **why);

/* Is affine.load/affine.store "op" an access of the accumulator of "c"
 * (acc[], or the C[..] it lives in in place)? */
int pb_kernel_is_acc(const struct pb_kernel_contraction *c, MlirOperation op);

/* The subscripts of affine.load/affine.store "op" in terms of the band
 * of "c" and its reduction loop into "acc"; 0 when one is neither a
 * band dimension, the reduction counter nor a constant. */
int pb_kernel_access_of(const struct pb_kernel_contraction *c, MlirOperation op,
		     struct pb_kernel_access *acc);

/* The subscripts of affine.load/affine.store "op" into "acc", each a
 * constant or the role "role" (with "user") gives its index value; 0
 * when one is neither (PB_KERNEL_SUB_NONE, or not a dimension). The one
 * reading of accesses behind pb_kernel_access_of and the attention
 * nest's. */
int pb_kernel_access_parse(MlirOperation op,
			   int (*role)(const void *user, MlirValue v),
			   const void *user, struct pb_kernel_access *acc);

/* The warp-tile mapping of a contraction: block tile bm x bn (of C's
 * rows and columns), warp tile wm x wn. A convolution's block may also
 * cover "bh" > 1 image rows (its window rows' band dimension,
 * pb_kernel_window_rows): bh rows of warps, each warp's tile at one
 * image row (docs/pb-mma.md, "Blocks of several image rows"); 0 or 1:
 * one row. */
struct pb_kernel_mma_tiles {
	int64_t bm, bn, wm, wn;
	int64_t bh;
};
/* The band dimension of the image rows of convolution "c" that a block
 * may cover several of (pb_kernel_mma_tiles.bh): the one a stride-1
 * window's rows move in A, not C's rows nor used by B; -1 if none. */
int pb_kernel_window_rows(const struct pb_kernel_contraction *c);
/* The warps of a block of tiles "s". */
int64_t pb_kernel_mma_warps(const struct pb_kernel_mma_tiles *s);
/* Choose the tiles of "c" on "t"; 0 when no tile fits its shape (with
 * "*why"). */
int pb_kernel_mma_tiles(const struct pb_target *t,
			const struct pb_kernel_contraction *c,
			struct pb_kernel_mma_tiles *s, const char **why);

/* The attention nest of pb-fuse (--fuse-attention; attention.c): a band
 * over the rows with FlashAttention's online softmax inside, read back
 * into its roles. Subscripts of its accesses are band dimensions, the
 * counters of its key loop (PB_KERNEL_ATT_J), head-dimension loop
 * (PB_KERNEL_ATT_D) and value loop (PB_KERNEL_ATT_E), or constants. */
#define PB_KERNEL_ATT_J (-10)
#define PB_KERNEL_ATT_D (-11)
#define PB_KERNEL_ATT_E (-12)
/* pb_kernel_att_mask.kind: x + mask[..], or cond[..] ? x : fill. */
#define PB_KERNEL_ATT_ADD 1
#define PB_KERNEL_ATT_WHERE 2
/* The most masks of an attention nest (GPT-2's Where, then its additive
 * attention mask). */
#define PB_KERNEL_ATT_MAXM 2
/* A mask of the scores, after the scale. */
struct pb_kernel_att_mask {
	int kind;			/* PB_KERNEL_ATT_ADD or _WHERE */
	struct pb_kernel_access mask;	/* its load (band dims, the key) */
	struct pb_kernel_access fill;	/* a Where's other value's load (op
					   null: a value from outside) */
	MlirValue fillv;		/* that value from outside */
	MlirOperation fill_ext;		/* the load's widening, or null */
	int where_true;			/* a Where keeps the scores where its
					   condition is true (else false) */
};
struct pb_kernel_attention {
	struct pb_kernel_band b;
	int m;				/* the band dimension of query rows */
	int64_t nk, d, e;		/* keys, head and value dimensions */
	MlirOperation jloop, dloop, eloop, oloop;
	struct pb_kernel_access q, k, v, o;
	MlirValue mbuf, lbuf, accbuf;	/* the running max, sum, output row */
	double scale;			/* scores times (or over) this */
	int divide;
	int nmask;			/* masks after the scale, in order */
	struct pb_kernel_att_mask mk[PB_KERNEL_ATT_MAXM];
	int causal;			/* mask causal_u is causal: -inf for keys
					   past query row + off, the scores
					   unchanged before (pb.causal or
					   pb.future, read at [0.., row,
					   key]), and the others keep -inf
					   (attention.c, causal_of) */
	int causal_u;
	int64_t causal_off;
	MlirType elt;			/* Q's, K's and V's element type */
	MlirType tc;			/* their type on tensor cores */
};
/* Is "nest" pb-fuse's attention nest? 1 with "a" filled, else 0 with
 * "*why". */
int pb_kernel_attention_of(MlirOperation nest, struct pb_kernel_attention *a,
			   const char **why);
/* Set a->tc for precision "p" as pb_kernel_mma_operands does; 0 with
 * "*why" when attention stays on CUDA cores (f32 at fp32 or tf32). */
int pb_kernel_attention_operands(struct pb_kernel_attention *a,
				 enum pb_precision p, const char **why);
/* The mapping of an attention nest: blocks of bm query rows, warps of
 * wm (16) rows, bn keys per step of the key loop. */
struct pb_kernel_attention_tiles {
	int64_t bm, wm, bn;
};
/* Can both products of "a" go to wgmma on "t" (docs/pb-mma.md,
 * "Attention"): 1, else 0 with "*why". */
int pb_kernel_attention_wgmma(const struct pb_target *t,
			      const struct pb_kernel_attention *a,
			      const char **why);
int pb_kernel_attention_tiles(const struct pb_target *t,
			      const struct pb_kernel_attention *a,
			      struct pb_kernel_attention_tiles *s,
			      const char **why);
/* The cost model's view of "a" mapped with "s" on "t" into "sum": grid,
 * block, occupancy, flops, bytes and predicted time (attention.c). */
struct pb_kernel_summary;
void pb_kernel_attention_predict(const struct pb_target *t,
				 const struct pb_kernel_attention *a,
				 const struct pb_kernel_attention_tiles *s,
				 struct pb_kernel_summary *sum);
/* pb_kernel_mma_candidate for attention nests: both products on tensor
 * cores, "*kind" the operands' type there. */
int pb_kernel_attention_candidate(MlirOperation nest, const struct pb_target *t,
				  enum pb_precision p, const char **kind,
				  const char **why);

/* The nests of the kernels of "m" marked pb.mma (pb-tile's contractions
 * for tensor cores) appended to "nests", each one's kernel function to
 * "funcs" at the same position. */
void pb_kernel_mma_marked(MlirModule m, struct pb_ir_ops *funcs,
			  struct pb_ir_ops *nests);

/* The number "*k" of the kernel function of top-level nest "nest" among
 * the kernels of "m", and "*n" of the nest among the kernel's (its
 * affine.parallel nests, mapped or not): the kernel[k, n] of --sizes, as
 * pb-tile numbers them. */
void pb_kernel_nest_number(MlirModule m, MlirOperation nest, int *k, int *n);

/* The memref dimension that vector dimension "d" of vector.transfer_read
 * or _write "op" runs along (its permutation_map), -1 for a broadcast. */
int pb_kernel_transfer_dim(MlirOperation op, int d);

/* Does "why" (from pb_kernel_contraction_of) say more than that the nest
 * is no reduction at all (worth a remark)? */
int pb_kernel_is_reduction_why(const char *why);

/* Is "v" a scalar temporary of the nest of "c" (a memref.alloca of one
 * element in its band other than the accumulator, whose value the
 * epilogue carries along)? */
int pb_kernel_is_local(const struct pb_kernel_contraction *c, MlirValue v);

/* Set c->tc, the type of the operands of "c" on tensor cores at
 * precision "p" (--precision): f16 and bf16 operands stay what they are,
 * f32 ones become f32 (tf32), f16 or bf16; 0 with "*why" when they stay
 * exact f32 on CUDA cores (fp32). */
int pb_kernel_mma_operands(struct pb_kernel_contraction *c,
			   enum pb_precision p, const char **why);

/* Is "nest" (an unmapped band at the fuse level) a contraction that
 * tensor cores can run on "t" at precision "p": a contraction whose shape
 * some tiles fit, with f16 or bf16 operands, or f32 ones unless "p" is
 * fp32? 1 with "*kind" the operands' type on tensor cores
 * (pb_kernel_mma_kind), or 0 with "*why" saying why not. pb-tile leaves
 * these to pb-mma, marked pb.mma = "<kind>". */
int pb_kernel_mma_candidate(MlirOperation nest, const struct pb_target *t,
			    enum pb_precision p, const char **kind,
			    const char **why);

/* What the reports of pb-tile, pb-smem and pb-prof --static say of one
 * kernel (launch or nest) in the fields they share (summary.c): written
 * by one function, so that the three give the same names, units and
 * computations. Negative values are unknown and left out. */
struct pb_kernel_summary {
	int64_t grid;			 /* blocks */
	struct pb_kernel_resources res;	 /* of one block: pb-tile's estimate
					    or ptxas's numbers */
	int has_occ;
	struct pb_kernel_occupancy occ;	 /* pb_kernel_summary_occupancy */
	double predicted_s;		 /* pb-tile's cost model */
	double flops, bytes;		 /* the model's, for the bound */
	int tc;				 /* runs on tensor cores */
};
/* Everything unknown. */
void pb_kernel_summary_init(struct pb_kernel_summary *s);
/* s->occ from s->res and s->grid on "t" (unknown registers or shared
 * memory count as none), when the threads and the grid are known. */
void pb_kernel_summary_occupancy(const struct pb_target *t,
				 struct pb_kernel_summary *s);
/* What bounds a kernel of "flops" and "bytes" predicted to take
 * "predicted_s" on "t" (tensor cores when "tc"): the roof with the longest
 * time, "compute" (flops at the CUDA-core peak, the tensor-core fp16 peak
 * when "tc") or "memory" (bytes at DRAM bandwidth); "launch" when the
 * launch overhead is longer than both and the prediction within twice it;
 * "latency" when the prediction is more than twice every roof's time. */
const char *pb_kernel_bound(const struct pb_target *t, double flops,
			    double bytes, double predicted_s, int tc);
/* pb_kernel_bound of "s", NULL when its prediction, flops or bytes are
 * unknown. */
const char *pb_kernel_summary_bound(const struct pb_target *t,
				    const struct pb_kernel_summary *s);
/* The known fields of "s" into the JSON object "o": threads, registers,
 * shared_bytes, blocks_per_sm, occupancy, waves, predicted_s, bound. */
struct json_t;
void pb_kernel_summary_json(const struct pb_target *t,
			    const struct pb_kernel_summary *s, struct json_t *o);

/* The predicted time of "c" on tensor cores with tiles "s" on "t", with
 * the block's resources, grid, occupancy, flops and global bytes, into
 * "sum" (docs/pb-mma.md, "Predicted time"). */
void pb_kernel_mma_predict(const struct pb_target *t,
			   const struct pb_kernel_contraction *c,
			   const struct pb_kernel_mma_tiles *s,
			   struct pb_kernel_summary *sum);

/* The ring of a staged nest (ring.c), shared by pb-smem's plan and
 * pb-tile's cost model. */
/* Has "t" asynchronous copies (cp.async: sm_80 and later)? */
int pb_kernel_async(const struct pb_target *t);
/* Search the k-tile and the slots of the ring of a reduction loop of
 * "trip" iterations on "t": the first k-tile of 16, 32, 8, 4 (and the
 * whole loop when it is at most 32) that divides the loop and lets a
 * ring of 3, else 2 slots fit ("fits" says 1), never more slots than
 * k-tiles; one slot only when no ring fits or "t" has no cp.async.
 * "k_tile" and "stages" (0: free) force either. "fits" returns 1 when
 * the nest's tiles fit with k-tile "kt" and "stages" slots, 0 when not,
 * -1 when nothing is left to stage at that k-tile (the next k-tile is
 * tried). Returns 1 with "*kt" and "*ns" set, 0 when nothing fits. */
int pb_kernel_ring_search(const struct pb_target *t, int64_t trip,
			int64_t k_tile, int stages,
			int (*fits)(void *user, int64_t kt, int stages),
			void *user, int64_t *kt, int *ns);

#endif

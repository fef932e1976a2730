/* The IR contract between pb's stages in code (docs/kernel-model.md,
 * DESIGN.md "IR contract"): the name of every "pb." attribute, where it
 * sits and what it holds, and one accessor per attribute, so that no
 * stage spells an attribute name itself.
 *
 *   attribute   on                          value
 *   pb.stage    the module                  string: the last stage applied
 *   pb.source   the module                  string: the .onnx it came from
 *   pb.kernel   func.func                   unit: an outlined kernel
 *   pb.nodes    func.func, gpu.func,        array of strings: the ONNX
 *               gpu.launch_func             nodes a kernel computes
 *   pb.origin   gpu.func, gpu.launch_func   string: the pb.kernel function
 *                                           a launch came from
 *   pb.map      affine.parallel             string: "block", "warp" or
 *                                           "thread"
 *   pb.share    affine.for in a warp nest   unit: its iterations are
 *                                           the warps' (one each on the
 *                                           GPU)
 *   pb.param    argument of @main           string: ONNX initializer name
 *   pb.name     argument or result of @main string: ONNX input/output name
 *   pb.perm     pb.param argument of @main  array<i64>: the buffer holds
 *                                           the initializer transposed by
 *                                           this permutation (dimension i
 *                                           of the buffer is dimension
 *                                           perm[i] of the initializer)
 *   pb.output   argument of @main           unit: an output buffer
 *   pb.dtype    argument or result of @main string: the ONNX element type
 *                                           ("u8", "u16", "u32", "u64")
 *                                           of an unsigned integer tensor,
 *                                           whose MLIR type is signless
 *   pb.causal   argument of @main, and      i64 c: the (float) buffer
 *               affine.load of it in an     holds a causal mask, 0 at
 *               attention nest              [.., i, j] for j <= i + c and
 *                                           -inf beyond, its other
 *                                           dimensions 1; or the (i1)
 *                                           buffer is true there and
 *                                           false beyond
 *   pb.future   the same places             i64 c: the (i1) buffer is
 *                                           true at [.., i, j] for
 *                                           j > i + c and false at and
 *                                           below, its other dimensions
 *                                           1 (masked_fill's condition)
 *
 * Operation locations of fused ops carry "pb.op:<op>" metadata names
 * (PB_LOC_OP_PREFIX). The names are string literals so that IR templates
 * can splice them in: "} {" PB_ATTR_MAP " = \"thread\"}". */
#ifndef PB_IR_CONTRACT_H
#define PB_IR_CONTRACT_H

#include "mlir-c/IR.h"

#define PB_ATTR_STAGE "pb.stage"
#define PB_ATTR_SOURCE "pb.source"
#define PB_ATTR_KERNEL "pb.kernel"
#define PB_ATTR_NODES "pb.nodes"
#define PB_ATTR_ORIGIN "pb.origin"
#define PB_ATTR_MAP "pb.map"
#define PB_ATTR_PARAM "pb.param"
#define PB_ATTR_PERM "pb.perm"
#define PB_ATTR_NAME "pb.name"
#define PB_ATTR_OUTPUT "pb.output"
#define PB_ATTR_DTYPE "pb.dtype"
#define PB_ATTR_CAUSAL "pb.causal"
#define PB_ATTR_FUTURE "pb.future"
/* on a nest pb-tile leaves to pb-mma: a contraction for tensor cores */
#define PB_ATTR_MMA "pb.mma"
/* on an affine.for from 0 to NW inside a warp-mapped nest of NW warps:
 * its iterations are shared by the warps, iteration w run by warp w on
 * the GPU (pb-codegen), all of them one after another on the CPU. For
 * work every warp needs done, such as a cooperative copy into a buffer
 * they all read after a barrier: its effect is the same either way. */
#define PB_ATTR_SHARE "pb.share"
/* on an affine.if pb-tile puts around a point of a partial tile: its
 * condition is the point's lying inside the band, on the block, warp and
 * lane counters and the point loops' (docs/pb-smem.md, "Partial
 * tiles") */
#define PB_ATTR_POINT "pb.point"
/* on a block loop pb-tile mapped: the k-tile and the ring slots its cost
 * model priced for pb-smem (array<i64: KT, S>; empty: do not stage) */
#define PB_ATTR_SMEM "pb.smem"
/* on every read and write of a workgroup buffer pb-smem lays out for
 * wgmma (i64: W, 128, 64 or 32): rows of W bytes, stored on the GPU with
 * the W-byte swizzle wgmma's shared-memory descriptors name (16-byte
 * chunk c of row r at chunk c xor ((r W / 128) mod (W / 16))); on the
 * CPU, where every access of the buffer is alike, as written */
#define PB_ATTR_SWIZZLE "pb.swizzle"
#define PB_LOC_OP_PREFIX "pb.op:"

/* The levels of the GPU hierarchy a parallel loop may be mapped to (the
 * value of its pb.map). PB_MAP_UNKNOWN: a pb.map with another value. */
enum pb_map_level {
	PB_MAP_NONE = 0,
	PB_MAP_BLOCK,
	PB_MAP_WARP,
	PB_MAP_THREAD,
	PB_MAP_UNKNOWN,
};

/* The pb.map value of "level" ("block", "warp", "thread"), NULL for
 * PB_MAP_NONE and PB_MAP_UNKNOWN. */
const char *pb_contract_map_name(enum pb_map_level level);
/* The level "op" is mapped to; PB_MAP_NONE without a pb.map. */
enum pb_map_level pb_contract_map_of(MlirOperation op);
/* The raw pb.map string of "op" (NULL-data ref when it has none). */
MlirStringRef pb_contract_map_str(MlirOperation op);
/* Does "op" carry a pb.map (of any value)? */
int pb_contract_is_mapped(MlirOperation op);
/* Map "op" to "level" (PB_MAP_NONE removes the attribute). */
void pb_contract_set_map(MlirOperation op, enum pb_map_level level);

/* Is "func" a kernel function (pb.kernel)? */
int pb_contract_is_kernel(MlirOperation func);
/* Mark "func" as a kernel function. */
void pb_contract_set_kernel(MlirOperation func);

/* The pb.nodes array of "op" (null attribute when absent). */
MlirAttribute pb_contract_nodes(MlirOperation op);
void pb_contract_set_nodes(MlirOperation op, MlirAttribute nodes);
/* The pb.origin of "op" (NULL-data ref when absent). */
MlirStringRef pb_contract_origin(MlirOperation op);
void pb_contract_set_origin(MlirOperation op, MlirAttribute origin);

/* The pb.perm of the argument whose attributes are "dict" (a dictionary,
 * or null) of rank "rank", into "perm": 1, or 0 when it has none (perm
 * the identity), or -1 when it is malformed (not an array<i64> of
 * "rank" entries that is a permutation of 0 .. rank - 1). */
int pb_contract_perm_of(MlirAttribute dict, int rank, int *perm);
/* Set the pb.perm of argument "i" of func.func "func" to the "n" entries
 * of "perm". */
void pb_contract_set_perm(MlirOperation func, int i, int n, const int *perm);

/* The pb.source of module "m" (NULL-data ref when absent). */
MlirStringRef pb_contract_source(MlirModule m);
/* pb.stage: pb_ir_get_stage and pb_ir_set_stage (ir.h). */

#endif

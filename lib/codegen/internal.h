/* pb-codegen internals shared by the files of lib/codegen. */
#ifndef PB_CODEGEN_INTERNAL_H
#define PB_CODEGEN_INTERNAL_H

#include "codegen/codegen.h"
#include "plan/plan.h"

/* The gpu.module that holds every kernel. */
#define PB_CODEGEN_MODULE "pb_kernels"

/* Does the name of "op" start with "prefix" ("arith.")? */
int pb_codegen_op_has_prefix(MlirOperation op, const char *prefix);
/* Print "t" or "a" into "out" (NUL-terminated). */
void pb_codegen_type_str(MlirType t, struct pb_buf *out);
void pb_codegen_attr_str(MlirAttribute a, struct pb_buf *out);

/* Check that every operation in the host functions of "m" is one that
 * pb-codegen can lower; report the first that is not. */
int pb_codegen_check(struct pb_ctx *ctx, MlirModule m);
/* Replace each memref.copy in "m" by an affine loop nest. */
int pb_codegen_expand_copies(struct pb_ctx *ctx, MlirModule m);
/* Move constant buffers (memref.get_global) passed to functions that
 * are called once into those functions, so that kernels read them from
 * device globals instead of taking them as arguments. */
int pb_codegen_push_globals(struct pb_ctx *ctx, MlirModule m);
/* Is "op" a constant buffer (memref.get_global) or a view of one
 * (subview, cast, reshape with constant operands)? A clone of the chain
 * ending in it before "before"; the views of "m" left without a use
 * destroyed (the host side runs every view it holds). (check.c) */
int pb_codegen_is_constant_view(MlirOperation op);
MlirOperation pb_codegen_clone_chain(MlirOperation op, MlirOperation before);
void pb_codegen_drop_dead_views(MlirModule m);
/* Turn the top-level work of every host function of "m" into gpu.launch
 * operations (the mapping of docs/pb-codegen.md). */
int pb_codegen_map(struct pb_ctx *ctx, MlirModule m);
/* In block-mapped nest "root" (smem.c): give each thread its slice of the
 * private arrays, and lower the asynchronous copies and waits of
 * pb-smem's pipelines (docs/pb-smem.md). */
int pb_codegen_private(struct pb_ctx *ctx, MlirOperation root);
int pb_codegen_async(struct pb_ctx *ctx, MlirOperation root);
/* 32-bit indices (index32.c). Can every index of the kernels of
 * gpu.module "mod" be computed in 32 bits: every buffer of static shape
 * below 2^30 elements, every launch's grid and block known and below
 * 2^30 threads? */
int pb_codegen_index32_ok(MlirOperation mod);
/* Lower the gpu.module of "dev" to a gpu.binary of PTX for "arch" (PTX
 * ISA "isa"), as gpu-lower-to-nvvm-pipeline does but with 32-bit index
 * arithmetic. */
int pb_codegen_index32_lower(struct pb_ctx *ctx, MlirModule dev,
			     const char *arch, int isa);
/* Distribute pb-mma's warp-level vector tiles in the gpu.launch
 * operations of "m" to the lanes as mma.sync fragments (mma.c). */
int pb_codegen_mma(struct pb_ctx *ctx, MlirModule m);
/* After outlining: let ptxas give each tensor-core kernel of "m" (one
 * with nvgpu.mma.sync) every register it needs (nvvm.minctasm = 1, PTX
 * .minnctapersm 1), as pb-mma's tiles assume; left alone, ptxas caps a
 * 128-thread kernel at 128 registers and spills. */
void pb_codegen_mma_registers(MlirModule m);
/* Replace the warp-level contractions of gpu.launch "launch" that read
 * pb-smem's wgmma rings (pb.swizzle) by wgmma.mma_async of the warps'
 * warpgroups on lane fragments, with fences, commit and wait (wgmma.c;
 * sm_90a). */
int pb_codegen_wgmma(struct pb_ctx *ctx, MlirOperation launch);
/* Dynamic shared memory (dynsmem.c). The layout of the "wg" workgroup
 * buffers (allocations) of block nest "root" in one region of dynamic
 * shared memory, their byte offsets into "off": its size in bytes when
 * they exceed the target's shared memory per block without opt-in, 0
 * when they fit it (they stay static), -1 (reported) when they exceed
 * the opt-in limit too. */
int64_t pb_codegen_dyn_layout(struct pb_ctx *ctx, MlirOperation root,
			      const struct pb_ir_ops *wg, int64_t *off);
/* At the start of gpu.launch "launch": a gpu.dynamic_shared_memory and
 * one memref.view of it per buffer of "wg" at offset "off[i]", the views
 * into "views". */
int pb_codegen_dyn_views(struct pb_ctx *ctx, MlirOperation launch,
			 const struct pb_ir_ops *wg, const int64_t *off,
			 MlirValue *views);
/* Lower every gpu.dynamic_shared_memory of the gpu.modules of "m" to the
 * address of one external, 1024-byte aligned shared array (MLIR's own
 * lowering makes it a static one-byte variable in the PTX). */
int pb_codegen_dyn_lower(struct pb_ctx *ctx, MlirModule m);
/* Mark each kernel argument that the kernel only reads and that no other
 * argument of any of its launches shares (roots through views) noalias
 * and readonly: NVPTX then reads it through the read-only (.nc) path; and
 * each that is a whole device allocation at every launch 16-byte aligned,
 * so that 128-bit accesses stay whole (smem.c). */
int pb_codegen_arg_attrs(MlirModule m);
/* Move the kernels of every gpu.module of "m" into one gpu.module
 * PB_CODEGEN_MODULE and record on each gpu.launch_func and gpu.func the
 * pb.kernel function it came from ("pb.origin") and its "pb.nodes". */
int pb_codegen_merge(struct pb_ctx *ctx, MlirModule m);
/* The launch plan of the host function @main of "m" (lowered to
 * gpu.launch_func), or NULL after reporting an error. */
struct pb_plan *pb_codegen_plan(struct pb_ctx *ctx, MlirModule m);
/* The same before any mapping (the tile backend): each call of a
 * pb.kernel function from @main is one launch of a kernel named as the
 * function, with the call's operands as arguments and grid and block 1. */
struct pb_plan *pb_codegen_plan_calls(struct pb_ctx *ctx, MlirModule m);
/* Give each kernel argument of "m" that is a slice with a static layout
 * offset, only addressed, offset 0 and the slice's own address in every
 * launch of "p" that passes it (new views of "p"): kernels that differ
 * only in where their slices start become identical (rebase.c; the host
 * IR of "m" then no longer matches its kernels: for the PTX path only). */
void pb_codegen_rebase(MlirModule m, struct pb_plan *p);
/* Lower the kernels of "m" to PTX for ctx->arch into "out", each group
 * of identical kernels compiled once if "flags" has PB_CODEGEN_DEDUP
 * (dedup.c), also those that differ only in sizes no address depends on
 * and in their grids if it has PB_CODEGEN_DEDUP_SIZES, with 32-bit index arithmetic where the buffers allow if it
 * has PB_CODEGEN_INDEX32 (index32.c), on "jobs" threads (jobs.c). */
#define PB_CODEGEN_DEDUP 1
#define PB_CODEGEN_INDEX32 2
#define PB_CODEGEN_DEDUP_SIZES 4
int pb_codegen_ptx(struct pb_ctx *ctx, MlirModule m, int flags, int jobs,
		   struct pb_buf *out);
/* The kernels of gpu.module "mod" and its globals (dedup.c): find them,
 * the kernels grouped by identical bodies (their text less name and
 * provenance) if "dedup", else each alone, and with "sizes" the groups
 * whose bodies differ only in the sizes of memrefs no address depends on
 * and in their grids grouped too; the number of kernels, of groups (-1 when "mod"
 * holds operations other than kernels and globals), the first kernel of
 * the "k"-th group (its representative), kernel "i"'s name; whether
 * kernel "i" is one of the representatives "first" to "first" + "n" - 1;
 * whether representative "i" is to be compiled with a larger grid than
 * its own (the largest of its group, into "grid"). Then write into
 * "out" the PTX of every kernel from "ptx", "nparts" buffers each the PTX
 * of the representatives compiled together from "first"[part] on (-1,
 * nothing written, when it is not in the form expected). */
struct pb_codegen_dedup *pb_codegen_dedup_find(MlirOperation mod, int dedup,
					       int sizes);
int pb_codegen_dedup_count(const struct pb_codegen_dedup *d);
int pb_codegen_dedup_nrep(const struct pb_codegen_dedup *d);
int pb_codegen_dedup_rep(const struct pb_codegen_dedup *d, int k);
const char *pb_codegen_dedup_name(const struct pb_codegen_dedup *d, int i);
int pb_codegen_dedup_keep(const struct pb_codegen_dedup *d, int i, int first,
			  int n);
int pb_codegen_dedup_grid(const struct pb_codegen_dedup *d, int i,
			  int32_t grid[3]);
int pb_codegen_dedup_assemble(const struct pb_codegen_dedup *d, int nparts,
			      const int *first, const struct pb_buf *ptx,
			      struct pb_buf *out);
void pb_codegen_dedup_free(struct pb_codegen_dedup *d);
/* The outlined gpu.modules of "m" that are the same as an earlier one
 * but for their names and their kernel's name (twins.c): strip empties
 * each such copy, fill then gives it a clone of the body of the module
 * it copies (as the passes in between left it), its kernel renamed
 * back, and frees "t". */
struct pb_codegen_twins *pb_codegen_twins_strip(MlirModule m);
void pb_codegen_twins_fill(struct pb_codegen_twins *t);
/* A module (its text) to compile on a thread, and what that gives: its
 * PTX objects ("nobj" of them, in "ptx"), or "failed" with the
 * diagnostics in "err". */
struct pb_codegen_part {
	struct pb_buf text, ptx, err;
	int nobj, failed;
};
/* The NVVM pass pipeline "pipeline" split for linking the bitcode file
 * "libdevice" only where called, parsed in "mctx": into "out" (each
 * malloc'd) the passes before gpu-module-to-binary, that pass and the
 * rest, the same linking "libdevice"; -1 when it cannot be split (jobs.c).
 * Then run on each of the "n" parts, on "jobs" threads with an
 * MlirContext each, "pipes": the whole pipeline in pipes[0] when pipes[1]
 * is NULL, or the three of a split (the toolkit's variables hidden);
 * the number of CPUs this process may run on. */
int pb_codegen_jobs_split(MlirContext mctx, const char *pipeline,
			  const char *libdevice, char *out[3]);
int pb_codegen_jobs_run(struct pb_codegen_part *part, int n,
			const char *const pipes[3], int jobs);
int pb_codegen_jobs_default(void);
/* Run ptxas -v on "ptx" for ctx->arch and print a per-kernel summary of
 * registers, spills and shared memory to stderr. */
int pb_codegen_ptxas_report(struct pb_ctx *ctx, const char *ptx, size_t len);

#endif

/* GPU target descriptions (docs/targets.md): what the cost models of
 * pb-fuse and pb-tile know about a GPU. The built-in ones are the JSON
 * files under targets/ (embedded in the tools at build time); a user's
 * file has the same format. */
#ifndef PB_TARGET_TARGET_H
#define PB_TARGET_TARGET_H

#include <stdint.h>

#include "core/pb.h"

/* The constants of the cost models (lib/tile/cost.c) that are not
 * datasheet numbers: the description's optional "model" object, fitted
 * to measurements by bench/fit.py (docs/targets.md, "Model constants");
 * absent fields take the defaults below (PB_TARGET_MODEL_DEFAULTS). */
struct pb_target_model {
	double l2_over_dram;	 /* L2 bandwidth over DRAM bandwidth */
	double dram_efficiency;	 /* the fraction of dram_bytes_per_s a
				    streaming kernel reaches */
	double chain_cycles;	 /* cycles per operation of one thread's
				    dependent chain */
	double mem_cycles;	 /* issue cost of a global load or store, in
				    arithmetic operations */
	double hiding_occupancy; /* occupancy from which latency is hidden */
	double tree_step_cycles; /* cycles of one step of a block's
				    shared-memory reduction tree */
};

/* l2_over_dram, dram_efficiency, chain_cycles, mem_cycles,
 * hiding_occupancy, tree_step_cycles: the model's values before any fit
 * (pb-tile's constants up to commit f0b18bb). */
#define PB_TARGET_MODEL_DEFAULTS {2.5, 1.0, 4.0, 1.0, 0.25, 40.0}

struct pb_target {
	char arch[16];		    /* "sm_90": also the PTX target */
	char name[64];		    /* "NVIDIA H100 SXM5 80GB" */
	int sm_count;
	int warp_size;
	int max_threads_per_block;
	int max_threads_per_sm;
	int max_blocks_per_sm;
	int regs_per_sm;	    /* 32-bit registers */
	int max_regs_per_thread;
	int64_t smem_per_block;	    /* bytes without opt-in (48 KiB) */
	int64_t smem_per_block_optin; /* bytes with opt-in */
	int64_t smem_per_sm;
	int64_t l2_bytes;
	double dram_bytes_per_s;
	double clock_hz;	    /* boost clock of the SMs */
	double launch_s;	    /* kernel launch overhead, seconds */
	/* peak rates in operations per second (a multiply-add is 2) */
	double fp32_flops;	    /* CUDA cores */
	double fp64_flops;
	double tc_fp16_flops;	    /* tensor cores, dense, f32 accumulate */
	double tc_bf16_flops;
	double tc_tf32_flops;
	double tc_int8_ops;
	int ptx_isa;		    /* the PTX ISA the arch needs, times ten
				       (80: PTX 8.0): the lowest that knows
				       it, so that older drivers load it */
	struct pb_target_model model;
};

/* Fill "t" with the target for "arch" ("sm_80", "sm_86", "sm_89",
 * "sm_90", "sm_90a"; NULL: ctx->arch, else "sm_90") or, when "file" is
 * not NULL, with the description in that JSON file (whose "arch" must
 * then be one pb can generate PTX for). Errors (unknown arch, unreadable
 * file, missing or out-of-range field: one line naming the file and the
 * field) are reported through "ctx"; returns PB_OK or PB_ERR.
 * A "file" without '/' or '.' that names a built-in description ("h200",
 * "sm_80", ...) selects it; with both "arch" and "file" NULL, the
 * tool's --target-file (ctx->target_file) comes before ctx->arch. */
int pb_target_get(struct pb_ctx *ctx, const char *arch, const char *file,
		  struct pb_target *t);

/* The description of the tool's target (--target-file, else --arch,
 * else sm_90), loaded on the first call and kept in "ctx" (ctx->target)
 * for every later one; NULL after reporting an error. */
const struct pb_target *pb_target_of(struct pb_ctx *ctx);

/* The PTX ISA version (times ten) to generate for "arch": that of the
 * tool's description when it is of "arch", else that of the built-in
 * description of "arch" (--arch=sm_80 with --target-file h200); -1 after
 * reporting an error. */
int pb_target_ptx_isa(struct pb_ctx *ctx, const char *arch);

/* The architectures with a built-in description, NULL-terminated. */
extern const char *const pb_target_archs[];
/* Them as text: "sm_80, sm_86, sm_89, sm_90 or sm_90a" (a static
 * buffer). */
const char *pb_target_arch_list(void);
/* Is "arch" one of them? */
int pb_target_is_arch(const char *arch);

/* Has "t" the warpgroup MMA (wgmma.mma_async, sm_90a: PTX's
 * architecture-specific features of sm_90)? */
int pb_target_has_wgmma(const struct pb_target *t);

/* Shared memory the driver reserves per resident block (sm_80 and
 * later: 1 KiB), counted against smem_per_sm. */
#define PB_TARGET_SMEM_RESERVED 1024
/* The fewest warps an SM must keep resident for a block to take shared
 * memory past smem_per_block (two per scheduler: with the operands in an
 * asynchronous ring that is what Triton's 8-warp, one-block-per-SM
 * tiles run with). */
#define PB_TARGET_OPTIN_WARPS 8

/* May a block of "warps" warps take "bytes" of shared memory on "t"? Up
 * to smem_per_block always (static shared memory); past it, with the
 * opt-in (dynamic shared memory, docs/pb-codegen.md), up to
 * smem_per_block_optin when the blocks an SM then holds by its shared
 * memory (smem_per_sm over bytes plus PB_TARGET_SMEM_RESERVED) keep
 * PB_TARGET_OPTIN_WARPS warps resident: the occupancy a deeper ring
 * costs is priced, not only its size. */
int pb_target_smem_fits(const struct pb_target *t, int64_t bytes, int warps);

#endif

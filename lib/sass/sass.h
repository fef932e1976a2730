/* What the assembled kernels look like, without a GPU (docs/pb-prof.md,
 * "--static"): ptxas's own report of each kernel (registers, spills,
 * shared memory, stack) and the instruction mix of the disassembled
 * cubin (nvdisasm), above all of its hottest inner loop.
 *
 *   ptxas.c  finding ptxas and nvdisasm, assembling PTX (ptxas -v) and
 *            reading its report, disassembling a cubin
 *   sass.c   parsing an nvdisasm listing: kernels, instructions, their
 *            classes, loops (backward branches) and the mix of a loop
 *
 * Only lib/core below: pb-codegen's --ptxas-report, pb-prof --static and
 * later pb-tile's and pb-smem's reports share this one implementation. */
#ifndef PB_SASS_SASS_H
#define PB_SASS_SASS_H

#include <stddef.h>

#include "core/pb.h"

/* --- ptxas.c ------------------------------------------------------------- */

/* ptxas's report of one kernel (ptxas -v). */
struct pb_sass_ptxas {
	char kernel[256];
	long regs, smem, stack, spill_st, spill_ld, barriers;
};

/* The path of ptxas ($CUDA_HOME/bin, /usr/local/cuda/bin) into "path"
 * (size "n"); -1 when there is none. */
int pb_sass_find_ptxas(char *path, size_t n);
/* The path of nvdisasm into "path": $PB_NVDISASM when set (it must then
 * be executable), else $CUDA_HOME/bin, /usr/local/cuda/bin, then $PATH;
 * -1 when there is none. */
int pb_sass_find_nvdisasm(char *path, size_t n);

/* Parse ptxas -v output "text" into "*all" ("*n" kernels, malloc'ed). */
void pb_sass_ptxas_parse(const char *text, struct pb_sass_ptxas **all,
			 int *n);
/* Assemble "ptx" ("len" bytes) for "arch" with ptxas -v: its report into
 * "*all" and "*n" (in the order of the .entry directives of "ptx"), the
 * cubin to "cubin" (NULL: none). Errors (no ptxas, ptxas rejects the
 * PTX: its messages) are reported through "ctx", prefixed with "what"
 * ("--ptxas-report"); PB_ERR then. */
int pb_sass_ptxas(struct pb_ctx *ctx, const char *what, const char *ptx,
		  size_t len, const char *arch, const char *cubin,
		  struct pb_sass_ptxas **all, int *n);
/* Disassemble "cubin" with "nvdisasm" (a path) into "out": the plain
 * listing (nvdisasm -c). PB_ERR after reporting. */
int pb_sass_disassemble(struct pb_ctx *ctx, const char *nvdisasm,
			const char *cubin, struct pb_buf *out);

/* --- sass.c -------------------------------------------------------------- */

/* The classes of SASS instructions counted. */
enum pb_sass_class {
	PB_SASS_FFMA,	/* FFMA */
	PB_SASS_FADD,	/* FADD */
	PB_SASS_FMUL,	/* FMUL */
	PB_SASS_HALF,	/* HFMA2, HADD2, HMUL2, HMNMX2: packed half math */
	PB_SASS_FPX,	/* other float math: FMNMX, MUFU, DFMA, DADD, DMUL */
	PB_SASS_MMA,	/* warp tensor-core: HMMA, IMMA, DMMA, BMMA */
	PB_SASS_GMMA,	/* warpgroup tensor-core: HGMMA, IGMMA, QGMMA */
	PB_SASS_LDG,	/* global loads */
	PB_SASS_LDS,	/* shared loads */
	PB_SASS_LDGSTS, /* async global-to-shared copies (cp.async) */
	PB_SASS_LDSM,	/* ldmatrix */
	PB_SASS_STS,	/* shared stores */
	PB_SASS_STG,	/* global stores */
	PB_SASS_LOCAL,	/* LDL, STL: local memory (spills, stack arrays) */
	PB_SASS_MEMX,	/* other memory: LD, ST, ATOM(S/G), RED, TMA */
	PB_SASS_BAR,	/* BAR */
	PB_SASS_SYNC,	/* DEPBAR, LDGDEPBAR, SYNCS, WARPSYNC, MEMBAR */
	PB_SASS_INT,	/* integer and address arithmetic (U* too) */
	PB_SASS_FSEL,	/* FSEL */
	PB_SASS_MOV,	/* MOV, S2R, CS2R, ... and HFMA2.MMA of zeros */
	PB_SASS_CTRL,	/* BRA, EXIT, BSSY, BSYNC, ... */
	PB_SASS_OTHER,	/* everything else: compares, conversions, ... */
	PB_SASS_NCLASS
};
/* The name of class "c" ("FFMA", "LDG", "INT", ...). */
const char *pb_sass_class_name(enum pb_sass_class c);

/* Access widths of the memory classes. */
enum { PB_SASS_W32, PB_SASS_W64, PB_SASS_W128, PB_SASS_NWIDTH };

/* The mix of a run of instructions. */
struct pb_sass_mix {
	int total;
	int n[PB_SASS_NCLASS];
	/* per memory class: instructions of width <= 32, 64, 128 bits */
	int width[PB_SASS_NCLASS][PB_SASS_NWIDTH];
	int math;   /* FFMA..GMMA: float math and tensor-core */
	int mem;    /* LDG..MEMX: memory instructions */
	double flops; /* per thread: FFMA 2, HFMA2 4, HMMA.16816 128, ... */
};
/* math / total, flops / mem (0 when the divisor is 0). */
double pb_sass_math_share(const struct pb_sass_mix *m);
double pb_sass_flops_per_mem(const struct pb_sass_mix *m);

/* One instruction of a listing. */
struct pb_sass_inst {
	long addr;
	enum pb_sass_class cls;
	int width;	/* PB_SASS_W*, for memory classes */
	double flops;	/* per thread */
	long target;	/* a branch's target (instruction index), -1: none */
};

/* A loop: the instructions from the target of a backward branch to the
 * last branch back to it. */
struct pb_sass_loop {
	int first, last; /* instruction indices, inclusive */
	int depth;	 /* loops around it (0: outermost) */
	int inner;	 /* it contains no other loop */
	struct pb_sass_mix mix;
};

/* One kernel (function) of a listing. */
struct pb_sass_kernel {
	char *name;
	int ninst;
	struct pb_sass_inst *inst;
	struct pb_sass_mix mix; /* of the whole kernel */
	int nloops;
	struct pb_sass_loop *loops;
	int hot; /* the hottest inner loop (index in "loops"), -1: none */
};

struct pb_sass {
	int n;
	struct pb_sass_kernel *k;
};

/* Parse the nvdisasm listing "text" (with or without -c; one section
 * .text.<kernel> per function) into "s": every kernel's instructions,
 * their mix, its loops and the hottest inner loop (the deepest innermost
 * loop; of equal depth, the one with the most flops, then the fewest
 * instructions: a full tile's loop rather than the same loop of a
 * partial tile, whose points are guarded one by one). Returns 0,
 * or -1 when "text" holds no instruction. */
int pb_sass_parse(const char *text, struct pb_sass *s);
void pb_sass_clear(struct pb_sass *s);
/* The kernel named "name" of "s", or NULL. */
const struct pb_sass_kernel *pb_sass_kernel(const struct pb_sass *s,
					    const char *name);

/* Classify one instruction "text" (without address, predicate allowed:
 * "@P0 LDG.E.128 R4, desc[UR4][R2.64] ") into "i" (its class, width
 * and flops; i->target is left alone). */
void pb_sass_classify(const char *text, struct pb_sass_inst *i);

#endif

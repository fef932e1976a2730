/* pb-codegen --backend=tile: each kernel of a fused module as a CUDA Tile
 * IR block-level program, written as bytecode by pb's own writer
 * (bytecode.h, ops.h) and assembled by NVIDIA's tileiras into a cubin
 * (docs/tileir.md). */
#ifndef PB_TILEIR_TILEIR_H
#define PB_TILEIR_TILEIR_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "plan/plan.h"

/* Markers of a cubin in a tile artifact (docs/tileir.md): the plan header,
 * then per kernel "// pb-cubin NAME BYTES" and its base64 lines, each
 * prefixed with "// ", then "// pb-cubin-end". */
#define PB_TILEIR_CUBIN "// pb-cubin "
#define PB_TILEIR_CUBIN_END "// pb-cubin-end"

struct pb_tileir_opts {
	const char *tileiras; /* --tileiras=PATH, or NULL: search */
	int opt_level;	      /* -O for tileiras, 0..3 */
	int emit_bytecode;    /* --emit=tileirbc: the bytecode, no cubin */
	int tma;	      /* --tile-tma: tell tileiras on sm_90 that the
				 buffers are aligned (it then uses TMA, whose
				 descriptors the driver builds from the
				 pointers through the cubin's host code) */
};

/* Find NVIDIA's tool "name" (tileiras, tileirdisasm) into "path": at
 * "given" when not NULL, else at $"env", on $PATH, or in the virtual
 * environment scripts/deps.sh --tile installs (build/venv-tile, next to
 * the running executable's directory). Returns 0, or -1 when not found. */
int pb_tileir_find_tool(const char *given, const char *name, const char *env,
			char *path, size_t n);

/* Translate each kernel function of "m" (at the fuse stage) into one
 * Tile IR entry of a bytecode module for ctx->arch, filling "plan"'s
 * launches (grid from the block tiles). With opts->emit_bytecode, the
 * bytecode of all kernels goes into "out"; otherwise each kernel is
 * assembled by tileiras and "out" receives the tile artifact: the plan
 * header and the cubins (block sizes from the cubins). PB_ERR reported. */
int pb_tileir_emit(struct pb_ctx *ctx, MlirModule m, struct pb_plan *plan,
		   const struct pb_tileir_opts *opts, struct pb_buf *out);

/* Move each constant buffer (memref.get_global) that @main of "m" passes
 * to a kernel function it calls once into that function (a get_global
 * at its start in place of the argument, which is dropped), so that the
 * kernel reads a Tile IR global. Returns how many moved. */
int pb_tileir_sink_globals(MlirModule m);

/* tileiras.c: assemble bytecode "bc" for "arch" at "opt_level" into a
 * cubin appended to "cubin". PB_ERR reported (naming "what"). */
int pb_tileir_assemble(struct pb_ctx *ctx, const char *tool, const char *what,
		       const struct pb_buf *bc, const char *arch,
		       int opt_level, struct pb_buf *cubin);
/* The threads per block the cubin "cubin" requires of kernel "kernel"
 * (EIATTR_REQNTID of its .nv.info section) into "block"; -1 when the
 * cubin says none. */
int pb_tileir_cubin_block(const char *cubin, size_t len, const char *kernel,
			  int64_t block[3]);
/* The number of parameters a launch of kernel "kernel" of "cubin"
 * passes, their bytes into "*bytes": the kernel's own (EIATTR_KPARAM_INFO)
 * or, when the driver completes them with TMA descriptors (host
 * callbacks), those its launcher gives. */
int pb_tileir_cubin_params(const char *cubin, size_t len, const char *kernel,
			   int64_t *bytes);
/* The static shared memory of kernel "kernel" in "cubin" in bytes (its
 * .nv.shared section), 0 when it has none. */
int64_t pb_tileir_cubin_smem(const char *cubin, size_t len,
			     const char *kernel);

#endif

/* The host launch plan: which buffers a compiled model needs and which
 * kernels to launch on them, in order. pb-codegen writes it as a JSON
 * comment header inside k.ptx (see docs/pb-codegen.md); a GPU runner reads
 * it back. This module depends on jansson and libc only (no MLIR), so that
 * a runner built without LLVM can link it.
 */
#ifndef PB_PLAN_PLAN_H
#define PB_PLAN_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define PB_PLAN_VERSION 1
#define PB_PLAN_BEGIN "// pb-plan-begin"
#define PB_PLAN_END "// pb-plan-end"
/* A tile artifact (pb-codegen --backend=tile, docs/tileir.md) carries,
 * after the plan header, one cubin in base64: "// pb-cubin BYTES", lines
 * of 76 base64 characters each prefixed by "// ", "// pb-cubin-end". */
#define PB_PLAN_CUBIN "// pb-cubin "
#define PB_PLAN_CUBIN_END "// pb-cubin-end"

enum pb_plan_kind {
	PB_PLAN_INPUT,   /* a graph input, filled by the caller */
	PB_PLAN_PARAM,   /* a weight (ONNX initializer), loaded by the runner */
	PB_PLAN_OUTPUT,  /* a graph output, read back by the caller */
	PB_PLAN_SCRATCH, /* an intermediate buffer, allocated by the runner */
	PB_PLAN_VIEW,    /* a view into another buffer: no memory of its own */
};

/* One buffer. Root buffers (every kind but view) own "bytes" bytes of
 * device memory. A view is an MLIR memref descriptor with static fields
 * relative to its root "base": its aligned pointer is the root's address
 * plus "offset" bytes, and element (i0, i1, ...) lies at that pointer plus
 * (elem_offset + i0 * strides[0] + ...) elements. Root buffers have
 * offset 0, elem_offset 0 and row-major strides. */
struct pb_plan_buffer {
	int id;                 /* index in pb_plan.buffers */
	enum pb_plan_kind kind;
	char *name;             /* input/output: pb.name; param: pb.param;
				   NULL for scratch and views */
	int arg;                /* position in @main's arguments, or -1 */
	char *dtype;            /* "f32", "f16", "bf16", "i64", ... */
	int rank;
	int64_t *shape;         /* rank entries */
	int64_t *strides;       /* rank entries, in elements */
	int64_t bytes;          /* numel * element size */
	int base;               /* views: id of the root buffer, else -1 */
	int64_t offset;         /* views: bytes from the root's address */
	int64_t elem_offset;    /* views: layout offset in elements */
	int64_t arena_offset;   /* scratch buffers of a plan with an arena:
				   bytes from the arena's address; else -1 */
	int *perm;              /* params: NULL, or "rank" entries: the
				   buffer holds the initializer transposed
				   by them (pb.perm, docs/ir-contract.md) */
};

enum pb_plan_arg_kind { PB_PLAN_ARG_BUFFER, PB_PLAN_ARG_SCALAR };

/* One kernel parameter: a buffer (its aligned pointer is passed, the
 * bare-pointer calling convention) or a scalar of type "type" ("i32",
 * "i64", "index", "f32", "f64"; integers in "i", floats in "f"). */
struct pb_plan_arg {
	enum pb_plan_arg_kind kind;
	int buffer;
	char *type;
	int64_t i;
	double f;
};

/* One kernel launch. */
struct pb_plan_launch {
	char *kernel;           /* the .entry symbol in the PTX */
	char *origin;           /* the pb.kernel function it came from */
	int nnodes;
	char **nodes;           /* the ONNX nodes of that function */
	int64_t grid[3], block[3];
	int64_t smem;           /* dynamic shared memory in bytes */
	int nargs;
	struct pb_plan_arg *args;
};

struct pb_plan {
	int version;
	char *arch;             /* "sm_90" */
	char *source;           /* pb.source: the .onnx path, or NULL */
	int nbuffers;
	struct pb_plan_buffer *buffers;
	int nlaunches;
	struct pb_plan_launch *launches;
	int64_t arena;          /* bytes of the one allocation that holds every
				   scratch buffer (at its arena_offset), or
				   -1: one allocation per buffer */
};

/* A new empty plan for "arch" and "source" (either may be NULL). */
struct pb_plan *pb_plan_alloc(const char *arch, const char *source);
void pb_plan_free(struct pb_plan *p);
/* Free the fields of launch "l" (not "l" itself). */
void pb_plan_launch_free(struct pb_plan_launch *l);

/* Append a root buffer of kind "kind" (not a view) named "name" (may be
 * NULL), argument position "arg" (or -1), element type "dtype" and shape
 * "shape" of rank "rank" to "p". Returns its id, or -1 when "dtype" is
 * unknown. */
int pb_plan_add_buffer(struct pb_plan *p, enum pb_plan_kind kind,
		       const char *name, int arg, const char *dtype, int rank,
		       const int64_t *shape);
/* Give param buffer "id" of "p" the permutation "perm" (its rank
 * entries): it holds its initializer transposed by it. */
void pb_plan_set_perm(struct pb_plan *p, int id, const int *perm);
/* Append a view of root buffer "base" with element type "dtype", shape
 * "shape", strides "strides" (rank "rank"), aligned pointer "offset" bytes
 * past the root's address and layout offset "elem_offset" elements.
 * Returns its id, or -1 when "dtype" is unknown or "base" is no root. */
int pb_plan_add_view(struct pb_plan *p, int base, const char *dtype,
		     int rank, const int64_t *shape, const int64_t *strides,
		     int64_t offset, int64_t elem_offset);
/* Append a launch of "kernel" from function "origin" with the "nnodes"
 * ONNX node names "nodes", sizes "grid" and "block", and "smem" bytes of
 * dynamic shared memory; returns it (with no arguments yet). */
struct pb_plan_launch *pb_plan_add_launch(struct pb_plan *p,
					  const char *kernel,
					  const char *origin, int nnodes,
					  const char *const *nodes,
					  const int64_t grid[3],
					  const int64_t block[3], int64_t smem);
/* Append a buffer argument "buffer" to launch "l". */
void pb_plan_launch_add_buffer(struct pb_plan_launch *l, int buffer);
/* Append a scalar argument of type "type" to launch "l": integers (and
 * "index") take "i", floats "f". */
void pb_plan_launch_add_scalar(struct pb_plan_launch *l, const char *type,
			       int64_t i, double f);

/* Bytes per element of "dtype" ("f32": 4), or 0 when unknown. */
int pb_plan_dtype_size(const char *dtype);
const char *pb_plan_kind_name(enum pb_plan_kind k);

/* Check "p" for consistency (ids, view bases, arguments, sizes); returns 0,
 * or -1 with a message in "err" (size "errlen"). */
int pb_plan_check(const struct pb_plan *p, char *err, size_t errlen);

/* The plan "p" as JSON text, one buffer and one launch per line, with
 * each line prefixed by "prefix" (may be NULL). Malloc'ed. */
char *pb_plan_to_json(const struct pb_plan *p, const char *prefix);
/* The comment header of a PTX file: PB_PLAN_BEGIN, the JSON with every
 * line prefixed by "// ", PB_PLAN_END. Malloc'ed. */
char *pb_plan_to_header(const struct pb_plan *p);

 /* Append the cubin section of "cubin" ("len" bytes) to the artifact text
 * "*text" (malloc'ed, "*tlen" bytes, NUL-terminated; both updated). */
void pb_plan_put_cubin(char **text, size_t *tlen, const void *cubin,
		       size_t len);
/* The cubin of the artifact "text" ("len" bytes): malloc'ed bytes into
 * "*cubin" and "*n"; 0 when there is one, 1 when "text" has no cubin
 * section (a PTX file), -1 with a message in "err" when it is malformed. */
int pb_plan_get_cubin(const char *text, size_t len, unsigned char **cubin,
		      size_t *n, char *err, size_t errlen);

/* ---- arena.c: memory planning ---- */

/* The alignment of every buffer in the arena, as of every allocation. */
#define PB_PLAN_ALIGN 256

/* One buffer to place in an arena: "bytes" live from launch "first" to
 * launch "last" (both included; "first" -1 when never used: it takes no
 * space). "id" names it in messages. */
struct pb_arena_item {
	int id;
	int64_t bytes;
	int first, last;
};
/* Pack the "n" "items" into one arena, each at an "align"-aligned offset
 * (into "offset"; 0 for items never used) such that items live at the
 * same launch never share a byte: largest first, best fit. Returns the
 * arena's size. */
int64_t pb_arena_pack(int n, const struct pb_arena_item *items,
		      int64_t align, int64_t *offset);
/* Check a packing: every used item lies "align"-aligned inside the arena
 * of "arena" bytes and no two items live at the same launch overlap in
 * memory. 0, or -1 with a message in "err". */
int pb_arena_check(int n, const struct pb_arena_item *items,
		   const int64_t *offset, int64_t arena, int64_t align,
		   char *err, size_t errlen);
/* The live range of every scratch buffer of "p" over its launches, into
 * "first" and "last" (indexed by buffer id; -1 for other buffers and for
 * scratch buffers no launch uses): the first and last launch with an
 * argument that is the buffer or a view of it. Returns the number of
 * scratch buffers. */
int pb_plan_liveness(const struct pb_plan *p, int *first, int *last);
/* Give "p" an arena: pack its scratch buffers by liveness (arena and
 * arena_offset set). */
void pb_plan_pack(struct pb_plan *p);
/* Check the arena of "p" (when it has one) against the live ranges its
 * launches imply; 0, or -1 with a message in "err". */
int pb_plan_check_arena(const struct pb_plan *p, char *err, size_t errlen);

/* The device memory a plan needs, in bytes. */
struct pb_plan_memory {
	int64_t inputs, outputs, params; /* the roots of each kind */
	int64_t intermediates; /* all scratch buffers: one allocation each */
	int64_t arena;         /* the arena, or -1 without one */
	int64_t live_max;      /* the most scratch bytes live at one launch
				  (what no packing can go below) */
	int64_t peak;          /* inputs + outputs + params + the arena (or
				  the intermediates without one) */
};
void pb_plan_memory(const struct pb_plan *p, struct pb_plan_memory *m);

/* Read a plan from JSON "text" of "len" bytes; NULL with a message in
 * "err" (size "errlen") when it is malformed or inconsistent. */
struct pb_plan *pb_plan_from_json(const char *text, size_t len, char *err,
				  size_t errlen);
/* Read the plan from the comment header of the PTX "text" of "len"
 * bytes; NULL with a message in "err" when there is none or it is
 * malformed. */
struct pb_plan *pb_plan_from_ptx(const char *text, size_t len, char *err,
				 size_t errlen);

#endif

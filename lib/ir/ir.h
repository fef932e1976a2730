/* Helpers over the MLIR C API shared by every stage: parsing, verified
 * printing, pass pipelines, attributes, walks and the stage marker. */
#ifndef PB_IR_IR_H
#define PB_IR_IR_H

#include "mlir-c/AffineMap.h"
#include "mlir-c/IR.h"

#include "core/pb.h"

#define pb_str(s) mlirStringRefCreateFromCString(s)

/* The stages in pipeline order; a module records the last one applied in
 * its "pb.stage" attribute (no attribute: the input of pb-import's kind). */
enum pb_stage {
	PB_STAGE_NONE = 0,
	PB_STAGE_IMPORT,
	PB_STAGE_FUSE,
	PB_STAGE_TILE,
	PB_STAGE_MMA,
	PB_STAGE_SMEM,
	PB_STAGE_CODEGEN,
};
enum pb_stage pb_ir_get_stage(MlirModule m);
void pb_ir_set_stage(MlirModule m, enum pb_stage s);
/* Mark "m" as at stage "s" unless it is already at "s" or later. */
void pb_ir_advance_stage(MlirModule m, enum pb_stage s);
const char *pb_ir_stage_name(enum pb_stage s);

/* Parse "in" as a module; NULL module (errors reported) on failure. */
MlirModule pb_ir_parse(struct pb_ctx *ctx, const struct pb_input *in);
/* PB_ERR (reported at the bracket) when the brackets of the text "in"
 * nest too deeply for MLIR's recursive parser. */
int pb_ir_check_nesting(struct pb_ctx *ctx, const struct pb_input *in);
/* The first operation (pre-order) inside "op" that lies in more than
 * "max" nested regions of "op" (its own regions counting one), or a null
 * operation; recurses at most "max" levels. */
MlirOperation pb_ir_find_too_deep(MlirOperation op, int max);
/* Verify "m" and print it into "out"; PB_ERR when verification fails. */
int pb_ir_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out);
/* Run a textual pass pipeline ("builtin.module(...)") on "m". The
 * module is verified after each pass, or, unverified, not at all (the
 * caller verifies it once afterwards: with many kernels, verifying a
 * module of gpu.launch_func is quadratic, symbol lookups that scan). */
int pb_ir_run_pipeline(struct pb_ctx *ctx, MlirModule m, const char *pipeline);
int pb_ir_run_pipeline_unverified(struct pb_ctx *ctx, MlirModule m,
				  const char *pipeline);

/* Attribute access on operations by name. */
MlirAttribute pb_ir_attr(MlirOperation op, const char *name);
void pb_ir_set_attr(MlirOperation op, const char *name, MlirAttribute a);
int pb_ir_op_is(MlirOperation op, const char *name);
/* String value of a string attribute, or NULL-data ref. */
MlirStringRef pb_ir_str_attr(MlirOperation op, const char *name);

/* Find the func.func named "name" in "m" (null op when absent). */
MlirOperation pb_ir_lookup_func(MlirModule m, const char *name);
/* The same for a name that is a string reference (a symbol's). */
MlirOperation pb_ir_lookup_func_ref(MlirModule m, MlirStringRef name);
/* The func.func around "op" (possibly "op" itself), null when none. */
MlirOperation pb_ir_parent_func(MlirOperation op);



/* Generic helpers for transformations (collect with a walk, then mutate). */

/* A growable list of operations. */
struct pb_ir_ops {
	MlirOperation *v;
	int n, cap;
};
void pb_ir_ops_push(struct pb_ir_ops *l, MlirOperation op);
void pb_ir_ops_free(struct pb_ir_ops *l);
/* Append every operation nested in "root" (not "root" itself) whose name
 * is "name" (any operation when "name" is NULL) to "l", in pre-order. */
void pb_ir_collect(MlirOperation root, const char *name, struct pb_ir_ops *l);
/* The operations directly in "block" (none for a null block: the body of
 * a declaration), in order, appended to "l". */
void pb_ir_block_ops(MlirBlock block, struct pb_ir_ops *l);

/* A map from values to values: "from" and "to" in the order added, and
 * an index by value, so that a lookup costs the same in the large maps of
 * a clone as in the small ones of outlining. A lookup gives the image
 * first added (which its owner may overwrite in "to"). */
struct pb_ir_map {
	MlirValue *from, *to;
	int n, cap;
	struct pb_ptrmap index; /* "from" -> its first position */
};
void pb_ir_map_add(struct pb_ir_map *m, MlirValue from, MlirValue to);
/* The image of "v" in "m", or a null value when "v" is not mapped. */
MlirValue pb_ir_map_lookup(const struct pb_ir_map *m, MlirValue v);
void pb_ir_map_free(struct pb_ir_map *m);
/* Replace every operand of "root" and of the operations nested in it that
 * "m" maps by its image. */
void pb_ir_remap_operands(MlirOperation root, const struct pb_ir_map *m);

/* The operation that defines "v": its owner for a result, the operation
 * owning the block for a block argument. */
MlirOperation pb_ir_value_parent(MlirValue v);
/* The ancestor of "op" (possibly "op" itself) that lies directly in
 * "block", or a null operation when "op" is not nested in "block". */
MlirOperation pb_ir_ancestor_in(MlirOperation op, MlirBlock block);
/* Are the operands of "a" from "fa" on and those of "b" from "fb" on the
 * same values (and as many)? */
int pb_ir_same_operands(MlirOperation a, int fa, MlirOperation b, int fb);
/* Is "v" defined in "op" (by an operation in it, or as an argument of one
 * of its blocks)? */
int pb_ir_defined_in(MlirValue v, MlirOperation op);
/* Does "op" lie in "ancestor" (or is it "ancestor")? */
int pb_ir_is_inside(MlirOperation op, MlirOperation ancestor);
/* The entry block of the first region of "op" (func.func's body). */
MlirBlock pb_ir_entry_block(MlirOperation op);
/* Set the inputs of func.func "fn"'s function_type to the types of its
 * entry block's first arguments (after they were retyped; a lowering may
 * have added arguments past the type's), keeping its results. */
void pb_ir_func_retype(MlirOperation fn);
/* The name of "op" without its dialect prefix ("matmul" for
 * "linalg.matmul"), as a reference into the context. */
MlirStringRef pb_ir_op_short_name(MlirOperation op);

/* Does "t" have a static shape (or no shape at all)? */
int pb_ir_type_is_static(MlirType t);
/* Print "t" into "out" (NUL-terminated, without aliases). */
void pb_ir_type_print(MlirType t, struct pb_buf *out);

/* Call "fn" with every name of a NameLoc found in "loc" (through fused,
 * call-site and nested name locations), outermost first. */
void pb_ir_loc_names(MlirLocation loc,
		     void (*fn)(MlirStringRef name, void *user), void *user);

/* Argument attributes of a func.func "func" (its "arg_attrs" array). */
MlirAttribute pb_ir_func_arg_attr(MlirOperation func, int i, const char *name);
/* Set (or, with a null "a", remove) argument attribute "name" of argument
 * "i" of "func". */
void pb_ir_func_set_arg_attr(MlirOperation func, int i, const char *name,
			     MlirAttribute a);
/* Result attribute "name" of result "i" of "func" (null when absent). */
MlirAttribute pb_ir_func_result_attr(MlirOperation func, int i,
				     const char *name);
/* Number of arguments and results of the function type of "func". */
int pb_ir_func_num_args(MlirOperation func);
int pb_ir_func_num_results(MlirOperation func);

/* Create a detached func.func "name" at "loc" taking "n" arguments of
 * "types" (argument locations "locs", or "loc" when NULL) and returning
 * nothing, with an empty entry block; private when "private_" is set.
 * The caller owns the result. */
MlirOperation pb_ir_func_create(MlirLocation loc, const char *name, int n,
				const MlirType *types, const MlirLocation *locs,
				int private_);
/* Create a detached func.call of "callee" on the "n" values "args" at
 * "loc", with no results. The caller owns the result. */
MlirOperation pb_ir_call_create(MlirLocation loc, const char *callee, int n,
				const MlirValue *args);
/* Create a detached operation "name" at "loc" on the "n" values "args",
 * with no results, attributes or regions ("func.return",
 * "memref.dealloc"). The caller owns the result. */
MlirOperation pb_ir_op_create(MlirLocation loc, const char *name, int n,
			      const MlirValue *args);
/* A detached "arith.constant" of "v" of integer or index type "t" at
 * "loc". */
MlirOperation pb_ir_int_constant(MlirType t, MlirLocation loc, int64_t v);
/* Parse "text" (a module body) in "mctx" and return a detached clone of the
 * first operation named "name" in it, with its "n" operands replaced by
 * "operands" (which must match the snippet's in number and type); null when
 * absent or when "text" does not parse. The caller owns the result. */
MlirOperation pb_ir_clone_from_text(MlirContext mctx, const char *text,
				    const char *name, int n,
				    const MlirValue *operands);

/* The integer (or index) value of "v" into "*c" when "v" is an
 * arith.constant or index.constant; 0 when it is one, -1 otherwise. */
int pb_ir_const_int(MlirValue v, int64_t *c);
/* The "n" constant results of the affine map attribute "name" of "op"
 * (an affine.for's "lowerBoundMap", an affine.parallel's "upperBoundsMap")
 * into "v"; -1 unless the map has exactly "n" results, all constant. */
int pb_ir_const_map(MlirOperation op, const char *name, int n, int64_t *v);

/* Set the map of the affine access "op" (an affine.load, or an
 * affine.store when "store") to "map" with the dimensions none of its
 * results uses dropped, and their index operands with them, as
 * canonicalize would (the numbering of the other dimensions kept). A map
 * with symbols is set as it is. */
void pb_ir_set_access_map(MlirOperation op, int store, MlirAffineMap map);

/* The dimensions of "op" when it is an affine.parallel with constant
 * bounds, positive steps and no results or operands, at most "max" of
 * them: lower bounds, steps, trip counts and induction variables into the
 * arrays; their number, or -1 when "op" is not such a loop. */
int pb_ir_parallel_dims(MlirOperation op, int max, int64_t *lb,
			int64_t *step, int64_t *count, MlirValue *iv);

/* Parse "text", a module holding one func.func, and clone the operations
 * of its entry block but the terminator before "before", with the
 * function's "nargs" arguments replaced by "args" and every clone (and the
 * operations nested in it) located at "loc". The clones are appended to
 * "out" (may be NULL). Returns PB_OK, or PB_ERR when "text" does not parse
 * (an internal error). This is how stages build IR from templates. */
int pb_ir_instantiate(struct pb_ctx *ctx, const char *text,
		      MlirOperation before, int nargs, const MlirValue *args,
		      MlirLocation loc, struct pb_ir_ops *out);
/* Instantiate "text" before "op", at its location, and replace the
 * first result of "op" by that of the template's last operation; "op" is
 * erased. PB_ERR when the template does not parse or ends in no value. */
int pb_ir_replace_by_template(struct pb_ctx *ctx, const char *text,
			      MlirOperation op, int nargs,
			      const MlirValue *args);

#endif

/* Internal interface of the ONNX importer: the import state, the value
 * table, the text emitter and the op lowerings (lib/onnx/import*.c). */
#ifndef PB_ONNX_IMPORT_H
#define PB_ONNX_IMPORT_H

#include "onnx/internal.h"
#include "onnx/onnx.h"

/* Constants with at most this many elements are folded at import time;
 * Constant node values with at most this many are inlined as dense
 * constants when used as data (larger ones become pb.param arguments). */
#define PB_FOLD_MAX 4096
#define PB_INLINE_MAX 1024

/* A static tensor shape. */
struct shape {
	int rank;
	int64_t d[PB_MAX_RANK];
};

/* An SSA name ("%v12", "%a0", "%p3") or a type/map text, by value. */
struct name {
	char s[48];
};
struct text {
	char s[640];
};

/* A value of the graph. Several ONNX names may map to one value
 * (Identity). "ssa" is empty until the value exists in the emitted IR;
 * "k" holds contents known at import time (folded shapes, constants). */
struct val {
	const char *name;
	enum pb_dtype dtype;
	struct shape sh;
	struct name ssa;
	struct pb_tensor *k;
	const Onnx__TensorProto *init; /* initializer or Constant value */
	int is_init;                   /* init is a graph initializer */
	/* the float16/bfloat16 value this float32 value widens, while a
	 * node that computes on float32 only is lowered (pb_imp_widen) */
	struct val *narrow;
};

/* The state of one import. */
struct imp {
	struct pb_ctx *ctx;
	const struct pb_import_opts *opts;
	const char *file; /* the model as named in messages */
	const char *path; /* the model's path, NULL for stdin */
	Onnx__ModelProto *model;
	Onnx__GraphProto *g;
	int64_t opset;
	struct pb_buf locs, args, body;
	int nssa, nargs, nparams, nlocs;
	struct val **vals;
	int nvals;
	/* name -> val hash table (open addressing) */
	const char **hkeys;
	struct val **hvals;
	size_t hcap, hlen;
	/* the node being lowered */
	const Onnx__NodeProto *node;
	char *node_name;
	int loc; /* its location alias #l<loc> */
};

/* import_emit.c: text helpers. */
struct name pb_imp_fresh(struct imp *s);
struct text pb_imp_ty(const struct shape *sh);
struct text pb_imp_ty_rank(int rank, const int64_t *d);
struct text pb_imp_ty_dt(const struct shape *sh, enum pb_dtype dt);
const char *pb_imp_elt(enum pb_dtype dt);
int pb_imp_is_float(enum pb_dtype dt);
int pb_imp_is_int(enum pb_dtype dt);
void pb_imp_dtype_attr(struct pb_buf *b, enum pb_dtype dt);
int pb_imp_is_unsigned(enum pb_dtype dt);
const char *pb_imp_iop(enum pb_dtype dt, const char *op);
void pb_imp_int_range(enum pb_dtype dt, double *lo, double *hi);
struct text pb_imp_map(int ndims, int nres, const int *res);
struct text pb_imp_map_mod(int ndims, int nres, const int *res,
			   const int64_t *mod);
struct text pb_imp_ints(int n, const int64_t *v);
struct text pb_imp_f32(double x);
void pb_imp_emit(struct imp *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pb_imp_raw(struct imp *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pb_imp_str(struct pb_buf *b, const char *str);
int pb_imp_node_error(struct imp *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* import_val.c: values: lookup, definition, materialization as SSA
 * tensors. */
struct val *pb_imp_lookup(struct imp *s, const char *name);
struct val *pb_imp_new_val(struct imp *s, const char *name,
			   enum pb_dtype dt, const struct shape *sh);
struct val *pb_imp_in(struct imp *s, size_t i);
/* The type model data of type "dt" has: with --cast, float32 data
 * becomes the cast type. */
enum pb_dtype pb_imp_data_type(struct imp *s, enum pb_dtype dt);
int pb_imp_nin(struct imp *s);
struct val *pb_imp_def(struct imp *s, size_t i, enum pb_dtype dt,
		       const struct shape *sh);
struct pb_tensor *pb_imp_known(struct imp *s, struct val *v);
/* What initializer "p" of shape "sh" says of the keys j of query i
 * (causal.c): KEPT, a causal mask, 0 (true) at [.., i, j] for j <= i + c
 * and -inf (false) beyond; FUTURE, a boolean true for j > i + c and
 * false at and below; c in *off. */
enum pb_imp_causal {
	PB_IMP_CAUSAL_NONE,
	PB_IMP_CAUSAL_KEPT,
	PB_IMP_CAUSAL_FUTURE,
};
enum pb_imp_causal pb_imp_causal(const Onnx__TensorProto *p,
				 const struct shape *sh, int64_t *off);
const char *pb_imp_use(struct imp *s, struct val *v);
const char *pb_imp_use_dt(struct imp *s, struct val *v);
int pb_imp_alias(struct imp *s, size_t out, struct val *v);
int pb_imp_def_ssa(struct imp *s, struct name r, enum pb_dtype dt,
		   const struct shape *sh);
/* Define output "i" as the known tensor "t" (taking it). */
struct val *pb_imp_def_known(struct imp *s, size_t i, struct pb_tensor *t);
int pb_imp_known_ints(struct imp *s, struct val *v, int64_t *out, int max,
		      const char *what);
int pb_imp_declared_shape(struct imp *s, const char *name, struct shape *sh);

/* Node attributes. */
const Onnx__AttributeProto *pb_imp_attr(struct imp *s, const char *name);
int64_t pb_imp_attr_int(struct imp *s, const char *name, int64_t dflt);
float pb_imp_attr_float(struct imp *s, const char *name, float dflt);
const char *pb_imp_attr_str(struct imp *s, const char *name, const char *dflt);
int pb_imp_attr_ints(struct imp *s, const char *name, int64_t *v, int max);

/* Building blocks shared by the op lowerings. */
struct name pb_imp_empty(struct imp *s, const struct shape *sh);
struct name pb_imp_fill(struct imp *s, const struct shape *sh, double x);
struct name pb_imp_empty_dt(struct imp *s, const struct shape *sh,
			    enum pb_dtype dt);
struct name pb_imp_fill_dt(struct imp *s, const struct shape *sh,
			   enum pb_dtype dt, double x);
struct name pb_imp_scalar_dt(struct imp *s, enum pb_dtype dt, double x);
struct name pb_imp_reshape(struct imp *s, const char *x,
			   const struct shape *from, const struct shape *to);
struct name pb_imp_reshape_dt(struct imp *s, const char *x,
			      const struct shape *from, const struct shape *to,
			      enum pb_dtype dt);
struct name pb_imp_pad(struct imp *s, const char *x, struct shape *sh,
		       const int64_t *lo, const int64_t *hi, double v);
struct name pb_imp_pad_dt(struct imp *s, const char *x, struct shape *sh,
			  enum pb_dtype dt, const int64_t *lo,
			  const int64_t *hi, double v);
struct text pb_imp_bcast_map(const struct shape *out, const struct shape *in);
int pb_imp_broadcast(struct imp *s, const struct shape *a,
		     const struct shape *b, struct shape *out);
int pb_imp_axis(struct imp *s, int64_t axis, int rank, int *out);
int64_t pb_imp_numel(const struct shape *sh);
/* Should an op on "v" be folded at import time? Integer (shape) data
 * always; float data when known, small and not a weight. */
int pb_imp_fold_ok(struct val *v);

/* A linalg.generic under construction: ins, one out, block arguments. */
/* The most inputs of one linalg.generic, and of a variadic elementwise
 * node (Sum, Max, Min, Mean), like Concat's. */
#define PB_IMP_MAXIN 64
struct gen {
	int ndims;
	int nin;
	/* block arguments: ins, then the out; the result last */
	struct name arg[PB_IMP_MAXIN + 2];
	enum pb_dtype dt[PB_IMP_MAXIN + 1]; /* their element types */
	struct shape out;
};
void pb_imp_gen_begin(struct imp *s, struct gen *g, int ndims,
		      const char *iters, int nin, const char *const *ins,
		      const struct shape *in_sh, const struct text *in_maps,
		      const char *init, const struct shape *out,
		      const struct text *out_map);
void pb_imp_gen_begin_dt(struct imp *s, struct gen *g, int ndims,
			 const char *iters, int nin, const char *const *ins,
			 const struct shape *in_sh, const enum pb_dtype *in_dt,
			 const struct text *in_maps, const char *init,
			 const struct shape *out, enum pb_dtype out_dt,
			 const struct text *out_map);
struct name pb_imp_gen_end(struct imp *s, struct gen *g, const char *yield);
struct name pb_imp_scalar(struct imp *s, double x);
/* Emit "%r = <op> <a>[, <b>] : f32" (b NULL: a unary op) and return %r. */
struct name pb_imp_scalar_op(struct imp *s, const char *op, const char *a,
			     const char *b);

/* The newest default-domain opset whose op definitions the importer
 * follows. */
#define PB_OPSET_MAX 21

/* The op lowerings, one function per op kind: tables of op type, the
 * function, the comma-separated attributes it understands and the model
 * opsets it accepts (from "since", the op's first version in ai.onnx or
 * the first the lowering follows, to "until", 0 for PB_OPSET_MAX), each
 * ended by a NULL name (import_math.c, import_nn.c, import_shape.c,
 * import_typed.c). */
typedef int (*pb_imp_op_fn)(struct imp *s);
struct pb_imp_op {
	const char *name;
	pb_imp_op_fn fn;
	const char *attrs;
	int since, until;
	int widen; /* enum pb_imp_widen */
};

/* How a lowering that computes on float32 meets float16/bfloat16 data:
 * PB_IMP_WIDEN: the node's half inputs are seen as float32 (converted on
 * use) and its float32 outputs are converted back to the inputs' half
 * type, as PyTorch computes such ops on half tensors (statistics and
 * accumulations in float32); PB_IMP_WIDEN_FIRST: only output 0 is
 * converted back (LayerNormalization's Mean and InvStdDev stay float32,
 * ONNX's stash_type); PB_IMP_WIDEN_INT: as PB_IMP_WIDEN, and 8- and
 * 16-bit integer inputs are widened too (exactly: float32 holds them), for
 * ops whose results are some of their inputs' values (MaxPool). 0: the
 * lowering handles every type itself. */
enum pb_imp_widen {
	PB_IMP_WIDEN = 1,
	PB_IMP_WIDEN_FIRST = 2,
	PB_IMP_WIDEN_INT = 3,
};
int pb_imp_widen(struct imp *s, struct val **saved, enum pb_dtype *dt,
		 int ints);
int pb_imp_narrow(struct imp *s, struct val **saved, enum pb_dtype dt,
		  int first_only);
/* The SSA tensor of contraction operand "v" in its storage type: a
 * widened half value is used unconverted (its type into "*dt"), so that
 * contractions take f16/bf16 operands and accumulate in float32. */
const char *pb_imp_use_operand(struct imp *s, struct val *v,
			       enum pb_dtype *dt);
extern const struct pb_imp_op pb_imp_ops_math[];
extern const struct pb_imp_op pb_imp_ops_nn[];
extern const struct pb_imp_op pb_imp_ops_shape[];
extern const struct pb_imp_op pb_imp_ops_typed[];
extern const struct pb_imp_op pb_imp_ops_scatter[];
extern const struct pb_imp_op pb_imp_ops_rnn[];
extern const struct pb_imp_op pb_imp_ops_loss[];
extern const struct pb_imp_op pb_imp_ops_gen[];
extern const struct pb_imp_op pb_imp_ops_select[];
extern const struct pb_imp_op pb_imp_ops_grid[];
extern const struct pb_imp_op pb_imp_ops_quant[];

/* Quantization building blocks (import_quant.c): the map of a scale or
 * zero point "p" (one element, or 1-d along "axis") in a generic over
 * "out"; the quantization of f32 scalar "y" (divided by the scale) to
 * "dt" with zero point "zp" (may be NULL) of type "zdt"; the i32 tensor
 * "x - zp" of 8-bit "x", zp along "axis"; the requantization of an i32
 * accumulator into output 0 (QLinearMatMul, QLinearConv). */
int pb_imp_qparam_map(struct imp *s, const struct val *p,
		      const struct shape *out, int axis, struct text *map);
struct name pb_imp_requant(struct imp *s, const char *y, const char *zp,
			   enum pb_dtype zdt, enum pb_dtype dt);
struct name pb_imp_qshift(struct imp *s, struct val *x, struct val *zp,
			  int axis);
int pb_imp_requant_out(struct imp *s, const char *acc,
		       const struct shape *out, struct val *xs,
		       struct val *ws, int waxis, struct val *ys,
		       struct val *yz, struct val *bias);

/* Building blocks of the run-time indexing ops (import_typed.c): check
 * that input "v" is present and of a type the importer computes on (and
 * "want" unless PB_DT_UNDEFINED); "linalg.index d"; the index into a dim
 * of size "n" of integer "idx" of type "dt" (negative from the end,
 * clamped into [0, n)); "tensor.extract x[idx..]". */
int pb_imp_check_type(struct imp *s, struct val *v, enum pb_dtype want);
struct name pb_imp_loop_index(struct imp *s, int d);
struct name pb_imp_index_of(struct imp *s, const char *idx, enum pb_dtype dt,
			    int64_t n);
struct name pb_imp_extract(struct imp *s, const char *x,
			   const struct shape *sh, enum pb_dtype dt,
			   const struct name *idx);

/* The data, indices and axis of the current Gather or GatherElements
 * node (import_typed.c). */
int pb_imp_gather_args(struct imp *s, struct val **x, struct val **iv,
		       int *axis);
/* Gather ("elements" = 0) or GatherElements of "x" by the run-time
 * integer indices "iv" along "axis" (import_typed.c). */
int pb_imp_gather_rt(struct imp *s, struct val *x, struct val *iv, int axis,
		     int elements);
/* Resample "x" into "out" by per-dim coordinate tables (import_typed.c):
 * nearest (lo only) or linear (lo, hi, w); a NULL lo[d] copies dim d. */
int pb_imp_resample(struct imp *s, struct val *x, const struct shape *out,
		    double *const *lo, double *const *hi,
		    double *const *w);

/* Shared by the tables: reduce "x" over the dims set in "red" (a bit per
 * dim) with "kind" ("sum", "mean", "max", ..); "keep" keeps them as 1. */
int pb_imp_reduce(struct imp *s, struct val *x, unsigned red,
		  const char *kind, int keep, struct name *res,
		  struct shape *res_sh);
/* The index into a tensor of shape "in" (broadcast to "out") of the
 * element at linear index "o" of "out". */
int64_t pb_imp_bcast_index(const struct shape *out, const struct shape *in,
			   int64_t o);
/* Element "i" of known "t" as a double; store "x" as element "i". */
double pb_imp_elem_get(const struct pb_tensor *t, int64_t i);
void pb_imp_elem_set(struct pb_tensor *t, int64_t i, double x);
/* Emit the conversion of scalar "x" from "from" to "to" (ONNX Cast). */
struct name pb_imp_convert(struct imp *s, const char *x, enum pb_dtype from,
			   enum pb_dtype to);
/* Emit a generic converting tensor "x" of shape "sh" from "from" to "to". */
struct name pb_imp_convert_tensor(struct imp *s, const char *x,
				  const struct shape *sh, enum pb_dtype from,
				  enum pb_dtype to);
/* A new known tensor of type "dt" and shape "sh" (zeroed). */
struct pb_tensor *pb_imp_new_known(enum pb_dtype dt, const struct shape *sh);

#endif

/* The importer's values: the table from ONNX names to values, their
 * definition by the node being lowered, and their materialization as SSA
 * tensors (pb.param arguments or dense constants). Below the op lowerings
 * (import_math.c, ..) and above the text emitter (import_emit.c). */
#include <stdlib.h>
#include <string.h>

#include "ir/contract.h"
#include "onnx/import.h"

/* FNV-1a hash of "str". */
static size_t hash(const char *str)
{
	size_t h = 1469598103934665603ull;
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 1099511628211ull;
	return h;
}

/* The slot of "name" in the hash table of "s" (empty or matching). */
static size_t slot(struct imp *s, const char *name)
{
	size_t i = hash(name) & (s->hcap - 1);
	while (s->hkeys[i] && strcmp(s->hkeys[i], name))
		i = (i + 1) & (s->hcap - 1);
	return i;
}

/* Map ONNX name "name" to value "v" (replacing an earlier mapping). */
static void bind(struct imp *s, const char *name, struct val *v)
{
	if (2 * (s->hlen + 1) > s->hcap) {
		const char **keys = s->hkeys;
		struct val **vals = s->hvals;
		size_t cap = s->hcap;
		s->hcap = cap ? 2 * cap : 256;
		s->hkeys = calloc(s->hcap, sizeof(*s->hkeys));
		s->hvals = calloc(s->hcap, sizeof(*s->hvals));
		if (!s->hkeys || !s->hvals) {
			fprintf(stderr, "pb: out of memory\n");
			exit(PB_ERR);
		}
		for (size_t i = 0; i < cap; i++) {
			if (!keys[i])
				continue;
			size_t j = slot(s, keys[i]);
			s->hkeys[j] = keys[i];
			s->hvals[j] = vals[i];
		}
		free(keys);
		free(vals);
	}
	size_t i = slot(s, name);
	if (!s->hkeys[i])
		s->hlen++;
	s->hkeys[i] = name;
	s->hvals[i] = v;
}

/* The value named "name" in "s", or NULL. */
struct val *pb_imp_lookup(struct imp *s, const char *name)
{
	if (!s->hcap)
		return NULL;
	size_t i = slot(s, name);
	return s->hkeys[i] ? s->hvals[i] : NULL;
}

/* A new value called "name" of type "dt" and shape "sh", owned by "s". */
struct val *pb_imp_new_val(struct imp *s, const char *name,
			   enum pb_dtype dt, const struct shape *sh)
{
	struct val *v = calloc(1, sizeof(*v));
	struct val **vals = realloc(s->vals, sizeof(*vals) * (s->nvals + 1));
	if (!v || !vals) {
		fprintf(stderr, "pb: out of memory\n");
		exit(PB_ERR);
	}
	s->vals = vals;
	s->vals[s->nvals++] = v;
	v->name = name;
	v->dtype = dt;
	v->sh = *sh;
	bind(s, name, v);
	return v;
}

/* The type of model data of type "dt" in "s": with --cast, float32 data
 * becomes the cast type. */
enum pb_dtype pb_imp_data_type(struct imp *s, enum pb_dtype dt)
{
	return dt == PB_DT_F32 && s->opts->cast ? (enum pb_dtype)s->opts->cast
						: dt;
}

/* Input "i" of the current node, or NULL when absent or empty. */
struct val *pb_imp_in(struct imp *s, size_t i)
{
	if (i >= s->node->n_input || !s->node->input[i][0])
		return NULL;
	return pb_imp_lookup(s, s->node->input[i]);
}

/* The number of inputs of the current node, trailing empty ones dropped. */
int pb_imp_nin(struct imp *s)
{
	int n = (int)s->node->n_input;
	while (n > 0 && !s->node->input[n - 1][0])
		n--;
	return n;
}

/* Define output "i" of the current node as a new value of type "dt" and
 * shape "sh". Returns NULL when the node has no such output. */
struct val *pb_imp_def(struct imp *s, size_t i, enum pb_dtype dt,
		       const struct shape *sh)
{
	if (i >= s->node->n_output || !s->node->output[i][0])
		return NULL;
	return pb_imp_new_val(s, s->node->output[i], dt, sh);
}

/* Define output 0 of the current node as the SSA value "r" of type "dt"
 * and shape "sh". */
int pb_imp_def_ssa(struct imp *s, struct name r, enum pb_dtype dt,
		   const struct shape *sh)
{
	struct val *v = pb_imp_def(s, 0, dt, sh);
	if (v)
		v->ssa = r;
	return PB_OK;
}

/* Make output "out" of the current node another name of value "v". */
int pb_imp_alias(struct imp *s, size_t out, struct val *v)
{
	if (out < s->node->n_output && s->node->output[out][0])
		bind(s, s->node->output[out], v);
	return PB_OK;
}

/* A copy of known "t" converted to float type "dt", or NULL. */
static struct pb_tensor *converted(const struct pb_tensor *t,
				   enum pb_dtype dt)
{
	struct pb_tensor *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = *t;
	c->name = NULL;
	if (!pb_imp_is_float(t->dtype) || !pb_imp_is_float(dt)) {
		/* integers: element by element, exactly where "dt" holds them */
		int64_t n = pb_tensor_numel(t);
		c->dtype = dt;
		c->nbytes = (size_t)n * pb_dtype_size(dt);
		if (!(c->data = malloc(c->nbytes ? c->nbytes : 1))) {
			free(c);
			return NULL;
		}
		for (int64_t i = 0; i < n; i++)
			pb_imp_elem_set(c, i, pb_imp_elem_get(t, i));
		return c;
	}
	c->data = malloc(t->nbytes ? t->nbytes : 1);
	if (!c->data || (memcpy(c->data, t->data, t->nbytes),
			 pb_tensor_convert(c, dt))) {
		pb_tensor_clear(c);
		free(c);
		return NULL;
	}
	return c;
}

/* The contents of "v" when known at import time (decoding its initializer
 * on first use; converted to "v"'s type when that differs, as --cast and
 * widening make it), else NULL. A decoding error is reported. */
struct pb_tensor *pb_imp_known(struct imp *s, struct val *v)
{
	if (v->k || !v->init)
		return v->k;
	/* a widened value decodes its original's initializer itself: with
	 * --cast it sees the float32 data, not their half rounding */
	struct pb_tensor *t = calloc(1, sizeof(*t));
	struct pb_buf where = {0};
	pb_buf_printf(&where, "%s: tensor '%s'", s->file, v->name);
	if (!t || pb_onnx_tensor_from_proto(s->ctx, where.data, s->path,
					   v->init, t)) {
		free(t);
		t = NULL;
	} else if (t->dtype != v->dtype && pb_tensor_convert(t, v->dtype)) {
		pb_error(s->ctx, "%s: cannot convert %s to %s", where.data,
			 pb_dtype_name(t->dtype), pb_dtype_name(v->dtype));
		pb_tensor_clear(t);
		free(t);
		t = NULL;
	}
	pb_buf_free(&where);
	v->k = t;
	return t;
}

/* Append "n" bytes at "p" as upper-case hex digits to "b". */
static void put_hex(struct pb_buf *b, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	char chunk[512];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		chunk[k++] = digits[p[i] >> 4];
		chunk[k++] = digits[p[i] & 15];
		if (k == sizeof(chunk)) {
			pb_buf_append(b, chunk, k);
			k = 0;
		}
	}
	pb_buf_append(b, chunk, k);
}

/* Append the bool contents "p" of shape "sh" from dim "d" on as a
 * nested literal ("[[true, false], ..]") to "b". */
static void put_bools(struct pb_buf *b, const unsigned char *p,
		      const struct shape *sh, int d)
{
	if (d == sh->rank) {
		pb_buf_puts(b, *p ? "true" : "false");
		return;
	}
	int64_t inner = 1;
	for (int i = d + 1; i < sh->rank; i++)
		inner *= sh->d[i];
	pb_buf_puts(b, "[");
	for (int64_t i = 0; i < sh->d[d]; i++) {
		if (i)
			pb_buf_puts(b, ", ");
		put_bools(b, p + i * inner, sh, d + 1);
	}
	pb_buf_puts(b, "]");
}

/* Emit the known contents "t" of shape "sh" as a dense arith.constant
 * (hex form, one element when all are equal; a literal for bools) named
 * "res". */
static void emit_dense(struct imp *s, const struct name *res,
		       const struct pb_tensor *t, const struct shape *sh)
{
	size_t esz = pb_dtype_size(t->dtype), n = t->nbytes / esz;
	int splat = n > 0;
	for (size_t i = 1; splat && i < n; i++)
		splat = !memcmp((char *)t->data + i * esz, t->data, esz);
	pb_buf_printf(&s->body, "    %s = arith.constant dense<", res->s);
	if (t->dtype == PB_DT_BOOL && splat) {
		pb_buf_puts(&s->body, *(unsigned char *)t->data ? "true"
								: "false");
	} else if (t->dtype == PB_DT_BOOL) {
		put_bools(&s->body, t->data, sh, 0);
	} else {
		pb_buf_puts(&s->body, "\"0x");
		put_hex(&s->body, t->data, splat ? esz : t->nbytes);
		pb_buf_puts(&s->body, "\"");
	}
	pb_buf_printf(&s->body, "> : %s", pb_imp_ty_dt(sh, t->dtype).s);
	if (s->loc >= 0)
		pb_buf_printf(&s->body, " loc(#l%d)\n", s->loc);
	else
		pb_buf_puts(&s->body, " loc(unknown)\n");
}

/* Check the external data reference of parameter "v", if it has one,
 * at import time, so that a bad one is an error of pb-import rather than
 * of pb-run. */
static int check_external(struct imp *s, struct val *v)
{
	struct pb_buf where = {0};
	pb_buf_printf(&where, "%s: tensor '%s'", s->file, v->name);
	int rc = pb_onnx_external_check(s->ctx, where.data, s->path, v->init);
	pb_buf_free(&where);
	return rc;
}

/* Add an argument for parameter "v" to the function: the initializer (or
 * large Constant) it holds, loaded by the runtime from pb.source. */
static void add_param(struct imp *s, struct val *v)
{
	snprintf(v->ssa.s, sizeof(v->ssa.s), "%%p%d", s->nparams++);
	pb_buf_printf(&s->args, "%s%s: %s {" PB_ATTR_PARAM " = ", s->nargs++ ? ",\n      " : "",
		      v->ssa.s, pb_imp_ty_dt(&v->sh, v->dtype).s);
	pb_imp_str(&s->args, v->name);
	pb_imp_dtype_attr(&s->args, v->dtype);
	int64_t c;
	enum pb_imp_causal k = pb_imp_causal(v->init, &v->sh, &c);
	if (k != PB_IMP_CAUSAL_NONE)
		pb_buf_printf(&s->args, ", %s = %lld : i64",
			      k == PB_IMP_CAUSAL_KEPT ? PB_ATTR_CAUSAL
						      : PB_ATTR_FUTURE,
			      (long long)c);
	pb_buf_puts(&s->args, "} loc(unknown)");
}

/* The SSA tensor of "v" of any type the importer computes on (see
 * pb_imp_elt), materializing it on first use: an initializer becomes a
 * pb.param argument (or a dense constant with --inline-weights), other
 * known contents a dense constant. NULL after reporting an error. */
const char *pb_imp_use_dt(struct imp *s, struct val *v)
{
	if (v->ssa.s[0])
		return v->ssa.s;
	if (v->narrow) {
		const char *x = pb_imp_use_dt(s, v->narrow);
		if (!x)
			return NULL;
		v->ssa = pb_imp_convert_tensor(s, x, &v->sh, v->narrow->dtype,
					       v->dtype);
		return v->ssa.s;
	}
	if (!pb_imp_elt(v->dtype)) {
		pb_imp_node_error(s, "tensor '%s' has type %s: only float, "
				  "integer and bool data is supported",
				  v->name, pb_dtype_name(v->dtype));
		return NULL;
	}
	if (v->init && !s->opts->inline_weights &&
	    (v->is_init || pb_imp_numel(&v->sh) > PB_INLINE_MAX)) {
		if (s->path && check_external(s, v))
			return NULL;
		add_param(s, v);
		return v->ssa.s;
	}
	struct pb_tensor *t = pb_imp_known(s, v);
	if (!t) {
		if (!s->ctx->nerrors)
			pb_imp_node_error(s, "tensor '%s' has no value", v->name);
		return NULL;
	}
	v->ssa = pb_imp_fresh(s);
	emit_dense(s, &v->ssa, t, &v->sh);
	return v->ssa.s;
}

/* The SSA tensor of float32 value "v" (see pb_imp_use_dt): the ops that
 * compute on float32 only use this one (their float16 and bfloat16
 * inputs arrive widened, pb_imp_widen). NULL after reporting an error. */
const char *pb_imp_use(struct imp *s, struct val *v)
{
	if (v->dtype != PB_DT_F32) {
		pb_imp_node_error(s, "tensor '%s' has type %s: only float32, "
				  "float16 and bfloat16 data is supported",
				  v->name, pb_dtype_name(v->dtype));
		return NULL;
	}
	return pb_imp_use_dt(s, v);
}

/* The static shape declared for value "name" (a graph output or a
 * value_info entry) into "sh"; PB_ERR (not reported) when none is. */
int pb_imp_declared_shape(struct imp *s, const char *name, struct shape *sh)
{
	const Onnx__ValueInfoProto *vi = NULL;
	for (size_t i = 0; !vi && i < s->g->n_output; i++)
		if (!strcmp(s->g->output[i]->name, name))
			vi = s->g->output[i];
	for (size_t i = 0; !vi && i < s->g->n_value_info; i++)
		if (!strcmp(s->g->value_info[i]->name, name))
			vi = s->g->value_info[i];
	if (!vi || !vi->type || vi->type->value_case !=
			ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type->shape ||
	    vi->type->tensor_type->shape->n_dim > PB_MAX_RANK)
		return PB_ERR;
	const Onnx__TensorShapeProto *t = vi->type->tensor_type->shape;
	sh->rank = (int)t->n_dim;
	for (size_t i = 0; i < t->n_dim; i++) {
		if (t->dim[i]->value_case !=
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			return PB_ERR;
		sh->d[i] = t->dim[i]->dim_value;
	}
	return PB_OK;
}

/* The known integer (or bool) contents of "v" ("what" names it in
 * errors) into "out" (at most "max"). Returns the count or -1 (reported). */
int pb_imp_known_ints(struct imp *s, struct val *v, int64_t *out, int max,
		      const char *what)
{
	struct pb_tensor *t = v ? pb_imp_known(s, v) : NULL;
	if (!t) {
		if (!s->ctx->nerrors)
			pb_imp_node_error(s, "%s must be a constant known at "
					  "import time", what);
		return -1;
	}
	int64_t n = pb_tensor_numel(t);
	if (n > max) {
		pb_imp_node_error(s, "%s has %lld values: at most %d are "
				  "supported", what, (long long)n, max);
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		if (t->dtype == PB_DT_I64)
			out[i] = ((int64_t *)t->data)[i];
		else if (t->dtype == PB_DT_I32)
			out[i] = ((int32_t *)t->data)[i];
		else if (t->dtype == PB_DT_BOOL) /* Dropout's training_mode */
			out[i] = ((unsigned char *)t->data)[i] != 0;
		else {
			pb_imp_node_error(s, "%s has type %s: expected an "
					  "integer tensor", what,
					  pb_dtype_name(t->dtype));
			return -1;
		}
	}
	return (int)n;
}

/* Define output "i" of the current node as the known tensor "t" (taken;
 * freed when there is no such output). */
struct val *pb_imp_def_known(struct imp *s, size_t i, struct pb_tensor *t)
{
	struct shape sh = {t->rank, {0}};
	memcpy(sh.d, t->dims, sizeof(sh.d[0]) * t->rank);
	struct val *v = pb_imp_def(s, i, t->dtype, &sh);
	if (!v) {
		pb_tensor_clear(t);
		free(t);
		return NULL;
	}
	v->k = t;
	return v;
}

/* Widen the float16/bfloat16 inputs of the current node for a lowering
 * that computes on float32 only: each such input name is bound, while
 * the node is lowered, to a new float32 value that converts the original
 * on first use (pb_imp_use_dt: a converting generic; pb_imp_known: its
 * contents converted); with "ints", 8- and 16-bit integer inputs too. The
 * original values go into "saved" (one per input, NULL where nothing
 * changed); the type of the first widened input into "*dt"
 * (PB_DT_UNDEFINED when there is none). */
int pb_imp_widen(struct imp *s, struct val **saved, enum pb_dtype *dt,
		 int ints)
{
	*dt = PB_DT_UNDEFINED;
	for (size_t i = 0; i < s->node->n_input; i++) {
		struct val *v = pb_imp_in(s, i);
		saved[i] = NULL;
		if (!v || !(pb_dtype_is_half(v->dtype) ||
			    (ints && pb_imp_is_int(v->dtype) &&
			     pb_dtype_size(v->dtype) <= 2)))
			continue;
		/* bound by the node's name for it (Identity aliases) */
		struct val *w = pb_imp_new_val(s, s->node->input[i],
					       PB_DT_F32, &v->sh);
		w->narrow = v;
		w->init = v->init;
		w->is_init = v->is_init;
		if (v->k && !(w->k = converted(v->k, PB_DT_F32)))
			return pb_imp_node_error(s, "out of memory");
		saved[i] = v;
		if (!*dt)
			*dt = v->dtype;
	}
	return PB_OK;
}

/* Undo pb_imp_widen after the node was lowered: bind its inputs to the
 * "saved" values again, and convert its float32 outputs (only output 0
 * with "first_only") to half type "dt": a widened input passed through
 * is its original again, known contents are converted at import, the
 * rest by a converting generic. */
int pb_imp_narrow(struct imp *s, struct val **saved, enum pb_dtype dt,
		  int first_only)
{
	for (size_t i = 0; i < s->node->n_input; i++)
		if (saved[i])
			bind(s, s->node->input[i], saved[i]);
	size_t nout = first_only ? 1 : s->node->n_output;
	for (size_t i = 0; i < nout && i < s->node->n_output; i++) {
		const char *name = s->node->output[i];
		struct val *v = name[0] ? pb_imp_lookup(s, name) : NULL;
		if (!v || v->dtype != PB_DT_F32)
			continue;
		if (v->narrow) {
			bind(s, name, v->narrow);
			continue;
		}
		if (v->k && !v->ssa.s[0]) {
			struct pb_tensor *t = converted(v->k, dt);
			if (!t)
				return pb_imp_node_error(s, "out of memory");
			pb_imp_new_val(s, name, dt, &v->sh)->k = t;
			continue;
		}
		const char *x = pb_imp_use_dt(s, v);
		if (!x)
			return PB_ERR;
		struct name r = pb_imp_convert_tensor(s, x, &v->sh,
						      PB_DT_F32, dt);
		pb_imp_new_val(s, name, dt, &v->sh)->ssa = r;
	}
	return PB_OK;
}

/* The SSA tensor of contraction operand "v" in its storage type (see
 * import.h); "*dt" is that type. */
const char *pb_imp_use_operand(struct imp *s, struct val *v,
			       enum pb_dtype *dt)
{
	if (v->narrow) {
		*dt = v->narrow->dtype;
		return pb_imp_use_dt(s, v->narrow);
	}
	*dt = v->dtype;
	return pb_imp_use(s, v);
}

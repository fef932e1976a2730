/* Op lowerings of the ops whose result depends only on shapes and
 * attributes: EyeLike (one generic comparing the loop indices) and the
 * window functions HannWindow, HammingWindow and BlackmanWindow (computed
 * at import: a known tensor of the window's size, given as a known input
 * or, at run time, by the output's declared shape). */
#include <math.h>
#include <string.h>

#include "onnx/import.h"

/* EyeLike: ones on the k-th diagonal of a 2-d tensor of the input's shape
 * and type (or the "dtype" attribute's), zeros elsewhere. */
static int op_eyelike(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	enum pb_dtype dt = pb_imp_attr_int(s, "dtype", x->dtype);
	int64_t k = pb_imp_attr_int(s, "k", 0);
	if (x->sh.rank != 2)
		return pb_imp_node_error(s, "input of rank %d: expected 2",
					 x->sh.rank);
	if (!pb_imp_elt(dt))
		return pb_imp_node_error(s, "dtype %s is not supported",
					 pb_dtype_name(dt));
	struct name e = pb_imp_empty_dt(s, &x->sh, dt);
	struct text om = pb_imp_map(2, 2, (int[]){0, 1});
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, 2, "pp", 0, NULL, NULL, NULL, NULL, e.s,
			    &x->sh, dt, &om);
	struct name i = pb_imp_loop_index(s, 0), j = pb_imp_loop_index(s, 1);
	struct name kk = pb_imp_fresh(s), ik = pb_imp_fresh(s),
		    c = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant %lld : index", kk.s, (long long)k);
	pb_imp_emit(s, "%s = arith.addi %s, %s : index", ik.s, i.s, kk.s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : index", c.s, ik.s, j.s);
	struct name one = pb_imp_scalar_dt(s, dt, 1);
	struct name zero = pb_imp_scalar_dt(s, dt, 0);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", r.s, c.s, one.s,
		    zero.s, pb_imp_elt(dt));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), dt, &x->sh);
}

/* HannWindow, HammingWindow, BlackmanWindow (opset 17): the window of
 * "size" values in output_datatype (float by default), periodic (the
 * default, denominator size) or symmetric (size - 1). */
static int op_window(struct imp *s)
{
	const char *op = s->node->op_type;
	struct val *sz = pb_imp_in(s, 0);
	enum pb_dtype dt = pb_imp_attr_int(s, "output_datatype", PB_DT_F32);
	int periodic = pb_imp_attr_int(s, "periodic", 1) != 0;
	struct shape sh = {1, {0}};
	if (!pb_imp_is_float(dt) && dt != PB_DT_I64 && dt != PB_DT_I32)
		return pb_imp_node_error(s, "output_datatype %s is not "
					 "supported", pb_dtype_name(dt));
	if (sz->k || sz->init) {
		if (pb_imp_known_ints(s, sz, sh.d, 1, "size") != 1)
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "size must be a scalar");
	} else if (pb_imp_declared_shape(s, s->node->output[0], &sh) ||
		   sh.rank != 1) {
		return pb_imp_node_error(s, "size must be known at import "
					 "time, or the output's shape "
					 "declared");
	}
	int64_t n = sh.d[0];
	if (n < 0 || n > (1 << 24))
		return pb_imp_node_error(s, "a window of %lld values is not "
					 "supported", (long long)n);
	struct pb_tensor *t = pb_imp_new_known(dt, &sh);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	double den = periodic ? (double)n : (double)(n - 1);
	for (int64_t i = 0; i < n; i++) {
		double a = den > 0 ? 2 * M_PI * (double)i / den : 0, v;
		if (!strcmp(op, "HannWindow"))
			v = 0.5 - 0.5 * cos(a);
		else if (!strcmp(op, "HammingWindow"))
			v = 25.0 / 46 - (1 - 25.0 / 46) * cos(a);
		else
			v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
		pb_imp_elem_set(t, i, v);
	}
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

const struct pb_imp_op pb_imp_ops_gen[] = {
	{"EyeLike", op_eyelike, "dtype,k", 9, 0, 0},
	{"HannWindow", op_window, "output_datatype,periodic", 17, 0, 0},
	{"HammingWindow", op_window, "output_datatype,periodic", 17, 0, 0},
	{"BlackmanWindow", op_window, "output_datatype,periodic", 17, 0, 0},
	{NULL, NULL, NULL, 0, 0, 0},
};

/* The tile backend's output: every kernel nest of a fused module as one
 * Tile IR entry of one bytecode module, assembled by tileiras into one
 * cubin, written after the launch plan (docs/tileir.md). */
#include <stdlib.h>
#include <string.h>

#include "ir/contract.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "tileir/internal.h"

/* The nests of kernel function "f" into "l", the number of top-level
 * operations of each into "count" (malloc'ed): each top-level loop, and
 * each run of other operations between them (scalar work: 0-d tiles in
 * one block). Constants and constant buffers (memref.get_global) are
 * every nest's. */
static void nests(MlirOperation f, struct pb_ir_ops *l, int **count)
{
	MlirBlock b = pb_ir_entry_block(f);
	int run = 0; /* the last nest is a run of scalar work */
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int is_loop = pb_ir_op_is(op, "affine.parallel") ||
			      pb_ir_op_is(op, "affine.for");
		if (pb_ir_op_is(op, "func.return"))
			break;
		if (!is_loop && (run || pb_ir_op_is(op, "arith.constant") ||
				 pb_ir_op_is(op, "memref.get_global"))) {
			if (run)
				(*count)[l->n - 1]++;
			continue;
		}
		pb_ir_ops_push(l, op);
		*count = realloc(*count, l->n * sizeof(int));
		(*count)[l->n - 1] = 1;
		run = !is_loop;
	}
}

/* The name of nest "i" of "n" of kernel function "f": "f" alone, or
 * "f_i". */
static void nest_name(const char *f, int i, int n, struct pb_buf *out)
{
	out->len = 0;
	if (n == 1)
		pb_buf_printf(out, "%s", f);
	else
		pb_buf_printf(out, "%s_%d", f, i);
}

/* A kernel entry written to the module: its name and grid. */
struct entry {
	char *name;
	int64_t grid[3];
};

/* Which arguments of kernel function "fname" are 16-byte aligned at
 * every one of its launches "l" ("n" of them) in plan "p": a root buffer
 * (the runtime's allocations are 256-byte aligned) or a view that many
 * bytes from its root. Malloc'ed. */
static int *aligned_args(const struct pb_plan *p,
			 const struct pb_plan_launch *l, int n,
			 const char *fname)
{
	int nargs = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(l[i].kernel, fname) && l[i].nargs > nargs)
			nargs = l[i].nargs;
	int *a = calloc(nargs + 1, sizeof(int));
	for (int k = 0; k < nargs; k++)
		a[k] = 1;
	for (int i = 0; i < n; i++) {
		if (strcmp(l[i].kernel, fname))
			continue;
		for (int k = 0; k < l[i].nargs; k++) {
			const struct pb_plan_arg *x = &l[i].args[k];
			const struct pb_plan_buffer *b =
				x->kind == PB_PLAN_ARG_BUFFER ? &p->buffers[x->buffer]
							      : NULL;
			if (!b || (b->kind == PB_PLAN_VIEW && b->offset % 16))
				a[k] = 0;
		}
	}
	return a;
}

/* Write the entries of kernel function "fname" of "m" into "w" (once,
 * recorded in "e"/"ne"), the arguments "aligned" as aligned_args says;
 * the first of them into *first and their number into *count. */
static int kernel(struct pb_ctx *ctx, MlirModule m, struct pb_tileir *w,
		  const char *fname, const int *aligned, struct entry **e,
		  int *ne, int *first, int *count)
{
	struct pb_buf name = {0};
	MlirOperation f = pb_ir_lookup_func(m, fname);
	struct pb_ir_ops l = {0};
	int *ops = NULL;
	int rc = mlirOperationIsNull(f) ? PB_ERR : PB_OK;
	if (mlirOperationIsNull(f))
		pb_error(ctx, "internal: no kernel function @%s", fname);
	else
		nests(f, &l, &ops);
	*count = l.n;
	for (int i = 0; rc == PB_OK && i < l.n; i++) {
		nest_name(fname, i, l.n, &name);
		int seen = -1;
		for (int j = 0; j < *ne; j++)
			if (!strcmp((*e)[j].name, name.data))
				seen = j;
		if (i == 0)
			*first = seen >= 0 ? seen : *ne;
		if (seen >= 0)
			continue;
		*e = realloc(*e, (*ne + 1) * sizeof(**e));
		struct entry *x = &(*e)[(*ne)++];
		x->name = strdup(name.data);
		rc = pb_tileir_nest(ctx, w, f, l.v[i], ops[i], name.data,
				    aligned, x->grid);
	}
	free(ops);
	pb_ir_ops_free(&l);
	pb_buf_free(&name);
	return rc;
}


/* Write the entries of every kernel that "p" launches into "w" and
 * replace its launches (one per kernel call) by one per nest of each
 * call's kernel, with the nest's grid and block 1. */
static int relaunch(struct pb_ctx *ctx, MlirModule m, struct pb_plan *p,
		    struct pb_tileir *w, int assume, struct entry **e, int *ne)
{
	int n = p->nlaunches;
	struct pb_plan_launch *old = p->launches;
	p->launches = NULL;
	p->nlaunches = 0;
	int rc = PB_OK;
	for (int i = 0; i < n && rc == PB_OK; i++) {
		struct pb_plan_launch *o = &old[i];
		int first = 0, count = 0;
		int *aligned = assume ? aligned_args(p, old, n, o->kernel) : NULL;
		rc = kernel(ctx, m, w, o->kernel, aligned, e, ne, &first, &count);
		free(aligned);
		for (int j = 0; rc == PB_OK && j < count; j++) {
			const struct entry *x = &(*e)[first + j];
			int64_t block[3] = {1, 1, 1};
			struct pb_plan_launch *l = pb_plan_add_launch(
				p, x->name, o->origin, o->nnodes,
				(const char *const *)o->nodes, x->grid, block, 0);
			l->nargs = o->nargs;
			l->args = calloc(o->nargs + 1, sizeof(*l->args));
			for (int a = 0; a < o->nargs; a++) {
				l->args[a] = o->args[a];
				if (o->args[a].type)
					l->args[a].type = strdup(o->args[a].type);
			}
		}
	}
	for (int i = 0; i < n; i++)
		pb_plan_launch_free(&old[i]);
	free(old);
	return rc;
}

/* Drop argument "i" of function "f": from its block, its type and its
 * argument attributes. */
static void drop_arg(MlirOperation f, int i)
{
	MlirType ft = mlirTypeAttrGetValue(pb_ir_attr(f, "function_type"));
	int n = mlirFunctionTypeGetNumInputs(ft), k = 0;
	int nr = mlirFunctionTypeGetNumResults(ft);
	MlirType *in = calloc(n + nr + 1, sizeof(MlirType));
	for (int j = 0; j < n; j++)
		if (j != i)
			in[k++] = mlirFunctionTypeGetInput(ft, j);
	for (int j = 0; j < nr; j++)
		in[k + j] = mlirFunctionTypeGetResult(ft, j);
	MlirContext mctx = mlirOperationGetContext(f);
	pb_ir_set_attr(f, "function_type",
		       mlirTypeAttrGet(mlirFunctionTypeGet(mctx, k, in, nr,
							   in + k)));
	free(in);
	MlirAttribute aa = pb_ir_attr(f, "arg_attrs");
	if (!mlirAttributeIsNull(aa) && mlirAttributeIsAArray(aa)) {
		MlirAttribute *el = calloc(n + 1, sizeof(MlirAttribute));
		k = 0;
		for (int j = 0; j < mlirArrayAttrGetNumElements(aa); j++)
			if (j != i)
				el[k++] = mlirArrayAttrGetElement(aa, j);
		pb_ir_set_attr(f, "arg_attrs", mlirArrayAttrGet(mctx, k, el));
		free(el);
	}
	mlirBlockEraseArgument(pb_ir_entry_block(f), i);
}

int pb_tileir_sink_globals(MlirModule m)
{
	MlirOperation main = pb_ir_lookup_func(m, "main");
	struct pb_ir_ops calls = {0};
	if (mlirOperationIsNull(main))
		return 0;
	pb_ir_collect(mlirModuleGetOperation(m), "func.call", &calls);
	int moved = 0;
	for (int c = 0; c < calls.n; c++) {
		MlirOperation call = calls.v[c];
		MlirStringRef callee = mlirSymbolRefAttrGetLeafReference(
			pb_ir_attr(call, "callee"));
		int uses = 0;
		for (int j = 0; j < calls.n; j++) {
			MlirStringRef o = mlirSymbolRefAttrGetLeafReference(
				pb_ir_attr(calls.v[j], "callee"));
			uses += mlirStringRefEqual(o, callee);
		}
		struct pb_buf name = {0};
		pb_buf_append(&name, callee.data, callee.length);
		MlirOperation f = pb_ir_lookup_func(m, name.data);
		pb_buf_free(&name);
		if (uses != 1 || mlirOperationIsNull(f) ||
		    !pb_contract_is_kernel(f) ||
		    mlirOperationGetParentOperation(call).ptr != main.ptr)
			continue;
		MlirBlock body = pb_ir_entry_block(f);
		for (int i = (int)mlirOperationGetNumOperands(call) - 1; i >= 0;
		     i--) {
			MlirValue v = mlirOperationGetOperand(call, i);
			MlirOperation g = pb_ir_value_parent(v);
			if (mlirValueIsABlockArgument(v) ||
			    !pb_ir_op_is(g, "memref.get_global"))
				continue;
			MlirOperation clone = mlirOperationClone(g);
			mlirBlockInsertOwnedOperationBefore(
				body, mlirBlockGetFirstOperation(body), clone);
			mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(body, i),
						      mlirOperationGetResult(clone, 0));
			drop_arg(f, i);
			int n = mlirOperationGetNumOperands(call), k = 0;
			MlirValue *ops = calloc(n, sizeof(MlirValue));
			for (int j = 0; j < n; j++)
				if (j != i)
					ops[k++] = mlirOperationGetOperand(call, j);
			mlirOperationSetOperands(call, k, ops);
			free(ops);
			moved++;
		}
	}
	pb_ir_ops_free(&calls);
	return moved;
}

/* The block size of every launch of "p" from the cubin "c". */
static int set_blocks(struct pb_ctx *ctx, struct pb_plan *p,
		      const struct pb_buf *c)
{
	for (int i = 0; i < p->nlaunches; i++) {
		struct pb_plan_launch *l = &p->launches[i];
		if (pb_tileir_cubin_block(c->data, c->len, l->kernel, l->block)) {
			pb_error(ctx, "the cubin of tileiras gives no block "
				 "size for kernel '%s'", l->kernel);
			return PB_ERR;
		}
		/* a launch passes one pointer per buffer and nothing else
		 * (TMA descriptors, when there are, are the driver's) */
		int64_t bytes;
		int n = pb_tileir_cubin_params(c->data, c->len, l->kernel, &bytes);
		if (n != l->nargs || bytes != 8 * (int64_t)l->nargs) {
			pb_error(ctx, "kernel '%s' of the cubin takes %d "
				 "parameters (%lld bytes), not the %d pointers "
				 "pb launches it with", l->kernel, n,
				 (long long)bytes, l->nargs);
			return PB_ERR;
		}
	}
	return PB_OK;
}

int pb_tileir_emit(struct pb_ctx *ctx, MlirModule m, struct pb_plan *plan,
		   const struct pb_tileir_opts *opts, struct pb_buf *out)
{
	char tool[4096];
	if (!opts->emit_bytecode &&
	    pb_tileir_find_tool(opts->tileiras, "tileiras", "PB_TILEIRAS", tool,
				sizeof(tool))) {
		const char *given = opts->tileiras ? opts->tileiras
						   : getenv("PB_TILEIRAS");
		if (given)
			pb_error(ctx, "--backend=tile: '%s' is not an "
				 "executable tileiras", given);
		else
			pb_error(ctx, "--backend=tile needs NVIDIA's tileiras "
				 "(not on PATH nor in build/venv-tile: run "
				 "scripts/deps.sh --tile, or give "
				 "--tileiras=PATH)");
		return PB_ERR;
	}
	struct pb_tileir w;
	struct entry *e = NULL;
	int ne = 0;
	pb_tileir_init(&w);
	/* aligned buffers make tileiras use cp.async and ldmatrix on sm_80,
	 * and TMA on sm_90 (--tile-tma): the driver builds its descriptors
	 * from the pointers with the cubin's host code (docs/tileir.md) */
	int assume = opts->tma || atoi(ctx->arch + 3) < 90;
	int rc = relaunch(ctx, m, plan, &w, assume, &e, &ne);
	struct pb_buf bc = {0}, cubin = {0};
	if (rc == PB_OK)
		pb_tileir_finish(&w, &bc);
	if (rc == PB_OK && opts->emit_bytecode)
		pb_buf_append(out, bc.data, bc.len);
	if (rc == PB_OK && !opts->emit_bytecode)
		rc = pb_tileir_assemble(ctx, tool, "the kernels", &bc, ctx->arch,
					opts->opt_level, &cubin);
	if (rc == PB_OK && !opts->emit_bytecode)
		rc = set_blocks(ctx, plan, &cubin);
	char err[256];
	if (rc == PB_OK && !opts->emit_bytecode &&
	    pb_plan_check(plan, err, sizeof(err))) {
		pb_error(ctx, "internal: inconsistent launch plan: %s", err);
		rc = PB_ERR;
	}
	if (rc == PB_OK && !opts->emit_bytecode) {
		char *text = pb_plan_to_header(plan);
		size_t len = strlen(text);
		pb_plan_put_cubin(&text, &len, cubin.data, cubin.len);
		pb_buf_append(out, text, len);
		free(text);
	}
	for (int i = 0; i < ne; i++)
		free(e[i].name);
	free(e);
	pb_buf_free(&bc);
	pb_buf_free(&cubin);
	pb_tileir_free(&w);
	return rc;
}

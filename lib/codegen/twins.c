/* Identical outlined kernels cleaned up once. gpu-kernel-outlining gives
 * each launch a gpu.module of its own; a model's repeated blocks give
 * many that are the same but for their names (ResNet-50: 52 kernels, 27
 * different). The clean-up passes that run nested on each gpu.module
 * (canonicalize, cse, int-range-optimizations) see only that module, so
 * two modules equal but for their names come out of them equal but for
 * their names. Before those passes, each module that is a copy of an
 * earlier one (its representative) is emptied; after them, it gets a
 * clone of its representative's body with its kernel renamed back:
 *
 *   gpu.module @a { gpu.func @a }   gpu.module @b { gpu.func @b } (== @a)
 *   -> strip: @b emptied -> passes on @a (and on the empty @b) ->
 *   fill: @b { clone of @a's gpu.func, named @b }
 *
 * The modules keep their places and names, so the launches, the merge
 * and everything after see what they would have seen. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "codegen/internal.h"

struct pb_codegen_twins {
	int n;		     /* modules emptied */
	MlirOperation *copy; /* each emptied gpu.module */
	MlirOperation *rep;  /* its representative */
	MlirAttribute *name; /* the sym_name of its kernel */
};

/* FNV-1a of the "len" bytes at "s". */
static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The body of gpu.module "mod". */
static MlirBlock body(MlirOperation mod)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
}

/* The one gpu.func of gpu.module "mod", or a null operation when it has
 * none or several. */
static MlirOperation only_func(MlirOperation mod)
{
	MlirOperation f = {NULL};
	for (MlirOperation op = mlirBlockGetFirstOperation(body(mod));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "gpu.func"))
			continue;
		if (!mlirOperationIsNull(f))
			return (MlirOperation){NULL};
		f = op;
	}
	return f;
}

/* The text of gpu.module "mod" with its name and its gpu.func "f"'s
 * replaced by one placeholder, printed without locations in the local
 * scope into "out"; the names are put back. */
static void key(MlirOperation mod, MlirOperation f, MlirOpPrintingFlags flags,
		struct pb_buf *out)
{
	MlirAttribute mname = pb_ir_attr(mod, "sym_name");
	MlirAttribute fname = pb_ir_attr(f, "sym_name");
	MlirAttribute k = mlirStringAttrGet(mlirOperationGetContext(mod),
					    pb_str("k"));
	pb_ir_set_attr(mod, "sym_name", k);
	pb_ir_set_attr(f, "sym_name", k);
	mlirOperationPrintWithFlags(mod, flags, pb_buf_mlir_callback, out);
	pb_ir_set_attr(mod, "sym_name", mname);
	pb_ir_set_attr(f, "sym_name", fname);
}

struct pb_codegen_twins *pb_codegen_twins_strip(MlirModule m)
{
	struct pb_codegen_twins *t = calloc(1, sizeof(*t));
	MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsUseLocalScope(flags);
	int n = 0, cap = 0;
	MlirOperation *mods = NULL;
	struct pb_buf *keys = NULL;
	uint64_t *h = NULL;
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirOperation f;
		if (!pb_ir_op_is(op, "gpu.module") ||
		    mlirOperationIsNull(f = only_func(op)))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			mods = pb_xrealloc(mods, cap, sizeof(*mods));
			keys = pb_xrealloc(keys, cap, sizeof(*keys));
			h = pb_xrealloc(h, cap, sizeof(*h));
		}
		mods[n] = op;
		keys[n] = (struct pb_buf){0};
		key(op, f, flags, &keys[n]);
		h[n] = hash(keys[n].data, keys[n].len);
		n++;
	}
	mlirOpPrintingFlagsDestroy(flags);
	/* a chained hash table over the representatives */
	size_t nb = 1;
	while (nb < 2 * (size_t)n)
		nb *= 2;
	int *head = pb_xrealloc(NULL, nb, sizeof(*head));
	int *next = pb_xrealloc(NULL, n ? n : 1, sizeof(*next));
	for (size_t b = 0; b < nb; b++)
		head[b] = -1;
	for (int i = 0; i < n; i++) {
		int b = h[i] & (nb - 1), r = head[b];
		while (r >= 0 && (h[r] != h[i] || keys[r].len != keys[i].len ||
				  memcmp(keys[r].data, keys[i].data, keys[i].len)))
			r = next[r];
		if (r < 0) {
			next[i] = head[b];
			head[b] = i;
			continue;
		}
		/* a copy of "r": remember its kernel's name, empty it */
		if (t->n % 16 == 0) {
			t->copy = pb_xrealloc(t->copy, t->n + 16, sizeof(*t->copy));
			t->rep = pb_xrealloc(t->rep, t->n + 16, sizeof(*t->rep));
			t->name = pb_xrealloc(t->name, t->n + 16, sizeof(*t->name));
		}
		t->copy[t->n] = mods[i];
		t->rep[t->n] = mods[r];
		t->name[t->n] = pb_ir_attr(only_func(mods[i]), "sym_name");
		t->n++;
		MlirOperation op = mlirBlockGetFirstOperation(body(mods[i]));
		while (!mlirOperationIsNull(op)) {
			MlirOperation nx = mlirOperationGetNextInBlock(op);
			mlirOperationRemoveFromParent(op);
			mlirOperationDestroy(op);
			op = nx;
		}
	}
	for (int i = 0; i < n; i++)
		pb_buf_free(&keys[i]);
	free(keys);
	free(h);
	free(head);
	free(next);
	free(mods);
	return t;
}

void pb_codegen_twins_fill(struct pb_codegen_twins *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++) {
		MlirBlock to = body(t->copy[i]);
		for (MlirOperation op = mlirBlockGetFirstOperation(body(t->rep[i]));
		     !mlirOperationIsNull(op);
		     op = mlirOperationGetNextInBlock(op)) {
			MlirOperation c = mlirOperationClone(op);
			if (pb_ir_op_is(c, "gpu.func"))
				pb_ir_set_attr(c, "sym_name", t->name[i]);
			mlirBlockAppendOwnedOperation(to, c);
		}
	}
	free(t->copy);
	free(t->rep);
	free(t->name);
	free(t);
}

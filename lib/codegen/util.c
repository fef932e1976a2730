/* Small helpers of pb-codegen: operation names, printing of types and
 * attributes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"

int pb_codegen_op_has_prefix(MlirOperation op, const char *prefix)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	size_t n = strlen(prefix);
	return s.length >= n && !strncmp(s.data, prefix, n);
}

void pb_codegen_type_str(MlirType t, struct pb_buf *out)
{
	mlirTypePrint(t, pb_buf_mlir_callback, out);
	pb_buf_append(out, "", 0);
}

void pb_codegen_attr_str(MlirAttribute a, struct pb_buf *out)
{
	mlirAttributePrint(a, pb_buf_mlir_callback, out);
	pb_buf_append(out, "", 0);
}

/* Seconds of clock "c". */
static double seconds(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

void pb_codegen_mark(const char *name)
{
	static double wall, cpu;
	if (!getenv("PB_TIMING"))
		return;
	double w = seconds(CLOCK_MONOTONIC), c = seconds(CLOCK_PROCESS_CPUTIME_ID);
	if (wall > 0)
		fprintf(stderr, "pb-codegen: %-24s %6.3f s wall %6.3f s cpu\n",
			name, w - wall, c - cpu);
	wall = w;
	cpu = c;
}

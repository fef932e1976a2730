/* Small helpers of pb-codegen: operation names, printing of types and
 * attributes, memory spaces. */
#include <stdlib.h>
#include <string.h>

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

int pb_codegen_is_workgroup(MlirType t)
{
	struct pb_buf b = {0};
	int r;
	if (!mlirTypeIsAMemRef(t))
		return 0;
	MlirAttribute ms = mlirMemRefTypeGetMemorySpace(t);
	if (mlirAttributeIsNull(ms))
		return 0;
	pb_codegen_attr_str(ms, &b);
	r = !strcmp(b.data, "#gpu.address_space<workgroup>") ||
	    !strcmp(b.data, "3 : i64") || !strcmp(b.data, "3 : i32");
	pb_buf_free(&b);
	return r;
}


/* Small helpers of pb-codegen: operation names, printing of types and
 * attributes. */
#include <stdio.h>
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


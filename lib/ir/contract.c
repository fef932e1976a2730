/* The IR contract between pb's stages: accessors of the pb.* attributes
 * (contract.h). */
#include <stdint.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "ir/contract.h"
#include "ir/ir.h"

static const char *map_names[] = {NULL, "block", "warp", "thread", NULL};

const char *pb_contract_map_name(enum pb_map_level level)
{
	return level >= PB_MAP_NONE && level <= PB_MAP_UNKNOWN
		       ? map_names[level] : NULL;
}

MlirStringRef pb_contract_map_str(MlirOperation op)
{
	return pb_ir_str_attr(op, PB_ATTR_MAP);
}

enum pb_map_level pb_contract_map_of(MlirOperation op)
{
	MlirStringRef s = pb_contract_map_str(op);
	if (!s.data)
		return PB_MAP_NONE;
	for (int l = PB_MAP_BLOCK; l <= PB_MAP_THREAD; l++)
		if (strlen(map_names[l]) == s.length &&
		    !strncmp(map_names[l], s.data, s.length))
			return l;
	return PB_MAP_UNKNOWN;
}

int pb_contract_is_mapped(MlirOperation op)
{
	return pb_contract_map_str(op).data != NULL;
}

void pb_contract_set_map(MlirOperation op, enum pb_map_level level)
{
	const char *name = pb_contract_map_name(level);
	if (!name) {
		mlirOperationRemoveAttributeByName(op, pb_str(PB_ATTR_MAP));
		return;
	}
	pb_ir_set_attr(op, PB_ATTR_MAP,
		       mlirStringAttrGet(mlirOperationGetContext(op),
					 pb_str(name)));
}

int pb_contract_is_kernel(MlirOperation func)
{
	return !mlirAttributeIsNull(pb_ir_attr(func, PB_ATTR_KERNEL));
}

void pb_contract_set_kernel(MlirOperation func)
{
	pb_ir_set_attr(func, PB_ATTR_KERNEL,
		       mlirUnitAttrGet(mlirOperationGetContext(func)));
}

MlirAttribute pb_contract_nodes(MlirOperation op)
{
	return pb_ir_attr(op, PB_ATTR_NODES);
}

void pb_contract_set_nodes(MlirOperation op, MlirAttribute nodes)
{
	pb_ir_set_attr(op, PB_ATTR_NODES, nodes);
}

MlirStringRef pb_contract_origin(MlirOperation op)
{
	return pb_ir_str_attr(op, PB_ATTR_ORIGIN);
}

void pb_contract_set_origin(MlirOperation op, MlirAttribute origin)
{
	pb_ir_set_attr(op, PB_ATTR_ORIGIN, origin);
}

MlirStringRef pb_contract_source(MlirModule m)
{
	return pb_ir_str_attr(mlirModuleGetOperation(m), PB_ATTR_SOURCE);
}

int pb_contract_perm_of(MlirAttribute dict, int rank, int *perm)
{
	for (int i = 0; i < rank; i++)
		perm[i] = i;
	if (mlirAttributeIsNull(dict) || !mlirAttributeIsADictionary(dict))
		return 0;
	MlirAttribute a = mlirDictionaryAttrGetElementByName(dict,
							   pb_str(PB_ATTR_PERM));
	if (mlirAttributeIsNull(a))
		return 0;
	if (!mlirAttributeIsADenseI64Array(a) ||
	    mlirDenseArrayGetNumElements(a) != rank || rank > 64)
		return -1;
	uint64_t seen = 0;
	for (int i = 0; i < rank; i++) {
		int64_t p = mlirDenseI64ArrayGetElement(a, i);
		if (p < 0 || p >= rank || (seen >> p & 1))
			return -1;
		seen |= (uint64_t)1 << p;
		perm[i] = (int)p;
	}
	return 1;
}

void pb_contract_set_perm(MlirOperation func, int i, int n, const int *perm)
{
	int64_t v[64];
	for (int k = 0; k < n && k < 64; k++)
		v[k] = perm[k];
	pb_ir_func_set_arg_attr(func, i, PB_ATTR_PERM,
				mlirDenseI64ArrayGet(mlirOperationGetContext(func),
						     n, v));
}

/* The levels of a mapped nest: the affine.parallel loops that an earlier
 * stage mapped to blocks, warps and threads (pb.map). */
#include "kernel/kernel.h"

void pb_kernel_mapped_loops(MlirOperation root, struct pb_ir_ops *l)
{
	struct pb_ir_ops all = {0};
	if (pb_contract_map_of(root) != PB_MAP_BLOCK)
		pb_ir_ops_push(&all, root);
	pb_ir_collect(root, "affine.parallel", &all);
	for (int i = 0; i < all.n; i++)
		if (pb_contract_is_mapped(all.v[i]))
			pb_ir_ops_push(l, all.v[i]);
	pb_ir_ops_free(&all);
}

/* Table-driven tests of the kernel model (lib/kernel) and of the IR
 * contract's accessors (lib/ir/contract.h): the band of a nest, the
 * levels of a mapped nest, workgroup buffers and their bytes, and the
 * occupancy of a block on a target. */
#include <stdio.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "kernel/kernel.h"

#include "check.h"

/* A 3-d band (a 2-d loop holding a 1-d one) over a reduction loop. */
static const char *nest =
	"func.func @f(%a: memref<4x6x8xf32>, %o: memref<4x6xf32>) {\n"
	"  affine.parallel (%i, %j) = (0, 0) to (4, 6) {\n"
	"    affine.parallel (%k) = (0) to (8) step (2) {\n"
	"      %x = affine.load %a[%i, %j, %k] : memref<4x6x8xf32>\n"
	"      affine.store %x, %o[%i, %j] : memref<4x6xf32>\n"
	"    }\n  }\n  return\n}\n";

/* A block loop holding a workgroup buffer, a warp nest with a thread loop
 * and a thread loop outside it. */
static const char *mapped =
	"func.func @f(%o: memref<64xf32>) {\n"
	"  affine.parallel (%b) = (0) to (4) {\n"
	"    %s = memref.alloc() : memref<2x32xf32, "
	"#gpu.address_space<workgroup>>\n"
	"    %h = memref.alloca() : memref<16xf16, "
	"#gpu.address_space<workgroup>>\n"
	"    %p = memref.alloca() : memref<4xf32>\n"
	"    affine.parallel (%w) = (0) to (2) {\n"
	"      affine.parallel (%l) = (0) to (32) {\n"
	"      } {pb.map = \"thread\"}\n"
	"    } {pb.map = \"warp\"}\n"
	"    gpu.barrier\n"
	"    affine.parallel (%t) = (0) to (64) {\n"
	"    } {pb.map = \"thread\"}\n"
	"  } {pb.map = \"block\"}\n  return\n}\n";

/* The first affine.parallel of @f in module "m". */
static MlirOperation first_loop(MlirModule m)
{
	MlirOperation op = mlirBlockGetFirstOperation(
		pb_ir_entry_block(pb_ir_lookup_func(m, "f")));
	while (!mlirOperationIsNull(op) && !pb_ir_op_is(op, "affine.parallel"))
		op = mlirOperationGetNextInBlock(op);
	return op;
}

static void test_band(struct pb_ctx *ctx)
{
	struct pb_kernel_band b;
	MlirModule m = mlirModuleCreateParse(ctx->mlir, pb_str(nest));
	check(!mlirModuleIsNull(m), "band: parses");
	MlirOperation op = first_loop(m);
	check(pb_kernel_band_of(op, &b) == 1 && b.n == 3, "band: 3 dimensions");
	check(b.extent[0] == 4 && b.extent[1] == 6 && b.extent[2] == 4 &&
		      b.step[2] == 2 && b.lb[2] == 0,
	      "band: extents and steps");
	check(pb_kernel_band_points(&b) == 96, "band: 96 points");
	check(mlirOperationEqual(b.root, op) && !mlirOperationEqual(b.inner, op),
	      "band: root and inner loop");
	check(pb_ir_op_is(mlirBlockGetFirstOperation(pb_kernel_band_body(&b)),
			  "affine.load"),
	      "band: the body is the inner loop's");
	pb_contract_set_map(op, PB_MAP_BLOCK);
	check(pb_kernel_band_of(op, &b) == 0 && b.n == 0,
	      "band: a mapped loop starts none");
	memset(&b, 0, sizeof(b));
	check(pb_kernel_band_add(op, &b) == 1 && b.n == 2,
	      "band: band_add takes a mapped loop");
	pb_contract_set_map(op, PB_MAP_NONE);
	check(!pb_contract_is_mapped(op), "contract: set_map none removes");
	mlirModuleDestroy(m);
}

static void test_levels(struct pb_ctx *ctx)
{
	struct pb_ir_ops l = {0};
	static const enum pb_map_level want[] = {PB_MAP_WARP, PB_MAP_THREAD,
						  PB_MAP_THREAD};
	MlirModule m = mlirModuleCreateParse(ctx->mlir, pb_str(mapped));
	check(!mlirModuleIsNull(m), "levels: parses");
	MlirOperation root = first_loop(m);
	check(pb_contract_map_of(root) == PB_MAP_BLOCK, "contract: block");
	pb_kernel_mapped_loops(root, &l);
	check(l.n == 3, "levels: three loops below the block");
	for (int i = 0; i < l.n && i < 3; i++)
		check(pb_contract_map_of(l.v[i]) == want[i],
		      "levels: warp, thread, thread in pre-order");
	MlirOperation warp = l.v[0];
	l.n = 0;
	pb_kernel_mapped_loops(warp, &l);
	check(l.n == 2 && mlirOperationEqual(l.v[0], warp),
	      "levels: a warp loop alone comes with its thread loop");
	pb_ir_ops_free(&l);

	pb_kernel_workgroup_buffers(root, &l);
	check(l.n == 2, "workgroup: two buffers, the private one left out");
	pb_ir_ops_free(&l);
	check(pb_kernel_workgroup_bytes(root) == 2 * 32 * 4 + 16 * 2,
	      "workgroup: 288 bytes");

	struct pb_buf t = {0};
	MlirType f32 = mlirF32TypeGet(ctx->mlir);
	pb_kernel_workgroup_type_text(&t, f32, 128);
	check(!strcmp(t.data, "memref<128xf32, #gpu.address_space<workgroup>>"),
	      "workgroup: type text of 128 elements");
	MlirOperation alloc = {NULL};
	MlirOperation before = mlirBlockGetFirstOperation(
		pb_ir_entry_block(root));
	check(pb_kernel_workgroup_alloc(ctx, t.data, before,
					mlirOperationGetLocation(root),
					&alloc) == PB_OK &&
		      pb_kernel_is_workgroup(mlirValueGetType(
			      mlirOperationGetResult(alloc, 0))),
	      "workgroup: alloc creates a workgroup buffer");
	check(pb_kernel_workgroup_bytes(root) == 288 + 512,
	      "workgroup: the new buffer counts");
	pb_buf_free(&t);
	check(mlirOperationVerify(mlirModuleGetOperation(m)),
	      "workgroup: the module verifies");
	mlirModuleDestroy(m);
}

static void test_contract(struct pb_ctx *ctx)
{
	static const struct {
		const char *src;
		enum pb_map_level level;
	} maps[] = {
		{"", PB_MAP_NONE},
		{" {pb.map = \"block\"}", PB_MAP_BLOCK},
		{" {pb.map = \"warp\"}", PB_MAP_WARP},
		{" {pb.map = \"thread\"}", PB_MAP_THREAD},
		{" {pb.map = \"lane\"}", PB_MAP_UNKNOWN},
	};
	char text[256];
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		snprintf(text, sizeof(text),
			 "func.func @f() {\n  affine.parallel (%%i) = (0) to "
			 "(4) {\n  }%s\n  return\n}\n", maps[i].src);
		MlirModule m = mlirModuleCreateParse(ctx->mlir, pb_str(text));
		MlirOperation op = first_loop(m);
		check(pb_contract_map_of(op) == maps[i].level &&
			      pb_contract_is_mapped(op) == (maps[i].level != 0),
		      "contract: map level");
		if (maps[i].level >= PB_MAP_BLOCK &&
		    maps[i].level <= PB_MAP_THREAD) {
			pb_contract_set_map(op, PB_MAP_NONE);
			pb_contract_set_map(op, maps[i].level);
			check(pb_contract_map_of(op) == maps[i].level,
			      "contract: set_map round trip");
		}
		mlirModuleDestroy(m);
	}
	check(!strcmp(pb_contract_map_name(PB_MAP_WARP), "warp") &&
		      !pb_contract_map_name(PB_MAP_NONE),
	      "contract: map names");
	MlirModule m = mlirModuleCreateParse(
		ctx->mlir, pb_str("module attributes {pb.source = \"m.onnx\"} "
				  "{\n  func.func @f() {\n    return\n  }\n}\n"));
	MlirOperation f = pb_ir_lookup_func(m, "f");
	MlirStringRef s = pb_contract_source(m);
	check(s.data && s.length == 6 && !strncmp(s.data, "m.onnx", 6),
	      "contract: pb.source");
	check(!pb_contract_is_kernel(f), "contract: not a kernel");
	pb_contract_set_kernel(f);
	check(pb_contract_is_kernel(f), "contract: set_kernel");
	MlirAttribute name = mlirStringAttrGet(ctx->mlir, pb_str("k0"));
	pb_contract_set_origin(f, name);
	pb_contract_set_nodes(f, mlirArrayAttrGet(ctx->mlir, 1, &name));
	check(pb_contract_origin(f).length == 2 &&
		      mlirArrayAttrGetNumElements(pb_contract_nodes(f)) == 1,
	      "contract: pb.origin and pb.nodes");
	mlirModuleDestroy(m);
}

static void test_occupancy(struct pb_ctx *ctx)
{
	static const struct {
		const char *arch;
		int64_t threads;
		int regs;
		int64_t smem, grid;
		int64_t per_sm;	 /* expected blocks per SM */
		const char *what;
	} cases[] = {
		/* sm_90: 2048 threads, 65536 registers, 32 blocks per SM */
		{"sm_90", 256, 30, 0, 132 * 8, 8, "threads bound"},
		{"sm_90", 256, 128, 0, 1, 2, "registers bound"},
		{"sm_90", 32, 16, 0, 1, 32, "blocks bound"},
		{"sm_90", 128, 30, 100 * 1024, 1, 2, "shared memory bound"},
		{"sm_90", 1024, 255, 0, 1, 1, "at least one block"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb_target t;
		struct pb_kernel_occupancy o;
		struct pb_kernel_resources r = {cases[i].threads, cases[i].regs,
						cases[i].smem};
		char what[128];
		snprintf(what, sizeof(what), "occupancy: %s", cases[i].what);
		if (pb_target_get(ctx, cases[i].arch, NULL, &t)) {
			check(0, what);
			continue;
		}
		pb_kernel_occupancy(&t, &r, cases[i].grid, &o);
		double occ = (double)(o.blocks_per_sm * r.threads) /
			     t.max_threads_per_sm;
		check_detail(o.blocks_per_sm == cases[i].per_sm &&
				     o.occupancy == (occ > 1 ? 1 : occ) &&
				     o.slots == (double)t.sm_count *
							o.blocks_per_sm,
			     what, NULL);
		int64_t waves = (cases[i].grid + (int64_t)o.slots - 1) /
				(int64_t)o.slots;
		check(o.waves == (double)waves, "occupancy: waves");
	}
	struct pb_target t;
	pb_target_get(ctx, "sm_90", NULL, &t);
	struct pb_kernel_resources ok = {256, 64, 1024}, big = {2048, 32, 0};
	struct pb_kernel_resources regs = {256, 200, 0};
	check(pb_kernel_fits(&t, &ok) && !pb_kernel_fits(&t, &big) &&
		      !pb_kernel_fits(&t, &regs),
	      "fits: threads and registers");
	check(pb_kernel_regs_fit(&t, PB_KERNEL_REG_LIMIT) &&
		      !pb_kernel_regs_fit(&t, PB_KERNEL_REG_LIMIT + 1),
	      "regs_fit: the model's limit");
}

int main(void)
{
	struct pb_ctx *ctx = pb_ctx_alloc("test_kernel");
	test_contract(ctx);
	test_band(ctx);
	test_levels(ctx);
	test_occupancy(ctx);
	pb_ctx_free(ctx);
	return check_summary("test_kernel");
}

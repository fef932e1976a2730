/* Tests of lib/sass on hand-written text whose counts are known: an
 * nvdisasm listing of four kernels (a loop nest, tensor-core and async
 * copies, the trailing BRA-to-itself that is no loop, a copy loop beside
 * a compute loop, a full tile's loop beside a partial tile's) and a ptxas -v
 * report. No ptxas or nvdisasm needed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sass/sass.h"

#include "check.h"

static const char listing[] =
	"\t.target\tsm_90\n"
	"\t.section\t.text.outer_kernel,\"ax\",@progbits\n"
	"\t.sectioninfo\t@\"SHI_REGISTERS=96\"\n"
	"outer_kernel:\n"
	".text.outer_kernel:\n"
	"        /*0000*/                   S2R R0, SR_TID.X ;\n"
	"        /*0010*/                   HFMA2.MMA R17, -RZ, RZ, 0, 0 ;\n"
	".L_x_0:\n"
	"        /*0020*/                   IADD3 R2, R2, 0x1, RZ ;\n"
	".L_x_1:\n"
	"        /*0030*/                   LDG.E.128 R4, desc[UR4][R2.64] ;\n"
	"        /*0040*/                   LDS.64 R8, [R3] ;\n"
	"        /*0050*/                   LDS R10, [R3+0x4] ;\n"
	"        /*0060*/                   FFMA R12, R4, R8, R12 ;\n"
	"        /*0070*/                   FFMA R13, R5.reuse, R9, R13 ;\n"
	"        /*0080*/                   FADD R14, R14, R10 ;\n"
	"        /*0090*/                   ISETP.NE.AND P0, PT, R2, 0x10, PT ;\n"
	"        /*00a0*/              @P0 BRA `(.L_x_1) ;\n"
	"        /*00b0*/                   ISETP.NE.AND P1, PT, R2, 0x20, PT ;\n"
	"        /*00c0*/              @P1 BRA `(.L_x_0) ;\n"
	"        /*00d0*/                   STG.E desc[UR4][R2.64], R12 ;\n"
	"        /*00e0*/                   EXIT ;\n"
	".L_x_2:\n"
	"        /*00f0*/                   BRA `(.L_x_2);\n"
	"\t.section\t.nv.info.outer_kernel,\"\",@\"SHT_CUDA_INFO\"\n"
	"\t.align\t4\n"
	"\t.section\t.text.mma_kernel,\"ax\",@progbits\n"
	"mma_kernel:\n"
	"        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;\n"
	".L_x_3:\n"
	"        /*0010*/                   HMMA.16816.F32 R8, R4, R6, R8 ;\n"
	"        /*0020*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;\n"
	"        /*0030*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR6][R4.64] ;\n"
	"        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
	"        /*0050*/                   FSEL R1, R2, RZ, P0 ;\n"
	"        /*0060*/              @!P0 BRA `(.L_x_3) ;\n"
	"        /*0070*/                   EXIT ;\n"
	"\t.section\t.text.staged_kernel,\"ax\",@progbits\n"
	"staged_kernel:\n"
	".L_x_4:\n"
	"        /*0000*/                   LDGSTS.E.128 [R3], desc[UR6][R4.64] ;\n"
	"        /*0010*/                   IADD3 R4, R4, 0x10, RZ ;\n"
	"        /*0020*/                   IADD3 R3, R3, 0x10, RZ ;\n"
	"        /*0030*/                   ISETP.NE.AND P0, PT, R3, 0x100, PT ;\n"
	"        /*0040*/               @P0 BRA `(.L_x_4) ;\n"
	".L_x_5:\n"
	"        /*0050*/                   LDS.128 R8, [R3] ;\n"
	"        /*0060*/                   FFMA R12, R8, R9, R12 ;\n"
	"        /*0070*/               @P1 BRA `(.L_x_5) ;\n"
	"        /*0080*/                   EXIT ;\n"
	"\t.section\t.text.tiles_kernel,\"ax\",@progbits\n"
	"tiles_kernel:\n"
	".L_x_6:\n"
	"        /*0000*/               @P1 LDS R4, [R2] ;\n"
	"        /*0010*/               @P1 LDS R5, [R3] ;\n"
	"        /*0020*/               @P1 FFMA R12, R4, R5, R12 ;\n"
	"        /*0030*/               @P2 LDS R6, [R2+0x4] ;\n"
	"        /*0040*/               @P2 LDS R7, [R3] ;\n"
	"        /*0050*/               @P2 FFMA R13, R6, R7, R13 ;\n"
	"        /*0060*/               @P0 BRA `(.L_x_6) ;\n"
	".L_x_7:\n"
	"        /*0070*/                   LDS.64 R4, [R2] ;\n"
	"        /*0080*/                   LDS R7, [R3] ;\n"
	"        /*0090*/                   FFMA R12, R4, R7, R12 ;\n"
	"        /*00a0*/                   FFMA R13, R5, R7, R13 ;\n"
	"        /*00b0*/               @P0 BRA `(.L_x_7) ;\n"
	"        /*00c0*/                   EXIT ;\n";

static const char report[] =
	"ptxas info    : 0 bytes gmem\n"
	"ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
	"ptxas info    : Function properties for k1\n"
	"    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n"
	"ptxas info    : Used 128 registers, used 1 barriers, 4096 bytes smem, 384 bytes cmem[0]\n"
	"ptxas info    : Compiling entry function 'k0' for 'sm_90'\n"
	"ptxas info    : Function properties for k0\n"
	"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	"ptxas info    : Used 40 registers, used 0 barriers, 352 bytes cmem[0]\n";

static void test_classify(void)
{
	static const struct {
		const char *text;
		enum pb_sass_class cls;
		int width;
		double flops;
	} t[] = {
		{"FFMA R1, R2, R3, R1 ", PB_SASS_FFMA, PB_SASS_W32, 2},
		{"@!P2 FMUL.FTZ R1, R2, R3 ", PB_SASS_FMUL, PB_SASS_W32, 1},
		{"HFMA2 R1, R2, R3, R1 ", PB_SASS_HALF, PB_SASS_W32, 4},
		{"HFMA2.MMA R1, -RZ, RZ, 0, 0 ", PB_SASS_MOV, PB_SASS_W32, 0},
		{"HADD2.F32 R0, -RZ, R2.H0_H0 ", PB_SASS_OTHER, PB_SASS_W32, 0},
		{"HMMA.1688.F32.TF32 R4, R8, R12, R4 ", PB_SASS_MMA, PB_SASS_W32, 64},
		{"IMMA.16832.S8.S8 R4, R8, R12, R4 ", PB_SASS_MMA, PB_SASS_W32, 256},
		{"LDG.E.64.CONSTANT R2, desc[UR4][R4.64] ", PB_SASS_LDG, PB_SASS_W64, 0},
		{"LDS.U.128 R4, [R2] ", PB_SASS_LDS, PB_SASS_W128, 0},
		{"LDSM.16.MT88.2 R4, [R2] ", PB_SASS_LDSM, PB_SASS_W64, 0},
		{"STS.128 [R2], R4 ", PB_SASS_STS, PB_SASS_W128, 0},
		{"STL [R1], R4 ", PB_SASS_LOCAL, PB_SASS_W32, 0},
		{"UIADD3 UR4, UR4, 0x1, URZ ", PB_SASS_INT, PB_SASS_W32, 0},
		{"IMAD.MOV.U32 R1, RZ, RZ, RZ ", PB_SASS_MOV, PB_SASS_W32, 0},
		{"IMAD.WIDE R2, R3, 0x4, R4 ", PB_SASS_INT, PB_SASS_W32, 0},
		{"LDGDEPBAR ", PB_SASS_SYNC, PB_SASS_W32, 0},
		{"MUFU.EX2 R1, R2 ", PB_SASS_FPX, PB_SASS_W32, 1},
		{"FSETP.GT.AND P0, PT, R1, R2, PT ", PB_SASS_OTHER, PB_SASS_W32, 0},
		{"ULDC.64 UR4, c[0x0][0x210] ", PB_SASS_OTHER, PB_SASS_W32, 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pb_sass_inst in;
		pb_sass_classify(t[i].text, &in);
		char what[128];
		snprintf(what, sizeof(what), "classify '%s': %s", t[i].text,
			 pb_sass_class_name(in.cls));
		check(in.cls == t[i].cls && in.width == t[i].width &&
			      in.flops == t[i].flops,
		      what);
	}
}

static void test_listing(void)
{
	struct pb_sass s;
	check(pb_sass_parse(listing, &s) == 0 && s.n == 4, "four kernels");
	if (s.n != 4)
		return;
	const struct pb_sass_kernel *k = pb_sass_kernel(&s, "outer_kernel");
	check(k && k->ninst == 16, "outer_kernel: 16 instructions");
	check(k && k->nloops == 2, "outer_kernel: two loops, not the "
				   "BRA to itself");
	if (!k || k->hot < 0)
		return;
	const struct pb_sass_loop *h = &k->loops[k->hot];
	check(h->first == 3 && h->last == 10 && h->depth == 1 && h->inner,
	      "outer_kernel: the hottest loop is the inner one");
	const struct pb_sass_mix *m = &h->mix;
	check(m->total == 8 && m->n[PB_SASS_FFMA] == 2 &&
		      m->n[PB_SASS_FADD] == 1 && m->n[PB_SASS_LDG] == 1 &&
		      m->width[PB_SASS_LDG][PB_SASS_W128] == 1 &&
		      m->n[PB_SASS_LDS] == 2 &&
		      m->width[PB_SASS_LDS][PB_SASS_W64] == 1 &&
		      m->width[PB_SASS_LDS][PB_SASS_W32] == 1 &&
		      m->n[PB_SASS_INT] == 1 && m->n[PB_SASS_CTRL] == 1,
	      "outer_kernel: the inner loop's mix");
	check(m->math == 3 && m->mem == 3 && m->flops == 5 &&
		      fabs(pb_sass_math_share(m) - 3.0 / 8) < 1e-12 &&
		      fabs(pb_sass_flops_per_mem(m) - 5.0 / 3) < 1e-12,
	      "outer_kernel: math share 3/8, 5/3 flops per memory "
	      "instruction");
	check(k->mix.n[PB_SASS_MOV] == 2 && k->mix.n[PB_SASS_STG] == 1 &&
		      k->mix.n[PB_SASS_CTRL] == 4,
	      "outer_kernel: the whole kernel's mix");
	k = pb_sass_kernel(&s, "mma_kernel");
	check(k && k->ninst == 8 && k->nloops == 1 && k->hot == 0,
	      "mma_kernel: one loop");
	if (!k || k->hot != 0)
		return;
	m = &k->loops[0].mix;
	check(m->total == 6 && m->n[PB_SASS_MMA] == 1 &&
		      m->n[PB_SASS_GMMA] == 1 && m->n[PB_SASS_LDGSTS] == 1 &&
		      m->width[PB_SASS_LDGSTS][PB_SASS_W128] == 1 &&
		      m->n[PB_SASS_BAR] == 1 && m->n[PB_SASS_FSEL] == 1 &&
		      m->math == 2 && m->mem == 1,
	      "mma_kernel: the loop's mix");
	check(m->flops == 128 + 2048, "mma_kernel: HMMA.16816 is 128 "
				      "flops per thread, HGMMA.64x128x16 "
				      "2048");
	check(k->mix.width[PB_SASS_LDSM][PB_SASS_W128] == 1,
	      "mma_kernel: LDSM .4 is 128 bits a thread");
	k = pb_sass_kernel(&s, "staged_kernel");
	check(k && k->nloops == 2 && k->hot == 1 &&
		      k->loops[1].mix.total == 3 && k->loops[0].mix.total == 5,
	      "staged_kernel: of two loops of equal depth the one with flops "
	      "is hotter than the longer copy loop");
	k = pb_sass_kernel(&s, "tiles_kernel");
	check(k && k->nloops == 2 && k->hot == 1 &&
		      k->loops[0].mix.total == 7 && k->loops[1].mix.total == 5,
	      "tiles_kernel: of two loops of equal depth and flops (a full "
	      "tile's and a partial tile's guarded points) the shorter is "
	      "hotter");
	pb_sass_clear(&s);
	check(pb_sass_parse("no listing\n", &s) == -1 && s.n == 0,
	      "text without instructions");
}

static void test_ptxas(void)
{
	struct pb_sass_ptxas *all;
	int n;
	pb_sass_ptxas_parse(report, &all, &n);
	check(n == 2, "ptxas: two kernels");
	if (n != 2)
		return;
	check(!strcmp(all[0].kernel, "k1") && all[0].regs == 128 &&
		      all[0].smem == 4096 && all[0].stack == 8 &&
		      all[0].spill_st == 12 && all[0].spill_ld == 16 &&
		      all[0].barriers == 1,
	      "ptxas: k1's report");
	check(!strcmp(all[1].kernel, "k0") && all[1].regs == 40 &&
		      all[1].smem == 0 && all[1].barriers == 0,
	      "ptxas: k0's report");
	free(all);
}

int main(void)
{
	test_classify();
	test_listing();
	test_ptxas();
	return check_summary("test_sass");
}

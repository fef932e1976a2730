/* --ptxas-report: assemble the PTX with ptxas -v (lib/sass) and print
 * its per-kernel statistics (registers, spills, shared memory, stack). */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/internal.h"
#include "sass/sass.h"

int pb_codegen_ptxas_report(struct pb_ctx *ctx, const char *ptx, size_t len)
{
	struct pb_sass_ptxas *all;
	int n;
	if (pb_sass_ptxas(ctx, "--ptxas-report", ptx, len, ctx->arch, NULL,
			  &all, &n) != PB_OK)
		return PB_ERR;
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s: ptxas %s: %s: %ld registers, %ld bytes "
			"smem, %ld bytes stack, %ld bytes spill stores, %ld "
			"bytes spill loads\n", ctx->tool, ctx->arch,
			all[i].kernel, all[i].regs, all[i].smem, all[i].stack,
			all[i].spill_st, all[i].spill_ld);
	free(all);
	return PB_OK;
}

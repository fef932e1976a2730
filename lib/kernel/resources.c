/* The resource model of a kernel: how many of its blocks an SM holds at
 * once, from the threads, registers and workgroup memory of one block,
 * and the waves a grid takes (docs/kernel-model.md). pb-tile's cost model
 * predicts with it; pb-mma and pb-smem add their registers and shared
 * memory to the same resources. */
#include <math.h>

#include "kernel/kernel.h"

/* Registers are allocated to a block in units of this many. */
#define REG_UNIT 256

void pb_kernel_occupancy(const struct pb_target *t,
			 const struct pb_kernel_resources *r, int64_t grid,
			 struct pb_kernel_occupancy *o)
{
	int64_t threads = r->threads;
	int64_t per_sm = t->max_blocks_per_sm;
	if (threads > 0 && t->max_threads_per_sm / threads < per_sm)
		per_sm = t->max_threads_per_sm / threads;
	int64_t rb = ((int64_t)r->regs * threads + REG_UNIT - 1) / REG_UNIT *
		     REG_UNIT;
	if (rb > 0 && t->regs_per_sm / rb < per_sm)
		per_sm = t->regs_per_sm / rb;
	if (r->smem > 0 && t->smem_per_sm / r->smem < per_sm)
		per_sm = t->smem_per_sm / r->smem;
	if (per_sm < 1)
		per_sm = 1;
	o->blocks_per_sm = per_sm;
	o->occupancy = (double)(per_sm * threads) / t->max_threads_per_sm;
	if (o->occupancy > 1)
		o->occupancy = 1;
	o->slots = (double)t->sm_count * (double)per_sm;
	o->waves = ceil((double)grid / o->slots);
	double wave = grid < o->slots ? (double)grid : o->slots;
	o->wave_blocks = ceil(wave / t->sm_count);
}

int pb_kernel_regs_fit(const struct pb_target *t, int regs)
{
	return regs <= PB_KERNEL_REG_LIMIT && regs <= t->max_regs_per_thread;
}

int pb_kernel_fits(const struct pb_target *t,
		   const struct pb_kernel_resources *r)
{
	return r->threads >= 1 && r->threads <= t->max_threads_per_block &&
	       r->smem <= t->smem_per_block_optin &&
	       pb_kernel_regs_fit(t, r->regs);
}

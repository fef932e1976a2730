/* The k-tile and the ring of a staged nest (docs/pb-smem.md, "k-tile and
 * stages"): one search that pb-smem's plan (lib/smem/plan.c) and pb-tile's
 * cost model (lib/tile/cost.c) share, so that pb-tile prices the ring
 * pb-smem will build (docs/kernel-model.md). */
#include <stdlib.h>

#include "kernel/kernel.h"

int pb_kernel_async(const struct pb_target *t)
{
	return atoi(t->arch + 3) >= 80;
}

int pb_kernel_ring_search(const struct pb_target *t, int64_t trip,
			int64_t k_tile, int stages,
			int (*fits)(void *user, int64_t kt, int stages),
			void *user, int64_t *kt, int *ns)
{
	/* the whole loop when it is short and no other tile divides it */
	int64_t kts[] = {16, 32, 8, 4, trip <= 32 ? trip : 4};
	int nk = k_tile ? 1 : (int)(sizeof(kts) / sizeof(kts[0]));
	int top = stages ? stages : pb_kernel_async(t) ? 3 : 1;
	/* a ring first (3 slots, then 2), the k-tiles in the order of kts
	 * within it; one slot only when no ring fits */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nk; i++)
			for (int want = top; want >= 1; want--) {
				if (!stages && (pass == 0) != (want > 1))
					continue;
				if (stages && pass)
					continue;
				int64_t k = k_tile ? k_tile : kts[i];
				if (k < 1 || k > trip || trip % k)
					continue;
				int64_t tiles = trip / k;
				int s = want < tiles ? want : (int)tiles;
				int f = fits(user, k, s);
				if (f < 0)
					break;
				if (!f)
					continue;
				*kt = k;
				*ns = s;
				return 1;
			}
	return 0;
}

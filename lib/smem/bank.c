/* Shared-memory bank conflicts of one warp-wide access (docs/pb-smem.md,
 * "Layouts"). Shared memory has 32 banks of 4-byte words; word w is in
 * bank w mod 32. A warp's access of "width" words per lane (1, 2 or 4:
 * 32-, 64- or 128-bit) is served in 32 / (32 / width) phases of
 * 32 / width lanes each; within a phase, lanes that touch distinct words
 * of one bank are serialized, lanes that touch the same word share it
 * (broadcast). The degree of the access is the most distinct words of one
 * bank in one phase: 1 is conflict-free, 32 the worst. */
#include <stdint.h>

#include "smem/internal.h"

int pb_smem_bank_degree(const int64_t *word, int nlanes, int width)
{
	int per = width >= 1 && width <= 32 ? 32 / width : 32, worst = 1;
	if (per < 1)
		per = 1;
	for (int p = 0; p < nlanes; p += per) {
		int64_t seen[32 * 4];
		int bank[32 * 4], n = 0;
		for (int l = p; l < p + per && l < nlanes; l++)
			for (int k = 0; k < width && n < 32 * 4; k++) {
				int64_t w = word[l] + k, dup = 0;
				for (int j = 0; j < n && !dup; j++)
					dup = seen[j] == w;
				if (dup)
					continue;
				seen[n] = w;
				bank[n++] = (int)(((w % 32) + 32) % 32);
			}
		for (int b = 0; b < 32; b++) {
			int c = 0;
			for (int j = 0; j < n; j++)
				c += bank[j] == b;
			if (c > worst)
				worst = c;
		}
	}
	return worst;
}

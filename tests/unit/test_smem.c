/* The bank model of pb-smem (lib/smem/bank.c), on warp accesses whose
 * conflicts are known by hand: 32 banks of 4-byte words, 32-bit accesses
 * served a warp at a time, 64-bit a half warp and 128-bit a quarter warp
 * at a time; distinct words of one bank in one phase serialize, one word
 * is broadcast. */
#include <stdint.h>

#include "smem/internal.h"

#include "check.h"

/* Lane l touches word base + l * stride, "width" words wide. */
static int degree(int64_t stride, int lanes, int width)
{
	int64_t w[32];
	for (int l = 0; l < lanes; l++)
		w[l] = l * stride;
	return pb_smem_bank_degree(w, lanes, width);
}

int main(void)
{
	int64_t w[32];
	/* 32-bit: consecutive words, one per bank */
	check(degree(1, 32, 1) == 1, "stride 1 is conflict-free");
	/* a row of a 32-float tile per lane: every lane in bank 0 */
	check(degree(32, 32, 1) == 32, "stride 32 is a 32-way conflict");
	/* 2 lanes per bank */
	check(degree(2, 32, 1) == 2, "stride 2 is 2-way");
	/* a 16-float row plus one word of padding: 17 is odd */
	check(degree(17, 32, 1) == 1, "stride 17 is conflict-free");
	check(degree(16, 32, 1) == 16, "stride 16 is 16-way");
	/* broadcast: every lane the same word */
	check(degree(0, 32, 1) == 1, "one word is a broadcast");
	/* 128-bit: 8 lanes per phase, 32 words: conflict-free when
	 * contiguous */
	check(degree(4, 32, 4) == 1, "contiguous 128-bit is conflict-free");
	/* 128-bit rows of 16 floats: lanes 0 and 2 of a phase share banks */
	check(degree(16, 32, 4) == 4, "128-bit at stride 16 is 4-way");
	/* ... padded to 20: 8 rows in distinct banks */
	check(degree(20, 32, 4) == 1, "128-bit at stride 20 is conflict-free");
	/* 4 distinct rows of a 16-word tile read by groups of 8 lanes (the
	 * A operand of pb-smem's GEMM test): one address per phase */
	for (int l = 0; l < 32; l++)
		w[l] = (l / 8) * 16;
	check(pb_smem_bank_degree(w, 32, 4) == 1,
	      "a phase reading one 128-bit word is a broadcast");
	check(pb_smem_bank_degree(w, 32, 1) == 2,
	      "4 rows of 16 words read 32 bits wide: 2-way");
	/* fewer lanes than a warp */
	check(degree(32, 4, 1) == 4, "4 lanes at stride 32 are 4-way");
	return check_summary("test_smem");
}

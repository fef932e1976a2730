/* Unit tests of lib/tileir: the bytecode writer's encodings (varints,
 * tables, sections) and a hand-built 128x128x32 f16 GEMM kernel, whose
 * bytecode is checked byte by byte where the format fixes it and, with
 * tileirdisasm present ($PB_TILEIRDISASM or on PATH), disassembled; the
 * readers of a cubin's kernel attributes (block size, parameters). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "plan/plan.h"
#include "tileir/ops.h"
#include "tileir/tileir.h"

/* "b" equals the "n" bytes "want". */
static int bytes_are(const struct pb_buf *b, const char *want, size_t n)
{
	return b->len == n && !memcmp(b->data, want, n);
}

static void test_varint(void)
{
	static const struct {
		uint64_t x;
		const char *enc;
		size_t n;
	} cases[] = {
		{0, "\x00", 1},
		{1, "\x01", 1},
		{127, "\x7f", 1},
		{128, "\x80\x01", 2},
		{300, "\xac\x02", 2},
		{1ull << 32, "\x80\x80\x80\x80\x10", 5},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb_buf b = {0};
		pb_tileir_varint(&b, cases[i].x);
		check(bytes_are(&b, cases[i].enc, cases[i].n), "varint");
		pb_buf_free(&b);
	}
	struct pb_buf b = {0};
	pb_tileir_svarint(&b, -1);
	pb_tileir_svarint(&b, 2);
	check(bytes_are(&b, "\x01\x04", 2), "signed varints (zigzag)");
	pb_buf_free(&b);
}

static void test_tables(void)
{
	struct pb_tileir w;
	pb_tileir_init(&w);
	check(w.types.n == 2, "i1 and i32 are predefined types");
	check(pb_tileir_type_elem(&w, PB_TILEIR_I32) == 1, "i32 is type 1");
	int f16 = pb_tileir_type_elem(&w, PB_TILEIR_F16);
	int64_t shape[2] = {128, 32};
	int t = pb_tileir_type_tile(&w, f16, shape, 2);
	check(t == pb_tileir_type_tile(&w, f16, shape, 2),
	      "types are deduplicated");
	int s = pb_tileir_string(&w, "gemm");
	check(s == 0 && pb_tileir_string(&w, "gemm") == 0 &&
	      pb_tileir_string(&w, "x") == 1, "strings are deduplicated");
	/* tile<128x32xf16>: tag, element type, shape as 8-byte integers */
	const char *e = w.types.data.data + w.types.off[t];
	check(w.types.off[t + 1] - w.types.off[t] == 3 + 16 && e[0] == 0x0d &&
	      e[1] == f16 && e[2] == 2 && e[3] == (char)128,
	      "tile type encoding");
	pb_tileir_free(&w);
}

/* The GEMM kernel C = A B, 256x256x64 f16 in 128x128 block tiles with
 * k tiles of 32: the program of the issue (make_tensor_view,
 * make_partition_view, get_tile_block_id, a for over k with two loads
 * and mmaf, ftof, store). */
static void gemm(struct pb_tileir *w)
{
	int f16 = pb_tileir_type_elem(w, PB_TILEIR_F16);
	int f32 = pb_tileir_type_elem(w, PB_TILEIR_F32);
	int i32 = pb_tileir_type_tile(w, 1, NULL, 0);
	int tok = pb_tileir_type_elem(w, PB_TILEIR_TOKEN);
	int p = pb_tileir_type_tile(w, pb_tileir_type_ptr(w, f16), NULL, 0);
	int params[3] = {p, p, p};
	int64_t sa[2] = {256, 64}, sb[2] = {64, 256}, sc[2] = {256, 256};
	int64_t ra[2] = {64, 1}, rb[2] = {256, 1}, rc[2] = {256, 1};
	int64_t ta[2] = {128, 32}, tb[2] = {32, 128}, tc[2] = {128, 128};
	int tva = pb_tileir_type_tensor_view(w, f16, sa, ra, 2);
	int tvb = pb_tileir_type_tensor_view(w, f16, sb, rb, 2);
	int tvc = pb_tileir_type_tensor_view(w, f16, sc, rc, 2);
	int pva = pb_tileir_type_partition_view(w, ta, 2, tva, NULL, 0);
	int pvb = pb_tileir_type_partition_view(w, tb, 2, tvb, NULL, 0);
	int pvc = pb_tileir_type_partition_view(w, tc, 2, tvc, NULL, -1);
	int tile_a = pb_tileir_type_tile(w, f16, ta, 2);
	int tile_b = pb_tileir_type_tile(w, f16, tb, 2);
	int acc_ty = pb_tileir_type_tile(w, f32, tc, 2);
	int out_ty = pb_tileir_type_tile(w, f16, tc, 2);

	pb_tileir_func_begin(w, "gemm", params, 3, 1);
	int t0 = pb_tileir_make_token(w, tok);
	int a = pb_tileir_make_partition_view(
		w, pva, pb_tileir_make_tensor_view(w, tva, 0));
	int b = pb_tileir_make_partition_view(
		w, pvb, pb_tileir_make_tensor_view(w, tvb, 1));
	int c = pb_tileir_make_partition_view(
		w, pvc, pb_tileir_make_tensor_view(w, tvc, 2));
	int bid = pb_tileir_block_id(w, i32);
	float zero = 0;
	int32_t k0 = 0, kn = 2, k1 = 1;
	int acc = pb_tileir_const(w, acc_ty, &zero, 4);
	int lb = pb_tileir_const(w, i32, &k0, 4);
	int ub = pb_tileir_const(w, i32, &kn, 4);
	int step = pb_tileir_const(w, i32, &k1, 4);
	int arg;
	pb_tileir_for(w, &acc_ty, lb, ub, step, &acc, 1, i32, &arg);
	int ia[2] = {bid, arg}, ib[2] = {arg, bid + 1};
	int x = pb_tileir_load_view(w, tile_a, tok, a, ia, 2, t0);
	int y = pb_tileir_load_view(w, tile_b, tok, b, ib, 2, t0);
	int r = pb_tileir_mmaf(w, acc_ty, x, y, arg + 1);
	pb_tileir_continue(w, &r, 1);
	int sum = pb_tileir_block_end(w, 1);
	int out = pb_tileir_ftof(w, out_ty, sum);
	int ic[2] = {bid, bid + 1};
	pb_tileir_store_view(w, tok, out, c, ic, 2, t0);
	pb_tileir_return(w);
	pb_tileir_func_end(w);
}

/* Disassemble "bc" with tileirdisasm when there is one: the ops of the
 * kernel must all be there. */
static void disasm(const struct pb_buf *bc)
{
	char tool[4096];
	if (pb_tileir_find_tool(NULL, "tileirdisasm", "PB_TILEIRDISASM", tool,
				sizeof(tool))) {
		printf("test_tileir: tileirdisasm not found, disassembly "
		       "skipped\n");
		return;
	}
	char path[] = "/tmp/pb-test-tileir-XXXXXX";
	int fd = mkstemp(path);
	check(fd >= 0 && write(fd, bc->data, bc->len) == (ssize_t)bc->len,
	      "write the bytecode");
	close(fd);
	char *argv[] = {tool, path, NULL};
	struct pb_buf out = {0};
	int st = pb_run_program(argv, NULL, NULL, 1, &out);
	unlink(path);
	check_detail(st == 0, "tileirdisasm reads the bytecode", out.data);
	static const char *want[] = {
		"entry @gemm", "make_tensor_view", "make_partition_view",
		"get_tile_block_id", "load_view_tko", "mmaf", "ftof",
		"store_view_tko", "tile=(128x32)", "tensor_view<256x64xf16",
		NULL};
	for (int i = 0; st == 0 && want[i]; i++)
		check_detail(out.data && strstr(out.data, want[i]),
			     "tileirdisasm prints", want[i]);
	pb_buf_free(&out);
}

static void test_gemm(void)
{
	struct pb_tileir w;
	struct pb_buf bc = {0};
	pb_tileir_init(&w);
	gemm(&w);
	pb_tileir_finish(&w, &bc);
	check(bc.len > 12 && !memcmp(bc.data, "\x7fTileIR\0\x0d\x04\0\0", 12),
	      "magic and version 13.4");
	check((unsigned char)bc.data[12] == 0x82, "the function section first");
	check(bc.data[bc.len - 1] == 0, "ends with the end marker");
	disasm(&bc);
	pb_buf_free(&bc);
	pb_tileir_free(&w);
}

/* The cubin section of a tile artifact (lib/plan): written after a
 * header and read back byte for byte at every length modulo 3 and across
 * line breaks; a truncated section is an error, a PTX has none. */
static void test_artifact(void)
{
	static const size_t lens[] = {1, 2, 3, 56, 57, 58, 1000};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i], tlen, got;
		unsigned char *bin = malloc(n), *back;
		for (size_t j = 0; j < n; j++)
			bin[j] = (unsigned char)(j * 131 + n);
		char *text = strdup(PB_PLAN_BEGIN "\n" PB_PLAN_END "\n");
		char err[128];
		tlen = strlen(text);
		pb_plan_put_cubin(&text, &tlen, bin, n);
		check(pb_plan_get_cubin(text, tlen, &back, &got, err,
					sizeof(err)) == 0 &&
		      got == n && !memcmp(back, bin, n),
		      "cubin section round trip");
		free(back);
		/* cut the last base64 line off */
		char *end = strstr(text, PB_PLAN_CUBIN_END);
		size_t cut = end - text;
		while (cut > 0 && text[cut - 1] == '\n')
			cut--;
		while (cut > 0 && text[cut - 1] != '\n')
			cut--;
		memcpy(text + cut, PB_PLAN_CUBIN_END "\n",
		       strlen(PB_PLAN_CUBIN_END) + 2);
		check(pb_plan_get_cubin(text, strlen(text), &back, &got, err,
					sizeof(err)) < 0,
		      "a truncated cubin section is an error");
		free(text);
		free(bin);
	}
	unsigned char *none;
	size_t nn;
	char err[64];
	check(pb_plan_get_cubin(".version 8.0\n", 13, &none, &nn, err,
				sizeof(err)) == 1 && !none,
	      "a PTX has no cubin section");
}

/* The global section: after the function section, one entry per name
 * (a second definition ignored): its name, type, constant, alignment,
 * visibility (private) and constant flag. */
static void test_globals(void)
{
	struct pb_tileir w;
	struct pb_buf bc = {0};
	pb_tileir_init(&w);
	int i64 = pb_tileir_type_elem(&w, PB_TILEIR_I64);
	int64_t n = 2;
	int ty = pb_tileir_type_tile(&w, i64, &n, 1);
	int64_t data[2] = {4, -1};
	pb_tileir_global(&w, "table", ty, data, sizeof(data), 16);
	pb_tileir_global(&w, "table", ty, data, sizeof(data), 16);
	check(w.nglobals == 1, "a global is defined once");
	char want[6] = {0 /* "table" */, (char)ty, 0 /* constant 0 */, 16, 1, 1};
	check(w.globals.len == 6 && !memcmp(w.globals.data, want, 6),
	      "global entry encoding");
	pb_tileir_func_begin(&w, "k", NULL, 0, 1);
	pb_tileir_return(&w);
	pb_tileir_func_end(&w);
	pb_tileir_finish(&w, &bc);
	/* the function section (aligned), then the global section (not):
	 * id 0x06, length 7, the count 1 and the entry */
	const char *g = memmem(bc.data, bc.len, "", 3);
	check(g && !memcmp(g + 3, want, 6), "the global section");
	pb_buf_free(&bc);
	pb_tileir_free(&w);
}

/* A reduce's identities: a float's bit pattern as cuTile writes it (the
 * zigzag varint of the pattern as a non-negative number, 65 bits for an
 * f64), an integer masked to its width, a boolean as a byte. */
static void test_identities(void)
{
	static const struct {
		enum pb_tileir_elem elem;
		int is_int, bits;
		uint64_t id;
		const char *enc; /* after the tag and the element type */
		size_t n;
	} cases[] = {
		{PB_TILEIR_F32, 0, 32, 0xff800000u, "\x80\x80\x80\xf8\x1f", 5},
		{PB_TILEIR_F64, 0, 64, 0xfff0000000000000ull,
		 "\x80\x80\x80\x80\x80\x80\x80\xf0\xff\x03", 10},
		{PB_TILEIR_I32, 1, 32, 0x7fffffffu, "\xff\xff\xff\xff\x07", 5},
		{PB_TILEIR_I8, 1, 8, UINT64_MAX, "\xff\x01", 2},
		{PB_TILEIR_I1, 1, 1, 1, "\x01", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb_tileir w;
		int first;
		pb_tileir_init(&w);
		int el = pb_tileir_type_elem(&w, cases[i].elem);
		pb_tileir_reduce(&w, el, 0, 0, el, cases[i].is_int, cases[i].id,
				 cases[i].bits, el, &first);
		/* the reduce so far: opcode, one result, its type, dim 0, one
		 * identity: its tag, the element type (but a boolean's) and
		 * the value */
		const struct pb_buf *o = &w.regions[0].outer;
		int boolean = cases[i].elem == PB_TILEIR_I1;
		char tag = !cases[i].is_int ? 0x02 : boolean ? 0x03 : 0x01;
		size_t at = 5 + 1 + !boolean;
		check(o->len >= at + cases[i].n && o->data[5] == tag &&
		      (boolean || o->data[6] == (char)el) &&
		      !memcmp(o->data + at, cases[i].enc, cases[i].n),
		      "identity encoding");
		pb_tileir_yield(&w, NULL, 0);
		pb_tileir_block_end(&w, 1);
		pb_tileir_free(&w);
	}
}

/* A cubin as tileiras writes one, reduced to what the readers of
 * tileiras.c look at: an ELF64 header, the section names and one section
 * ".nv.info.k" holding "info" ("n" bytes), into "elf" (at least 512
 * bytes); returns its length. */
static size_t tiny_cubin(unsigned char *elf, const unsigned char *info,
			 size_t n)
{
	static const char names[] = "\0.shstrtab\0.nv.info.k";
	size_t names_at = 64, info_at = names_at + sizeof(names);
	size_t sh = (info_at + n + 7) / 8 * 8, len = sh + 3 * 64;
	memset(elf, 0, len);
	memcpy(elf, "\x7f" "ELF\x02\x01\x01", 7);
	memcpy(elf + names_at, names, sizeof(names));
	memcpy(elf + info_at, info, n);
	/* e_shoff, e_shentsize, e_shnum, e_shstrndx */
	for (int i = 0; i < 8; i++)
		elf[0x28 + i] = (unsigned char)(sh >> (8 * i));
	elf[0x3a] = 64;
	elf[0x3c] = 3;
	elf[0x3e] = 1;
	/* section 1: .shstrtab (name 1), section 2: .nv.info.k (name 11);
	 * sh_name at 0, sh_offset at 0x18, sh_size at 0x20 */
	size_t at[3] = {0, names_at, info_at}, sz[3] = {0, sizeof(names), n};
	unsigned nm[3] = {0, 1, 11};
	for (int k = 1; k < 3; k++) {
		unsigned char *h = elf + sh + 64 * k;
		h[0] = (unsigned char)nm[k];
		for (int i = 0; i < 8; i++) {
			h[0x18 + i] = (unsigned char)(at[k] >> (8 * i));
			h[0x20 + i] = (unsigned char)(sz[k] >> (8 * i));
		}
	}
	return len;
}

/* The kernel attributes tileiras.c reads from a cubin: the block size
 * (EIATTR_REQNTID) and what a launch passes: the kernel's parameters
 * (EIATTR_KPARAM_INFO, sizes in bits 18 and up of their flags) or, for a
 * tile kernel whose TMA descriptors the driver adds (attribute 0x45,
 * sizes in the low 16 bits), the launcher's; entries of other formats
 * and attributes skipped. */
static void test_cubin_info(void)
{
	/* REQNTID 128x1x1, a format-3 entry, three 8-byte pointers */
	static const unsigned char plain[] = {
		4, 0x10, 12, 0, 128, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
		3, 0x19, 0x18, 0,
		4, 0x17, 12, 0, 0, 0, 0, 0, 2, 0, 16, 0, 0, 0xf4, 0x21, 0,
		4, 0x17, 12, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0xf4, 0x21, 0,
		4, 0x17, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf4, 0x21, 0};
	/* a TMA kernel: a 432-byte constant bank (EIATTR_PARAM_CBANK),
	 * what the launcher passes: a pointer and an i32 */
	static const unsigned char tma[] = {
		4, 0x0a, 8, 0, 0x0f, 0, 0, 0, 0x10, 0x02, 0xb0, 0x01,
		4, 0x45, 12, 0, 0, 0, 0, 0, 1, 0, 8, 0, 4, 0, 0, 0,
		4, 0x45, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 4,
		4, 0x10, 12, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
	unsigned char elf[512];
	int64_t block[3] = {0, 0, 0}, bytes = -1;
	size_t len = tiny_cubin(elf, plain, sizeof(plain));
	check(pb_tileir_cubin_block((char *)elf, len, "k", block) == 0 &&
	      block[0] == 128 && block[1] == 1 && block[2] == 1,
	      "the block size from EIATTR_REQNTID");
	check(pb_tileir_cubin_params((char *)elf, len, "k", &bytes) == 3 &&
	      bytes == 24, "three 8-byte parameters from EIATTR_KPARAM_INFO");
	check(pb_tileir_cubin_block((char *)elf, len, "other", block) == -1 &&
	      pb_tileir_cubin_params((char *)elf, len, "other", &bytes) == 0,
	      "a kernel the cubin does not have");
	len = tiny_cubin(elf, tma, sizeof(tma));
	check(pb_tileir_cubin_params((char *)elf, len, "k", &bytes) == 2 &&
	      bytes == 12, "a TMA kernel: the launcher's parameters, not its "
	      "constant bank");
	check(pb_tileir_cubin_block((char *)elf, len, "k", block) == 0 &&
	      block[0] == 256, "the block size after other entries");
}

int main(void)
{
	test_cubin_info();
	test_globals();
	test_identities();
	test_varint();
	test_artifact();
	test_tables();
	test_gemm();
	return check_summary("test_tileir");
}

/* Table-driven tests of lib/core/npy.c: round trips through the encoder
 * and decoder, header variants NumPy writes or accepts, and malformed
 * files that must give a clear error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"

#include "check.h"

/* Round trips: encode a tensor of "dtype" and shape "dims" (rank "rank"),
 * decode it again and compare everything. */
static const struct {
	enum pb_dtype dtype;
	int rank;
	int64_t dims[4];
} trips[] = {
	{PB_DT_F32, 2, {2, 3}},   {PB_DT_F32, 0, {0}},
	{PB_DT_F32, 1, {1}},      {PB_DT_F32, 1, {0}},
	{PB_DT_F64, 3, {2, 1, 4}}, {PB_DT_F16, 1, {7}},
	{PB_DT_I64, 2, {3, 3}},   {PB_DT_I32, 1, {5}},
	{PB_DT_I8, 1, {9}},       {PB_DT_U8, 4, {1, 2, 3, 4}},
	{PB_DT_BOOL, 2, {2, 2}},  {PB_DT_U64, 1, {2}},
	{PB_DT_I16, 1, {3}},      {PB_DT_U16, 1, {3}},
	{PB_DT_U32, 1, {3}},
};

static void test_round_trips(void)
{
	for (size_t i = 0; i < sizeof(trips) / sizeof(trips[0]); i++) {
		struct pb_tensor t = {0}, u = {0};
		char name[64], err[256];
		snprintf(name, sizeof(name), "round trip %zu (%s)", i,
			 pb_dtype_name(trips[i].dtype));
		t.dtype = trips[i].dtype;
		t.rank = trips[i].rank;
		memcpy(t.dims, trips[i].dims, sizeof(trips[i].dims));
		t.nbytes = pb_tensor_numel(&t) * pb_dtype_size(t.dtype);
		t.data = malloc(t.nbytes + 1);
		for (size_t k = 0; k < t.nbytes; k++)
			((unsigned char *)t.data)[k] = (unsigned char)(k * 37 + i);
		struct pb_buf b = {0};
		check_detail(pb_npy_encode(&t, &b, err, sizeof(err)) == 0, name, err);
		size_t hdr = b.len - t.nbytes;
		check_detail(hdr % 64 == 0, name, "data not 64-byte aligned");
		check_detail(b.data[hdr - 1] == '\n', name, "header not newline ended");
		int rc = pb_npy_decode(b.data, b.len, &u, err, sizeof(err));
		check_detail(rc == 0, name, err);
		if (rc == 0) {
			int same = u.dtype == t.dtype && u.rank == t.rank &&
				   u.nbytes == t.nbytes &&
				   !memcmp(u.dims, t.dims, sizeof(int64_t) * t.rank) &&
				   !memcmp(u.data, t.data, t.nbytes);
			check_detail(same, name, "decoded tensor differs");
		}
		pb_buf_free(&b);
		pb_tensor_clear(&t);
		pb_tensor_clear(&u);
	}
}

/* The header NumPy writes for "descr", "fortran_order" and "shape". */
#define HDR(descr, fortran, shape)                                        \
	"{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape \
	", }\n"

/* Header variants that must decode, written as (version, header text,
 * bytes of data), to "dtype" of rank "rank" with first dimension "dim0". */
static const struct {
	const char *what;
	int major;
	const char *header;
	size_t ndata;
	enum pb_dtype dtype;
	int rank;
	int64_t dim0;
} goods[] = {
	{"numpy 1.0", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }      \n", 24, PB_DT_F32, 2, 2},
	{"version 2.0", 2, HDR("<f8", "False", "(3,)"), 24, PB_DT_F64, 1, 3},
	{"version 3.0", 3, HDR("<i8", "False", "(1,)"), 8, PB_DT_I64, 1, 1},
	{"double quotes, other key order, no trailing comma", 1, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<i4\"}\n", 16, PB_DT_I32, 1, 4},
	{"scalar", 1, HDR("<f4", "False", "()"), 4, PB_DT_F32, 0, 0},
	{"empty array", 1, HDR("<f4", "False", "(0, 5)"), 0, PB_DT_F32, 2, 0},
	{"native order and bool", 1, HDR("|b1", "False", "(3,)"), 3, PB_DT_BOOL, 1, 3},
	{"native '=' order", 1, HDR("=f2", "False", "(2,)"), 4, PB_DT_F16, 1, 2},
	{"big-endian single byte is fine", 1, HDR(">u1", "False", "(2,)"), 2, PB_DT_U8, 1, 2},
	{"python 2 long dims", 1, HDR("<f4", "False", "(2L, 1L)"), 8, PB_DT_F32, 2, 2},
	{"extra trailing data is ignored", 1, HDR("<f4", "False", "(1,)"), 12, PB_DT_F32, 1, 1},
};

/* Malformed files, written likewise; "want" is a substring of the
 * error. */
static const struct {
	const char *what;
	int major;
	const char *header;
	size_t ndata;
	const char *want;
} bads[] = {
	{"truncated data", 1, HDR("<f4", "False", "(2, 3)"), 20, "truncated data"},
	{"bad version", 4, HDR("<f4", "False", "(1,)"), 4, "unsupported .npy format version 4.0"},
	{"fortran order", 1, HDR("<f4", "True", "(2, 2)"), 16, "fortran_order arrays are not supported"},
	{"big-endian", 1, HDR(">f4", "False", "(2,)"), 8, "big-endian data ('>f4') is not supported"},
	{"object dtype", 1, HDR("|O", "False", "(2,)"), 16, "object arrays are not supported"},
	{"structured dtype", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8, "structured dtypes are not supported"},
	{"complex dtype", 1, HDR("<c8", "False", "(2,)"), 16, "unsupported dtype '<c8'"},
	{"missing key", 1, "{'descr': '<f4', 'shape': (2,), }\n", 8, "missing key 'fortran_order'"},
	{"unknown key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8, "unexpected key 'x'"},
	{"not a dict", 1, "['descr', '<f4']\n", 8, "expected '{'"},
	{"unterminated string", 1, "{'descr': '<f4}\n", 8, "unterminated string"},
	{"missing colon", 1, "{'descr: '<f4'}\n", 8, "expected ':' after a key"},
	{"unclosed dict", 1, "{'descr': '<f4', 'fortran_order': False\n", 8, "expected '}'"},
	{"negative dimension", 1, HDR("<f4", "False", "(-1,)"), 8, "non-negative integers"},
	{"one-tuple without comma", 1, HDR("<f4", "False", "(2)"), 8, "trailing comma"},
	{"fortran_order not a bool", 1, HDR("<f4", "0", "(2,)"), 8, "must be True or False"},
	{"text after the dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x\n", 8, "text after the dict"},
};

/* Decode the .npy image of version "major" with "header" and "ndata"
 * bytes of data into "t" ("err" of "len" bytes for the error). */
static int decode(int major, const char *header, size_t ndata,
		  struct pb_tensor *t, char *err, size_t len)
{
	unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 0, 0};
	struct pb_buf b = {0};
	size_t hl = strlen(header);
	size_t n = major == 1 ? 10 : 12;
	pre[6] = (unsigned char)major;
	for (size_t k = 8; k < n; k++)
		pre[k] = (unsigned char)(hl >> (8 * (k - 8)));
	pb_buf_append(&b, pre, n);
	pb_buf_append(&b, header, hl);
	for (size_t k = 0; k < ndata; k++)
		pb_buf_append(&b, "\x01", 1);
	int rc = pb_npy_decode(b.data, b.len, t, err, len);
	pb_buf_free(&b);
	return rc;
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		struct pb_tensor t = {0};
		char err[256] = "";
		int rc = decode(goods[i].major, goods[i].header, goods[i].ndata,
				&t, err, sizeof(err));
		check_detail(rc == 0, goods[i].what, err);
		check_detail(rc != 0 || (t.dtype == goods[i].dtype &&
					 t.rank == goods[i].rank &&
					 (!t.rank || t.dims[0] == goods[i].dim0)),
			     goods[i].what, "wrong dtype or shape");
		pb_tensor_clear(&t);
	}
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct pb_tensor t = {0};
		char err[256] = "";
		int rc = decode(bads[i].major, bads[i].header, bads[i].ndata,
				&t, err, sizeof(err));
		check_detail(rc < 0 && strstr(err, bads[i].want), bads[i].what,
			     rc < 0 ? err : "accepted");
		check_detail(!t.data, bads[i].what, "data left after an error");
		pb_tensor_clear(&t);
	}
}

/* Truncations of a valid file at every length below its header must all
 * fail without reading past the end; a wrong magic must be named. */
static void test_truncations(void)
{
	struct pb_tensor t = {0};
	struct pb_buf b = {0};
	char err[256];
	int64_t dims[2] = {2, 2};
	float v[4] = {1, 2, 3, 4};
	t.dtype = PB_DT_F32;
	t.rank = 2;
	memcpy(t.dims, dims, sizeof(dims));
	t.data = v;
	t.nbytes = sizeof(v);
	pb_npy_encode(&t, &b, err, sizeof(err));
	int all = 1;
	for (size_t len = 0; len < b.len; len++) {
		char *copy = malloc(len ? len : 1);
		memcpy(copy, b.data, len);
		struct pb_tensor u = {0};
		if (pb_npy_decode(copy, len, &u, err, sizeof(err)) == 0)
			all = 0;
		pb_tensor_clear(&u);
		free(copy);
	}
	check_detail(all, "every truncation fails", NULL);
	b.data[1] = 'X';
	struct pb_tensor u = {0};
	int rc = pb_npy_decode(b.data, b.len, &u, err, sizeof(err));
	check_detail(rc < 0 && strstr(err, "bad magic"), "bad magic", err);
	check_detail(pb_npy_decode("", 0, &u, err, sizeof(err)) < 0 &&
	      strstr(err, "bad magic"), "empty file", err);
	pb_buf_free(&b);
}

/* A dtype without a NumPy equivalent cannot be encoded. */
static void test_encode_errors(void)
{
	struct pb_tensor t = {0};
	struct pb_buf b = {0};
	char err[256] = "";
	t.dtype = PB_DT_BF16;
	t.rank = 1;
	t.dims[0] = 0;
	check_detail(pb_npy_encode(&t, &b, err, sizeof(err)) < 0 &&
	      strstr(err, "bf16 has no .npy equivalent"), "bf16 encode", err);
	pb_buf_free(&b);
}

int main(void)
{
	test_round_trips();
	test_cases();
	test_truncations();
	test_encode_errors();
	return check_summary("test_npy");
}

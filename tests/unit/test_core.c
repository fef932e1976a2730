/* Table-driven tests of lib/core: growable buffers, whole-file reading and
 * the atomic writer (nothing is left behind when a write fails), element
 * types and the f16/bf16 conversions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pb.h"
#include "core/tensor.h"

#include "check.h"

/* pb_buf_printf grows past its stack buffer and stays NUL-terminated. */
static void test_buf(void)
{
	static const size_t lens[] = {0, 1, 255, 256, 4095, 4096, 100000};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct pb_buf b = {0};
		char *s = malloc(lens[i] + 1);
		memset(s, 'x', lens[i]);
		s[lens[i]] = '\0';
		pb_buf_puts(&b, "<");
		pb_buf_printf(&b, "%s>%d", s, 42);
		char what[64];
		snprintf(what, sizeof(what), "buf printf of %zu bytes", lens[i]);
		check(b.len == lens[i] + 4 && b.data[b.len] == '\0' &&
			      !strncmp(b.data + b.len - 3, ">42", 3),
		      what);
		free(s);
		pb_buf_free(&b);
	}
}

/* Write then read back; a write into a missing directory fails and leaves
 * no file; an existing file is replaced whole. */
static void test_files(void)
{
	char dir[] = "/tmp/pb-test-XXXXXX";
	umask(022);
	if (!mkdtemp(dir)) {
		check(0, "mkdtemp");
		return;
	}
	char path[256], bad[256];
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	snprintf(bad, sizeof(bad), "%s/missing/out.txt", dir);

	check(pb_write_file(path, "hello", 5) == 0, "write file");
	size_t n = 0;
	char *d = pb_read_file(path, &n);
	check(d && n == 5 && !strcmp(d, "hello"), "read back");
	free(d);
	check(pb_write_file(path, "hi", 2) == 0, "overwrite");
	d = pb_read_file(path, &n);
	check(d && n == 2 && !strcmp(d, "hi"), "overwrite replaces whole");
	free(d);
	struct stat st;
	check(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
	      "written file gets 0666 less the umask, not mkstemp's 0600");

	check(pb_write_file("/dev/null", "x", 1) == 0 &&
		      stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
	      "-o /dev/null writes the device in place, never renames over it");
	check(pb_write_file(bad, "x", 1) < 0, "write into a missing directory fails");
	check(access(bad, F_OK) != 0, "no partial file on failure");
	errno = 0;
	check(pb_read_file(bad, &n) == NULL && errno == ENOENT,
	      "reading a missing file fails with ENOENT");
	unlink(path);
	rmdir(dir);
}

/* Element sizes and names follow ONNX's numbering. */
static void test_dtypes(void)
{
	static const struct {
		enum pb_dtype t;
		size_t size;
		const char *name;
	} cases[] = {
		{PB_DT_F32, 4, "f32"}, {PB_DT_F16, 2, "f16"},
		{PB_DT_BF16, 2, "bf16"}, {PB_DT_I64, 8, "i64"},
		{PB_DT_BOOL, 1, "bool"}, {PB_DT_STRING, 0, "string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "dtype %d", cases[i].t);
		check(pb_dtype_size(cases[i].t) == cases[i].size &&
			      !strcmp(pb_dtype_name(cases[i].t), cases[i].name),
		      what);
	}
	struct pb_tensor t = {.rank = 3, .dims = {2, 3, 4}};
	check(pb_tensor_numel(&t) == 24, "numel");
	t.rank = 0;
	check(pb_tensor_numel(&t) == 1, "numel of a scalar");
}

/* float <-> f16 and bf16 bits: exact values, ties to even, subnormals,
 * overflow to infinity, NaN; pb_tensor_convert between float types. */
static void test_half(void)
{
	static const struct {
		float x;
		uint16_t f16, bf16;
	} cases[] = {
		{0.0f, 0x0000, 0x0000},
		{-0.0f, 0x8000, 0x8000},
		{1.0f, 0x3C00, 0x3F80},
		{-2.5f, 0xC100, 0xC020},
		{65504.0f, 0x7BFF, 0x4780},
		{65520.0f, 0x7C00, 0x4780},          /* f16: rounds to inf */
		{1.0f + 0x1p-11f, 0x3C00, 0x3F80},   /* f16 tie: to even */
		{1.0f + 0x3p-11f, 0x3C02, 0x3F80},   /* f16 tie: up to even */
		{1.0f + 0x1p-8f, 0x3C04, 0x3F80},    /* bf16 tie: to even */
		{1.0f + 0x3p-8f, 0x3C0C, 0x3F82},    /* bf16 tie: up to even */
		{0x1p-24f, 0x0001, 0x3380},          /* smallest f16 subnormal */
		{0x1p-25f, 0x0000, 0x3300},          /* f16 tie to 0 */
		{3e38f, 0x7C00, 0x7F62},
		{INFINITY, 0x7C00, 0x7F80},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "half bits of %g", cases[i].x);
		check(pb_f16_from_float(cases[i].x) == cases[i].f16 &&
			      pb_bf16_from_float(cases[i].x) == cases[i].bf16,
		      what);
	}
	check(isnan(pb_f16_to_float(pb_f16_from_float(NAN))) &&
		      isnan(pb_bf16_to_float(pb_bf16_from_float(NAN))),
	      "NaN stays NaN");
	check(pb_f16_to_float(0x0001) == 0x1p-24f &&
		      pb_f16_to_float(0xC100) == -2.5f &&
		      pb_bf16_to_float(0x3F82) == 1.015625f,
	      "half bits to float");
	float v[3] = {1.0f, 0.1f, -3.0f};
	struct pb_tensor t = {.dtype = PB_DT_F32, .rank = 1, .dims = {3},
			      .nbytes = sizeof(v)};
	t.data = malloc(sizeof(v));
	memcpy(t.data, v, sizeof(v));
	check(!pb_tensor_convert(&t, PB_DT_BF16) && t.dtype == PB_DT_BF16 &&
		      t.nbytes == 6 && ((uint16_t *)t.data)[1] == 0x3DCD,
	      "convert f32 to bf16");
	check(!pb_tensor_convert(&t, PB_DT_F16) &&
		      ((uint16_t *)t.data)[2] == 0xC200,
	      "convert bf16 to f16");
	check(pb_tensor_convert(&t, PB_DT_I64) && t.dtype == PB_DT_F16,
	      "no conversion to integers");
	pb_tensor_clear(&t);
}

/* pb_tensor_transpose (pb.perm's binding): a [2][3][4] tensor of its
 * element numbers transposed by each permutation, element by element
 * against NumPy's rule (result[i] = t[j] with j[perm[d]] = i[d]). */
static void test_transpose(void)
{
	static const int perms[][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
				       {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	const int64_t dims[3] = {2, 3, 4}, st[3] = {12, 4, 1};
	for (size_t k = 0; k < sizeof(perms) / sizeof(perms[0]); k++) {
		const int *p = perms[k];
		struct pb_tensor t = {.dtype = PB_DT_I16, .rank = 3,
				      .dims = {2, 3, 4}, .nbytes = 48};
		int16_t *v = malloc(48);
		for (int i = 0; i < 24; i++)
			v[i] = (int16_t)i;
		t.data = v;
		int ok = !pb_tensor_transpose(&t, p) && t.nbytes == 48;
		for (int d = 0; ok && d < 3; d++)
			ok = t.dims[d] == dims[p[d]];
		int64_t i[3];
		for (i[0] = 0; ok && i[0] < t.dims[0]; i[0]++)
			for (i[1] = 0; i[1] < t.dims[1]; i[1]++)
				for (i[2] = 0; i[2] < t.dims[2]; i[2]++) {
					int64_t src = 0, dst = (i[0] * t.dims[1] +
							       i[1]) * t.dims[2] +
							      i[2];
					for (int d = 0; d < 3; d++)
						src += i[d] * st[p[d]];
					ok &= ((int16_t *)t.data)[dst] == src;
				}
		char what[64];
		snprintf(what, sizeof(what), "transpose by [%d, %d, %d]", p[0],
			 p[1], p[2]);
		check(ok, what);
		pb_tensor_clear(&t);
	}
}

int main(void)
{
	test_buf();
	test_transpose();
	test_files();
	test_dtypes();
	test_half();
	return check_summary("test_core");
}

/* Table-driven tests of lib/core: growable buffers, whole-file reading and
 * the atomic writer (nothing is left behind when a write fails). */
#include <errno.h>
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
		{PB_DT_BOOL, 1, "bool"}, {PB_DT_STRING, 0, "?"},
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

int main(void)
{
	test_buf();
	test_files();
	test_dtypes();
	return check_summary("test_core");
}

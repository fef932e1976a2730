/* Writing JSON reports (pb-fuse and pb-tile --report, pb-prof --json). */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/pb.h"

int pb_write_json(const struct json_t *root, const char *path, size_t flags)
{
	char *text = json_dumps(root, flags);
	if (!text)
		return -1;
	struct pb_buf b = {0};
	pb_buf_puts(&b, text);
	pb_buf_puts(&b, "\n");
	free(text);
	int rc = pb_write_file(path, b.data, b.len);
	pb_buf_free(&b);
	return rc;
}

/* The one diagnostics path: "<where>: error: <msg>" on stderr, counted in
 * the context (pb_error_at, with an MLIR location, is ctx_compiler.c). */
#include <stdarg.h>

#include "core/pb.h"

void pb_verror(struct pb_ctx *ctx, const char *where, const char *fmt,
	       va_list ap)
{
	ctx->nerrors++;
	fprintf(stderr, "%s: error: ", where ? where : ctx->input_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int pb_error_in(struct pb_ctx *ctx, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pb_verror(ctx, where, fmt, ap);
	va_end(ap);
	return PB_ERR;
}

void pb_error(struct pb_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pb_verror(ctx, NULL, fmt, ap);
	va_end(ap);
}

void pb_warn(struct pb_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: warning: ", ctx->input_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The compiler half of the pb context: the MlirContext with every dialect,
 * pass and translation registered and the MLIR diagnostic handler routed to
 * the one diagnostics path, the isl_ctx, and pb_error_at (MLIR locations).
 * Left out of builds with -DPB_NO_MLIR (see ctx.c). */
#include <stdlib.h>
#include <string.h>

#include <isl/ctx.h>
#include <isl/options.h>

#include "mlir-c/Diagnostics.h"
#include "mlir-c/RegisterEverything.h"

#include "core/pb.h"

/* Print "loc" as "file:line:col" into "out" (size "n"), looking through
 * name, call-site and fused locations for the first file position.
 * Falls back to "fallback". */
static void format_loc(MlirLocation loc, const char *fallback, int line_off,
		       char *out, size_t n)
{
	for (int depth = 0; depth < 16 && !mlirLocationIsNull(loc); depth++) {
		if (mlirLocationIsAFileLineColRange(loc)) {
			MlirIdentifier f =
				mlirLocationFileLineColRangeGetFilename(loc);
			MlirStringRef s = mlirIdentifierStr(f);
			int line = mlirLocationFileLineColRangeGetStartLine(loc);
			int col = mlirLocationFileLineColRangeGetStartColumn(loc);
			snprintf(out, n, "%.*s:%d:%d", (int)s.length, s.data,
				 line + line_off, col);
			return;
		}
		if (mlirLocationIsAName(loc)) {
			MlirLocation child = mlirLocationNameGetChildLoc(loc);
			if (mlirLocationIsNull(child) ||
			    mlirLocationEqual(child, mlirLocationUnknownGet(mlirLocationGetContext(child)))) {
				MlirStringRef s = mlirIdentifierStr(
					mlirLocationNameGetName(loc));
				snprintf(out, n, "%s: node '%.*s'", fallback,
					 (int)s.length, s.data);
				return;
			}
			loc = child;
		} else if (mlirLocationIsACallSite(loc)) {
			loc = mlirLocationCallSiteGetCaller(loc);
		} else if (mlirLocationIsAFused(loc) &&
			   mlirLocationFusedGetNumLocations(loc) > 0) {
			MlirLocation locs[1];
			intptr_t k = mlirLocationFusedGetNumLocations(loc);
			MlirLocation *all = malloc(sizeof(*all) * k);
			mlirLocationFusedGetLocations(loc, all);
			locs[0] = all[0];
			free(all);
			loc = locs[0];
		} else {
			break;
		}
	}
	snprintf(out, n, "%s", fallback);
}

static const char *severity_word(MlirDiagnosticSeverity s)
{
	switch (s) {
	case MlirDiagnosticError:
		return "error";
	case MlirDiagnosticWarning:
		return "warning";
	case MlirDiagnosticNote:
		return "note";
	default:
		return "remark";
	}
}

static void print_diag(struct pb_ctx *ctx, MlirDiagnostic d)
{
	char where[1024];
	struct pb_buf msg = {0};
	format_loc(mlirDiagnosticGetLocation(d), ctx->input_name, 0, where,
		   sizeof(where));
	mlirDiagnosticPrint(d, pb_buf_mlir_callback, &msg);
	pb_buf_append(&msg, "", 0);
	/* one line per diagnostic: newlines inside become spaces */
	for (char *p = msg.data; *p; p++)
		if (*p == '\n')
			*p = ' ';
	fprintf(stderr, "%s: %s: %s\n", where,
		severity_word(mlirDiagnosticGetSeverity(d)), msg.data);
	pb_buf_free(&msg);
}

static MlirLogicalResult diag_handler(MlirDiagnostic d, void *user)
{
	struct pb_ctx *ctx = user;
	if (mlirDiagnosticGetSeverity(d) == MlirDiagnosticError)
		ctx->nerrors++;
	print_diag(ctx, d);
	intptr_t n = mlirDiagnosticGetNumNotes(d);
	for (intptr_t i = 0; i < n; i++)
		print_diag(ctx, mlirDiagnosticGetNote(d, i));
	return mlirLogicalResultSuccess();
}

void pb_ctx_compiler_init(struct pb_ctx *ctx)
{
	ctx->mlir = mlirContextCreateWithThreading(false);
	MlirDialectRegistry reg = mlirDialectRegistryCreate();
	mlirRegisterAllDialects(reg);
	mlirContextAppendDialectRegistry(ctx->mlir, reg);
	mlirDialectRegistryDestroy(reg);
	mlirRegisterAllLLVMTranslations(ctx->mlir);
	mlirRegisterAllPasses();
	mlirContextAttachDiagnosticHandler(ctx->mlir, diag_handler, ctx, NULL);
	ctx->isl = isl_ctx_alloc();
	isl_options_set_on_error(ctx->isl, ISL_ON_ERROR_CONTINUE);
}

void pb_ctx_compiler_free(struct pb_ctx *ctx)
{
	if (ctx->isl)
		isl_ctx_free(ctx->isl);
	if (!mlirContextIsNull(ctx->mlir))
		mlirContextDestroy(ctx->mlir);
	ctx->isl = NULL;
	ctx->mlir = (MlirContext){NULL};
}

void pb_error_at(struct pb_ctx *ctx, MlirLocation loc, const char *fmt, ...)
{
	char where[1024];
	format_loc(loc, ctx->input_name, 0, where, sizeof(where));
	va_list ap;
	va_start(ap, fmt);
	pb_verror(ctx, where, fmt, ap);
	va_end(ap);
}

void pb_remark_at(struct pb_ctx *ctx, MlirLocation loc, const char *fmt, ...)
{
	char where[1024];
	struct pb_buf msg = {0};
	format_loc(loc, ctx->input_name, 0, where, sizeof(where));
	va_list ap;
	va_start(ap, fmt);
	pb_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: remark: %s\n", where, msg.data ? msg.data : "");
	pb_buf_free(&msg);
}

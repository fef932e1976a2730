/* A bound on the nesting of MLIR text before it reaches MLIR's parser,
 * which (like the verifier, the printer and the walks after it) recurses
 * once per level: ten thousand nested brackets overflow the stack. */
#include <stdio.h>

#include "ir/ir.h"

/* The deepest nesting of brackets accepted; 4000 still parses. */
#define MAX_DEPTH 1000

/* Skip the string literal that starts at "p" (its opening quote), before
 * "end"; returns the position after its closing quote (or "end"). */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end && *p != '"'; p++)
		if (*p == '\\' && p + 1 < end)
			p++;
	return p < end ? p + 1 : end;
}

/* Is the character at "p" (in "in", before "end") a bracket that opens
 * (+1) or closes (-1) a nesting level, or neither (0)? Angle brackets
 * count unless they belong to "->", ">=" or "<=". */
static int bracket(const char *in, const char *p, const char *end)
{
	int eq = p + 1 < end && p[1] == '=';
	switch (*p) {
	case '(': case '[': case '{':
		return 1;
	case ')': case ']': case '}':
		return -1;
	case '<':
		return eq ? 0 : 1;
	case '>':
		return eq || (p > in && p[-1] == '-') ? 0 : -1;
	default:
		return 0;
	}
}

/* Check that the brackets of the MLIR text "in" ("(", "[", "{", "<",
 * outside strings and comments) nest at most MAX_DEPTH deep; else report
 * "nested too deeply" at the first bracket past the limit, as
 * "file:line:col", and return PB_ERR. */
int pb_ir_check_nesting(struct pb_ctx *ctx, const struct pb_input *in)
{
	const char *p = in->data, *end = in->data + in->len, *bol = p;
	int depth = 0, line = 1;
	while (p < end) {
		if (*p == '"') {
			p = skip_string(p, end);
			continue;
		}
		if (*p == '/' && p + 1 < end && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (*p == '\n') {
			line++;
			bol = p + 1;
		}
		int b = bracket(in->data, p, end);
		depth += b;
		if (depth < 0)
			depth = 0;
		if (depth > MAX_DEPTH) {
			char where[1024];
			snprintf(where, sizeof(where), "%s:%d:%d", in->name,
				 line, (int)(p - bol) + 1);
			return pb_error_in(ctx, where, "'%c' nested too deeply "
					   "(more than %d levels)", *p,
					   MAX_DEPTH);
		}
		p++;
	}
	return PB_OK;
}

/* The first operation (pre-order) in the regions of "op", which lies in
 * "depth" regions, that lies in more than "max" regions, or a null
 * operation. Recurses at most "max" levels deep. */
static MlirOperation too_deep(MlirOperation op, int depth, int max)
{
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++) {
		MlirRegion reg = mlirOperationGetRegion(op, r);
		for (MlirBlock b = mlirRegionGetFirstBlock(reg);
		     !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
			for (MlirOperation o = mlirBlockGetFirstOperation(b);
			     !mlirOperationIsNull(o);
			     o = mlirOperationGetNextInBlock(o)) {
				if (depth + 1 > max)
					return o;
				MlirOperation d = too_deep(o, depth + 1, max);
				if (!mlirOperationIsNull(d))
					return d;
			}
	}
	return (MlirOperation){NULL};
}

MlirOperation pb_ir_find_too_deep(MlirOperation op, int max)
{
	return too_deep(op, 0, max);
}

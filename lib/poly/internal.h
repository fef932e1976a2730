/* lib/poly internals shared by its files: memref roots and views
 * (view.c), access relations (access.c). */
#ifndef PB_POLY_INTERNAL_H
#define PB_POLY_INTERNAL_H

#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/val.h>

#include "poly/poly.h"

/* Does "v" have a memref type (ranked or not)? */
int pb_poly_is_memref(MlirValue v);

/* Rewrite the subscripts "idx" (affine functions on "dom") of an access
 * of memref value "v" into subscripts of its root, through every view in
 * between. Returns the new list (of the root's rank) or NULL when some
 * view cannot be composed exactly; "idx" is consumed either way. */
__isl_give isl_aff_list *pb_poly_view_compose(MlirValue v,
					      __isl_keep isl_space *dom,
					      __isl_take isl_aff_list *idx);

/* The exact access relation S<id>[...] -> B<buf>[...] of the load or
 * store "op" of statement "st" through memref operand "mem" to buffer
 * "b", or NULL when its subscripts are not affine in the loop counters of
 * "st" (or an isl error occurred). */
__isl_give isl_map *pb_poly_access_exact(const struct pb_poly_stmt *st,
					 const struct pb_poly_buf *b,
					 MlirOperation op, MlirValue mem);

/* Build the schedule tree and schedule map of "s" from its statements
 * (sched.c); fields stay NULL on an isl error. */
void pb_poly_sched_build(struct pb_poly_scop *s);
/* Append the tuple "S<id>[i0, i1, ..]" of statement "st" to "out"
 * (sched.c). */
void pb_poly_stmt_tuple(struct pb_buf *out, const struct pb_poly_stmt *st);
/* Compute dep_flow, dep_mem and no_source of "s" from its accesses and
 * schedule (sched.c); with "old" (not NULL), reuse the dependences
 * through each buffer of "old" that are still valid (see
 * pb_poly_extract_update). */
void pb_poly_deps_build(struct pb_poly_scop *s, const struct pb_poly_scop *old);
/* Free the dependence index of statement "st" (sched.c). */
void pb_poly_deps_free(struct pb_poly_stmt *st);

/* A cache of parsed isl objects by text (cache.c), kept by a scop and
 * handed on by pb_poly_extract_update. */
struct pb_poly_cache *pb_poly_cache_new(isl_ctx *ctx);
void pb_poly_cache_free(struct pb_poly_cache *c);
/* The set that "text" parses to, with its tuple named "name" (unless
 * NULL): the same as parsing "text" with that name, parsed once per
 * text. NULL when isl cannot parse it. */
__isl_give isl_set *pb_poly_cache_set(struct pb_poly_cache *c,
				      const char *text, const char *name);
/* The same for a map, its input and output tuples named "in" and "out"
 * (each unless NULL). */
__isl_give isl_map *pb_poly_cache_map(struct pb_poly_cache *c,
				      const char *text, const char *in,
				      const char *out);

#endif

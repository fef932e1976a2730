/* lib/target internals: the built-in descriptions, the JSON files of
 * targets/ embedded as C strings by the Makefile into
 * $(B)/gen/target/builtin.c. */
#ifndef PB_TARGET_INTERNAL_H
#define PB_TARGET_INTERNAL_H

#include "target/target.h"

struct pb_target_builtin {
	const char *name; /* the file's base name: "sm_90", "h200" */
	const char *file; /* "targets/sm_90.json", for diagnostics */
	const char *json; /* the file's text */
};

/* The built-in descriptions in file name order, ended by a NULL name. */
extern const struct pb_target_builtin pb_target_builtins[];

#endif

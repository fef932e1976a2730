/* isl_config.h for pb's own build of isl (scripts/isl/isl.mk): what isl's
 * configure script finds with gcc or clang on Debian 12, built as
 * configure --with-int=imath-32 builds it (IMath with the small-integer
 * optimisation: an isl_int holds a 32-bit value inline and switches to an
 * IMath big integer only when it grows past it). */
#define GCC_WARN_UNUSED_RESULT __attribute__((__warn_unused_result__))
#define HAVE___ATTRIBUTE__ 1
#define HAVE_DECL_FFS 1
#define HAVE_DECL___BUILTIN_FFS 1
#define HAVE_DECL__BITSCANFORWARD 0
#define HAVE_DECL_STRCASECMP 1
#define HAVE_DECL_STRNCASECMP 1
#define HAVE_DECL__STRICMP 0
#define HAVE_DECL__STRNICMP 0
#define HAVE_DECL__SNPRINTF 0
#define USE_IMATH_FOR_MP 1
#define USE_SMALL_INT_OPT 1

#include <isl_config_post.h>

/* The scaffolding every unit test program shares: count the checks, say
 * which failed, print the summary line and give the exit status. */
#ifndef PB_TESTS_UNIT_CHECK_H
#define PB_TESTS_UNIT_CHECK_H

#include <stdio.h>

static int passed, failed;

/* Count one check; print "FAIL: what[: detail]" when "ok" is false. */
static inline void check_detail(int ok, const char *what, const char *detail)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

static inline void check(int ok, const char *what)
{
	check_detail(ok, what, NULL);
}

/* Print "name: N passed, M failed" and return the exit status. */
static inline int check_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, passed, failed);
	return failed ? 1 : 0;
}

#endif

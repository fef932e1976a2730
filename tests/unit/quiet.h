/* quiet(): silence stderr in a unit test while it runs cases that are
 * expected to print errors. */
#ifndef PB_TESTS_UNIT_QUIET_H
#define PB_TESTS_UNIT_QUIET_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Silence stderr while "on" (the expected error lines of reject cases),
 * restore it after. */
static inline void quiet(int on)
{
	static int saved = -1;
	fflush(stderr);
	if (on && saved < 0) {
		saved = dup(2);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		close(null);
	} else if (!on && saved >= 0) {
		dup2(saved, 2);
		close(saved);
		saved = -1;
	}
}

#endif

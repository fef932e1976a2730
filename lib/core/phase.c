/* Phase timing of a tool with $PB_TIMING set (pb.h). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/pb.h"

/* Seconds of clock "c". */
static double seconds(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

void pb_phase(const char *tool, const char *name)
{
	static double wall, cpu;
	if (!getenv("PB_TIMING"))
		return;
	double w = seconds(CLOCK_MONOTONIC), c = seconds(CLOCK_PROCESS_CPUTIME_ID);
	if (name && wall > 0)
		fprintf(stderr, "%s: %-24s %6.3f s wall %6.3f s cpu\n", tool,
			name, w - wall, c - cpu);
	wall = w;
	cpu = c;
}

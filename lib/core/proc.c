/* Running a program: pb-codegen's ptxas, the named pipelines' scripts. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/pb.h"

extern char **environ;

/* A temporary file holding "in", open for reading at its start and
 * already unlinked; -1 with errno set on failure. */
static int temp_input(const struct pb_buf *in)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/pb-input-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	for (size_t done = 0; done < in->len;) {
		ssize_t w = write(fd, in->data + done, in->len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In the child: standard input from "infd" (when not -1), output to
 * "outfd" (and standard error too with "merge"), then exec. */
static void child(char *const argv[], char *const env[], int infd, int outfd,
		  int merge)
{
	if ((infd >= 0 && dup2(infd, 0) < 0) || dup2(outfd, 1) < 0 ||
	    (merge && dup2(outfd, 2) < 0))
		_exit(127);
	execve(argv[0], argv, env ? env : environ);
	_exit(127);
}

int pb_run_program(char *const argv[], char *const env[],
		   const struct pb_buf *in, int merge, struct pb_buf *out)
{
	int fds[2], status, infd = in ? temp_input(in) : -1;
	if (in && infd < 0)
		return -1;
	if (pipe(fds) < 0) {
		if (infd >= 0)
			close(infd);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(argv, env, infd, fds[1], merge);
	}
	int err = errno;
	close(fds[1]);
	if (infd >= 0)
		close(infd);
	if (pid < 0) {
		close(fds[0]);
		errno = err;
		return -1;
	}
	char buf[65536];
	for (;;) {
		ssize_t r = read(fds[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		pb_buf_append(out, buf, r);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

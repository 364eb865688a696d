/* See child.h. */
#include "worker/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

void child_exec(char **argv, int in, int control_w, const int out[2], pid_t worker)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	char fd[16];

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != worker) /* gone before prctl */
		_exit(128 + SIGKILL);
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGCHLD, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (in >= 0)
		dup2(in, STDIN_FILENO);
	dup2(out[0], STDOUT_FILENO);
	dup2(out[1], STDERR_FILENO);
	/* fd 3: a shell's `>&$EBB_CONTROL_FD` takes one digit only (dash). */
	if (control_w != 3 && dup2(control_w, 3) == 3) {
		close(control_w);
		control_w = 3;
	}
	fcntl(control_w, F_SETFD, 0);
	snprintf(fd, sizeof fd, "%d", control_w);
	setenv("EBB_CONTROL_FD", fd, 1);
	execvp(argv[0], argv);
	fprintf(stderr, "ebb worker: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int child_send(int fd, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

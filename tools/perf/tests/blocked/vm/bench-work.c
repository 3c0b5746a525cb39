// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads and timing for the overhead benchmark (bench.sh).
 *
 *   bench-work run FILE CMD [ARGS...]
 *	run CMD, wait for it and append "wall S cpu S" to FILE: its wall
 *	time and the CPU time (user + system) of it and every descendant it
 *	waited for.
 *   bench-work cpu N	     N rounds of integer arithmetic (CPU-bound)
 *   bench-work io N DEVICE   N random 4 KiB O_DIRECT reads of DEVICE
 *   bench-work count PERF.DATA
 *	print the number of PERF_RECORD_SAMPLE records in PERF.DATA (cheaper
 *	than perf report --stats in a TCG guest)
 *   bench-work calib cpu|io MS [DEVICE]
 *	print how many rounds (cpu) or reads (io) fit in MS ms; bench.sh sizes
 *	each workload with it once, unprofiled, then runs the same amount of
 *	work under every profiler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLK	4096

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static __attribute__((noinline)) void cpu_round(void)
{
	unsigned long x = sink;
	int i;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

static int io_open(const char *dev, off_t *nblk, void **buf)
{
	struct stat st;
	int fd = open(dev, O_RDONLY | O_DIRECT);

	if (fd < 0) {
		fprintf(stderr, "bench-work: open %s with O_DIRECT: %s (give a block device or a file on a disk, not tmpfs)\n",
			dev, strerror(errno));
		exit(2);
	}
	*nblk = lseek(fd, 0, SEEK_END) / BLK;
	if (*nblk < 1 && fstat(fd, &st) == 0)
		*nblk = st.st_size / BLK;
	if (*nblk < 1) {
		fprintf(stderr, "bench-work: %s is smaller than %d bytes\n", dev, BLK);
		exit(2);
	}
	if (posix_memalign(buf, BLK, BLK)) {
		fprintf(stderr, "bench-work: out of memory\n");
		exit(2);
	}
	return fd;
}

static __attribute__((noinline)) void io_read(int fd, void *buf, off_t nblk,
					      unsigned long *seed)
{
	off_t blk;

	*seed = *seed * 6364136223846793005UL + 1;
	blk = (*seed >> 17) % nblk;
	if (pread(fd, buf, BLK, blk * BLK) != BLK) {
		fprintf(stderr, "bench-work: pread: %s\n", strerror(errno));
		exit(2);
	}
}

static int run(const char *file, char **argv)
{
	struct rusage ru;
	double t0 = now(), wall;
	int status;
	pid_t pid = fork();
	FILE *f;

	if (pid < 0) {
		perror("bench-work: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bench-work: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("bench-work: waitpid");
		return 2;
	}
	wall = now() - t0;
	getrusage(RUSAGE_CHILDREN, &ru);
	f = fopen(file, "a");
	if (!f) {
		fprintf(stderr, "bench-work: %s: %s\n", file, strerror(errno));
		return 2;
	}
	fprintf(f, "wall %.6f cpu %.6f\n", wall,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* perf_file_header: magic, size, attr_size, attrs {off, size}, data {off, size} */
static int count(const char *file)
{
	unsigned long long data[2], n = 0;
	struct { unsigned int type; unsigned short misc, size; } h;
	FILE *f = fopen(file, "r");
	long pos, end;

	if (!f || fseek(f, 40, SEEK_SET) || fread(data, sizeof(data), 1, f) != 1) {
		fprintf(stderr, "bench-work: cannot read the header of %s\n", file);
		return 2;
	}
	pos = data[0];
	end = data[0] + data[1];
	while (pos + (long)sizeof(h) <= end) {
		if (fseek(f, pos, SEEK_SET) || fread(&h, sizeof(h), 1, f) != 1 ||
		    h.size < sizeof(h))
			break;
		n += h.type == 9;	/* PERF_RECORD_SAMPLE */
		pos += h.size;
	}
	fclose(f);
	printf("%llu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long seed = 1, n, i;
	off_t nblk;
	void *buf;
	int fd;

	if (argc >= 4 && !strcmp(argv[1], "run"))
		return run(argv[2], argv + 3);
	if (argc == 3 && !strcmp(argv[1], "count"))
		return count(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "cpu")) {
		n = strtoul(argv[2], NULL, 0);
		for (i = 0; i < n; i++)
			cpu_round();
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "io")) {
		n = strtoul(argv[2], NULL, 0);
		fd = io_open(argv[3], &nblk, &buf);
		for (i = 0; i < n; i++)
			io_read(fd, buf, nblk, &seed);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "calib")) {
		double end = now() + atof(argv[3]) / 1000;
		int io = !strcmp(argv[2], "io");

		if (io && argc != 5)
			goto usage;
		fd = io ? io_open(argv[4], &nblk, &buf) : -1;
		for (n = 0; now() < end; n++) {
			if (io)
				io_read(fd, buf, nblk, &seed);
			else
				cpu_round();
		}
		printf("%lu\n", n);
		return 0;
	}
usage:
	fprintf(stderr, "usage: bench-work run FILE CMD... | count PERF.DATA | cpu N | io N DEVICE | calib cpu|io MS [DEVICE]\n");
	return 2;
}

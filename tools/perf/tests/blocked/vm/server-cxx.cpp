// SPDX-License-Identifier: GPL-2.0
/*
 * server.c's threads with the C++ standard library, at -O2: the pool
 * waits on a std::condition_variable, the clients and the holder share a
 * std::mutex (its lock() is inlined into pthread_mutex_lock).
 *
 *   server-cxx [-s MS]
 *
 *   cxx-idle0/1    std::condition_variable::wait               -> condition
 *   cxx-holder     holds the std::mutex while it naps 4 ms     -> sleep
 *   cxx-client0/1  lock and unlock the std::mutex in a loop    -> mutex
 *
 * Prints "thread NAME wall MS cpu MS" per thread, as server.c.
 */
#include <pthread.h>
#include <time.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace srv {

std::mutex work_mtx, big;
std::condition_variable work_cv;
std::atomic<bool> stop{false};

double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void idle_worker()
{
	std::unique_lock<std::mutex> lk(work_mtx);

	work_cv.wait(lk, [] { return stop.load(); });
}

void holder()
{
	while (!stop) {
		std::lock_guard<std::mutex> g(big);

		std::this_thread::sleep_for(std::chrono::milliseconds(4));
	}
}

void client()
{
	while (!stop) {
		std::lock_guard<std::mutex> g(big);
	}
}

struct thr {
	const char *name;
	void (*fn)();
	double wall, cpu;
};

} // namespace srv

int main(int argc, char **argv)
{
	using namespace srv;
	thr thr[] = {
		{ "cxx-idle0", idle_worker, 0, 0 }, { "cxx-idle1", idle_worker, 0, 0 },
		{ "cxx-holder", holder, 0, 0 },
		{ "cxx-client0", client, 0, 0 }, { "cxx-client1", client, 0, 0 },
	};
	std::vector<std::thread> ts;
	long ms = argc == 3 && !strcmp(argv[1], "-s") ? atol(argv[2]) : 2000;

	for (auto &t : thr)
		ts.emplace_back([&t] {
			double w0 = now_ms(CLOCK_MONOTONIC);

			pthread_setname_np(pthread_self(), t.name);
			t.fn();
			t.cpu = now_ms(CLOCK_THREAD_CPUTIME_ID);
			t.wall = now_ms(CLOCK_MONOTONIC) - w0;
		});
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
	{
		std::lock_guard<std::mutex> g(work_mtx);

		stop = true;
	}
	work_cv.notify_all();
	for (auto &t : ts)
		t.join();
	for (auto &t : thr)
		printf("thread %s wall %.1f cpu %.1f\n", t.name, t.wall, t.cpu);
	return 0;
}

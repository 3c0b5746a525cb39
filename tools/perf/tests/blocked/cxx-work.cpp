// SPDX-License-Identifier: GPL-2.0
//
// Workload of the demangling host test (demangle.sh): C++ names with
// namespaces, a class template, a function template and an anonymous
// namespace, plus two functions under Rust symbol names (legacy and v0
// mangling, given by asm labels so that no Rust compiler is needed).
// Each function spins for a fixed wall time, so every one of them gets
// task-clock samples however fast or loaded the machine is.
#include <time.h>

static volatile unsigned long sink;

static long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

static inline void spin(long ms)
{
	struct timespec a;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink = sink + i;
	} while (ms_since(&a) < ms);
}

namespace shop {
namespace cache {

template <typename K, typename V>
class Table {
public:
	__attribute__((noinline)) V lookup(const K &key, long ms);
};

template <typename K, typename V>
V Table<K, V>::lookup(const K &key, long ms)
{
	spin(ms);
	return static_cast<V>(key) + static_cast<V>(sink);
}

template class Table<int, long>;

} // namespace cache

template <int N>
__attribute__((noinline)) void refill(long ms)
{
	spin(ms + N - N);
}

template void refill<3>(long);

} // namespace shop

namespace {
__attribute__((noinline)) void housekeeping(long ms)
{
	spin(ms);
}
} // namespace

// Rust: legacy mangling demo::inner::work, v0 mangling demo::inner::serve
extern "C" __attribute__((noinline, used)) void rust_legacy(long ms)
	__asm__("_ZN4demo5inner4work17h0123456789abcdefE");
extern "C" void rust_legacy(long ms)
{
	spin(ms);
}

extern "C" __attribute__((noinline, used)) void rust_v0(long ms)
	__asm__("_RNvNtCs1234_4demo5inner5serve");
extern "C" void rust_v0(long ms)
{
	spin(ms);
}

int main(void)
{
	shop::cache::Table<int, long> table;
	long v = 0;

	for (int i = 0; i < 5; i++) {
		v += table.lookup(i, 30);
		shop::refill<3>(30);
		housekeeping(30);
		rust_legacy(30);
		rust_v0(30);
	}
	return v == 42;
}

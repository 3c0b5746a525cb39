# Debian packages for real machines (Documentation/install.rst).
#
#   make deb          both packages below
#   make deb-kernel   build/kdeb/linux-image-6.1.N-blocked_*.deb: Debian's own
#                     6.1 config + CONFIG_PERF_BLOCKED_SAMPLES=y, by the kernel's
#                     bindeb-pkg (scripts/build-kernel-deb.sh).  Hours on two
#                     cores; not part of `make test`.
#   make deb-tools    build/deb/bperf_*.deb: bperf and bcoz, installable next to
#                     Debian's linux-perf (scripts/build-deb.sh)
#   make deb-test     deb-tools, then its checks (scripts/test-deb.sh, TAP):
#                     contents, no file shared with linux-perf or any installed
#                     package, and the binaries run from a dpkg -x root
#
# linux-config-6.1 holds Debian's kernel configuration; dwarves (pahole)
# makes BTF; kmod, fakeroot and dpkg-dev are what bindeb-pkg and
# dpkg-shlibdeps run.
DEPS_PACKAGES += dpkg-dev kmod linux-perf
DEB_KERNEL_PACKAGES := linux-config-6.1 dwarves fakeroot
TEST_TARGETS += deb-test

.PHONY: deb deb-kernel deb-tools deb-test

deb: deb-tools deb-kernel

deb-kernel:
	@missing=$$(for p in $(DEPS_PACKAGES) $(DEB_KERNEL_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then echo "deb-kernel: missing packages; run: apt-get install -y $$missing" >&2; exit 1; fi
	scripts/build-kernel-deb.sh

deb-tools: bperf bcoz
	scripts/build-deb.sh

deb-test: deb-tools
	scripts/test-deb.sh

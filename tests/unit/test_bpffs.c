// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* userspace/common/bpffs.c: the pin paths (no root, nothing mounted). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "common/pins.h"
#include "common/bpffs.h"
#include "rxdp/params.h"

static unsigned long long netns_ino(void)
{
	struct stat st;

	assert_int_equal(stat("/proc/self/ns/net", &st), 0);
	return (unsigned long long)st.st_ino;
}

static void test_netns_dir(void **state)
{
	char buf[PATH_MAX], want[PATH_MAX];

	snprintf(want, sizeof(want), RXDP_BPFFS_ROOT "/net%llu", netns_ino());
	assert_int_equal(rxdp_bpffs_netns_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);

	snprintf(want, sizeof(want), RXDP_BPFFS_ROOT "/libxdp/net%llu",
		 netns_ino());
	assert_int_equal(rxdp_bpffs_libxdp_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);

	/* too small a buffer is an error, never a truncated path */
	assert_int_equal(rxdp_bpffs_netns_dir(buf, 10), -ENAMETOOLONG);
}

static void test_if_dir(void **state)
{
	char buf[PATH_MAX], want[PATH_MAX];

	snprintf(want, sizeof(want), RXDP_BPFFS_ROOT "/net%llu/veth0",
		 netns_ino());
	assert_int_equal(rxdp_bpffs_if_dir("veth0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
	/* 15 characters is the longest interface name */
	assert_int_equal(rxdp_bpffs_if_dir("abcdefghijklmno", buf, sizeof(buf)),
			 0);
	assert_int_equal(rxdp_bpffs_if_dir("abcdefghijklmnop", buf,
					   sizeof(buf)),
			 -EINVAL);
	/* names the kernel refuses (dev_valid_name) cannot reach elsewhere */
	assert_int_equal(rxdp_bpffs_if_dir("", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir(".", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir("..", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir("../x", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir("a b", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir("a:1", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rxdp_bpffs_if_dir("veth0", buf, 20), -ENAMETOOLONG);
}

static void test_map_path(void **state)
{
	char buf[PATH_MAX], want[PATH_MAX];

	snprintf(want, sizeof(want), RXDP_BPFFS_ROOT "/net%llu/eth1/qp_ctx",
		 netns_ino());
	assert_int_equal(rxdp_bpffs_map_path("eth1", RXDP_PIN(qp_ctx), buf,
					     sizeof(buf)),
			 0);
	assert_string_equal(buf, want);
	assert_int_equal(rxdp_bpffs_map_path("eth1", "", buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(rxdp_bpffs_map_path("eth1", "a/b", buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(rxdp_bpffs_map_path("eth/1", "stats", buf,
					     sizeof(buf)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_dir),
		cmocka_unit_test(test_if_dir),
		cmocka_unit_test(test_map_path),
	};

	return cmocka_run_group_tests_name("bpffs paths", tests, NULL, NULL);
}

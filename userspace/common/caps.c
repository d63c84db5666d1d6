// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool rxdp_cap_effective(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3)
		return false;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

const char *rxdp_cap_name(int cap)
{
	static char other[16];

	switch (cap) {
	case CAP_CHOWN:
		return "CAP_CHOWN";
	case CAP_DAC_OVERRIDE:
		return "CAP_DAC_OVERRIDE";
	case CAP_SYS_ADMIN:
		return "CAP_SYS_ADMIN";
	case CAP_NET_ADMIN:
		return "CAP_NET_ADMIN";
	case CAP_NET_RAW:
		return "CAP_NET_RAW";
	case CAP_IPC_LOCK:
		return "CAP_IPC_LOCK";
	case CAP_SYS_NICE:
		return "CAP_SYS_NICE";
	case CAP_SYS_PTRACE:
		return "CAP_SYS_PTRACE";
	case CAP_SYS_RESOURCE:
		return "CAP_SYS_RESOURCE";
	case CAP_MKNOD:
		return "CAP_MKNOD";
	case CAP_PERFMON:
		return "CAP_PERFMON";
	case CAP_BPF:
		return "CAP_BPF";
	}
	snprintf(other, sizeof(other), "CAP_%d", cap);
	return other;
}

int rxdp_caps_missing(const int *caps, size_t n, char *buf, size_t len)
{
	size_t off = 0;
	int missing = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (rxdp_cap_effective(caps[i]))
			continue;
		if (off < len)
			off += snprintf(buf + off, len - off, "%s%s",
					missing ? ", " : "",
					rxdp_cap_name(caps[i]));
		missing++;
	}
	return missing;
}

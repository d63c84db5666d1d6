// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exported calls of build/lib's libibverbs.so.1 that no program of
 * rxdp's tests makes on a device:
 *
 * - the kernel ABI copies (ibv_copy_*_from_kern, ibv_copy_path_rec_*,
 *   which rdma-core's librdmacm applies to ucma events): every field of a
 *   structure filled with distinct values lands in its counterpart;
 * - IBVERBS_PRIVATE_34, the provider interface (userspace/verbs/private.c):
 *   each ibv_cmd_* the map exports answers EOPNOTSUPP (a positive errno,
 *   the ibv_cmd_* convention), execute_ioctl too, the constructors
 *   (_verbs_init_and_alloc_context, verbs_open_device) NULL with errno
 *   EOPNOTSUPP, ibv_read_ibdev_sysfs_file -1 with errno EOPNOTSUPP and its
 *   buffer untouched, __ioctl_final_num_attrs the count it is given; the
 *   calls that only record (verbs_set_ops, verbs_uninit_context,
 *   verbs_register_driver_34, __verbs_log) return;
 * - ibv_dontfork_range/ibv_dofork_range without rdma-core: 0 (rxdp's
 *   registered memory survives fork itself, userspace/verbs/regmem.c).
 *
 * Each symbol is looked up by name (dlsym): the private ones have no
 * public declaration. VERBS_MAP is userspace/verbs/libibverbs.map.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

/* rdma-core declares these in headers it does not install for programs */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);

static int failed;

#define CHECK(cond)                                                    \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, "FAIL: %s:%d: %s\n", __func__, \
				__LINE__, #cond);                      \
			failed++;                                      \
		}                                                      \
	} while (0)

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p) {
		fprintf(stderr, "FAIL: libibverbs.so.1 exports no %s\n", name);
		failed++;
	}
	return p;
}

/* Distinct bytes, so that a field copied from the wrong place shows */
static void fill(void *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)p)[i] = (uint8_t)(seed + i * 7);
}

static void check_ah(const struct ibv_ah_attr *d,
		     const struct ib_uverbs_ah_attr *s)
{
	CHECK(!memcmp(d->grh.dgid.raw, s->grh.dgid, 16));
	CHECK(d->grh.flow_label == s->grh.flow_label);
	CHECK(d->grh.sgid_index == s->grh.sgid_index);
	CHECK(d->grh.hop_limit == s->grh.hop_limit);
	CHECK(d->grh.traffic_class == s->grh.traffic_class);
	CHECK(d->dlid == s->dlid);
	CHECK(d->sl == s->sl);
	CHECK(d->src_path_bits == s->src_path_bits);
	CHECK(d->static_rate == s->static_rate);
	CHECK(d->is_global == !!s->is_global);
	CHECK(d->port_num == s->port_num);
}

static void test_ah_qp(void)
{
	struct ib_uverbs_qp_attr k;
	struct ibv_qp_attr u;

	fill(&k, sizeof(k), 3);
	k.ah_attr.is_global = 5; /* any non-zero: 1 */
	k.alt_ah_attr.is_global = 0;
	memset(&u, 0, sizeof(u));
	ibv_copy_ah_attr_from_kern(&u.ah_attr, &k.ah_attr);
	check_ah(&u.ah_attr, &k.ah_attr);
	CHECK(u.ah_attr.is_global == 1);

	memset(&u, 0, sizeof(u));
	ibv_copy_qp_attr_from_kern(&u, &k);
	CHECK(u.cur_qp_state == (enum ibv_qp_state)k.cur_qp_state);
	CHECK(u.path_mtu == (enum ibv_mtu)k.path_mtu);
	CHECK(u.path_mig_state == (enum ibv_mig_state)k.path_mig_state);
	CHECK(u.qkey == k.qkey);
	CHECK(u.rq_psn == k.rq_psn);
	CHECK(u.sq_psn == k.sq_psn);
	CHECK(u.dest_qp_num == k.dest_qp_num);
	CHECK(u.qp_access_flags == (unsigned int)k.qp_access_flags);
	CHECK(u.cap.max_send_wr == k.max_send_wr);
	CHECK(u.cap.max_recv_wr == k.max_recv_wr);
	CHECK(u.cap.max_send_sge == k.max_send_sge);
	CHECK(u.cap.max_recv_sge == k.max_recv_sge);
	CHECK(u.cap.max_inline_data == k.max_inline_data);
	check_ah(&u.ah_attr, &k.ah_attr);
	check_ah(&u.alt_ah_attr, &k.alt_ah_attr);
	CHECK(u.alt_ah_attr.is_global == 0);
	CHECK(u.pkey_index == k.pkey_index);
	CHECK(u.alt_pkey_index == k.alt_pkey_index);
	CHECK(u.en_sqd_async_notify == k.en_sqd_async_notify);
	CHECK(u.sq_draining == k.sq_draining);
	CHECK(u.max_rd_atomic == k.max_rd_atomic);
	CHECK(u.max_dest_rd_atomic == k.max_dest_rd_atomic);
	CHECK(u.min_rnr_timer == k.min_rnr_timer);
	CHECK(u.port_num == k.port_num);
	CHECK(u.timeout == k.timeout);
	CHECK(u.retry_cnt == k.retry_cnt);
	CHECK(u.rnr_retry == k.rnr_retry);
	CHECK(u.alt_port_num == k.alt_port_num);
	CHECK(u.alt_timeout == k.alt_timeout);
}

static void check_path(const struct ibv_sa_path_rec *u,
		       const struct ib_user_path_rec *k)
{
	CHECK(!memcmp(u->dgid.raw, k->dgid, 16));
	CHECK(!memcmp(u->sgid.raw, k->sgid, 16));
	CHECK(u->dlid == k->dlid);
	CHECK(u->slid == k->slid);
	CHECK(u->raw_traffic == (int)k->raw_traffic);
	CHECK(u->flow_label == k->flow_label);
	CHECK(u->reversible == (int)k->reversible);
	CHECK(u->mtu == k->mtu);
	CHECK(u->pkey == k->pkey);
	CHECK(u->hop_limit == k->hop_limit);
	CHECK(u->traffic_class == k->traffic_class);
	CHECK(u->numb_path == k->numb_path);
	CHECK(u->sl == k->sl);
	CHECK(u->mtu_selector == k->mtu_selector);
	CHECK(u->rate_selector == k->rate_selector);
	CHECK(u->rate == k->rate);
	CHECK(u->packet_life_time_selector == k->packet_life_time_selector);
	CHECK(u->packet_life_time == k->packet_life_time);
	CHECK(u->preference == k->preference);
}

static void test_path_rec(void)
{
	struct ib_user_path_rec k, back;
	struct ibv_sa_path_rec u;

	fill(&k, sizeof(k), 11);
	/* the int fields of ibv_sa_path_rec: values both sides hold */
	k.raw_traffic = 1;
	k.reversible = 1;
	k.mtu = IBV_MTU_4096; /* a u32 in the kernel's, a u8 in ours */
	memset(&u, 0, sizeof(u));
	ibv_copy_path_rec_from_kern(&u, &k);
	check_path(&u, &k);
	memset(&back, 0, sizeof(back));
	ibv_copy_path_rec_to_kern(&back, &u);
	check_path(&u, &back);
	CHECK(!memcmp(back.dgid, k.dgid, 16) && back.mtu == k.mtu &&
	      back.preference == k.preference && back.pkey == k.pkey);
}

/* The IBVERBS_PRIVATE_34 names of the map that begin with PREFIX */
static int private_names(const char *prefix, char names[][64], int max)
{
	FILE *f = fopen(VERBS_MAP, "r");
	char line[256], name[64];
	int in = 0, n = 0;

	if (!f) {
		perror(VERBS_MAP);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "IBVERBS_PRIVATE_34 {"))
			in = 1;
		else if (in && strstr(line, "};"))
			break;
		else if (in && sscanf(line, " %63[A-Za-z0-9_];", name) == 1 &&
			 !strncmp(name, prefix, strlen(prefix)) && n < max)
			strcpy(names[n++], name);
	}
	fclose(f);
	return n;
}

static void test_private(void)
{
	static char cmds[128][64];
	int n = private_names("ibv_cmd_", cmds, 128);
	void *(*init_ctx)(void *, int, size_t, void *, uint32_t);
	void *(*open_dev)(void *, void *);
	int (*exec)(void *, void *);
	int (*sysfs)(char *, size_t, void *, const char *, ...);
	unsigned int (*final)(unsigned int, void *);
	void (*two)(void *, void *);
	void (*one)(void *);
	void (*log)(void *, uint32_t, const char *, ...);
	char buf[8] = "unread";

	CHECK(n > 50);
	for (int i = 0; i < n; i++) {
		int (*cmd)(void) = (int (*)(void))sym(cmds[i]);

		if (cmd && cmd() != EOPNOTSUPP) {
			fprintf(stderr, "FAIL: %s is not EOPNOTSUPP\n",
				cmds[i]);
			failed++;
		}
	}
	exec = (int (*)(void *, void *))sym("execute_ioctl");
	CHECK(exec && exec(NULL, NULL) == EOPNOTSUPP);
	init_ctx = (void *(*)(void *, int, size_t, void *, uint32_t))sym(
		"_verbs_init_and_alloc_context");
	errno = 0;
	CHECK(init_ctx && !init_ctx(NULL, -1, 64, NULL, 0) &&
	      errno == EOPNOTSUPP);
	open_dev = (void *(*)(void *, void *))sym("verbs_open_device");
	errno = 0;
	CHECK(open_dev && !open_dev(NULL, NULL) && errno == EOPNOTSUPP);
	sysfs = (int (*)(char *, size_t, void *, const char *, ...))sym(
		"ibv_read_ibdev_sysfs_file");
	errno = 0;
	CHECK(sysfs &&
	      sysfs(buf, sizeof(buf), NULL, "ports/%d/gids/0", 1) == -1 &&
	      errno == EOPNOTSUPP && !strcmp(buf, "unread"));
	final = (unsigned int (*)(unsigned int, void *))sym(
		"__ioctl_final_num_attrs");
	CHECK(final && final(7, NULL) == 7);
	CHECK(sym("verbs_allow_disassociate_destroy") != NULL);
	/* the calls that only record: they return, touching nothing */
	two = (void (*)(void *, void *))sym("verbs_set_ops");
	if (two)
		two(NULL, NULL);
	one = (void (*)(void *))sym("verbs_uninit_context");
	if (one)
		one(NULL);
	one = (void (*)(void *))sym("verbs_register_driver_34");
	if (one)
		one(NULL);
	log = (void (*)(void *, uint32_t, const char *, ...))sym("__verbs_log");
	if (log)
		log(NULL, 1, "test_verbs_private: %s\n",
		    "a provider's log line");
}

static void test_fork_range(void)
{
	static char buf[8192];

	/* no rdma-core loaded (RXDP_RDMA_CORE unset, no kernel device) */
	CHECK(ibv_dontfork_range(buf, sizeof(buf)) == 0);
	CHECK(ibv_dofork_range(buf, sizeof(buf)) == 0);
}

int main(void)
{
	unsetenv("RXDP_RDMA_CORE");
	test_ah_qp();
	test_path_rec();
	test_private();
	test_fork_range();
	if (failed) {
		fprintf(stderr, "test_verbs_private: %d failed\n", failed);
		return 1;
	}
	printf("test_verbs_private: the kernel ABI copies, the provider stubs "
	       "and the fork ranges hold\n");
	return 0;
}

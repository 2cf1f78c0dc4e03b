/* fi_av_set(3) through the C libfabric over provider argv[1] (an AV
 * provider): open sets from attributes, union/intersect/diff, insert,
 * remove, addr, errors, close, and no live handle left in the plugin
 * (argv[2]). Prints "ok" on success; on failure the failing check and
 * exits 1. */
#include <dlfcn.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gofab.h"
#include "check.h"

/* expect checks that the members of s among fi_addrs 0..universe-1 are
 * exactly want (C has no call that lists them): a member cannot be
 * inserted again (EINVAL); a non-member can, and is removed again. */
static void expect(struct fid_av_set *s, const fi_addr_t *want, int n, fi_addr_t universe)
{
	fi_addr_t a;
	int i, found;

	for (a = 0; a < universe; a++) {
		found = 0;
		for (i = 0; i < n; i++)
			found |= want[i] == a;
		if (found) {
			CHECK(fi_av_set_insert(s, a) == -FI_EINVAL);
		} else {
			CHECK(fi_av_set_insert(s, a) == 0);
			CHECK(fi_av_set_remove(s, a) == 0);
		}
	}
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_av_set *a, *b, *u, *bad = NULL;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_av_set_attr attr;
	struct sockaddr_in sin[6];
	fi_addr_t fa[6], x, y;
	uint8_t key[2] = { 1, 2 };
	void *lib;
	int (*live)(void);
	int i, base;

	CHECK(argc == 3);
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->mode = ~0ULL;
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->addr_format = FI_SOCKADDR_IN;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) == 0);
	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();

	CHECK(fi_fabric(info->fabric_attr, &fab, NULL) == 0);
	CHECK(fi_domain(fab, info, &dom, NULL) == 0);
	CHECK(fi_av_open(dom, &av_attr, &av, NULL) == 0);
	for (i = 0; i < 6; i++) {
		memset(&sin[i], 0, sizeof(sin[i]));
		sin[i].sin_family = AF_INET;
		sin[i].sin_port = htons(9000 + i);
		sin[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	CHECK(fi_av_insert(av, sin, 6, fa, 0, NULL) == 6);
	for (i = 0; i < 6; i++)
		CHECK(fa[i] == (fi_addr_t)i);

	/* 1..5 stride 2 */
	memset(&attr, 0, sizeof(attr));
	attr.count = 3;
	attr.start_addr = 1;
	attr.end_addr = 5;
	attr.stride = 2;
	CHECK(fi_av_set(av, &attr, &a, (void *)5) == 0);
	CHECK(a->fid.fclass == FI_CLASS_AV_SET && a->fid.context == (void *)5);
	expect(a, (fi_addr_t[]){ 1, 3, 5 }, 3, 6);

	/* empty, then 0 and 3 */
	memset(&attr, 0, sizeof(attr));
	attr.start_addr = FI_ADDR_NOTAVAIL;
	attr.end_addr = FI_ADDR_NOTAVAIL;
	CHECK(fi_av_set(av, &attr, &b, NULL) == 0);
	CHECK(fi_av_set_insert(b, 0) == 0);
	CHECK(fi_av_set_insert(b, 3) == 0);
	CHECK(fi_av_set_insert(b, 9) == -FI_EINVAL); /* not in the AV */
	CHECK(fi_av_set_remove(b, 4) == -FI_EINVAL); /* not a member */

	/* universe */
	memset(&attr, 0, sizeof(attr));
	attr.flags = FI_UNIVERSE;
	CHECK(fi_av_set(av, &attr, &u, NULL) == 0);
	expect(u, (fi_addr_t[]){ 0, 1, 2, 3, 4, 5 }, 6, 6);

	CHECK(fi_av_set_union(a, b) == 0); /* 1 3 5 0 */
	expect(a, (fi_addr_t[]){ 0, 1, 3, 5 }, 4, 6);
	CHECK(fi_av_set_intersect(u, a) == 0); /* 0 1 3 5 */
	expect(u, (fi_addr_t[]){ 0, 1, 3, 5 }, 4, 6);
	CHECK(fi_av_set_diff(u, b) == 0); /* 1 5 */
	expect(u, (fi_addr_t[]){ 1, 5 }, 2, 6);

	CHECK(fi_av_set_addr(a, &x) == 0);
	CHECK(fi_av_set_addr(b, &y) == 0);
	CHECK(x != y && x != FI_ADDR_NOTAVAIL);
	CHECK(fi_av_set_addr(a, NULL) == -FI_EINVAL);

	/* Errors of fi_av_set(3). */
	memset(&attr, 0, sizeof(attr));
	attr.start_addr = 0;
	attr.end_addr = 5;
	attr.stride = 1;
	attr.count = 2; /* more addresses than count */
	CHECK(fi_av_set(av, &attr, &bad, NULL) == -FI_EINVAL && bad == NULL);
	memset(&attr, 0, sizeof(attr));
	attr.flags = FI_BARRIER_SET;
	CHECK(fi_av_set(av, &attr, &bad, NULL) == -FI_EOPNOTSUPP);
	memset(&attr, 0, sizeof(attr));
	attr.comm_key = key;
	attr.comm_key_size = sizeof(key);
	CHECK(fi_av_set(av, &attr, &bad, NULL) == -FI_ENOSYS);
	CHECK(fi_av_set(av, NULL, &bad, NULL) == 0); /* NULL attr: empty */
	CHECK(fi_close(&bad->fid) == 0);

	CHECK(fi_close(&av->fid) == -FI_EBUSY); /* sets are open */
	CHECK(fi_close(&a->fid) == 0);
	CHECK(fi_close(&b->fid) == 0);
	CHECK(fi_close(&u->fid) == 0);
	CHECK(fi_close(&av->fid) == 0);
	CHECK(fi_close(&dom->fid) == 0);
	CHECK(fi_close(&fab->fid) == 0);
	CHECK(live() == base);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

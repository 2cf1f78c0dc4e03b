/* Buffered receives (FI_BUFFERED_RECV, fi_msg(3) "Buffered Receives")
 * through the plugin from C, in one process, on provider argv[1] (goudp's
 * FI_EP_DGRAM, gotcp's and goshm's FI_EP_RDM): the mode is returned when
 * the hints ask for it (not when they set every mode bit);
 * FI_OPT_BUFFERED_MIN/LIMIT; a report's op_context is a struct
 * fi_recv_context (ep, context) and its buf the message's first bytes
 * (FI_MORE beyond the limit); fi_recvmsg with FI_CLAIM gets the message
 * with the context set in the struct, FI_DISCARD drops it without a
 * completion, a second claim is -FI_EINVAL; a tagged receive posts only
 * its tag and is reported with its context (RDM); a report never claimed
 * is released at close, and no handle is left. argv[2] is
 * libgofabric.so. Prints "ok"; on failure the failing check, exit 1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gofab.h"
#include "check.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one completion of cq, progressing other; 10 s bound. */
static void cq_one(struct fid_cq *cq, struct fid_cq *other, struct fi_cq_tagged_entry *e)
{
	double end = now() + 10;
	ssize_t rc;

	for (;;) {
		rc = fi_cq_read(cq, e, 1);
		if (rc == 1)
			return;
		CHECKRC(rc, -FI_EAGAIN);
		CHECK(now() < end);
		fi_cq_read(other, NULL, 0);
	}
}

/* Nothing arrives on cq for 20 ms. */
static void cq_none(struct fid_cq *cq, struct fid_cq *other)
{
	struct fi_cq_tagged_entry e;
	double end = now() + 0.02;

	while (now() < end) {
		CHECKRC(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
		fi_cq_read(other, NULL, 0);
	}
}

static struct fi_info *getinfo(const char *prov, uint64_t mode, uint64_t caps)
{
	struct fi_info *hints, *info = NULL, *cur;

	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(prov);
	hints->caps = caps;
	hints->mode = mode;
	hints->ep_attr->type = strcmp(prov, "goudp") ? FI_EP_RDM : FI_EP_DGRAM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	CHECKRC(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info), 0);
	fi_freeinfo(hints);
	/* The plugin's own provider, not C's ofi_rxm layered over gotcp's
	 * FI_EP_MSG (which has buffered receives of its own). */
	for (cur = info; cur; cur = cur->next)
		if (strcmp(cur->fabric_attr->prov_name, prov) == 0)
			break;
	CHECK(cur);
	cur = fi_dupinfo(cur);
	CHECK(cur);
	fi_freeinfo(info);
	return cur;
}

int main(int argc, char **argv)
{
	struct fi_info *info, *all;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_ep *a, *b;
	struct fid_cq *acq, *bcq;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_tagged_entry e;
	struct fi_recv_context *rc;
	struct iovec iov;
	struct fi_msg msg;
	struct fi_msg_tagged tmsg;
	fi_addr_t ab, ba;
	char name[128], big[200], buf[256];
	size_t len, v;
	void *lib;
	int (*live)(void);
	int base, i, tagged;

	CHECK(argc == 3);
	tagged = strcmp(argv[1], "goudp") != 0;
	all = getinfo(argv[1], ~0ULL, FI_MSG);
	CHECK(!(all->mode & FI_BUFFERED_RECV)); /* every bit set: not asked for */
	fi_freeinfo(all);
	info = getinfo(argv[1], FI_BUFFERED_RECV, FI_MSG | (tagged ? FI_TAGGED : 0));
	CHECK(info->mode & FI_BUFFERED_RECV);
	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();
	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	CHECKRC(fi_av_open(dom, &av_attr, &av, NULL), 0);
	CHECKRC(fi_cq_open(dom, &cq_attr, &acq, NULL), 0);
	CHECKRC(fi_cq_open(dom, &cq_attr, &bcq, NULL), 0);
	CHECKRC(fi_endpoint(dom, info, &a, NULL), 0);
	CHECKRC(fi_endpoint(dom, info, &b, NULL), 0);
	CHECKRC(fi_ep_bind(a, &acq->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECKRC(fi_ep_bind(b, &bcq->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECKRC(fi_ep_bind(a, &av->fid, 0), 0);
	CHECKRC(fi_ep_bind(b, &av->fid, 0), 0);
	v = 64;
	CHECKRC(fi_setopt(&b->fid, FI_OPT_ENDPOINT, FI_OPT_BUFFERED_LIMIT, &v, sizeof(v)), 0);
	v = 16;
	CHECKRC(fi_setopt(&b->fid, FI_OPT_ENDPOINT, FI_OPT_BUFFERED_MIN, &v, sizeof(v)), 0);
	len = sizeof(v);
	CHECKRC(fi_getopt(&b->fid, FI_OPT_ENDPOINT, FI_OPT_BUFFERED_LIMIT, &v, &len), 0);
	CHECK(v == 64 && len == sizeof(v));
	CHECKRC(fi_enable(a), 0);
	CHECKRC(fi_enable(b), 0);
	len = sizeof(name);
	CHECKRC(fi_getname(&b->fid, name, &len), 0);
	CHECKRC(fi_av_insert(av, name, 1, &ab, 0, NULL), 1);
	len = sizeof(name);
	CHECKRC(fi_getname(&a->fid, name, &len), 0);
	CHECKRC(fi_av_insert(av, name, 1, &ba, 0, NULL), 1);

	/* Reported whole, then claimed with the context set in the struct. */
	CHECKRC(fi_send(a, "hello", 5, NULL, ab, (void *)1), 0);
	cq_one(bcq, acq, &e);
	rc = e.op_context;
	CHECK(rc && rc->ep == b && rc->context == NULL);
	CHECK(e.len == 5 && e.buf && memcmp(e.buf, "hello", 5) == 0);
	CHECK((e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) && !(e.flags & (FI_MORE | FI_CLAIM)));
	rc->context = (void *)0x1234;
	memset(buf, 0, sizeof(buf));
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.iov_count = 1;
	msg.addr = FI_ADDR_UNSPEC;
	msg.context = rc;
	CHECKRC(fi_recvmsg(b, &msg, FI_CLAIM), 0);
	cq_one(bcq, acq, &e);
	CHECK(e.op_context == (void *)0x1234 && (e.flags & FI_CLAIM) && e.len == 5 && memcmp(buf, "hello", 5) == 0);
	CHECKRC(fi_recvmsg(b, &msg, FI_CLAIM), -FI_EINVAL); /* claimed already */
	cq_one(acq, bcq, &e);
	CHECK(e.op_context == (void *)1 && (e.flags & FI_SEND));

	/* Beyond the limit: FI_MORE and the first 64 bytes; discarded. */
	for (i = 0; i < (int)sizeof(big); i++)
		big[i] = (char)(i * 3);
	CHECKRC(fi_send(a, big, sizeof(big), NULL, ab, (void *)2), 0);
	cq_one(bcq, acq, &e);
	rc = e.op_context;
	CHECK(rc && rc->ep == b);
	CHECK(e.len == sizeof(big) && (e.flags & FI_MORE) && memcmp(e.buf, big, 64) == 0);
	msg.context = rc;
	msg.iov_count = 0;
	msg.msg_iov = NULL;
	CHECKRC(fi_recvmsg(b, &msg, FI_DISCARD), 0);
	cq_none(bcq, acq);
	cq_one(acq, bcq, &e);
	CHECK(e.op_context == (void *)2);

	if (tagged) {
		/* A tagged receive posts its tag only. */
		CHECKRC(fi_trecv(b, NULL, 0, NULL, FI_ADDR_UNSPEC, 7, 0, (void *)77), 0);
		CHECKRC(fi_tsend(a, "tag7", 4, NULL, ab, 7, (void *)3), 0);
		cq_one(bcq, acq, &e);
		rc = e.op_context;
		CHECK(rc && rc->ep == NULL && rc->context == (void *)77);
		CHECK(e.tag == 7 && e.len == 4 && (e.flags & FI_TAGGED) && memcmp(e.buf, "tag7", 4) == 0);
		memset(&tmsg, 0, sizeof(tmsg));
		iov.iov_len = sizeof(buf);
		tmsg.msg_iov = &iov;
		tmsg.iov_count = 1;
		tmsg.addr = FI_ADDR_UNSPEC;
		tmsg.tag = 7;
		tmsg.context = rc;
		CHECKRC(fi_trecvmsg(b, &tmsg, FI_CLAIM), 0);
		cq_one(bcq, acq, &e);
		CHECK(e.op_context == (void *)77 && (e.flags & FI_CLAIM) && e.tag == 7 && memcmp(buf, "tag7", 4) == 0);
		cq_one(acq, bcq, &e);
		CHECK(e.op_context == (void *)3);
	}

	/* One left unclaimed: released when the endpoint and CQ close. */
	CHECKRC(fi_send(a, "left", 4, NULL, ab, (void *)4), 0);
	cq_one(bcq, acq, &e);
	CHECK(e.op_context != NULL && e.len == 4);
	cq_one(acq, bcq, &e);
	CHECK(e.op_context == (void *)4);

	CHECKRC(fi_close(&a->fid), 0);
	CHECKRC(fi_close(&b->fid), 0);
	CHECKRC(fi_close(&acq->fid), 0);
	CHECKRC(fi_close(&bcq->fid), 0);
	CHECKRC(fi_close(&av->fid), 0);
	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	CHECKRC(live(), base);
	fi_freeinfo(info);
	printf("ok\n");
	return 0;
}

/* The queue objects of provider argv[1] through the C libfabric: CQ,
 * counter, EQ, AV, MR, wait set, poll set and fi_trywait, with bad input;
 * closes everything and checks that the plugin (argv[2]) has no live
 * handle left. Prints "ok" on success; on failure the failing check and
 * exits 1. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gofab.h"
#include "check.h"

/* CHECKRC prints the value when the check fails. */
static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fi_info *info;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_cq(void)
{
	struct fi_cq_attr attr;
	struct fid_cq *cq;
	struct fi_cq_tagged_entry ent[4];
	struct fi_cq_err_entry err;
	enum fi_wait_obj wo;
	char buf[64];
	const char *s;
	struct fid *fids[1];
	double t;
	int fmt, fd;

	for (fmt = FI_CQ_FORMAT_UNSPEC; fmt <= FI_CQ_FORMAT_TAGGED; fmt++) {
		memset(&attr, 0, sizeof(attr));
		attr.format = fmt;
		attr.wait_obj = FI_WAIT_NONE;
		attr.size = 16;
		CHECKRC(fi_cq_open(dom, &attr, &cq, (void *)11), 0);
		CHECK(cq->fid.fclass == FI_CLASS_CQ && cq->fid.context == (void *)11);
		CHECKRC(fi_cq_read(cq, ent, 4), -FI_EAGAIN);
		CHECKRC(fi_cq_readfrom(cq, ent, 4, (fi_addr_t *)buf), -FI_EAGAIN);
		CHECKRC(fi_cq_read(cq, NULL, 0), -FI_EAGAIN);
		CHECKRC(fi_cq_read(cq, NULL, 1), -FI_EINVAL);
		CHECKRC(fi_cq_read(cq, (void *)1, 1), -FI_EINVAL);
		/* No wait object: sread and signal are not available. */
		CHECK(fi_cq_sread(cq, ent, 1, NULL, 0) < 0);
		CHECK(fi_cq_signal(cq) < 0);
		CHECKRC(fi_control(&cq->fid, FI_GETWAITOBJ, &wo), 0);
		CHECKRC(wo, FI_WAIT_NONE);
		CHECKRC(fi_close(&cq->fid), 0);
	}

	/* Bad attributes. */
	memset(&attr, 0, sizeof(attr));
	attr.format = 77;
	CHECK(fi_cq_open(dom, &attr, &cq, NULL) < 0);
	attr.format = FI_CQ_FORMAT_CONTEXT;
	attr.wait_obj = 99;
	CHECK(fi_cq_open(dom, &attr, &cq, NULL) < 0);
	attr.wait_obj = FI_WAIT_SET; /* without a wait set */
	CHECK(fi_cq_open(dom, &attr, &cq, NULL) < 0);
	attr.wait_obj = FI_WAIT_UNSPEC;
	attr.flags = 1ULL << 60;
	CHECK(fi_cq_open(dom, &attr, &cq, NULL) < 0);
	attr.flags = 0;
	CHECK(fi_cq_open(dom, NULL, &cq, NULL) < 0);

	/* A CQ that can block: sread times out with -FI_EAGAIN, signal wakes it. */
	attr.wait_obj = FI_WAIT_UNSPEC;
	attr.format = FI_CQ_FORMAT_TAGGED;
	CHECKRC(fi_cq_open(dom, &attr, &cq, NULL), 0);
	t = now_ms();
	CHECKRC(fi_cq_sread(cq, ent, 1, NULL, 150), -FI_EAGAIN);
	t = now_ms() - t;
	CHECK(t >= 140 && t < 5000);
	CHECKRC(fi_cq_signal(cq), 0);
	t = now_ms();
	CHECKRC(fi_cq_sread(cq, ent, 1, NULL, 5000), -FI_EAGAIN);
	CHECK(now_ms() - t < 2000);
	CHECKRC(fi_cq_sread(cq, NULL, 1, NULL, 0), -FI_EINVAL);

	/* readerr: nothing at the head, bad input. */
	memset(&err, 0, sizeof(err));
	CHECKRC(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	err.err_data = buf;
	err.err_data_size = sizeof(buf);
	CHECKRC(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	CHECKRC(fi_cq_readerr(cq, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_cq_readerr(cq, &err, 1ULL << 62), -FI_EBADFLAGS);

	/* strerror: a string, copied into buf when given. */
	s = fi_cq_strerror(cq, 5, NULL, NULL, 0);
	CHECK(s && *s);
	CHECK(fi_cq_strerror(cq, 5, NULL, buf, sizeof(buf)) == buf);
	CHECK(strncmp(buf, s, sizeof(buf) - 1) == 0);
	CHECK(fi_cq_strerror(cq, 5, NULL, buf, 1) == buf && buf[0] == 0);

	/* FI_WAIT_UNSPEC resolves to a descriptor (ofi_rxm relies on it); unknown commands. */
	fd = -1;
	CHECKRC(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	CHECKRC(fi_control(&cq->fid, FI_GETWAITOBJ, &wo), 0);
	CHECKRC(wo, FI_WAIT_FD);
	CHECKRC(fi_control(&cq->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	CHECKRC(fi_control(&cq->fid, FI_BACKLOG, &fd), -FI_ENOSYS);
	CHECKRC(fi_close(&cq->fid), 0);

	/* FI_WAIT_FD: a descriptor, fi_trywait says it is safe to block. */
	attr.wait_obj = FI_WAIT_FD;
	CHECKRC(fi_cq_open(dom, &attr, &cq, NULL), 0);
	fd = -1;
	CHECKRC(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	CHECKRC(fi_control(&cq->fid, FI_GETWAITOBJ, &wo), 0);
	CHECKRC(wo, FI_WAIT_FD);
	fids[0] = &cq->fid;
	CHECKRC(fi_trywait(fab, fids, 1), 0);
	CHECKRC(fi_trywait(fab, NULL, 1), -FI_EINVAL);
	CHECKRC(fi_trywait(fab, fids, 0), 0);
	fids[0] = &dom->fid;
	CHECKRC(fi_trywait(fab, fids, 1), -FI_EINVAL);
	CHECKRC(fi_close(&cq->fid), 0);
}

static void test_cntr(void)
{
	struct fi_cntr_attr attr;
	struct fid_cntr *c;
	struct fid *fids[1];
	double t;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = FI_WAIT_UNSPEC;
	CHECKRC(fi_cntr_open(dom, &attr, &c, (void *)5), 0);
	CHECK(c->fid.fclass == FI_CLASS_CNTR && c->fid.context == (void *)5);
	CHECKRC(fi_cntr_read(c), 0);
	CHECKRC(fi_cntr_add(c, 3), 0);
	CHECKRC(fi_cntr_read(c), 3);
	CHECKRC(fi_cntr_set(c, 10), 0);
	CHECKRC(fi_cntr_read(c), 10);
	CHECKRC(fi_cntr_adderr(c, 2), 0);
	CHECKRC(fi_cntr_readerr(c), 2);
	CHECKRC(fi_cntr_seterr(c, 7), 0);
	CHECKRC(fi_cntr_readerr(c), 7);
	CHECKRC(fi_cntr_wait(c, 10, 1000), 0);
	t = now_ms();
	CHECKRC(fi_cntr_wait(c, 11, 100), -FI_ETIMEDOUT);
	CHECK(now_ms() - t >= 90);
	fd = -1; /* FI_WAIT_UNSPEC resolves to a descriptor */
	CHECKRC(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	CHECKRC(fi_close(&c->fid), 0);

	CHECKRC(fi_cntr_open(dom, NULL, &c, NULL), 0); /* NULL attr: defaults */
	CHECKRC(fi_close(&c->fid), 0);

	attr.events = 9;
	CHECK(fi_cntr_open(dom, &attr, &c, NULL) < 0);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.flags = 1;
	CHECK(fi_cntr_open(dom, &attr, &c, NULL) < 0);
	attr.flags = 0;
	attr.wait_obj = 42;
	CHECK(fi_cntr_open(dom, &attr, &c, NULL) < 0);

	/* No wait object: fi_cntr_wait polls, as libfabric's util counters. */
	attr.wait_obj = FI_WAIT_NONE;
	CHECKRC(fi_cntr_open(dom, &attr, &c, NULL), 0);
	t = now_ms();
	CHECKRC(fi_cntr_wait(c, 1, 100), -FI_ETIMEDOUT);
	CHECK(now_ms() - t >= 90);
	CHECKRC(fi_cntr_add(c, 1), 0);
	CHECKRC(fi_cntr_wait(c, 1, 100), 0);
	CHECKRC(fi_close(&c->fid), 0);

	attr.wait_obj = FI_WAIT_FD;
	CHECKRC(fi_cntr_open(dom, &attr, &c, NULL), 0);
	fd = -1;
	CHECKRC(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	fids[0] = &c->fid;
	CHECKRC(fi_trywait(fab, fids, 1), 0);
	CHECKRC(fi_cntr_add(c, 1), 0);
	CHECKRC(fi_trywait(fab, fids, 1), -FI_EAGAIN); /* changed since */
	CHECKRC(fi_trywait(fab, fids, 1), 0);
	CHECKRC(fi_close(&c->fid), 0);
}

static void test_eq(void)
{
	struct fi_eq_attr attr;
	struct fid_eq *eq, *ro;
	struct fi_eq_entry ent;
	struct {
		struct fi_eq_cm_entry cm;
		uint8_t data[16];
	} cm;
	struct fi_eq_err_entry err;
	struct fid *fids[1];
	struct pollfd pfd;
	uint32_t ev;
	double t;
	int fd, i;

	memset(&attr, 0, sizeof(attr));
	attr.size = 8;
	attr.flags = FI_WRITE;
	attr.wait_obj = FI_WAIT_FD;
	CHECKRC(fi_eq_open(fab, &attr, &eq, (void *)3), 0);
	CHECK(eq->fid.fclass == FI_CLASS_EQ && eq->fid.context == (void *)3);
	CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), -FI_EAGAIN);
	fd = -1;
	CHECKRC(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);
	fids[0] = &eq->fid;
	CHECKRC(fi_trywait(fab, fids, 1), 0);

	/* write, then read with and without FI_PEEK. */
	ent.fid = &eq->fid;
	ent.context = (void *)77;
	ent.data = 1234;
	CHECKRC(fi_eq_write(eq, FI_NOTIFY, &ent, sizeof(ent), 0), sizeof(ent));
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECKRC(poll(&pfd, 1, 2000), 1);
	CHECKRC(fi_trywait(fab, fids, 1), -FI_EAGAIN);
	memset(&ent, 0, sizeof(ent));
	for (i = 0; i < 2; i++) {
		ev = 99;
		CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), i ? 0 : FI_PEEK), sizeof(ent));
		CHECK(ev == FI_NOTIFY && ent.fid == &eq->fid && ent.context == (void *)77 &&
		      ent.data == 1234);
	}
	CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), -FI_EAGAIN);

	/* A CM entry with connection data; a buffer too small for it. */
	memset(&cm, 0, sizeof(cm));
	cm.cm.fid = (fid_t)&fab->fid;
	memcpy(cm.data, "hello", 6);
	CHECKRC(fi_eq_write(eq, FI_CONNECTED, &cm, sizeof(cm.cm) + 6, 0), sizeof(cm.cm) + 6);
	CHECKRC(fi_eq_read(eq, &ev, &cm, 8, 0), -FI_ETOOSMALL);
	memset(&cm, 0, sizeof(cm));
	CHECKRC(fi_eq_read(eq, &ev, &cm, sizeof(cm), 0), sizeof(cm.cm) + 6);
	CHECK(ev == FI_CONNECTED && cm.cm.fid == &fab->fid && cm.cm.info == NULL);
	CHECK(strcmp((char *)cm.data, "hello") == 0);
	/* An fi_eq_entry does not fit a bare fi_eq_cm_entry buffer: it stays queued. */
	ent.data = 5;
	CHECKRC(fi_eq_write(eq, FI_NOTIFY, &ent, sizeof(ent), 0), sizeof(ent));
	CHECKRC(fi_eq_read(eq, &ev, &cm, sizeof(cm.cm), 0), -FI_ETOOSMALL);
	CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), sizeof(ent));
	CHECK(ent.data == 5);

	/* sread: times out with -FI_EAGAIN; returns at once with an event. */
	t = now_ms();
	CHECKRC(fi_eq_sread(eq, &ev, &ent, sizeof(ent), 150, 0), -FI_EAGAIN);
	CHECK(now_ms() - t >= 140);
	CHECKRC(fi_eq_write(eq, FI_NOTIFY, &ent, sizeof(ent), 0), sizeof(ent));
	t = now_ms();
	CHECKRC(fi_eq_sread(eq, &ev, &ent, sizeof(ent), 5000, 0), sizeof(ent));
	CHECK(now_ms() - t < 2000);

	/* readerr and bad input. */
	memset(&err, 0, sizeof(err));
	CHECKRC(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	CHECKRC(fi_eq_readerr(eq, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_eq_read(eq, NULL, &ent, sizeof(ent), 0), -FI_EINVAL);
	CHECKRC(fi_eq_read(eq, &ev, NULL, sizeof(ent), 0), -FI_EINVAL);
	CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 1ULL << 40), -FI_EBADFLAGS);
	CHECKRC(fi_eq_write(eq, FI_NOTIFY, NULL, sizeof(ent), 0), -FI_EINVAL);
	CHECKRC(fi_eq_write(eq, FI_NOTIFY, &ent, 4, 0), -FI_EINVAL);
	CHECK(fi_eq_strerror(eq, 3, NULL, NULL, 0) != NULL);

	/* Without FI_WRITE the application cannot write. */
	attr.flags = 0;
	attr.wait_obj = FI_WAIT_NONE;
	CHECKRC(fi_eq_open(fab, &attr, &ro, NULL), 0);
	CHECK(fi_eq_write(ro, FI_NOTIFY, &ent, sizeof(ent), 0) < 0);
	CHECK(fi_eq_sread(ro, &ev, &ent, sizeof(ent), 10, 0) < 0);

	/* The domain's EQ: bound, the EQ cannot close. */
	CHECKRC(fi_domain_bind(dom, &ro->fid, 0), 0);
	CHECK(fi_domain_bind(dom, &ro->fid, 0) < 0);
	CHECKRC(fi_domain_bind(dom, &dom->fid, 0), -FI_EINVAL);
	CHECKRC(fi_close(&ro->fid), -FI_EBUSY);

	CHECKRC(fi_close(&eq->fid), 0);
	attr.wait_obj = 99;
	CHECK(fi_eq_open(fab, &attr, &eq, NULL) < 0);
	CHECK(fi_eq_open(fab, NULL, &eq, NULL) < 0);
	/* ro stays bound to the domain; closed in main after the domain. */
	CHECKRC(fi_close(&dom->fid), 0);
	dom = NULL;
	CHECKRC(fi_close(&ro->fid), 0);
}

struct sread_arg {
	struct fid_eq *eq;
	struct fi_eq_entry ent;
	uint32_t ev;
	ssize_t ret;
};

static void *sread_thread(void *p)
{
	struct sread_arg *a = p;

	a->ret = fi_eq_sread(a->eq, &a->ev, &a->ent, sizeof(a->ent), 5000, 0);
	return NULL;
}

static void test_av(void)
{
	struct fi_av_attr attr;
	struct fid_av *av;
	struct sockaddr_in sin[2];
	struct sockaddr_in6 sin6;
	fi_addr_t fa[2];
	uint8_t out[64];
	char str[128];
	size_t len;
	int errs[2];
	void *addrs;
	size_t alen;

	memset(&attr, 0, sizeof(attr));
	attr.type = FI_AV_TABLE;
	CHECKRC(fi_av_open(dom, &attr, &av, (void *)9), 0);
	CHECK(av->fid.fclass == FI_CLASS_AV && av->fid.context == (void *)9);

	memset(sin, 0, sizeof(sin));
	sin[0].sin_family = sin[1].sin_family = AF_INET;
	sin[0].sin_addr.s_addr = sin[1].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin[0].sin_port = htons(9228);
	sin[1].sin_port = htons(9229);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	sin6.sin6_port = htons(9228);
	if (info->addr_format == FI_SOCKADDR_IN6) {
		addrs = &sin6;
		alen = sizeof(sin6);
	} else {
		addrs = sin;
		alen = sizeof(sin[0]);
	}

	CHECKRC(fi_av_insert(av, addrs, 1, fa, 0, NULL), 1);
	len = sizeof(out);
	CHECKRC(fi_av_lookup(av, fa[0], out, &len), 0);
	CHECKRC(len, alen);
	CHECK(memcmp(out, addrs, alen) == 0);
	len = 4; /* truncated, full size returned */
	memset(out, 0, sizeof(out));
	CHECKRC(fi_av_lookup(av, fa[0], out, &len), 0);
	CHECKRC(len, alen);
	CHECK(memcmp(out, addrs, 4) == 0 && out[4] == 0);
	CHECKRC(fi_av_lookup(av, fa[0], out, NULL), -FI_EINVAL);
	CHECK(fi_av_lookup(av, 1000, out, &len) < 0);

	len = sizeof(str);
	CHECK(fi_av_straddr(av, addrs, str, &len) == str);
	CHECK(strstr(str, "9228") != NULL && len == strlen(str) + 1);
	len = 3;
	CHECK(fi_av_straddr(av, addrs, str, &len) == str);
	CHECK(strlen(str) == 2 && len > 3);
	CHECK(fi_av_straddr(av, NULL, str, &len) == NULL);

	CHECKRC(fi_av_remove(av, fa, 1, 0), 0);
	CHECK(fi_av_lookup(av, fa[0], out, &len) < 0);
	CHECK(fi_av_remove(av, fa, 1, 0) < 0); /* not in the AV */
	CHECKRC(fi_av_remove(av, NULL, 1, 0), -FI_EINVAL);

	/* Two at once with FI_SYNC_ERR; then bad input. */
	if (info->addr_format != FI_SOCKADDR_IN6) {
		errs[0] = errs[1] = -1;
		CHECKRC(fi_av_insert(av, sin, 2, fa, FI_SYNC_ERR, errs), 2);
		CHECK(errs[0] == 0 && errs[1] == 0 && fa[0] != fa[1]);
		CHECKRC(fi_av_remove(av, fa, 2, 0), 0);
	}
	CHECKRC(fi_av_insert(av, NULL, 1, fa, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_av_insert(av, addrs, 0, fa, 0, NULL), 0);
	CHECK(fi_av_insert(av, addrs, 1, fa, 1ULL << 3, NULL) < 0);
	CHECKRC(fi_av_insertsvc(av, NULL, "9228", fa, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_av_insertsym(av, "127.0.0.1", 0, "9228", 1, fa, 0, NULL), -FI_EINVAL);
	if (info->addr_format != FI_SOCKADDR_IN6) {
		CHECKRC(fi_av_insertsvc(av, "127.0.0.1", "9300", fa, 0, NULL), 1);
		CHECKRC(fi_av_insertsym(av, "127.0.0.1", 1, "9301", 2, fa, 0, NULL), 2);
	}
	CHECKRC(fi_av_bind(av, &dom->fid, 0), -FI_EINVAL);
	CHECKRC(fi_close(&av->fid), 0);

	/* Asynchronous inserts: events on the bound EQ, errors first. */
	{
		struct fi_eq_attr eattr;
		struct fid_eq *eq;
		struct fi_eq_entry ent;
		struct fi_eq_err_entry err;
		uint8_t two[2 * sizeof(struct sockaddr_in6)];
		uint32_t ev;
		int ctx;

		memset(&eattr, 0, sizeof(eattr));
		eattr.wait_obj = FI_WAIT_UNSPEC;
		CHECKRC(fi_eq_open(fab, &eattr, &eq, NULL), 0);
		attr.flags = FI_EVENT;
		CHECKRC(fi_av_open(dom, &attr, &av, NULL), 0);
		CHECKRC(fi_av_insert(av, addrs, 1, fa, 0, &ctx), -FI_ENOEQ);
		CHECKRC(fi_av_bind(av, &eq->fid, 0), 0);
		CHECKRC(fi_close(&eq->fid), -FI_EBUSY);
		CHECKRC(fi_av_insert(av, addrs, 1, fa, 0, &ctx), 0);
		CHECKRC(fi_eq_sread(eq, &ev, &ent, sizeof(ent), 1000, 0), sizeof(ent));
		CHECK(ev == FI_AV_COMPLETE && ent.fid == &av->fid && ent.context == &ctx &&
		      ent.data == 1);
		/* A good and a bad (unknown family) address. */
		memcpy(two, addrs, alen);
		memset(two + alen, 0xff, alen);
		CHECKRC(fi_av_insert(av, two, 2, fa, 0, &ctx), 0);
		CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), -FI_EAVAIL);
		memset(&err, 0, sizeof(err));
		CHECKRC(fi_eq_readerr(eq, &err, 0), sizeof(err));
		CHECK(err.fid == &av->fid && err.context == &ctx && err.data == 1 && err.err > 0);
		CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), sizeof(ent));
		CHECK(ev == FI_AV_COMPLETE && ent.data == 1);
		CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), -FI_EAGAIN);
		CHECKRC(fi_eq_sread(eq, &ev, &ent, sizeof(ent), 30, 0), -FI_EAGAIN);
		/* An insert ends an fi_eq_sread already blocked. */
		{
			struct sread_arg a = { .eq = eq };
			pthread_t th;
			double t0 = now_ms();

			CHECK(pthread_create(&th, NULL, sread_thread, &a) == 0);
			usleep(100000);
			CHECKRC(fi_av_insert(av, addrs, 1, fa, 0, &ctx), 0);
			CHECK(pthread_join(th, NULL) == 0);
			CHECKRC(a.ret, sizeof(a.ent));
			CHECK(a.ev == FI_AV_COMPLETE && a.ent.data == 1);
			CHECK(now_ms() - t0 < 2000);
		}
		CHECKRC(fi_close(&av->fid), 0);
		CHECKRC(fi_close(&eq->fid), 0);
	}
	attr.flags = 0;
	attr.type = 42;
	CHECK(fi_av_open(dom, &attr, &av, NULL) < 0);
	CHECK(fi_av_open(dom, NULL, &av, NULL) < 0);
}

static void test_mr(void)
{
	static char buf[4096], buf2[64];
	struct fid_mr *mr, *mr2;
	struct fid_cntr *c;
	struct fi_cntr_attr cattr;
	struct iovec iov[2];
	struct fi_mr_attr attr;

	CHECKRC(fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | FI_RECV | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			  (void *)21), 0);
	CHECK(mr->fid.fclass == FI_CLASS_MR && mr->fid.context == (void *)21);
	CHECK(fi_mr_desc(mr) == (void *)mr);
	CHECK(((struct gofab_mr *)fi_mr_desc(mr))->h != 0);

	/* A second region gets another key; a requested key in use is refused
	 * where the application chooses keys. */
	CHECKRC(fi_mr_reg(dom, buf2, sizeof(buf2), FI_SEND, 0, 1, 0, &mr2, NULL), 0);
	CHECK(fi_mr_key(mr2) != fi_mr_key(mr) || fi_mr_key(mr) == 0);

	/* Counter binding: the counter cannot close while bound. */
	memset(&cattr, 0, sizeof(cattr));
	CHECKRC(fi_cntr_open(dom, &cattr, &c, NULL), 0);
	CHECKRC(fi_mr_bind(mr, &c->fid, FI_REMOTE_WRITE), 0);
	CHECKRC(fi_close(&c->fid), -FI_EBUSY);
	CHECK(fi_mr_bind(mr, &c->fid, 1ULL << 61) < 0);
	CHECKRC(fi_mr_bind(mr, &dom->fid, 0), -FI_EINVAL);
	CHECKRC(fi_mr_bind(mr, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_mr_enable(mr), 0);
	CHECKRC(fi_control(&mr->fid, FI_BACKLOG, NULL), -FI_ENOSYS);
	CHECKRC(fi_close(&mr->fid), 0);
	CHECKRC(fi_close(&c->fid), 0);
	CHECKRC(fi_close(&mr2->fid), 0);

	/* regv and regattr. */
	iov[0].iov_base = buf;
	iov[0].iov_len = 100;
	iov[1].iov_base = buf + 200;
	iov[1].iov_len = 100;
	CHECKRC(fi_mr_regv(dom, iov, 1, FI_SEND, 0, 0, 0, &mr, NULL), 0);
	CHECKRC(fi_close(&mr->fid), 0);
	memset(&attr, 0, sizeof(attr));
	attr.mr_iov = iov;
	attr.iov_count = 1;
	attr.access = FI_RECV;
	attr.context = (void *)3;
	CHECKRC(fi_mr_regattr(dom, &attr, 0, &mr), 0);
	CHECK(mr->fid.context == (void *)3);
	CHECKRC(fi_close(&mr->fid), 0);

	/* Bad input. */
	CHECKRC(fi_mr_reg(dom, NULL, 16, FI_SEND, 0, 0, 0, &mr, NULL), -FI_EINVAL);
	CHECK(fi_mr_reg(dom, buf, 16, 1ULL << 62, 0, 0, 0, &mr, NULL) < 0);
	CHECKRC(fi_mr_reg(dom, buf, 16, FI_SEND, 0, 0, 1ULL << 5, &mr, NULL), -FI_EBADFLAGS);
	CHECKRC(fi_mr_regattr(dom, NULL, 0, &mr), -FI_EINVAL);
	attr.mr_iov = NULL;
	CHECKRC(fi_mr_regattr(dom, &attr, 0, &mr), -FI_EINVAL);
	CHECKRC(fi_mr_regv(dom, iov, 1 << 20, FI_SEND, 0, 0, 0, &mr, NULL), -FI_EINVAL);
}

static void test_sets(void)
{
	struct fi_wait_attr wattr;
	struct fi_poll_attr pattr;
	struct fi_cq_attr cqattr;
	struct fi_cntr_attr cattr;
	struct fid_wait *ws;
	struct fid_poll *ps;
	struct fid_cq *cq;
	struct fid_cntr *c;
	struct fid *fids[1];
	void *ctx[4];
	double t;
	int fd;

	memset(&wattr, 0, sizeof(wattr));
	wattr.wait_obj = FI_WAIT_UNSPEC;
	CHECKRC(fi_wait_open(fab, &wattr, &ws), 0);
	CHECK(ws->fid.fclass == FI_CLASS_WAIT);
	fd = -1;
	CHECKRC(fi_control(&ws->fid, FI_GETWAIT, &fd), 0);
	CHECK(fd >= 0);

	memset(&cqattr, 0, sizeof(cqattr));
	cqattr.format = FI_CQ_FORMAT_CONTEXT;
	cqattr.wait_obj = FI_WAIT_SET;
	cqattr.wait_set = ws;
	CHECKRC(fi_cq_open(dom, &cqattr, &cq, (void *)&cq), 0);
	memset(&cattr, 0, sizeof(cattr));
	cattr.wait_obj = FI_WAIT_SET;
	cattr.wait_set = ws;
	CHECKRC(fi_cntr_open(dom, &cattr, &c, (void *)&c), 0);
	CHECKRC(fi_close(&ws->fid), -FI_EBUSY);

	/* Nothing happens: fi_wait times out. */
	t = now_ms();
	CHECKRC(fi_wait(ws, 150), -FI_ETIMEDOUT);
	CHECK(now_ms() - t >= 140);
	fids[0] = &ws->fid;
	CHECKRC(fi_trywait(fab, fids, 1), 0);
	/* The counter changes: fi_wait returns at once. */
	CHECKRC(fi_cntr_add(c, 1), 0);
	t = now_ms();
	CHECKRC(fi_wait(ws, 5000), 0);
	CHECK(now_ms() - t < 2000);
	CHECKRC(fi_wait(ws, 50), -FI_ETIMEDOUT); /* seen: no longer an event */

	/* An EQ in the set: an event written ends fi_wait. */
	{
		struct fi_eq_attr eattr;
		struct fid_eq *eq;
		struct fi_eq_entry ent;
		uint32_t ev;

		memset(&eattr, 0, sizeof(eattr));
		eattr.flags = FI_WRITE;
		eattr.wait_obj = FI_WAIT_SET;
		eattr.wait_set = ws;
		CHECKRC(fi_eq_open(fab, &eattr, &eq, NULL), 0);
		CHECKRC(fi_wait(ws, 50), -FI_ETIMEDOUT);
		memset(&ent, 0, sizeof(ent));
		CHECKRC(fi_eq_write(eq, FI_NOTIFY, &ent, sizeof(ent), 0), sizeof(ent));
		t = now_ms();
		CHECKRC(fi_wait(ws, 5000), 0);
		CHECK(now_ms() - t < 2000);
		CHECKRC(fi_eq_read(eq, &ev, &ent, sizeof(ent), 0), sizeof(ent));
		CHECKRC(fi_close(&eq->fid), 0);
	}

	/* Poll set over the CQ and the counter. */
	memset(&pattr, 0, sizeof(pattr));
	CHECKRC(fi_poll_open(dom, &pattr, &ps), 0);
	CHECK(ps->fid.fclass == FI_CLASS_POLL);
	CHECKRC(fi_poll_add(ps, &cq->fid, 0), 0);
	CHECKRC(fi_poll_add(ps, &c->fid, 0), 0);
	CHECKRC(fi_poll_add(ps, &c->fid, 0), -FI_EINVAL); /* already in */
	CHECKRC(fi_poll_add(ps, &dom->fid, 0), -FI_EINVAL);
	CHECKRC(fi_poll_add(ps, &cq->fid, 1), -FI_EBADFLAGS);
	CHECKRC(fi_poll(ps, ctx, 4), 0);
	CHECKRC(fi_cntr_adderr(c, 1), 0); /* an error value change is an event */
	CHECKRC(fi_poll(ps, ctx, 4), 1);
	CHECK(ctx[0] == (void *)&c);
	CHECKRC(fi_poll(ps, ctx, 4), 0);
	CHECKRC(fi_cntr_add(c, 1), 0); /* fi_cntr_add resets what fi_poll reports */
	CHECKRC(fi_poll(ps, ctx, 4), 0);
	CHECKRC(fi_poll(ps, NULL, 4), -FI_EINVAL);
	CHECKRC(fi_poll(ps, ctx, 0), 0);
	CHECKRC(fi_close(&cq->fid), -FI_EBUSY); /* in the poll set */
	CHECKRC(fi_close(&ps->fid), -FI_EBUSY);
	CHECKRC(fi_poll_del(ps, &cq->fid, 0), 0);
	CHECKRC(fi_poll_del(ps, &cq->fid, 0), -FI_EINVAL);
	CHECKRC(fi_poll_del(ps, &c->fid, 0), 0);
	CHECKRC(fi_close(&ps->fid), 0);

	CHECKRC(fi_close(&cq->fid), 0);
	CHECKRC(fi_close(&c->fid), 0);
	CHECKRC(fi_close(&ws->fid), 0);

	wattr.wait_obj = FI_WAIT_NONE;
	CHECK(fi_wait_open(fab, &wattr, &ws) < 0);
	wattr.wait_obj = FI_WAIT_FD;
	wattr.flags = 1;
	CHECKRC(fi_wait_open(fab, &wattr, &ws), -FI_EBADFLAGS);
	CHECK(fi_wait_open(fab, NULL, &ws) < 0);
	pattr.flags = 1;
	CHECK(fi_poll_open(dom, &pattr, &ps) < 0);
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	void *lib;
	int (*live)(void);
	int base;

	CHECK(argc == 3);
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->mode = ~0ULL;
	hints->ep_attr->type = strcmp(argv[1], "goudp") ? FI_EP_MSG : FI_EP_DGRAM;
	CHECKRC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info), 0);
	CHECK(strcmp(info->fabric_attr->prov_name, argv[1]) == 0);

	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();

	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	test_cq();
	test_cntr();
	test_av();
	test_mr();
	test_sets();
	test_eq(); /* closes the domain */
	CHECKRC(fi_close(&fab->fid), 0);
	CHECKRC(live(), base);

	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

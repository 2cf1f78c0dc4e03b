/* Data transfers through the plugin from C, in one process: with goudp
 * two DGRAM endpoints send and receive (msg and tagged, plain, vector,
 * msg and inject forms) through an AV; with gotcp a passive endpoint
 * listens, a client connects, the server accepts from the FI_CONNREQ
 * info, both exchange messages, the client shuts down and the server sees
 * FI_SHUTDOWN. CQ and EQ reads are bounded. argv: provider,
 * libgofabric.so. Prints "ok"; on failure the failing check, exit 1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gofab.h"
#include "check.h"

static struct fid_cq *cqs[2];

static struct fid_eq *eq;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one completion from cq (reading it progresses its endpoints);
 * 10 s bound. */
static void cq_one(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	double end = now() + 10;
	ssize_t rc;

	for (;;) {
		rc = fi_cq_read(cq, e, 1);
		if (rc == 1)
			return;
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };
			fi_cq_readerr(cq, &err, 0);
			fprintf(stderr, "cq error %d (%s)\n", err.err, fi_strerror(err.err));
			exit(1);
		}
		CHECKRC(rc, -FI_EAGAIN);
		CHECK(now() < end);
	}
}

/* cq_one while polling other, which must stay empty (it progresses the
 * target side of an RMA operation). */
static void cq_one_poll(struct fid_cq *cq, struct fid_cq *other, struct fi_cq_tagged_entry *e)
{
	double end = now() + 10;
	struct fi_cq_tagged_entry x;
	ssize_t rc;

	for (;;) {
		rc = fi_cq_read(cq, e, 1);
		if (rc == 1)
			return;
		CHECKRC(rc, -FI_EAGAIN);
		CHECKRC(fi_cq_read(other, &x, 1), -FI_EAGAIN);
		CHECK(now() < end);
	}
}

/* Reads one EQ event; 10 s bound. */
static uint32_t eq_one(struct fi_eq_cm_entry *e, size_t size)
{
	double end = now() + 10;
	uint32_t event;
	ssize_t rc;

	for (;;) {
		rc = fi_eq_read(eq, &event, e, size, 0);
		if (rc >= 0)
			return event;
		if (rc == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };
			fi_eq_readerr(eq, &err, 0);
			fprintf(stderr, "eq error %d (%s)\n", err.err, fi_strerror(err.err));
			exit(1);
		}
		CHECKRC(rc, -FI_EAGAIN);
		CHECK(now() < end);
	}
}

static struct fi_info *getinfo(const char *prov, enum fi_ep_type type)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(prov);
	hints->caps = type == FI_EP_MSG ? FI_MSG | FI_TAGGED | FI_RMA : FI_MSG; /* udp: no tags */
	hints->mode = ~0ULL;
	hints->ep_attr->type = type;
	hints->domain_attr->mr_mode = 0;
	CHECKRC(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info), 0);
	fi_freeinfo(hints);
	return info;
}

static void fill(char *b, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (char)(seed + i * 7);
}

static void dgram(const char *prov)
{
	struct fi_info *info = getinfo(prov, FI_EP_DGRAM);
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_ep *ep[2];
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_cq_tagged_entry e;
	fi_addr_t peer[2];
	char name[2][64], sbuf[256], rbuf[256];
	struct iovec iov[2];
	struct fi_msg msg;
	size_t len;
	int i;

	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	CHECKRC(fi_av_open(dom, &av_attr, &av, NULL), 0);
	for (i = 0; i < 2; i++) {
		CHECKRC(fi_cq_open(dom, &cq_attr, &cqs[i], NULL), 0);
		CHECKRC(fi_endpoint(dom, info, &ep[i], NULL), 0);
		CHECKRC(fi_ep_bind(ep[i], &cqs[i]->fid, FI_TRANSMIT | FI_RECV), 0);
		CHECKRC(fi_ep_bind(ep[i], &av->fid, 0), 0);
		CHECKRC(fi_ep_bind(ep[i], &av->fid, 0), -FI_EINVAL); /* bound already */
		CHECKRC(fi_enable(ep[i]), 0);
		len = sizeof(name[i]);
		CHECKRC(fi_getname(&ep[i]->fid, name[i], &len), 0);
		CHECKRC(fi_av_insert(av, name[i], 1, &peer[i], 0, NULL), 1);
	}

	/* ep0 -> ep1: fi_send / fi_recv; contexts come back as given. */
	fill(sbuf, 100, 1);
	CHECKRC(fi_recv(ep[1], rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, (void *)3), 0);
	CHECKRC(fi_send(ep[0], sbuf, 100, NULL, peer[1], (void *)0x123456), 0);
	cq_one(cqs[0], &e);
	CHECK(e.op_context == (void *)0x123456 && (e.flags & FI_SEND));
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)3 && (e.flags & FI_RECV) && e.len == 100);
	CHECK(memcmp(sbuf, rbuf, 100) == 0);

	/* Vector send into a vector receive; fi_recvmsg, fi_sendmsg. */
	fill(sbuf, 200, 2);
	iov[0].iov_base = rbuf;
	iov[0].iov_len = 50;
	iov[1].iov_base = rbuf + 50;
	iov[1].iov_len = 200;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.iov_count = 2;
	msg.addr = FI_ADDR_UNSPEC;
	msg.context = (void *)4;
	CHECKRC(fi_recvmsg(ep[1], &msg, 1ULL << 62), -FI_EBADFLAGS);
	CHECKRC(fi_recvmsg(ep[1], &msg, FI_COMPLETION), 0);
	{
		struct iovec s[2] = { { sbuf, 120 }, { sbuf + 120, 80 } };
		struct fi_msg m = { .msg_iov = s, .iov_count = 2, .addr = peer[1], .context = (void *)5 };
		CHECKRC(fi_sendmsg(ep[0], &m, 1ULL << 62), -FI_EBADFLAGS);
		CHECKRC(fi_sendmsg(ep[0], &m, FI_COMPLETION), 0);
	}
	cq_one(cqs[0], &e);
	CHECK(e.op_context == (void *)5);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)4 && e.len == 200);
	CHECK(memcmp(sbuf, rbuf, 200) == 0);

	/* fi_inject: no send completion. */
	CHECKRC(fi_recv(ep[1], rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, (void *)10), 0);
	CHECKRC(fi_inject(ep[0], sbuf, 8, peer[1]), 0);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)10 && e.len == 8);
	CHECKRC(fi_cq_read(cqs[0], &e, 1), -FI_EAGAIN);

	/* A posted receive is cancelled. */
	CHECKRC(fi_recv(ep[1], rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, (void *)11), 0);
	CHECKRC(fi_cancel(&ep[1]->fid, (void *)11), 0);
	CHECKRC(fi_cancel(&ep[1]->fid, (void *)11), -FI_ENOENT);
	CHECK(ep[0]->ops->tx_size_left(ep[0]) > 0);

	for (i = 0; i < 2; i++)
		CHECKRC(fi_close(&ep[i]->fid), 0);
	for (i = 0; i < 2; i++) {
		CHECKRC(fi_close(&cqs[i]->fid), 0);
		cqs[i] = NULL;
	}
	CHECKRC(fi_close(&av->fid), 0);
	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

static void msgconn(const char *prov)
{
	struct fi_info *info = getinfo(prov, FI_EP_MSG);
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_pep *pep;
	struct fid_ep *cli, *srv;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_cq_tagged_entry e;
	union {
		struct fi_eq_cm_entry cm;
		char space[sizeof(struct fi_eq_cm_entry) + 256];
	} ev;
	char addr[64], peer[64], sbuf[256], rbuf[256];
	struct iovec iov[1];
	struct fi_msg_tagged tmsg;
	size_t len;
	struct fi_info *req;

	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_eq_open(fab, &eq_attr, &eq, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	CHECKRC(fi_cq_open(dom, &cq_attr, &cqs[0], NULL), 0);
	CHECKRC(fi_cq_open(dom, &cq_attr, &cqs[1], NULL), 0);

	CHECKRC(fi_passive_ep(fab, info, &pep, (void *)0x5000), 0);
	CHECKRC(fi_pep_bind(pep, &eq->fid, 0), 0);
	CHECKRC(fi_listen(pep), 0);
	len = sizeof(addr);
	CHECKRC(fi_getname(&pep->fid, addr, &len), 0);

	CHECKRC(fi_endpoint(dom, info, &cli, (void *)0x6000), 0);
	CHECKRC(fi_ep_bind(cli, &eq->fid, 0), 0);
	CHECKRC(fi_ep_bind(cli, &cqs[0]->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECKRC(fi_connect(cli, addr, "hello", 6), 0);

	CHECKRC(eq_one(&ev.cm, sizeof(ev)), FI_CONNREQ);
	CHECK(ev.cm.fid == &pep->fid);
	CHECK(ev.cm.info && ev.cm.info->handle && ev.cm.info->handle->fclass == FI_CLASS_CONNREQ);
	CHECK(strcmp((char *)ev.cm.data, "hello") == 0);
	req = ev.cm.info;
	CHECKRC(fi_endpoint(dom, req, &srv, (void *)0x7000), 0);
	CHECKRC(fi_ep_bind(srv, &eq->fid, 0), 0);
	CHECKRC(fi_ep_bind(srv, &cqs[1]->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECKRC(fi_recv(srv, rbuf, sizeof(rbuf), NULL, 0, (void *)12), -FI_EOPBADSTATE); /* not enabled yet */
	CHECKRC(fi_accept(srv, "world", 6), 0);
	fi_freeinfo(req);

	/* Both sides see FI_CONNECTED, each for its own endpoint. */
	{
		int cli_ok = 0, srv_ok = 0;
		while (!cli_ok || !srv_ok) {
			CHECKRC(eq_one(&ev.cm, sizeof(ev)), FI_CONNECTED);
			if (ev.cm.fid == &cli->fid)
				cli_ok = 1;
			else if (ev.cm.fid == &srv->fid)
				srv_ok = 1;
			else
				CHECK(0);
		}
	}
	len = sizeof(peer);
	CHECKRC(fi_getpeer(cli, peer, &len), 0);
	CHECK(len == info->src_addrlen);

	/* Messages both ways. */
	fill(sbuf, 100, 4);
	CHECKRC(fi_recv(srv, rbuf, sizeof(rbuf), NULL, 0, (void *)12), 0);
	CHECKRC(fi_send(cli, sbuf, 100, NULL, 0, (void *)13), 0);
	cq_one(cqs[0], &e);
	CHECK(e.op_context == (void *)13);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)12 && e.len == 100 && memcmp(sbuf, rbuf, 100) == 0);
	fill(sbuf, 50, 5);
	CHECKRC(fi_recv(cli, rbuf, sizeof(rbuf), NULL, 0, (void *)14), 0);
	CHECKRC(fi_senddata(srv, sbuf, 50, NULL, 77, 0, (void *)15), 0);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)15);
	cq_one(cqs[0], &e);
	CHECK(e.op_context == (void *)14 && e.len == 50 && (e.flags & FI_REMOTE_CQ_DATA) && e.data == 77);
	CHECK(memcmp(sbuf, rbuf, 50) == 0);

	/* Tagged: the receive for tag 9 takes the tag-9 message. */
	fill(sbuf, 64, 3);
	CHECKRC(fi_trecv(srv, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 9, 0, (void *)6), 0);
	CHECKRC(fi_tsend(cli, sbuf, 64, NULL, 0, 9, (void *)7), 0);
	cq_one(cqs[0], &e);
	CHECK(e.op_context == (void *)7);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)6 && e.tag == 9 && e.len == 64 && (e.flags & FI_TAGGED));
	CHECK(memcmp(sbuf, rbuf, 64) == 0);
	memset(&tmsg, 0, sizeof(tmsg));
	iov[0].iov_base = rbuf;
	iov[0].iov_len = sizeof(rbuf);
	tmsg.msg_iov = iov;
	tmsg.iov_count = 1;
	tmsg.addr = FI_ADDR_UNSPEC;
	tmsg.tag = 10;
	tmsg.context = (void *)8;
	CHECKRC(fi_trecvmsg(srv, &tmsg, 0), 0);
	CHECKRC(fi_tinject(cli, sbuf, 16, 0, 10), 0);
	cq_one(cqs[1], &e);
	CHECK(e.op_context == (void *)8 && e.tag == 10 && e.len == 16);

	/* RMA: the client writes into the server's registered buffer and
	 * reads it back, its own buffers passed with their descriptors. */
	{
		struct fid_mr *smr, *cmr;
		char back[64];
		uint64_t key;

		memset(rbuf, 0, sizeof(rbuf));
		CHECKRC(fi_mr_reg(dom, rbuf, sizeof(rbuf), FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 42, 0,
				  &smr, NULL), 0);
		CHECKRC(fi_mr_reg(dom, sbuf, sizeof(sbuf), FI_WRITE | FI_READ, 0, 43, 0, &cmr, NULL), 0);
		key = fi_mr_key(smr);
		fill(sbuf, 64, 6);
		CHECKRC(fi_write(cli, sbuf, 64, fi_mr_desc(cmr), 0, 16, key, (void *)16), 0);
		cq_one_poll(cqs[0], cqs[1], &e);
		CHECK(e.op_context == (void *)16 && (e.flags & FI_RMA) && (e.flags & FI_WRITE));
		memset(back, 0, sizeof(back));
		CHECKRC(fi_read(cli, back, 64, NULL, 0, 16, key, (void *)17), 0);
		cq_one_poll(cqs[0], cqs[1], &e);
		CHECK(e.op_context == (void *)17 && (e.flags & FI_READ));
		CHECK(memcmp(back, sbuf, 64) == 0 && memcmp(rbuf + 16, sbuf, 64) == 0);
		/* A desc that is not an MR: an error, nothing posted. */
		CHECKRC(fi_write(cli, sbuf, 64, (void *)sbuf, 0, 16, key, NULL), -FI_EINVAL);
		CHECKRC(fi_close(&cmr->fid), 0);
		CHECKRC(fi_close(&smr->fid), 0);
	}

	/* Shutdown: the server sees FI_SHUTDOWN (the client may see its own). */
	CHECKRC(fi_shutdown(cli, 0), 0);
	do {
		CHECKRC(eq_one(&ev.cm, sizeof(ev)), FI_SHUTDOWN);
		CHECK(ev.cm.fid == &srv->fid || ev.cm.fid == &cli->fid);
	} while (ev.cm.fid != &srv->fid);

	CHECKRC(fi_close(&cli->fid), 0);
	CHECKRC(fi_close(&srv->fid), 0);
	CHECKRC(fi_close(&pep->fid), 0);
	CHECKRC(fi_close(&cqs[0]->fid), 0);
	CHECKRC(fi_close(&cqs[1]->fid), 0);
	cqs[0] = cqs[1] = NULL;
	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&eq->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

int main(int argc, char **argv)
{
	struct fi_info *info;
	void *lib;
	int (*live)(void);
	int base;

	CHECK(argc == 3);
	/* Load the plugin (the first fi_getinfo does), then count handles. */
	info = getinfo(argv[1], strcmp(argv[1], "goudp") ? FI_EP_MSG : FI_EP_DGRAM);
	fi_freeinfo(info);
	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();

	if (strcmp(argv[1], "goudp") == 0)
		dgram(argv[1]);
	else
		msgconn(argv[1]);
	CHECKRC(live(), base);
	printf("ok\n");
	return 0;
}

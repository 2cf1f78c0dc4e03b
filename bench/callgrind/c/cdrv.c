/*
 * cdrv: the C half of bench/callgrind/count.sh, the loop of main.go over
 * the C libfabric's udp provider (two FI_EP_DGRAM endpoints on loopback,
 * FI_CQ_FORMAT_CONTEXT, no wait object).
 *
 *   cdrv ROUNDS inject|send|empty [SIZE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

struct env {
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_ep *ep;
	struct fid_cq *txcq, *rxcq;
	struct fid_av *av;
	char name[64];
	size_t namelen;
};

#define CHECK(x)                                                               \
	do {                                                                   \
		long r_ = (long)(x);                                           \
		if (r_) {                                                      \
			fprintf(stderr, "cdrv: %s: %ld %s\n", #x, r_,          \
				fi_strerror((int)-r_));                        \
			exit(1);                                               \
		}                                                              \
	} while (0)

static struct fi_info *info;
static struct env A, P;
static fi_addr_t to;
static char msg[1472], buf[1472];
static size_t size = 64;
static struct fi_cq_entry ent;
static int ctx;

static void open_env(struct env *e)
{
	struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr aa = {.type = FI_AV_TABLE};

	CHECK(fi_fabric(info->fabric_attr, &e->fab, NULL));
	CHECK(fi_domain(e->fab, info, &e->dom, NULL));
	CHECK(fi_cq_open(e->dom, &ca, &e->txcq, NULL));
	CHECK(fi_cq_open(e->dom, &ca, &e->rxcq, NULL));
	CHECK(fi_av_open(e->dom, &aa, &e->av, NULL));
	CHECK(fi_endpoint(e->dom, info, &e->ep, NULL));
	CHECK(fi_ep_bind(e->ep, &e->txcq->fid, FI_TRANSMIT));
	CHECK(fi_ep_bind(e->ep, &e->rxcq->fid, FI_RECV));
	CHECK(fi_ep_bind(e->ep, &e->av->fid, 0));
	CHECK(fi_enable(e->ep));
	e->namelen = sizeof e->name;
	CHECK(fi_getname(&e->ep->fid, e->name, &e->namelen));
}

__attribute__((noinline)) void post_recv(void) { CHECK(fi_recv(P.ep, buf, sizeof buf, NULL, FI_ADDR_UNSPEC, &ctx)); }
__attribute__((noinline)) void inject(void) { CHECK(fi_inject(A.ep, msg, size, to)); }
__attribute__((noinline)) void send_msg(void) { CHECK(fi_send(A.ep, msg, size, NULL, to, &ctx)); }
__attribute__((noinline)) void read_tx(void) { while (fi_cq_read(A.txcq, &ent, 1) != 1) ; }
__attribute__((noinline)) void read_rx(void) { while (fi_cq_read(P.rxcq, &ent, 1) != 1) ; }
__attribute__((noinline)) void empty_poll(void) { (void)fi_cq_read(P.rxcq, &ent, 1); }

__attribute__((noinline)) void measure_inject(int n)
{
	for (int i = 0; i < n; i++) {
		post_recv();
		inject();
		read_rx();
	}
}

__attribute__((noinline)) void measure_send(int n)
{
	for (int i = 0; i < n; i++) {
		post_recv();
		send_msg();
		read_tx();
		read_rx();
	}
}

__attribute__((noinline)) void measure_empty(int n)
{
	for (int i = 0; i < n; i++)
		empty_poll();
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	const char *mode;
	int n;

	if (argc < 3) {
		fprintf(stderr, "usage: cdrv ROUNDS inject|send|empty [SIZE]\n");
		return 2;
	}
	n = atoi(argv[1]);
	mode = argv[2];
	if (argc > 3)
		size = (size_t)atoi(argv[3]);
	if (size > sizeof msg) {
		fprintf(stderr, "cdrv: size %zu out of 0..%zu\n", size, sizeof msg);
		return 2;
	}
	hints = fi_allocinfo();
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->fabric_attr->prov_name = strdup("udp");
	hints->mode = FI_CONTEXT;
	CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info));
	open_env(&A);
	open_env(&P);
	if (fi_av_insert(A.av, P.name, 1, &to, 0, NULL) != 1) {
		fprintf(stderr, "cdrv: fi_av_insert failed\n");
		return 1;
	}
	if (!strcmp(mode, "inject")) {
		measure_inject(1000); /* warm-up */
		measure_inject(n);
	} else if (!strcmp(mode, "send")) {
		measure_send(1000);
		measure_send(n);
	} else if (!strcmp(mode, "empty")) {
		post_recv();
		measure_empty(n);
	} else {
		fprintf(stderr, "cdrv: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}

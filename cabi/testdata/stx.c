/* Shared contexts through the plugin from C, in one process: fi_getinfo
 * with ep_attr tx_ctx_cnt and rx_ctx_cnt FI_SHARED_CONTEXT, one STX and
 * one SRX shared by three connectionless endpoints of provider argv[1]
 * (goudp, gotcp's FI_EP_RDM, goshm) that send to each other, as fabtests'
 * fi_shared_ctx does; the bind and close errors of fi_endpoint(3); then
 * an FI_WAIT_POLLFD CQ answers FI_GETWAIT with a struct fi_wait_pollfd.
 * argv[2] is libgofabric.so (no live handle may remain). Prints "ok"; on
 * failure the failing check, exit 1. */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gofab.h"
#include "check.h"

#define NEP 3

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one completion from cq, progressing every CQ; 10 s bound. */
static void cq_one(struct fid_cq *cq, struct fid_cq **all, struct fi_cq_tagged_entry *e)
{
	double end = now() + 10;
	ssize_t rc;
	int i;

	for (;;) {
		rc = fi_cq_read(cq, e, 1);
		if (rc == 1)
			return;
		CHECKRC(rc, -FI_EAGAIN);
		CHECK(now() < end);
		for (i = 0; i < NEP; i++)
			fi_cq_read(all[i], NULL, 0);
	}
}

static void pollfd_cq(struct fid_fabric *fab, struct fid_domain *dom)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_POLLFD };
	struct fi_wait_pollfd pfd = { 0 };
	struct pollfd fds[16];
	enum fi_wait_obj wo;
	struct fid_cq *cq;
	struct fid *fid;
	size_t i;

	CHECKRC(fi_cq_open(dom, &attr, &cq, NULL), 0);
	CHECKRC(fi_control(&cq->fid, FI_GETWAITOBJ, &wo), 0);
	CHECK(wo == FI_WAIT_POLLFD);
	/* nfds 0: the change index and the count needed. */
	pfd.nfds = 0;
	CHECKRC(fi_control(&cq->fid, FI_GETWAIT, &pfd), -FI_ETOOSMALL);
	CHECK(pfd.nfds >= 1 && pfd.nfds <= 16);
	pfd.fd = fds;
	pfd.nfds = 16;
	memset(fds, 0xff, sizeof(fds));
	CHECKRC(fi_control(&cq->fid, FI_GETWAIT, &pfd), 0);
	CHECK(pfd.nfds >= 1 && pfd.nfds <= 16);
	for (i = 0; i < pfd.nfds; i++) {
		CHECK(fcntl(fds[i].fd, F_GETFD) >= 0);
		CHECK(fds[i].events == POLLIN && fds[i].revents == 0);
	}
	/* Nothing queued: safe to block, and nothing readable; a signal
	 * makes a descriptor readable. */
	fid = &cq->fid;
	CHECKRC(fi_trywait(fab, &fid, 1), 0);
	CHECKRC(poll(fds, pfd.nfds, 0), 0);
	CHECKRC(fi_cq_signal(cq), 0);
	CHECKRC(poll(fds, pfd.nfds, 5000) >= 1, 1);
	CHECKRC(fi_close(&cq->fid), 0);
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom, *dom2;
	struct fid_av *av;
	struct fid_ep *ep[NEP], *srx, *plain;
	struct fid_stx *stx, *stx2, *other;
	struct fid_cq *cq[NEP];
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_tx_attr small;
	struct fi_cq_tagged_entry e;
	fi_addr_t addr[NEP];
	char name[NEP][128], buf[NEP][16], msg[NEP][4];
	size_t len;
	void *lib;
	int (*live)(void);
	int base, i, got;

	CHECK(argc == 3);
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->caps = FI_MSG;
	hints->mode = ~0ULL;
	hints->ep_attr->type = strcmp(argv[1], "goudp") ? FI_EP_RDM : FI_EP_DGRAM;
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	CHECKRC(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info), 0);
	CHECK(info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT);
	CHECK(info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT);
	CHECK(info->domain_attr->max_ep_stx_ctx > 0 && info->domain_attr->max_ep_srx_ctx > 0);
	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();
	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom2, NULL), 0);
	CHECKRC(fi_av_open(dom, &av_attr, &av, NULL), 0);
	CHECKRC(fi_stx_context(dom, info->tx_attr, &stx, (void *)7), 0);
	CHECK(stx->fid.fclass == FI_CLASS_STX_CTX && stx->fid.context == (void *)7);
	CHECKRC(fi_stx_context(dom2, info->tx_attr, &other, NULL), 0);
	small = *info->tx_attr;
	small.size = 1;
	CHECKRC(fi_stx_context(dom, &small, &stx2, NULL), 0);
	CHECKRC(fi_srx_context(dom, info->rx_attr, &srx, NULL), 0);

	for (i = 0; i < NEP; i++) {
		CHECKRC(fi_cq_open(dom, &cq_attr, &cq[i], NULL), 0);
		CHECKRC(fi_endpoint(dom, info, &ep[i], NULL), 0);
		CHECKRC(fi_ep_bind(ep[i], &cq[i]->fid, FI_TRANSMIT | FI_RECV), 0);
		CHECKRC(fi_ep_bind(ep[i], &av->fid, 0), 0);
		CHECKRC(fi_ep_bind(ep[i], &srx->fid, 0), 0);
		CHECKRC(fi_enable(ep[i]), -FI_ENOCQ); /* no STX yet */
		CHECKRC(fi_ep_bind(ep[i], &other->fid, 0), -FI_EDOMAIN);
		CHECKRC(fi_ep_bind(ep[i], &stx2->fid, 0), -FI_EINVAL); /* not a subset */
		CHECKRC(fi_ep_bind(ep[i], &stx->fid, 0), 0);
		CHECKRC(fi_ep_bind(ep[i], &stx->fid, 0), -FI_EINVAL); /* twice */
		CHECKRC(fi_enable(ep[i]), 0);
		len = sizeof(name[i]);
		CHECKRC(fi_getname(&ep[i]->fid, name[i], &len), 0);
		CHECKRC(fi_av_insert(av, name[i], 1, &addr[i], 0, NULL), 1);
	}
	/* An endpoint with its own transmit context takes no STX. */
	info->ep_attr->tx_ctx_cnt = 1;
	CHECKRC(fi_endpoint(dom, info, &plain, NULL), 0);
	CHECKRC(fi_ep_bind(plain, &stx->fid, 0), -FI_EINVAL);
	CHECKRC(fi_close(&plain->fid), 0);
	CHECKRC(fi_close(&stx->fid), -FI_EBUSY);

	for (i = 0; i < NEP; i++)
		CHECKRC(fi_recv(srx, buf[i], sizeof(buf[i]), NULL, FI_ADDR_UNSPEC, (void *)(long)(100 + i)), 0);
	for (i = 0; i < NEP; i++) {
		int to = (i + 1) % NEP;

		snprintf(msg[i], sizeof(msg[i]), "m%d", i);
		CHECKRC(fi_send(ep[i], msg[i], 3, NULL, addr[to], (void *)(long)(1 + i)), 0);
		cq_one(cq[i], cq, &e);
		CHECK(e.op_context == (void *)(long)(1 + i) && (e.flags & FI_SEND));
		cq_one(cq[to], cq, &e);
		CHECK(e.flags & FI_RECV);
		got = (int)(long)e.op_context - 100;
		CHECK(got >= 0 && got < NEP && e.len == 3 && strcmp(buf[got], msg[i]) == 0);
	}
	for (i = 0; i < NEP; i++)
		CHECKRC(fi_cq_read(cq[i], &e, 1), -FI_EAGAIN);

	for (i = 0; i < NEP; i++) {
		CHECKRC(fi_close(&ep[i]->fid), 0);
		CHECKRC(fi_close(&cq[i]->fid), 0);
	}
	CHECKRC(fi_close(&stx->fid), 0);
	CHECKRC(fi_close(&stx2->fid), 0);
	CHECKRC(fi_close(&other->fid), 0);
	CHECKRC(fi_close(&srx->fid), 0);
	pollfd_cq(fab, dom);
	CHECKRC(fi_close(&av->fid), 0);
	CHECKRC(fi_close(&dom2->fid), 0);
	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	CHECKRC(live(), base);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

/* The endpoint side of the plugin from C, without queues: opens active,
 * passive, shared-context and alias endpoints of provider argv[1] through
 * the C libfabric, pokes bad input and states where no CQ, EQ or AV is
 * needed, closes everything and checks that the plugin (argv[2],
 * libgofabric.so) has no live handle left. Prints "ok" on success; on
 * failure the failing check and exits 1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gofab.h"
#include "check.h"

/* CHECKRC prints the value it got on failure. */
int main(int argc, char **argv)
{
	struct fi_info *hints, *info = NULL, *info2;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_ep *ep, *ep2 = NULL, *alias = NULL, *srx = NULL, *sep = NULL, *x = NULL;
	struct fid_stx *stx = NULL;
	struct fid_pep *pep = NULL;
	struct fid_mc *mc = NULL;
	struct gofab_ep stale;
	struct gofab_pep stale_pep;
	struct fi_atomic_attr aattr;
	struct iovec iov[8];
	struct fi_msg msg;
	char buf[64], addr[128];
	size_t len, count;
	uint64_t flags, v;
	void *lib;
	int (*live)(void);
	int base, msgep, i;

	CHECK(argc == 3);
	msgep = strcmp(argv[1], "goudp") != 0;
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->mode = ~0ULL;
	hints->ep_attr->type = msgep ? FI_EP_MSG : FI_EP_DGRAM;
	CHECKRC(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info), 0);

	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();

	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);

	/* Opening. */
	CHECKRC(fi_endpoint(dom, NULL, &ep, NULL), -FI_EINVAL);
	CHECKRC(dom->ops->endpoint(dom, info, NULL, NULL), -FI_EINVAL);
	CHECKRC(fi_endpoint2(dom, info, &ep2, 1ULL << 62, NULL), -FI_EBADFLAGS);
	CHECKRC(fi_endpoint2(dom, info, &ep2, FI_PEER_TRANSFER, NULL), -FI_ENOSYS);
	CHECK(ep2 == NULL);
	CHECKRC(fi_endpoint(dom, info, &ep, (void *)5), 0);
	CHECK(ep->fid.fclass == FI_CLASS_EP && ep->fid.context == (void *)5);
	CHECKRC(live(), base + 3);

	/* Not enabled: what is missing, and no data calls. */
	CHECKRC(fi_enable(ep), msgep ? -FI_ENOEQ : -FI_ENOAV);
	CHECKRC(fi_send(ep, buf, 8, NULL, 0, NULL), -FI_EOPBADSTATE);
	CHECKRC(fi_recv(ep, buf, 8, NULL, FI_ADDR_UNSPEC, NULL), -FI_EOPBADSTATE);
	CHECKRC(fi_tsend(ep, buf, 8, NULL, 0, 1, NULL), -FI_EOPBADSTATE);
	CHECKRC(fi_write(ep, buf, 8, NULL, 0, 0, 1, NULL), -FI_EOPBADSTATE);
	CHECKRC(fi_inject(ep, buf, 8, 0), -FI_EOPBADSTATE);
	CHECKRC(fi_cancel(&ep->fid, buf), -FI_EOPBADSTATE);
	CHECKRC(ep->ops->rx_size_left(ep), -FI_EOPBADSTATE); /* fi_rx_size_left is deprecated */
	CHECKRC(ep->ops->tx_size_left(ep), -FI_EOPBADSTATE);

	/* Bad input on the data calls: errors before any state. */
	CHECKRC(fi_send(ep, NULL, 8, NULL, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_recv(ep, (void *)16, 8, NULL, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_send(ep, buf, 8, (void *)buf, 0, NULL), -FI_EINVAL); /* not an MR */
	CHECKRC(fi_sendv(ep, NULL, NULL, 2, 0, NULL), -FI_EINVAL);
	for (i = 0; i < 8; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = 8;
	}
	CHECKRC(fi_sendv(ep, iov, NULL, info->tx_attr->iov_limit + 1, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_recvv(ep, iov, NULL, 1ULL << 40, 0, NULL), -FI_EINVAL);
	iov[1].iov_base = NULL;
	CHECKRC(fi_sendv(ep, iov, NULL, 2, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_sendmsg(ep, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_recvmsg(ep, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_tsendmsg(ep, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_readmsg(ep, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_atomicmsg(ep, NULL, 0), -FI_EINVAL);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = NULL;
	msg.iov_count = 3;
	CHECKRC(fi_sendmsg(ep, &msg, 0), -FI_EINVAL);
	CHECKRC(fi_atomic(ep, buf, 1, NULL, 0, 0, 1, (enum fi_datatype)99, FI_SUM, NULL), -FI_EINVAL);
	CHECKRC(fi_atomic(ep, NULL, 1, NULL, 0, 0, 1, FI_UINT64, FI_SUM, NULL), -FI_EINVAL);
	CHECKRC(fi_atomicvalid(ep, FI_UINT64, FI_SUM, NULL), -FI_EINVAL);

	/* Control. */
	flags = FI_TRANSMIT;
	CHECKRC(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT | FI_COMPLETION;
	CHECKRC(fi_control(&ep->fid, FI_SETOPSFLAG, &flags), 0);
	flags = FI_TRANSMIT;
	CHECKRC(fi_control(&ep->fid, FI_GETOPSFLAG, &flags), 0);
	CHECK(flags & FI_COMPLETION);
	CHECKRC(fi_control(&ep->fid, FI_GETOPSFLAG, NULL), -FI_EINVAL);
	CHECKRC(fi_control(&ep->fid, 12345, NULL), -FI_ENOSYS);
	CHECKRC(fi_ep_alias(ep, &alias, FI_TRANSMIT | FI_RECV), -FI_EINVAL);
	CHECKRC(fi_ep_alias(ep, &alias, FI_TRANSMIT), 0);
	CHECK(alias && alias->fid.fclass == FI_CLASS_EP && alias->fid.context == (void *)5);
	CHECKRC(fi_close(&alias->fid), 0);
	CHECKRC(fi_ep_bind(ep, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_ep_bind(ep, &dom->fid, 0), -FI_EINVAL);
	CHECKRC(fi_ep_bind(ep, &fab->fid, 0), -FI_EINVAL);
	CHECKRC(fi_open_ops(&ep->fid, "x", 0, (void **)&x, NULL), -FI_ENOSYS);
	CHECKRC(fi_tx_context(ep, 0, NULL, &x, NULL), -FI_ENOSYS);
	CHECKRC(fi_join(ep, addr, 0, &mc, NULL), -FI_ENOSYS);
	CHECKRC(fi_barrier(ep, 0, NULL), -FI_ENOSYS);

	/* Options and names. */
	len = sizeof(v);
	if (msgep) {
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), 0);
		CHECK(len == sizeof(size_t) && v > 0);
		len = 4;
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), -FI_ETOOSMALL);
		CHECK(len == sizeof(size_t));
	}
	CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, NULL), -FI_EINVAL);
	CHECKRC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, 4), -FI_EINVAL);
	CHECKRC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, NULL, 8), -FI_EINVAL);
	{
		int p2p = FI_HMEM_P2P_DISABLED;
		len = sizeof(v);
		CHECKRC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &p2p, sizeof(p2p)), -FI_ENOPROTOOPT);
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &v, &len), -FI_ENOPROTOOPT);
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_XPU_TRIGGER, &v, &len), -FI_ENOPROTOOPT);
		v = 65536;
		CHECKRC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &v, sizeof(v)), 0);
		v = 0;
		len = sizeof(v);
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &v, &len), 0);
		CHECK(v >= 65536);
		v = 0;
		CHECKRC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &v, sizeof(v)), -FI_EINVAL);
		len = sizeof(v);
		CHECKRC(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RX_SIZE, &v, &len), 0);
		CHECK(v == info->rx_attr->size);
	}
	CHECKRC(fi_getname(&ep->fid, addr, NULL), -FI_EINVAL);
	CHECKRC(fi_setname(&ep->fid, NULL, 16), -FI_EINVAL);
	CHECKRC(fi_connect(ep, (void *)8, NULL, 0), -FI_EINVAL);
	CHECKRC(fi_connect(ep, info->src_addr, NULL, 8), -FI_EINVAL);

	/* Shared contexts, scalable endpoints, atomic queries. */
	CHECKRC(fi_stx_context(dom, NULL, &stx, NULL) ?: fi_close(&stx->fid), 0); /* more: stx.c */
	/* Scalable endpoints where the provider has them (goudp, goshm,
	 * gotcp RDM): two contexts, the error cases of fi_endpoint(3). */
	if (info->domain_attr->max_ep_tx_ctx > 1) {
		struct fid_ep *tx, *rx, *other;
		CHECKRC(fi_scalable_ep(dom, info, &sep, (void *)11), 0);
		CHECK(sep->fid.fclass == FI_CLASS_SEP && sep->fid.context == (void *)11);
		CHECKRC(fi_tx_context(sep, 0, NULL, &tx, (void *)12), 0);
		CHECK(tx->fid.fclass == FI_CLASS_TX_CTX && tx->fid.context == (void *)12);
		CHECKRC(fi_tx_context(sep, 0, NULL, &other, NULL), -FI_EBUSY);
		CHECKRC(fi_tx_context(sep, (int)info->ep_attr->tx_ctx_cnt, NULL, &other, NULL), -FI_EINVAL);
		CHECKRC(fi_rx_context(sep, -1, NULL, &other, NULL), -FI_EINVAL);
		CHECKRC(fi_rx_context(sep, 0, NULL, &rx, NULL), 0);
		CHECK(rx->fid.fclass == FI_CLASS_RX_CTX);
		CHECKRC(fi_close(&sep->fid), -FI_EBUSY);
		CHECKRC(fi_close(&tx->fid), 0);
		CHECKRC(fi_close(&rx->fid), 0);
		CHECKRC(fi_close(&sep->fid), 0);
	} else {
		CHECK(fi_scalable_ep(dom, info, &sep, NULL) < 0);
	}
	CHECKRC(fi_query_atomic(dom, FI_UINT64, FI_SUM, NULL, 0), -FI_EINVAL);
	CHECK(fi_query_atomic(dom, FI_UINT64, FI_SUM, &aattr, 0) <= 0);
	CHECKRC(fi_query_atomic(dom, FI_UINT64, FI_SUM, &aattr, 1ULL << 62), -FI_EBADFLAGS);
	CHECKRC(fi_query_collective(dom, FI_BARRIER, NULL, 0), -FI_ENOSYS);
	CHECKRC(fi_srx_context(dom, NULL, &srx, (void *)9), 0);
	CHECK(srx->fid.fclass == FI_CLASS_SRX_CTX && srx->fid.context == (void *)9);
	CHECKRC(fi_send(srx, buf, 8, NULL, 0, NULL), -FI_ENOSYS);
	CHECKRC(fi_recv(srx, (void *)16, 8, NULL, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_recv(srx, NULL, 8, NULL, FI_ADDR_UNSPEC, NULL), 0); /* a zero-length buffer */
	CHECKRC(fi_recv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, NULL), 0);
	CHECKRC(fi_close(&srx->fid), 0);

	/* Passive endpoints. */
	if (msgep) {
		CHECKRC(fi_passive_ep(fab, NULL, &pep, NULL), -FI_EINVAL);
		CHECKRC(fi_passive_ep(fab, info, &pep, (void *)6), 0);
		CHECK(pep->fid.fclass == FI_CLASS_PEP && pep->fid.context == (void *)6);
		CHECKRC(fi_listen(pep), -FI_ENOEQ);
		CHECKRC(fi_pep_bind(pep, NULL, 0), -FI_EINVAL);
		CHECKRC(fi_pep_bind(pep, &dom->fid, 0), -FI_EINVAL);
		CHECKRC(fi_reject(pep, NULL, NULL, 0), -FI_EINVAL);
		CHECKRC(fi_reject(pep, &ep->fid, NULL, 0), -FI_EINVAL);
		len = 0;
		CHECKRC(fi_getname(&pep->fid, NULL, &len), -FI_ETOOSMALL);
		CHECK(len == info->src_addrlen);
		len = sizeof(addr);
		CHECKRC(fi_getname(&pep->fid, addr, &len), 0);
		CHECK(len == info->src_addrlen);
		len = sizeof(v);
		CHECKRC(fi_getopt(&pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), 0);
		CHECKRC(fi_setopt(&pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, 8), -FI_ENOPROTOOPT);
		{
			int backlog = 0;
			CHECKRC(fi_control(&pep->fid, FI_BACKLOG, &backlog), -FI_EINVAL);
			CHECKRC(fi_control(&pep->fid, FI_BACKLOG, NULL), -FI_EINVAL);
			backlog = 16;
			CHECKRC(fi_control(&pep->fid, FI_BACKLOG, &backlog), 0);
			CHECKRC(fi_control(&pep->fid, FI_GETOPSFLAG, &v), -FI_ENOSYS);
		}

		/* An endpoint opened from an info whose handle is the pep. */
		info2 = fi_dupinfo(info);
		CHECK(info2);
		info2->handle = &pep->fid;
		CHECKRC(fi_endpoint(dom, info2, &ep2, NULL), 0);
		CHECKRC(fi_close(&ep2->fid), 0);
		memcpy(&stale_pep, pep, sizeof(stale_pep));
		CHECKRC(fi_close(&pep->fid), 0);
		/* A closed pep (a copy of its struct: the struct is freed) as
		 * the handle: an error, not a crash. */
		info2->handle = &stale_pep.pep.fid;
		CHECKRC(fi_endpoint(dom, info2, &ep2, NULL), -FI_EINVAL);
		info2->handle = NULL;
		fi_freeinfo(info2);
	} else {
		CHECK(fi_passive_ep(fab, info, &pep, NULL) < 0);
	}

	/* A closed endpoint's fid is stale. */
	memcpy(&stale, ep, sizeof(stale));
	CHECKRC(fi_close(&ep->fid), 0);
	CHECKRC(fi_close(&stale.ep.fid), -FI_EINVAL);
	CHECKRC(fi_send(&stale.ep, buf, 8, NULL, 0, NULL), -FI_EINVAL);
	CHECKRC(fi_getname(&stale.ep.fid, addr, &len), -FI_EINVAL);
	CHECKRC(fi_control(&stale.ep.fid, FI_ENABLE, NULL), -FI_EINVAL);
	count = 0;
	CHECKRC(fi_atomicvalid(&stale.ep, FI_UINT64, FI_SUM, &count), -FI_EINVAL);

	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	CHECKRC(live(), base);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

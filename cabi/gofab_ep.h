/*
 * gofab_ep.h: the endpoint side of the plugin (cabi-ep): active, passive,
 * scalable endpoints, their contexts, shared receive and transmit
 * contexts, and connection requests. Included by gofab.h; declarations
 * only (see gofab.h).
 */
#ifndef GOFAB_EP_H
#define GOFAB_EP_H

#include <sys/socket.h>
#include <netinet/in.h>

/* Active endpoints and everything else C reaches through a struct fid_ep:
 * FI_CLASS_EP (endpoints and aliases), FI_CLASS_SEP (scalable endpoints),
 * FI_CLASS_TX_CTX / FI_CLASS_RX_CTX (their contexts), FI_CLASS_SRX_CTX
 * (shared receive contexts). */
struct gofab_ep {
	struct fid_ep ep;
	uint64_t h;
};

struct gofab_pep {
	struct fid_pep pep;
	uint64_t h;
};

struct gofab_stx {
	struct fid_stx stx;
	uint64_t h;
};

/* fi_info.handle of an FI_CONNREQ event: class FI_CLASS_CONNREQ, h names
 * the Go connection request (pep.go). */
struct gofab_connreq {
	struct fid fid;
	uint64_t h;
};

/* One data transfer call of the msg, tagged and rma families, as the C
 * trampolines (ep.c) pass it to the one Go export gofab_go_ep_xfer. Every
 * pointer travels as uintptr_t: Go checks it (NULL, below 4096) before
 * it becomes a pointer (see ctx.go). Either buf/len (with desc) or
 * iov/count (with descs) is set: form says which. */
enum {
	/* kind */
	GOFAB_XK_SEND = 0,
	GOFAB_XK_RECV,
	GOFAB_XK_TSEND,
	GOFAB_XK_TRECV,
	GOFAB_XK_READ,
	GOFAB_XK_WRITE,
	/* form */
	GOFAB_XF_BUF = 0, /* fi_send, fi_recv, fi_read ... */
	GOFAB_XF_IOV,     /* fi_sendv ... */
	GOFAB_XF_MSG,     /* fi_sendmsg ...: iov, flags */
	GOFAB_XF_INJECT,  /* fi_inject ... */
	GOFAB_XF_DATA,    /* fi_senddata, fi_writedata */
	GOFAB_XF_INJECTDATA,
};

struct gofab_xfer {
	int kind, form;
	uint64_t flags;
	uintptr_t buf;
	size_t len;
	uintptr_t desc;
	uintptr_t iov;   /* const struct iovec * */
	uintptr_t descs; /* void ** */
	size_t count;
	uint64_t addr; /* fi_addr_t */
	uint64_t data, tag, ignore;
	uint64_t raddr, key;   /* one remote region (non-msg RMA) */
	uintptr_t rma_iov;     /* const struct fi_rma_iov * (msg RMA) */
	size_t rma_count;
	uintptr_t context;
};

/* An atomic call: the operand (buf/count or ioc/ioc_count), the compare
 * and result operands likewise; count is in datatype elements. */
enum {
	GOFAB_AK_WRITE = 0,
	GOFAB_AK_READWRITE,
	GOFAB_AK_COMPWRITE,
};

struct gofab_axfer {
	int kind, form; /* form: GOFAB_XF_BUF, _IOV, _MSG or _INJECT */
	uint64_t flags;
	int datatype, op;
	uintptr_t buf, desc;
	uintptr_t ioc, descs; /* const struct fi_ioc *, void ** */
	size_t count;
	uintptr_t cmp, cmp_desc, cmp_ioc, cmp_descs;
	size_t cmp_count;
	uintptr_t res, res_desc, res_ioc, res_descs;
	size_t res_count;
	uint64_t addr;
	uint64_t raddr, key;
	uintptr_t rma_ioc; /* const struct fi_rma_ioc * (msg) */
	size_t rma_count;
	uintptr_t context;
	uint64_t data;
};

/* Allocation (ep.c): calloc, fclass, context and ops set per class. */
struct gofab_ep *gofab_ep_alloc(uint64_t h, int fclass, uintptr_t context);
struct gofab_pep *gofab_pep_alloc(uint64_t h, uintptr_t context);
struct gofab_stx *gofab_stx_alloc(uint64_t h, uintptr_t context);
struct gofab_connreq *gofab_connreq_alloc(uint64_t h);

/* ep.c's ops tables. */
extern struct fi_ops gofab_ep_fi_ops;
extern struct fi_ops_ep gofab_ep_ops;
extern struct fi_ops_ep gofab_sep_ops;
extern struct fi_ops_cm gofab_ep_cm_ops;
extern struct fi_ops_msg gofab_ep_msg_ops;
extern struct fi_ops_tagged gofab_ep_tagged_ops;
extern struct fi_ops_rma gofab_ep_rma_ops;
extern struct fi_ops_atomic gofab_ep_atomic_ops;
extern struct fi_ops_collective gofab_ep_collective_ops;
extern struct fi_ops gofab_pep_fi_ops;
extern struct fi_ops_ep gofab_pep_ops;
extern struct fi_ops_cm gofab_pep_cm_ops;
extern struct fi_ops gofab_stx_fi_ops;
extern struct fi_ops_ep gofab_stx_ops;
extern struct fi_ops gofab_connreq_fi_ops;

/* Test hooks (testhooks.go): the fi_* inline calls, from Go. */
ssize_t gofab_test_send(struct fid_ep *ep, void *buf, size_t len, uintptr_t ctx);
ssize_t gofab_test_recv(struct fid_ep *ep, void *buf, size_t len, uintptr_t ctx);
ssize_t gofab_test_sendv(struct fid_ep *ep, struct iovec *iov, size_t count, uintptr_t ctx);

#endif

/* Endpoints (pattern: fabric.c): active endpoints and everything C reaches
 * through a struct fid_ep (aliases, scalable endpoints and their contexts,
 * shared receive contexts), passive endpoints, shared transmit contexts,
 * connection requests.
 *
 * The data calls of the msg, tagged and rma families fill one struct
 * gofab_xfer on the stack and call the one Go export gofab_go_ep_xfer;
 * the atomic calls likewise with struct gofab_axfer. The *msg forms
 * unpack their struct here (a NULL msg is -FI_EINVAL). Every pointer
 * goes to Go as uintptr_t (ctx.go). */
#include "gofab.h"
#include "_cgo_export.h"

#define U(p) ((uintptr_t)(p))

/* ---- fi_ops (every fid_ep class) ---- */

static int gofab_ep_close(struct fid *fid)
{
	return gofab_go_ep_close(fid);
}

static int gofab_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return gofab_go_ep_bind(fid, bfid, flags);
}

static int gofab_ep_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_ep_control(fid, command, U(arg));
}

struct fi_ops gofab_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_ep_close,
	.bind = gofab_ep_bind,
	.control = gofab_ep_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

/* ---- fi_ops_ep ---- */

static ssize_t gofab_ep_cancel(fid_t fid, void *context)
{
	return gofab_go_ep_cancel(fid, U(context));
}

static int gofab_ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	return gofab_go_ep_getopt(fid, level, optname, U(optval), U(optlen));
}

static int gofab_ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return gofab_go_ep_setopt(fid, level, optname, U(optval), optlen);
}

static int gofab_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			   struct fid_ep **tx_ep, void *context)
{
	return gofab_go_sep_ctx(sep, 1, index, U(attr), tx_ep, U(context));
}

static int gofab_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			   struct fid_ep **rx_ep, void *context)
{
	return gofab_go_sep_ctx(sep, 0, index, U(attr), rx_ep, U(context));
}

static ssize_t gofab_ep_rx_size_left(struct fid_ep *ep)
{
	return gofab_go_ep_size_left(ep, 0);
}

static ssize_t gofab_ep_tx_size_left(struct fid_ep *ep)
{
	return gofab_go_ep_size_left(ep, 1);
}

struct fi_ops_ep gofab_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = gofab_ep_cancel,
	.getopt = gofab_ep_getopt,
	.setopt = gofab_ep_setopt,
	.tx_ctx = GOFAB_NOSYS(struct fi_ops_ep, tx_ctx),
	.rx_ctx = GOFAB_NOSYS(struct fi_ops_ep, rx_ctx),
	.rx_size_left = gofab_ep_rx_size_left,
	.tx_size_left = gofab_ep_tx_size_left,
};

/* Scalable endpoints: their contexts. */
struct fi_ops_ep gofab_sep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, cancel),
	.getopt = gofab_ep_getopt,
	.setopt = gofab_ep_setopt,
	.tx_ctx = gofab_ep_tx_ctx,
	.rx_ctx = gofab_ep_rx_ctx,
	.rx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, rx_size_left),
	.tx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, tx_size_left),
};

/* ---- fi_ops_cm ---- */

static int gofab_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	return gofab_go_ep_setname(fid, U(addr), addrlen);
}

static int gofab_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return gofab_go_ep_getname(fid, U(addr), U(addrlen), 0);
}

static int gofab_ep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return gofab_go_ep_getname(&ep->fid, U(addr), U(addrlen), 1);
}

static int gofab_ep_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	return gofab_go_ep_connect(ep, U(addr), U(param), paramlen);
}

static int gofab_ep_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return gofab_go_ep_accept(ep, U(param), paramlen);
}

static int gofab_ep_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return gofab_go_ep_shutdown(ep, flags);
}

struct fi_ops_cm gofab_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = gofab_ep_setname,
	.getname = gofab_ep_getname,
	.getpeer = gofab_ep_getpeer,
	.connect = gofab_ep_connect,
	.listen = GOFAB_NOSYS(struct fi_ops_cm, listen),
	.accept = gofab_ep_accept,
	.reject = GOFAB_NOSYS(struct fi_ops_cm, reject),
	.shutdown = gofab_ep_shutdown,
	.join = GOFAB_NOSYS(struct fi_ops_cm, join),
};

/* ---- data transfers ---- */

static ssize_t xfer(struct fid_ep *ep, int kind, int form, struct gofab_xfer *x)
{
	x->kind = kind;
	x->form = form;
	return gofab_go_ep_xfer(ep, x);
}

#define XBUF(b, l, d) .buf = U(b), .len = (l), .desc = U(d)
#define XIOV(i, d, c) .iov = U(i), .descs = U(d), .count = (c)

static ssize_t msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = src_addr, .context = U(context) };
	return xfer(ep, GOFAB_XK_RECV, GOFAB_XF_BUF, &x);
}

static ssize_t msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = src_addr, .context = U(context) };
	return xfer(ep, GOFAB_XK_RECV, GOFAB_XF_IOV, &x);
}

static int unpack_msg(struct gofab_xfer *x, const struct fi_msg *m, uint64_t flags)
{
	if (!m)
		return -FI_EINVAL;
	x->iov = U(m->msg_iov);
	x->descs = U(m->desc);
	x->count = m->iov_count;
	x->addr = m->addr;
	x->context = U(m->context);
	x->data = m->data;
	x->flags = flags;
	return 0;
}

static ssize_t msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_msg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_RECV, GOFAB_XF_MSG, &x);
}

static ssize_t msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest_addr, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = dest_addr, .context = U(context) };
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_BUF, &x);
}

static ssize_t msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t dest_addr, void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = dest_addr, .context = U(context) };
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_IOV, &x);
}

static ssize_t msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_msg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_MSG, &x);
}

static ssize_t msg_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .addr = dest_addr };
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_INJECT, &x);
}

static ssize_t msg_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest_addr, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .data = data, .addr = dest_addr,
				.context = U(context) };
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_DATA, &x);
}

static ssize_t msg_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .data = data, .addr = dest_addr };
	return xfer(ep, GOFAB_XK_SEND, GOFAB_XF_INJECTDATA, &x);
}

struct fi_ops_msg gofab_ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

static ssize_t tag_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = src_addr, .tag = tag,
				.ignore = ignore, .context = U(context) };
	return xfer(ep, GOFAB_XK_TRECV, GOFAB_XF_BUF, &x);
}

static ssize_t tag_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore,
			 void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = src_addr, .tag = tag,
				.ignore = ignore, .context = U(context) };
	return xfer(ep, GOFAB_XK_TRECV, GOFAB_XF_IOV, &x);
}

static int unpack_tmsg(struct gofab_xfer *x, const struct fi_msg_tagged *m, uint64_t flags)
{
	if (!m)
		return -FI_EINVAL;
	x->iov = U(m->msg_iov);
	x->descs = U(m->desc);
	x->count = m->iov_count;
	x->addr = m->addr;
	x->tag = m->tag;
	x->ignore = m->ignore;
	x->context = U(m->context);
	x->data = m->data;
	x->flags = flags;
	return 0;
}

static ssize_t tag_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_tmsg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_TRECV, GOFAB_XF_MSG, &x);
}

static ssize_t tag_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest_addr, uint64_t tag, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = dest_addr, .tag = tag,
				.context = U(context) };
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_BUF, &x);
}

static ssize_t tag_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = dest_addr, .tag = tag,
				.context = U(context) };
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_IOV, &x);
}

static ssize_t tag_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_tmsg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_MSG, &x);
}

static ssize_t tag_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t tag)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .addr = dest_addr, .tag = tag };
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_INJECT, &x);
}

static ssize_t tag_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .data = data, .addr = dest_addr,
				.tag = tag, .context = U(context) };
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_DATA, &x);
}

static ssize_t tag_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .data = data, .addr = dest_addr, .tag = tag };
	return xfer(ep, GOFAB_XK_TSEND, GOFAB_XF_INJECTDATA, &x);
}

struct fi_ops_tagged gofab_ep_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tag_recv,
	.recvv = tag_recvv,
	.recvmsg = tag_recvmsg,
	.send = tag_send,
	.sendv = tag_sendv,
	.sendmsg = tag_sendmsg,
	.inject = tag_inject,
	.senddata = tag_senddata,
	.injectdata = tag_injectdata,
};

static ssize_t rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = src_addr, .raddr = addr,
				.key = key, .context = U(context) };
	return xfer(ep, GOFAB_XK_READ, GOFAB_XF_BUF, &x);
}

static ssize_t rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key,
			 void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = src_addr, .raddr = addr,
				.key = key, .context = U(context) };
	return xfer(ep, GOFAB_XK_READ, GOFAB_XF_IOV, &x);
}

static int unpack_rmsg(struct gofab_xfer *x, const struct fi_msg_rma *m, uint64_t flags)
{
	if (!m)
		return -FI_EINVAL;
	x->iov = U(m->msg_iov);
	x->descs = U(m->desc);
	x->count = m->iov_count;
	x->addr = m->addr;
	x->rma_iov = U(m->rma_iov);
	x->rma_count = m->rma_iov_count;
	x->context = U(m->context);
	x->data = m->data;
	x->flags = flags;
	return 0;
}

static ssize_t rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_rmsg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_READ, GOFAB_XF_MSG, &x);
}

static ssize_t rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .addr = dest_addr, .raddr = addr,
				.key = key, .context = U(context) };
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_BUF, &x);
}

static ssize_t rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			  void *context)
{
	struct gofab_xfer x = { XIOV(iov, desc, count), .addr = dest_addr, .raddr = addr,
				.key = key, .context = U(context) };
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_IOV, &x);
}

static ssize_t rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	struct gofab_xfer x = { 0 };
	if (unpack_rmsg(&x, msg, flags))
		return -FI_EINVAL;
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_MSG, &x);
}

static ssize_t rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .addr = dest_addr, .raddr = addr, .key = key };
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_INJECT, &x);
}

static ssize_t rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			     void *context)
{
	struct gofab_xfer x = { XBUF(buf, len, desc), .data = data, .addr = dest_addr,
				.raddr = addr, .key = key, .context = U(context) };
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_DATA, &x);
}

static ssize_t rma_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	struct gofab_xfer x = { XBUF(buf, len, NULL), .data = data, .addr = dest_addr,
				.raddr = addr, .key = key };
	return xfer(ep, GOFAB_XK_WRITE, GOFAB_XF_INJECTDATA, &x);
}

struct fi_ops_rma gofab_ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};

/* ---- atomics ---- */

static ssize_t axfer(struct fid_ep *ep, int kind, int form, struct gofab_axfer *x)
{
	x->kind = kind;
	x->form = form;
	return gofab_go_ep_atomic(ep, x);
}

static int unpack_amsg(struct gofab_axfer *x, const struct fi_msg_atomic *m, uint64_t flags)
{
	if (!m)
		return -FI_EINVAL;
	x->ioc = U(m->msg_iov);
	x->descs = U(m->desc);
	x->count = m->iov_count;
	x->addr = m->addr;
	x->rma_ioc = U(m->rma_iov);
	x->rma_count = m->rma_iov_count;
	x->datatype = m->datatype;
	x->op = m->op;
	x->context = U(m->context);
	x->data = m->data;
	x->flags = flags;
	return 0;
}

static ssize_t at_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct gofab_axfer x = { .buf = U(buf), .count = count, .desc = U(desc), .addr = dest_addr,
				 .raddr = addr, .key = key, .datatype = datatype, .op = op,
				 .context = U(context) };
	return axfer(ep, GOFAB_AK_WRITE, GOFAB_XF_BUF, &x);
}

static ssize_t at_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			 enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct gofab_axfer x = { .ioc = U(iov), .descs = U(desc), .count = count, .addr = dest_addr,
				 .raddr = addr, .key = key, .datatype = datatype, .op = op,
				 .context = U(context) };
	return axfer(ep, GOFAB_AK_WRITE, GOFAB_XF_IOV, &x);
}

static ssize_t at_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	struct gofab_axfer x = { 0 };
	if (unpack_amsg(&x, msg, flags))
		return -FI_EINVAL;
	return axfer(ep, GOFAB_AK_WRITE, GOFAB_XF_MSG, &x);
}

static ssize_t at_inject(struct fid_ep *ep, const void *buf, size_t count,
			 fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			 enum fi_datatype datatype, enum fi_op op)
{
	struct gofab_axfer x = { .buf = U(buf), .count = count, .addr = dest_addr, .raddr = addr,
				 .key = key, .datatype = datatype, .op = op };
	return axfer(ep, GOFAB_AK_WRITE, GOFAB_XF_INJECT, &x);
}

static ssize_t at_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest_addr,
			    uint64_t addr, uint64_t key, enum fi_datatype datatype,
			    enum fi_op op, void *context)
{
	struct gofab_axfer x = { .buf = U(buf), .count = count, .desc = U(desc), .res = U(result),
				 .res_desc = U(result_desc), .addr = dest_addr, .raddr = addr,
				 .key = key, .datatype = datatype, .op = op, .context = U(context) };
	return axfer(ep, GOFAB_AK_READWRITE, GOFAB_XF_BUF, &x);
}

static ssize_t at_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct gofab_axfer x = { .ioc = U(iov), .descs = U(desc), .count = count,
				 .res_ioc = U(resultv), .res_descs = U(result_desc),
				 .res_count = result_count, .addr = dest_addr, .raddr = addr,
				 .key = key, .datatype = datatype, .op = op, .context = U(context) };
	return axfer(ep, GOFAB_AK_READWRITE, GOFAB_XF_IOV, &x);
}

static ssize_t at_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags)
{
	struct gofab_axfer x = { 0 };
	if (unpack_amsg(&x, msg, flags))
		return -FI_EINVAL;
	x.res_ioc = U(resultv);
	x.res_descs = U(result_desc);
	x.res_count = result_count;
	return axfer(ep, GOFAB_AK_READWRITE, GOFAB_XF_MSG, &x);
}

static ssize_t at_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			    enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct gofab_axfer x = { .buf = U(buf), .count = count, .desc = U(desc), .cmp = U(compare),
				 .cmp_desc = U(compare_desc), .res = U(result),
				 .res_desc = U(result_desc), .addr = dest_addr, .raddr = addr,
				 .key = key, .datatype = datatype, .op = op, .context = U(context) };
	return axfer(ep, GOFAB_AK_COMPWRITE, GOFAB_XF_BUF, &x);
}

static ssize_t at_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype, enum fi_op op,
			     void *context)
{
	struct gofab_axfer x = { .ioc = U(iov), .descs = U(desc), .count = count,
				 .cmp_ioc = U(comparev), .cmp_descs = U(compare_desc),
				 .cmp_count = compare_count, .res_ioc = U(resultv),
				 .res_descs = U(result_desc), .res_count = result_count,
				 .addr = dest_addr, .raddr = addr, .key = key,
				 .datatype = datatype, .op = op, .context = U(context) };
	return axfer(ep, GOFAB_AK_COMPWRITE, GOFAB_XF_IOV, &x);
}

static ssize_t at_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv,
			       void **result_desc, size_t result_count, uint64_t flags)
{
	struct gofab_axfer x = { 0 };
	if (unpack_amsg(&x, msg, flags))
		return -FI_EINVAL;
	x.cmp_ioc = U(comparev);
	x.cmp_descs = U(compare_desc);
	x.cmp_count = compare_count;
	x.res_ioc = U(resultv);
	x.res_descs = U(result_desc);
	x.res_count = result_count;
	return axfer(ep, GOFAB_AK_COMPWRITE, GOFAB_XF_MSG, &x);
}

static int at_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
			 size_t *count)
{
	return gofab_go_ep_atomicvalid(ep, GOFAB_AK_WRITE, datatype, op, U(count));
}

static int at_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
			     size_t *count)
{
	return gofab_go_ep_atomicvalid(ep, GOFAB_AK_READWRITE, datatype, op, U(count));
}

static int at_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
			     size_t *count)
{
	return gofab_go_ep_atomicvalid(ep, GOFAB_AK_COMPWRITE, datatype, op, U(count));
}

struct fi_ops_atomic gofab_ep_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_writevalid,
	.readwritevalid = at_readwritevalid,
	.compwritevalid = at_compwritevalid,
};

/* Collectives are not offered: every entry is -FI_ENOSYS. */
struct fi_ops_collective gofab_ep_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, barrier),
	.broadcast = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, broadcast),
	.alltoall = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, alltoall),
	.allreduce = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, allreduce),
	.allgather = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, allgather),
	.reduce_scatter = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, reduce_scatter),
	.reduce = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, reduce),
	.scatter = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, scatter),
	.gather = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, gather),
	.msg = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, msg),
	.barrier2 = GOFAB_NOSYS_SSIZE(struct fi_ops_collective, barrier2),
};

struct gofab_ep *gofab_ep_alloc(uint64_t h, int fclass, uintptr_t context)
{
	struct gofab_ep *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->ep.fid.fclass = fclass;
	e->ep.fid.context = (void *)context;
	e->ep.fid.ops = &gofab_ep_fi_ops;
	e->ep.ops = fclass == FI_CLASS_SEP ? &gofab_sep_ops : &gofab_ep_ops;
	e->ep.cm = &gofab_ep_cm_ops;
	e->ep.msg = &gofab_ep_msg_ops;
	e->ep.rma = &gofab_ep_rma_ops;
	e->ep.tagged = &gofab_ep_tagged_ops;
	e->ep.atomic = &gofab_ep_atomic_ops;
	e->ep.collective = &gofab_ep_collective_ops;
	e->h = h;
	return e;
}

/* ---- passive endpoints ---- */

static int gofab_pep_close(struct fid *fid)
{
	return gofab_go_pep_close(fid);
}

static int gofab_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return gofab_go_pep_bind(fid, bfid, flags);
}

static int gofab_pep_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_pep_control(fid, command, U(arg));
}

static int gofab_pep_listen(struct fid_pep *pep)
{
	return gofab_go_pep_listen(pep);
}

static int gofab_pep_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	return gofab_go_pep_reject(pep, handle, U(param), paramlen);
}

struct fi_ops gofab_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_pep_close,
	.bind = gofab_pep_bind,
	.control = gofab_pep_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_ep gofab_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, cancel),
	.getopt = gofab_ep_getopt,
	.setopt = gofab_ep_setopt,
	.tx_ctx = GOFAB_NOSYS(struct fi_ops_ep, tx_ctx),
	.rx_ctx = GOFAB_NOSYS(struct fi_ops_ep, rx_ctx),
	.rx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, rx_size_left),
	.tx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, tx_size_left),
};

struct fi_ops_cm gofab_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = gofab_ep_setname,
	.getname = gofab_ep_getname,
	.getpeer = GOFAB_NOSYS(struct fi_ops_cm, getpeer),
	.connect = GOFAB_NOSYS(struct fi_ops_cm, connect),
	.listen = gofab_pep_listen,
	.accept = GOFAB_NOSYS(struct fi_ops_cm, accept),
	.reject = gofab_pep_reject,
	.shutdown = GOFAB_NOSYS(struct fi_ops_cm, shutdown),
	.join = GOFAB_NOSYS(struct fi_ops_cm, join),
};

struct gofab_pep *gofab_pep_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_pep *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pep.fid.fclass = FI_CLASS_PEP;
	p->pep.fid.context = (void *)context;
	p->pep.fid.ops = &gofab_pep_fi_ops;
	p->pep.ops = &gofab_pep_ops;
	p->pep.cm = &gofab_pep_cm_ops;
	p->h = h;
	return p;
}

/* ---- shared transmit contexts, connection requests ---- */

static int gofab_stx_close(struct fid *fid)
{
	return gofab_go_stx_close(fid);
}

struct fi_ops gofab_stx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_stx_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_ep gofab_stx_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, cancel),
	.getopt = GOFAB_NOSYS(struct fi_ops_ep, getopt),
	.setopt = GOFAB_NOSYS(struct fi_ops_ep, setopt),
	.tx_ctx = GOFAB_NOSYS(struct fi_ops_ep, tx_ctx),
	.rx_ctx = GOFAB_NOSYS(struct fi_ops_ep, rx_ctx),
	.rx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, rx_size_left),
	.tx_size_left = GOFAB_NOSYS_SSIZE(struct fi_ops_ep, tx_size_left),
};

struct gofab_stx *gofab_stx_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_stx *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->stx.fid.fclass = FI_CLASS_STX_CTX;
	x->stx.fid.context = (void *)context;
	x->stx.fid.ops = &gofab_stx_fi_ops;
	x->stx.ops = &gofab_stx_ops;
	x->h = h;
	return x;
}

/* A connection request is not closed by the application: accept (through
 * the endpoint opened from it) or reject consumes it (pep.go). */
struct fi_ops gofab_connreq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = GOFAB_NOSYS(struct fi_ops, close),
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct gofab_connreq *gofab_connreq_alloc(uint64_t h)
{
	struct gofab_connreq *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fid.fclass = FI_CLASS_CONNREQ;
	c->fid.ops = &gofab_connreq_fi_ops;
	c->h = h;
	return c;
}

/* ---- domain and fabric entries ---- */

int gofab_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_pep **pep, void *context)
{
	return gofab_go_fabric_passive_ep(fabric, info, pep, U(context));
}

int gofab_domain_endpoint(struct fid_domain *domain, struct fi_info *info,
			  struct fid_ep **ep, void *context)
{
	return gofab_go_domain_endpoint(domain, info, ep, 0, U(context));
}

int gofab_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **ep, uint64_t flags, void *context)
{
	return gofab_go_domain_endpoint(domain, info, ep, flags, U(context));
}

int gofab_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			     struct fid_ep **sep, void *context)
{
	return gofab_go_domain_scalable_ep(domain, info, sep, U(context));
}

int gofab_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			 struct fid_stx **stx, void *context)
{
	return gofab_go_domain_stx_ctx(domain, U(attr), stx, U(context));
}

int gofab_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	return gofab_go_domain_srx_ctx(domain, U(attr), rx_ep, U(context));
}

int gofab_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
			      enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	return gofab_go_domain_query_atomic(domain, datatype, op, U(attr), flags);
}

int gofab_domain_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
				  struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

/* ---- test hooks: the inline fi_* calls, for the Go tests ---- */

ssize_t gofab_test_send(struct fid_ep *ep, void *buf, size_t len, uintptr_t ctx)
{
	return fi_send(ep, buf, len, NULL, 0, (void *)ctx);
}

ssize_t gofab_test_recv(struct fid_ep *ep, void *buf, size_t len, uintptr_t ctx)
{
	return fi_recv(ep, buf, len, NULL, FI_ADDR_UNSPEC, (void *)ctx);
}

ssize_t gofab_test_sendv(struct fid_ep *ep, struct iovec *iov, size_t count, uintptr_t ctx)
{
	return fi_sendv(ep, iov, NULL, count, 0, (void *)ctx);
}

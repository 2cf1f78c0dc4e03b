/* The completion queue's ops tables and trampolines (pattern: fabric.c).
 * User buffers travel as uintptr_t: Go checks them before use. */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_domain_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			 struct fid_cq **cq, void *context)
{
	return gofab_go_domain_cq_open(domain, attr, cq, (uintptr_t)context);
}

static int gofab_cq_close(struct fid *fid)
{
	return gofab_go_cq_close(fid);
}

static int gofab_cq_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_queue_control(fid, command, (uintptr_t)arg);
}

static ssize_t gofab_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return gofab_go_cq_read(cq, (uintptr_t)buf, count, 0);
}

static ssize_t gofab_cq_readfrom(struct fid_cq *cq, void *buf, size_t count,
				 fi_addr_t *src_addr)
{
	return gofab_go_cq_read(cq, (uintptr_t)buf, count, (uintptr_t)src_addr);
}

static ssize_t gofab_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf,
				uint64_t flags)
{
	return gofab_go_cq_readerr(cq, (uintptr_t)buf, flags);
}

static ssize_t gofab_cq_sread(struct fid_cq *cq, void *buf, size_t count,
			      const void *cond, int timeout)
{
	return gofab_go_cq_sread(cq, (uintptr_t)buf, count, 0, (uintptr_t)cond, timeout);
}

static ssize_t gofab_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count,
				  fi_addr_t *src_addr, const void *cond, int timeout)
{
	return gofab_go_cq_sread(cq, (uintptr_t)buf, count, (uintptr_t)src_addr,
				 (uintptr_t)cond, timeout);
}

static int gofab_cq_signal(struct fid_cq *cq)
{
	return gofab_go_cq_signal(cq);
}

static const char *gofab_cq_strerror(struct fid_cq *cq, int prov_errno,
				     const void *err_data, char *buf, size_t len)
{
	return gofab_strerror_copy(prov_errno, buf, len);
}

const char *gofab_strerror_copy(int prov_errno, char *buf, size_t len)
{
	const char *s = gofab_go_strerror(prov_errno);

	if (!s)
		s = "unknown error";
	if (!buf || !len)
		return s;
	strncpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	return buf;
}

struct fi_ops gofab_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_cq_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = gofab_cq_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_cq gofab_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = gofab_cq_read,
	.readfrom = gofab_cq_readfrom,
	.readerr = gofab_cq_readerr,
	.sread = gofab_cq_sread,
	.sreadfrom = gofab_cq_sreadfrom,
	.signal = gofab_cq_signal,
	.strerror = gofab_cq_strerror,
};

struct gofab_cq *gofab_cq_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_cq *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cq.fid.fclass = FI_CLASS_CQ;
	c->cq.fid.context = (void *)context;
	c->cq.fid.ops = &gofab_cq_fi_ops;
	c->cq.ops = &gofab_cq_ops;
	c->h = h;
	return c;
}

/* The event queue's ops tables and trampolines (pattern: fabric.c), and
 * the domain's bind (to an EQ). */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			 struct fid_eq **eq, void *context)
{
	return gofab_go_fabric_eq_open(fabric, attr, eq, (uintptr_t)context);
}

int gofab_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return gofab_go_domain_bind(fid, bfid, flags);
}

static int gofab_eq_close(struct fid *fid)
{
	return gofab_go_eq_close(fid);
}

static int gofab_eq_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_queue_control(fid, command, (uintptr_t)arg);
}

static ssize_t gofab_eq_read(struct fid_eq *eq, uint32_t *event, void *buf,
			     size_t len, uint64_t flags)
{
	return gofab_go_eq_read(eq, (uintptr_t)event, (uintptr_t)buf, len, 0, flags, 0);
}

static ssize_t gofab_eq_sread(struct fid_eq *eq, uint32_t *event, void *buf,
			      size_t len, int timeout, uint64_t flags)
{
	return gofab_go_eq_read(eq, (uintptr_t)event, (uintptr_t)buf, len, timeout, flags, 1);
}

static ssize_t gofab_eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf,
				uint64_t flags)
{
	return gofab_go_eq_readerr(eq, (uintptr_t)buf, flags);
}

static ssize_t gofab_eq_write(struct fid_eq *eq, uint32_t event, const void *buf,
			      size_t len, uint64_t flags)
{
	return gofab_go_eq_write(eq, event, (uintptr_t)buf, len, flags);
}

static const char *gofab_eq_strerror(struct fid_eq *eq, int prov_errno,
				     const void *err_data, char *buf, size_t len)
{
	return gofab_strerror_copy(prov_errno, buf, len);
}

struct fi_ops gofab_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_eq_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = gofab_eq_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_eq gofab_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = gofab_eq_read,
	.readerr = gofab_eq_readerr,
	.write = gofab_eq_write,
	.sread = gofab_eq_sread,
	.strerror = gofab_eq_strerror,
};

struct gofab_eq *gofab_eq_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_eq *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->eq.fid.fclass = FI_CLASS_EQ;
	e->eq.fid.context = (void *)context;
	e->eq.fid.ops = &gofab_eq_fi_ops;
	e->eq.ops = &gofab_eq_ops;
	e->h = h;
	return e;
}

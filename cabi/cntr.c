/* The counter's ops tables and trampolines (pattern: fabric.c). */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			   struct fid_cntr **cntr, void *context)
{
	return gofab_go_domain_cntr_open(domain, attr, cntr, (uintptr_t)context);
}

static int gofab_cntr_close(struct fid *fid)
{
	return gofab_go_cntr_close(fid);
}

static int gofab_cntr_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_queue_control(fid, command, (uintptr_t)arg);
}

static uint64_t gofab_cntr_read(struct fid_cntr *cntr)
{
	return gofab_go_cntr_read(cntr, 0);
}

static uint64_t gofab_cntr_readerr(struct fid_cntr *cntr)
{
	return gofab_go_cntr_read(cntr, 1);
}

static int gofab_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	return gofab_go_cntr_update(cntr, value, 0);
}

static int gofab_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	return gofab_go_cntr_update(cntr, value, 1);
}

static int gofab_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	return gofab_go_cntr_update(cntr, value, 2);
}

static int gofab_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	return gofab_go_cntr_update(cntr, value, 3);
}

static int gofab_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout)
{
	return gofab_go_cntr_wait(cntr, threshold, timeout);
}

struct fi_ops gofab_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_cntr_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = gofab_cntr_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_cntr gofab_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = gofab_cntr_read,
	.readerr = gofab_cntr_readerr,
	.add = gofab_cntr_add,
	.set = gofab_cntr_set,
	.wait = gofab_cntr_wait,
	.adderr = gofab_cntr_adderr,
	.seterr = gofab_cntr_seterr,
};

struct gofab_cntr *gofab_cntr_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_cntr *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = (void *)context;
	c->cntr.fid.ops = &gofab_cntr_fi_ops;
	c->cntr.ops = &gofab_cntr_ops;
	c->h = h;
	return c;
}

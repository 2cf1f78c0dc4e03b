/* The domain object's ops tables (pattern: fabric.c). The fi_ops_domain
 * and fi_ops_mr entries are declared in gofab.h and defined by the helpers
 * that implement them (stubs in stubs_ep.c and stubs_queues.c until then). */
#include "gofab.h"
#include "_cgo_export.h"

static int gofab_domain_close(struct fid *fid)
{
	return gofab_go_domain_close(fid);
}

struct fi_ops gofab_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_domain_close,
	.bind = gofab_domain_bind,
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_domain gofab_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = gofab_domain_av_open,
	.cq_open = gofab_domain_cq_open,
	.endpoint = gofab_domain_endpoint,
	.scalable_ep = gofab_domain_scalable_ep,
	.cntr_open = gofab_domain_cntr_open,
	.poll_open = gofab_domain_poll_open,
	.stx_ctx = gofab_domain_stx_ctx,
	.srx_ctx = gofab_domain_srx_ctx,
	.query_atomic = gofab_domain_query_atomic,
	.query_collective = gofab_domain_query_collective,
	.endpoint2 = gofab_domain_endpoint2,
};

struct fi_ops_mr gofab_domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = gofab_mr_reg,
	.regv = gofab_mr_regv,
	.regattr = gofab_mr_regattr,
};

struct gofab_domain *gofab_domain_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_domain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->domain.fid.fclass = FI_CLASS_DOMAIN;
	d->domain.fid.context = (void *)context;
	d->domain.fid.ops = &gofab_domain_fi_ops;
	d->domain.ops = &gofab_domain_ops;
	d->domain.mr = &gofab_domain_mr_ops;
	d->h = h;
	return d;
}

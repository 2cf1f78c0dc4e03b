/* The fabric object's ops tables and trampolines.
 *
 * The pattern every object follows:
 *   - a static trampoline gofab_<object>_<op> with the exact libfabric
 *     signature, which casts const away and void *context to uintptr_t
 *     (never a pointer-typed Go parameter: see ctx.go) and calls the Go
 *     export gofab_go_<object>_<op> (declared in _cgo_export.h);
 *   - the ops tables, with size set and every entry non-NULL
 *     (GOFAB_NOSYS for what is not implemented);
 *   - gofab_<object>_alloc, which Go calls to get the C struct. */
#include "gofab.h"
#include "_cgo_export.h"

static int gofab_fabric_close(struct fid *fid)
{
	return gofab_go_fabric_close(fid);
}

static int gofab_fabric_domain(struct fid_fabric *fabric, struct fi_info *info,
			       struct fid_domain **dom, void *context)
{
	return gofab_go_fabric_domain(fabric, info, dom, 0, (uintptr_t)context);
}

static int gofab_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
				struct fid_domain **dom, uint64_t flags, void *context)
{
	return gofab_go_fabric_domain(fabric, info, dom, flags, (uintptr_t)context);
}

struct fi_ops gofab_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_fabric_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_fabric gofab_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = gofab_fabric_domain,
	.passive_ep = gofab_fabric_passive_ep,
	.eq_open = gofab_fabric_eq_open,
	.wait_open = gofab_fabric_wait_open,
	.trywait = gofab_fabric_trywait,
	.domain2 = gofab_fabric_domain2,
};

struct gofab_fabric *gofab_fabric_alloc(uint64_t h, uintptr_t context, uint32_t api_version)
{
	struct gofab_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fabric.fid.fclass = FI_CLASS_FABRIC;
	f->fabric.fid.context = (void *)context;
	f->fabric.fid.ops = &gofab_fabric_fi_ops;
	f->fabric.ops = &gofab_fabric_ops;
	f->fabric.api_version = api_version;
	f->h = h;
	return f;
}

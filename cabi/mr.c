/* The memory region's ops table and the domain's fi_ops_mr (pattern:
 * fabric.c). fi_mr_reg and fi_mr_regv build a struct fi_mr_attr and share
 * fi_mr_regattr's Go export. */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr)
{
	return gofab_go_mr_regattr(fid, (struct fi_mr_attr *)attr, flags, mr);
}

int gofab_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
	};

	return gofab_go_mr_regattr(fid, &attr, flags, mr);
}

int gofab_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return gofab_mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

static int gofab_mr_close(struct fid *fid)
{
	return gofab_go_mr_close(fid);
}

static int gofab_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return gofab_go_mr_bind(fid, bfid, flags);
}

static int gofab_mr_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_mr_control(fid, command);
}

struct fi_ops gofab_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_mr_close,
	.bind = gofab_mr_bind,
	.control = gofab_mr_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct gofab_mr *gofab_mr_alloc(uint64_t h, uintptr_t context, uint64_t key)
{
	struct gofab_mr *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = (void *)context;
	m->mr.fid.ops = &gofab_mr_fi_ops;
	m->mr.mem_desc = m;
	m->mr.key = key;
	m->h = h;
	return m;
}

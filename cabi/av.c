/* The address vector's ops tables and trampolines (pattern: fabric.c).
 * User pointers travel as uintptr_t: Go checks them before use. */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_domain_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
			 struct fid_av **av, void *context)
{
	return gofab_go_domain_av_open(domain, attr, av, (uintptr_t)context);
}

static int gofab_av_close(struct fid *fid)
{
	return gofab_go_av_close(fid);
}

static int gofab_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return gofab_go_av_bind(fid, bfid, flags);
}

/* With FI_SYNC_ERR, context is an int array of count error codes. */
static int gofab_av_insert(struct fid_av *av, const void *addr, size_t count,
			   fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return gofab_go_av_insert(av, (uintptr_t)addr, count, (uintptr_t)fi_addr, flags,
				  (uintptr_t)context);
}

static int gofab_av_insertsvc(struct fid_av *av, const char *node, const char *service,
			      fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return gofab_go_av_insertsym(av, (uintptr_t)node, 0, (uintptr_t)service, 0,
				     (uintptr_t)fi_addr, flags, (uintptr_t)context);
}

static int gofab_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			      const char *service, size_t svccnt, fi_addr_t *fi_addr,
			      uint64_t flags, void *context)
{
	if (!nodecnt || !svccnt)
		return -FI_EINVAL;
	return gofab_go_av_insertsym(av, (uintptr_t)node, nodecnt, (uintptr_t)service, svccnt,
				     (uintptr_t)fi_addr, flags, (uintptr_t)context);
}

static int gofab_av_remove(struct fid_av *av, fi_addr_t *fi_addr, size_t count,
			   uint64_t flags)
{
	return gofab_go_av_remove(av, (uintptr_t)fi_addr, count, flags);
}

static int gofab_av_lookup(struct fid_av *av, fi_addr_t fi_addr, void *addr,
			   size_t *addrlen)
{
	return gofab_go_av_lookup(av, fi_addr, (uintptr_t)addr, (uintptr_t)addrlen);
}

static const char *gofab_av_straddr(struct fid_av *av, const void *addr, char *buf,
				    size_t *len)
{
	return gofab_go_av_straddr(av, (uintptr_t)addr, (uintptr_t)buf, (uintptr_t)len);
}

static int gofab_av_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
			   struct fid_av_set **set, void *context)
{
	return gofab_go_av_set_open(av, attr, set, (uintptr_t)context);
}

struct fi_ops gofab_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_av_close,
	.bind = gofab_av_bind,
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_av gofab_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = gofab_av_insert,
	.insertsvc = gofab_av_insertsvc,
	.insertsym = gofab_av_insertsym,
	.remove = gofab_av_remove,
	.lookup = gofab_av_lookup,
	.straddr = gofab_av_straddr,
	.av_set = gofab_av_av_set,
};

struct gofab_av *gofab_av_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_av *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->av.fid.fclass = FI_CLASS_AV;
	a->av.fid.context = (void *)context;
	a->av.fid.ops = &gofab_av_fi_ops;
	a->av.ops = &gofab_av_ops;
	a->h = h;
	return a;
}

/* fi_av_set(3): the AV set's ops (av_set.go). */
static int gofab_av_set_close(struct fid *fid)
{
	return gofab_go_av_set_close(fid);
}

static int gofab_av_set_union(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return gofab_go_av_set_combine(dst, (struct fid_av_set *)src, 0);
}

static int gofab_av_set_intersect(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return gofab_go_av_set_combine(dst, (struct fid_av_set *)src, 1);
}

static int gofab_av_set_diff(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return gofab_go_av_set_combine(dst, (struct fid_av_set *)src, 2);
}

static int gofab_av_set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	return gofab_go_av_set_member(set, addr, 0);
}

static int gofab_av_set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	return gofab_go_av_set_member(set, addr, 1);
}

static int gofab_av_set_addr(struct fid_av_set *set, fi_addr_t *coll_addr)
{
	return gofab_go_av_set_addr(set, (uintptr_t)coll_addr);
}

struct fi_ops gofab_av_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_av_set_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_av_set gofab_av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = gofab_av_set_union,
	.intersect = gofab_av_set_intersect,
	.diff = gofab_av_set_diff,
	.insert = gofab_av_set_insert,
	.remove = gofab_av_set_remove,
	.addr = gofab_av_set_addr,
};

struct gofab_av_set *gofab_av_set_alloc(uint64_t h, uintptr_t context)
{
	struct gofab_av_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->set.fid.fclass = FI_CLASS_AV_SET;
	s->set.fid.context = (void *)context;
	s->set.fid.ops = &gofab_av_set_fi_ops;
	s->set.ops = &gofab_av_set_ops;
	s->h = h;
	return s;
}

/* The struct fi_provider of each Go provider. The C library calls getinfo
 * and fabric with no provider argument, so each slot (index in the Go name
 * table, names.go) has its own pair of trampolines. */
#include "gofab.h"
#include "_cgo_export.h"

#define GOFAB_SLOT(n)                                                         \
	static int getinfo_##n(uint32_t version, const char *node,            \
			       const char *service, uint64_t flags,           \
			       const struct fi_info *hints,                   \
			       struct fi_info **info)                         \
	{                                                                     \
		return gofab_getinfo(n, version, (char *)node, (char *)service, \
				     flags, (struct fi_info *)hints, info);   \
	}                                                                     \
	static int fabric_##n(struct fi_fabric_attr *attr,                    \
			      struct fid_fabric **fabric, void *context)      \
	{                                                                     \
		return gofab_fabric(n, attr, fabric, (uintptr_t)context);     \
	}

GOFAB_SLOT(0) GOFAB_SLOT(1) GOFAB_SLOT(2) GOFAB_SLOT(3)
GOFAB_SLOT(4) GOFAB_SLOT(5) GOFAB_SLOT(6) GOFAB_SLOT(7)
GOFAB_SLOT(8) GOFAB_SLOT(9) GOFAB_SLOT(10) GOFAB_SLOT(11)
GOFAB_SLOT(12) GOFAB_SLOT(13) GOFAB_SLOT(14) GOFAB_SLOT(15)

#define S(n) { getinfo_##n, fabric_##n }
static const struct {
	__typeof__(((struct fi_provider *)0)->getinfo) getinfo;
	__typeof__(((struct fi_provider *)0)->fabric) fabric;
} slots[GOFAB_MAX_PROVIDERS] = {
	S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7),
	S(8), S(9), S(10), S(11), S(12), S(13), S(14), S(15),
};

static void cleanup(void) {}

struct fi_provider *gofab_provider_new(int slot, const char *name, uint32_t version)
{
	struct fi_provider *p;

	if (slot < 0 || slot >= GOFAB_MAX_PROVIDERS)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->version = version;
	p->fi_version = FI_VERSION(1, 17);
	p->name = name;
	p->getinfo = slots[slot].getinfo;
	p->fabric = slots[slot].fabric;
	p->cleanup = cleanup;
	return p;
}

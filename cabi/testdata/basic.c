/* Opens a fabric and a domain of provider argv[1] through the C libfabric
 * (FI_PROVIDER_PATH set by the test), pokes bad input, closes everything,
 * and checks that the plugin (argv[2], libgofabric.so) has no live handle
 * left. Prints "ok" on success; on failure the failing check and exits 1. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gofab.h"
#include "check.h"

int main(int argc, char **argv)
{
	struct fi_info *hints, *info = NULL, *bad = NULL;
	struct fid_fabric *fab = NULL;
	struct fid_domain *dom = NULL, *dom2 = NULL;
	struct gofab_domain stale;
	void *lib, *ops = NULL;
	int (*live)(void);
	int i, base;

	CHECK(argc == 3);
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->mode = ~0ULL;
	/* Our own endpoint type, not the one a C utility provider layers on. */
	hints->ep_attr->type = strcmp(argv[1], "goudp") ? FI_EP_MSG : FI_EP_DGRAM;

	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) == 0);
	CHECK(info && info->fabric_attr && info->fabric_attr->prov_name);
	CHECK(strcmp(info->fabric_attr->prov_name, argv[1]) == 0);
	CHECK(info->tx_attr && info->rx_attr && info->ep_attr && info->domain_attr);

	/* The plugin is loaded now; its handle count is the leak check. */
	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(lib);
	live = (int (*)(void))dlsym(lib, "gofab_debug_handles");
	CHECK(live);
	base = live();

	/* Bad input: errors, no crash. */
	CHECK(fi_fabric(NULL, &fab, NULL) < 0);

	for (i = 0; i < 100; i++) {
		CHECK(fi_fabric(info->fabric_attr, &fab, (void *)7) == 0);
		CHECK(fab->fid.fclass == FI_CLASS_FABRIC && fab->fid.context == (void *)7);
		CHECK(fi_domain(fab, info, &dom, (void *)(uintptr_t)(i + 1)) == 0);
		CHECK(dom->fid.fclass == FI_CLASS_DOMAIN);
		CHECK(dom->fid.context == (void *)(uintptr_t)(i + 1));
		CHECK(live() == base + 2);

		CHECK(fi_domain(fab, NULL, &dom2, NULL) == -FI_EINVAL);
		CHECK(fab->ops->domain(fab, info, NULL, NULL) == -FI_EINVAL);
		CHECK(fi_domain2(fab, info, &dom2, 1ULL << 62, NULL) == -FI_EBADFLAGS);
		CHECK(fi_open_ops(&fab->fid, "x", 0, &ops, NULL) == -FI_ENOSYS);
		CHECK(fi_close(&fab->fid) == -FI_EBUSY); /* the domain is open */
		CHECK(live() == base + 2);

		memcpy(&stale, dom, sizeof(stale));
		CHECK(fi_close(&dom->fid) == 0);
		/* A closed domain's handle is stale: an error, not a crash. */
		CHECK(fi_close(&stale.domain.fid) == -FI_EINVAL);
		stale.h = 0x12345678deadULL; /* forged */
		CHECK(fi_close(&stale.domain.fid) == -FI_EINVAL);
		stale.domain.fid.fclass = FI_CLASS_FABRIC; /* wrong class */
		CHECK(fi_close(&stale.domain.fid) == -FI_EINVAL);
		CHECK(fi_close(&fab->fid) == 0);
		CHECK(live() == base);
	}

	/* Hints no configuration matches. */
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &bad) == -FI_ENODATA);
	CHECK(bad == NULL);

	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

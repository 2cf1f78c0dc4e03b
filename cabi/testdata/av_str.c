/* FI_ADDR_STR addresses of different lengths through fi_av_insert of the
 * C libfabric over provider argv[1] (golnx): each address of an array is
 * a NUL-terminated string that ends where the next begins; fi_av_lookup
 * gives each back. Prints "ok" on success; on failure the failing check
 * and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gofab.h"
#include "check.h"

int main(int argc, char **argv)
{
	static const char *addrs[] = {
		"fi_lnx://00000000;;127.0.0.1:9228;",
		"fi_lnx://0000abcd;;10.1.2.3:7;",
		"fi_lnx://12345678;;192.168.100.200:65000;",
	};
	struct fi_info *hints, *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	fi_addr_t fa[3];
	char buf[256], out[128];
	size_t off = 0, len;
	int i;

	CHECK(argc == 2);
	hints = fi_allocinfo();
	CHECK(hints);
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) == 0);
	CHECK(info->addr_format == FI_ADDR_STR);
	CHECKRC(fi_fabric(info->fabric_attr, &fab, NULL), 0);
	CHECKRC(fi_domain(fab, info, &dom, NULL), 0);
	CHECKRC(fi_av_open(dom, &av_attr, &av, NULL), 0);
	for (i = 0; i < 3; i++) {
		len = strlen(addrs[i]) + 1;
		memcpy(buf + off, addrs[i], len);
		off += len;
	}
	CHECKRC(fi_av_insert(av, buf, 3, fa, 0, NULL), 3);
	for (i = 0; i < 3; i++) {
		len = sizeof(out);
		CHECKRC(fi_av_lookup(av, fa[i], out, &len), 0);
		CHECK(len == strlen(addrs[i]) + 1 && strcmp(out, addrs[i]) == 0);
	}
	CHECKRC(fi_close(&av->fid), 0);
	CHECKRC(fi_close(&dom->fid), 0);
	CHECKRC(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("ok\n");
	return 0;
}

/* The shim of one provider: lib<name>-fi.so, which the C libfabric dlopen()s
 * from FI_PROVIDER_PATH. build.sh compiles it once per provider with
 * -DGOFAB_PROV_NAME='"gotcp"' ... and links it to libgofabric.so (one Go
 * runtime per process, whatever the number of providers). */
#include <rdma/providers/fi_prov.h>

#ifndef GOFAB_PROV_NAME
#error "build with -DGOFAB_PROV_NAME='\"go<name>\"'"
#endif

extern struct fi_provider *gofabric_provider(char *name);

FI_EXT_INI
{
	return gofabric_provider(GOFAB_PROV_NAME);
}

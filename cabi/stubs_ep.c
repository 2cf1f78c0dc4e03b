/* Stubs for the entries cabi-ep implements (endpoints, passive endpoints,
 * scalable endpoints, shared contexts, atomic queries). Each returns
 * -FI_ENOSYS; replace a stub by deleting it here and defining the real
 * trampoline (same name and signature, declared in gofab.h) in your file. */
#include "gofab.h"

int gofab_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_endpoint(struct fid_domain *domain, struct fi_info *info,
			  struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **ep, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			     struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			 struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
			      enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int gofab_domain_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
				  struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

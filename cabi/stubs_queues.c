/* Stubs for the entries cabi-queues implements (EQ, CQ, counters, AV, MR,
 * wait and poll sets, the domain's EQ bind). Each returns -FI_ENOSYS;
 * replace a stub by deleting it here and defining the real trampoline
 * (same name and signature, declared in gofab.h) in your file. */
#include "gofab.h"

int gofab_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			 struct fid_eq **eq, void *context)
{
	return -FI_ENOSYS;
}

int gofab_fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			   struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

int gofab_fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	return -FI_ENOSYS;
}

int gofab_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int gofab_domain_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
			 struct fid_av **av, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			 struct fid_cq **cq, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			   struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}

int gofab_domain_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			   struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

int gofab_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

int gofab_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

int gofab_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr)
{
	return -FI_ENOSYS;
}

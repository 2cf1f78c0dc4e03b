/*
 * gofab.h: the C side of the plugin (libgofabric.so), shared by every .c
 * file of cabi/ and by the cgo preambles of the Go files.
 *
 * Declarations only: the preamble of a Go file with //export is copied into
 * _cgo_export.h, which the .c files include, so a definition here would be
 * defined twice. Definitions go in the .c files.
 *
 * Every object handed to C is one of the structs below, allocated with
 * calloc: the libfabric fid struct first (so a struct fid * of it is a
 * pointer to the whole), then h, the object's handle in the Go handle table
 * (handle.go). C never holds a Go pointer.
 */
#ifndef GOFAB_H
#define GOFAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/providers/fi_prov.h>

/* The objects. Add one per fid kind: struct gofab_X { struct fid_X X; uint64_t h; }. */
struct gofab_fabric {
	struct fid_fabric fabric;
	uint64_t h;
};

struct gofab_domain {
	struct fid_domain domain;
	uint64_t h;
};

/* Handle of any gofab object: h follows the fid struct, whose size depends
 * on the class; gofab_fid_handle reads it by fclass (0 for a foreign one). */
uint64_t gofab_fid_handle(const struct fid *fid);

/* ENOSYS fillers: an ops entry the plugin does not implement points to one
 * of these, cast to the entry's type with GOFAB_NOSYS/GOFAB_NOSYS_SSIZE
 * (never NULL: the fi_* inline calls jump without checking). The return
 * width must match: int entries use the int one, ssize_t entries the other. */
int gofab_nosys_int(void);
ssize_t gofab_nosys_ssize(void);
#define GOFAB_NOSYS(S, m) ((__typeof__(((S *)0)->m))gofab_nosys_int)
#define GOFAB_NOSYS_SSIZE(S, m) ((__typeof__(((S *)0)->m))gofab_nosys_ssize)

/* Number of NULL entries in every ops table of the plugin (tests: 0). */
int gofab_ops_nulls(void);

/* Provider entry (provider.c). slot indexes the Go name table (names.go). */
#define GOFAB_MAX_PROVIDERS 16
struct fi_provider *gofab_provider_new(int slot, const char *name, uint32_t version);

/* Objects (fabric.c, domain.c): allocate the C struct with calloc, set
 * fclass, context and the ops tables. Go frees it with free() after the
 * Go object closed. */
struct gofab_fabric *gofab_fabric_alloc(uint64_t h, uintptr_t context, uint32_t api_version);
struct gofab_domain *gofab_domain_alloc(uint64_t h, uintptr_t context);

/* Frees a fi_info list built by info.go (same layout as fi_freeinfo). */
void gofab_freeinfo(struct fi_info *info);

/*
 * The ops tables (non-static, so that gofab_ops_nulls can check them; a new
 * table is added to the list in enosys.c). Each entry is a C trampoline
 * named gofab_<object>_<op>, which casts const away and void *context to
 * uintptr_t and calls the Go export gofab_go_<object>_<op> (see fabric.c).
 */
extern struct fi_ops gofab_fabric_fi_ops;
extern struct fi_ops_fabric gofab_fabric_ops;
extern struct fi_ops gofab_domain_fi_ops;
extern struct fi_ops_domain gofab_domain_ops;
extern struct fi_ops_mr gofab_domain_mr_ops;

/* fi_ops_fabric entries implemented by later helpers: stubs in
 * stubs_ep.c (cabi-ep) and stubs_queues.c (cabi-queues) until then. */
int gofab_fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_pep **pep, void *context);
int gofab_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			 struct fid_eq **eq, void *context);
int gofab_fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			   struct fid_wait **waitset);
int gofab_fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count);

/* fi_ops domain bind (EQ) and fi_ops_domain / fi_ops_mr entries, likewise. */
int gofab_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int gofab_domain_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
			 struct fid_av **av, void *context);
int gofab_domain_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			 struct fid_cq **cq, void *context);
int gofab_domain_endpoint(struct fid_domain *domain, struct fi_info *info,
			  struct fid_ep **ep, void *context);
int gofab_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			     struct fid_ep **sep, void *context);
int gofab_domain_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			   struct fid_cntr **cntr, void *context);
int gofab_domain_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			   struct fid_poll **pollset);
int gofab_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			 struct fid_stx **stx, void *context);
int gofab_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context);
int gofab_domain_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
			      enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags);
int gofab_domain_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
				  struct fi_collective_attr *attr, uint64_t flags);
int gofab_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
			   struct fid_ep **ep, uint64_t flags, void *context);
int gofab_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context);
int gofab_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context);
int gofab_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr);

/* The endpoint side (cabi-ep). */
#include "gofab_ep.h"
/* The queue side (cabi-queues). */
#include "gofab_q.h"

#endif

/* ENOSYS fillers, the ops-table NULL check, fid handles, fi_info freeing. */
#include "gofab.h"

int gofab_nosys_int(void)
{
	return -FI_ENOSYS;
}

ssize_t gofab_nosys_ssize(void)
{
	return -FI_ENOSYS;
}

/* Every ops table of the plugin; add new tables here. */
#define T(t) { &(t), sizeof(t) }
static const struct {
	const void *table;
	size_t size;
} tables[] = {
	T(gofab_fabric_fi_ops),
	T(gofab_fabric_ops),
	T(gofab_domain_fi_ops),
	T(gofab_domain_ops),
	T(gofab_domain_mr_ops),
	T(gofab_ep_fi_ops),
	T(gofab_ep_ops),
	T(gofab_sep_ops),
	T(gofab_ep_cm_ops),
	T(gofab_ep_msg_ops),
	T(gofab_ep_tagged_ops),
	T(gofab_ep_rma_ops),
	T(gofab_ep_atomic_ops),
	T(gofab_ep_collective_ops),
	T(gofab_pep_fi_ops),
	T(gofab_pep_ops),
	T(gofab_pep_cm_ops),
	T(gofab_stx_fi_ops),
	T(gofab_stx_ops),
	T(gofab_connreq_fi_ops),
	T(gofab_cq_fi_ops),
	T(gofab_cq_ops),
	T(gofab_cntr_fi_ops),
	T(gofab_cntr_ops),
	T(gofab_eq_fi_ops),
	T(gofab_eq_ops),
	T(gofab_av_fi_ops),
	T(gofab_av_ops),
	T(gofab_av_set_fi_ops),
	T(gofab_av_set_ops),
	T(gofab_mr_fi_ops),
	T(gofab_wait_fi_ops),
	T(gofab_wait_ops),
	T(gofab_poll_fi_ops),
	T(gofab_poll_ops),
};

int gofab_ops_nulls(void)
{
	int nulls = 0;
	size_t i, j;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const char *t = tables[i].table;
		size_t size = *(const size_t *)t;

		if (size != tables[i].size)
			nulls++; /* size not set: counts as a broken table */
		for (j = sizeof(size_t); j + sizeof(void (*)(void)) <= tables[i].size;
		     j += sizeof(void (*)(void))) {
			void (*fn)(void);

			memcpy(&fn, t + j, sizeof(fn));
			if (!fn)
				nulls++;
		}
	}
	return nulls;
}

/* Add a case per object struct of gofab.h. */
uint64_t gofab_fid_handle(const struct fid *fid)
{
	if (!fid)
		return 0;
	switch (fid->fclass) {
	case FI_CLASS_FABRIC:
		return ((const struct gofab_fabric *)fid)->h;
	case FI_CLASS_DOMAIN:
		return ((const struct gofab_domain *)fid)->h;
	case FI_CLASS_EP:
	case FI_CLASS_SEP:
	case FI_CLASS_RX_CTX:
	case FI_CLASS_TX_CTX:
	case FI_CLASS_SRX_CTX:
		return ((const struct gofab_ep *)fid)->h;
	case FI_CLASS_PEP:
		return ((const struct gofab_pep *)fid)->h;
	case FI_CLASS_STX_CTX:
		return ((const struct gofab_stx *)fid)->h;
	case FI_CLASS_CONNREQ:
		return ((const struct gofab_connreq *)fid)->h;
	case FI_CLASS_CQ:
		return ((const struct gofab_cq *)fid)->h;
	case FI_CLASS_CNTR:
		return ((const struct gofab_cntr *)fid)->h;
	case FI_CLASS_EQ:
		return ((const struct gofab_eq *)fid)->h;
	case FI_CLASS_AV:
		return ((const struct gofab_av *)fid)->h;
	case FI_CLASS_AV_SET:
		return ((const struct gofab_av_set *)fid)->h;
	case FI_CLASS_MR:
		return ((const struct gofab_mr *)fid)->h;
	case FI_CLASS_WAIT:
		return ((const struct gofab_wait *)fid)->h;
	case FI_CLASS_POLL:
		return ((const struct gofab_poll *)fid)->h;
	}
	return 0;
}

void gofab_freeinfo(struct fi_info *info)
{
	struct fi_info *next;

	for (; info; info = next) {
		next = info->next;
		free(info->src_addr);
		free(info->dest_addr);
		free(info->tx_attr);
		free(info->rx_attr);
		if (info->ep_attr)
			free(info->ep_attr->auth_key);
		free(info->ep_attr);
		if (info->domain_attr) {
			free(info->domain_attr->name);
			free(info->domain_attr->auth_key);
		}
		free(info->domain_attr);
		if (info->fabric_attr) {
			free(info->fabric_attr->name);
			free(info->fabric_attr->prov_name);
		}
		free(info->fabric_attr);
		free(info);
	}
}

/*
 * gofab_q.h: the queue side of the plugin (cabi-queues): completion
 * queues, counters, event queues, address vectors, memory regions, wait
 * sets and poll sets. Included by gofab.h; declarations only (see gofab.h).
 */
#ifndef GOFAB_Q_H
#define GOFAB_Q_H

struct gofab_cq {
	struct fid_cq cq;
	uint64_t h;
};

struct gofab_cntr {
	struct fid_cntr cntr;
	uint64_t h;
};

struct gofab_eq {
	struct fid_eq eq;
	uint64_t h;
};

struct gofab_av {
	struct fid_av av;
	uint64_t h;
};

struct gofab_av_set {
	struct fid_av_set set;
	uint64_t h;
};

/* fi_mr_desc(mr) is the struct gofab_mr itself (mem_desc points to it):
 * a desc is a struct fid of class FI_CLASS_MR followed, after the struct
 * fid_mr, by the handle (cabi-ep decodes it so). */
struct gofab_mr {
	struct fid_mr mr;
	uint64_t h;
};

struct gofab_wait {
	struct fid_wait wait;
	uint64_t h;
};

struct gofab_poll {
	struct fid_poll poll;
	uint64_t h;
};

struct gofab_cq *gofab_cq_alloc(uint64_t h, uintptr_t context);
struct gofab_cntr *gofab_cntr_alloc(uint64_t h, uintptr_t context);
struct gofab_eq *gofab_eq_alloc(uint64_t h, uintptr_t context);
struct gofab_av *gofab_av_alloc(uint64_t h, uintptr_t context);
struct gofab_av_set *gofab_av_set_alloc(uint64_t h, uintptr_t context);
struct gofab_mr *gofab_mr_alloc(uint64_t h, uintptr_t context, uint64_t key);
struct gofab_wait *gofab_wait_alloc(uint64_t h);
struct gofab_poll *gofab_poll_alloc(uint64_t h);

/* fi_cq_strerror / fi_eq_strerror: the message of prov_errno, copied into
 * buf when buf and len are given (cq.c). */
const char *gofab_strerror_copy(int prov_errno, char *buf, size_t len);

extern struct fi_ops gofab_cq_fi_ops;
extern struct fi_ops_cq gofab_cq_ops;
extern struct fi_ops gofab_cntr_fi_ops;
extern struct fi_ops_cntr gofab_cntr_ops;
extern struct fi_ops gofab_eq_fi_ops;
extern struct fi_ops_eq gofab_eq_ops;
extern struct fi_ops gofab_av_fi_ops;
extern struct fi_ops_av gofab_av_ops;
extern struct fi_ops gofab_av_set_fi_ops;
extern struct fi_ops_av_set gofab_av_set_ops;
extern struct fi_ops gofab_mr_fi_ops;
extern struct fi_ops gofab_wait_fi_ops;
extern struct fi_ops_wait gofab_wait_ops;
extern struct fi_ops gofab_poll_fi_ops;
extern struct fi_ops_poll gofab_poll_ops;

#endif

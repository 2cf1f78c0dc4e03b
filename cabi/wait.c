/* Wait sets, poll sets and the fabric's trywait (pattern: fabric.c). */
#include "gofab.h"
#include "_cgo_export.h"

int gofab_fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			   struct fid_wait **waitset)
{
	return gofab_go_fabric_wait_open(fabric, attr, waitset);
}

int gofab_fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	return gofab_go_fabric_trywait(fabric, (uintptr_t)fids, count);
}

int gofab_domain_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			   struct fid_poll **pollset)
{
	return gofab_go_domain_poll_open(domain, attr, pollset);
}

static int gofab_wait_close(struct fid *fid)
{
	return gofab_go_wait_close(fid);
}

static int gofab_wait_control(struct fid *fid, int command, void *arg)
{
	return gofab_go_queue_control(fid, command, (uintptr_t)arg);
}

static int gofab_wait_wait(struct fid_wait *waitset, int timeout)
{
	return gofab_go_wait_wait(waitset, timeout);
}

static int gofab_poll_close(struct fid *fid)
{
	return gofab_go_poll_close(fid);
}

static int gofab_poll_poll(struct fid_poll *pollset, void **context, int count)
{
	return gofab_go_poll_poll(pollset, (uintptr_t)context, count);
}

static int gofab_poll_add(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags)
{
	return gofab_go_poll_add(pollset, event_fid, flags, 1);
}

static int gofab_poll_del(struct fid_poll *pollset, struct fid *event_fid, uint64_t flags)
{
	return gofab_go_poll_add(pollset, event_fid, flags, 0);
}

struct fi_ops gofab_wait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_wait_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = gofab_wait_control,
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_wait gofab_wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = gofab_wait_wait,
};

struct fi_ops gofab_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = gofab_poll_close,
	.bind = GOFAB_NOSYS(struct fi_ops, bind),
	.control = GOFAB_NOSYS(struct fi_ops, control),
	.ops_open = GOFAB_NOSYS(struct fi_ops, ops_open),
	.tostr = GOFAB_NOSYS(struct fi_ops, tostr),
	.ops_set = GOFAB_NOSYS(struct fi_ops, ops_set),
};

struct fi_ops_poll gofab_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = gofab_poll_poll,
	.poll_add = gofab_poll_add,
	.poll_del = gofab_poll_del,
};

struct gofab_wait *gofab_wait_alloc(uint64_t h)
{
	struct gofab_wait *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->wait.fid.fclass = FI_CLASS_WAIT;
	w->wait.fid.ops = &gofab_wait_fi_ops;
	w->wait.ops = &gofab_wait_ops;
	w->h = h;
	return w;
}

struct gofab_poll *gofab_poll_alloc(uint64_t h)
{
	struct gofab_poll *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->poll.fid.fclass = FI_CLASS_POLL;
	p->poll.fid.ops = &gofab_poll_fi_ops;
	p->poll.ops = &gofab_poll_ops;
	p->h = h;
	return p;
}

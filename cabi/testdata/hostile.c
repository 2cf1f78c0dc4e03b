/* Hostile input through the C libfabric into the plugin.
 *
 *   hostile PROVIDER LIBGOFABRIC   (PROVIDER: gotcp or goudp; the test sets
 *                                   FI_PROVIDER_PATH)
 *
 * Opens every kind of object the provider offers and calls every ops entry
 * it can reach with NULL pointers, zero and huge lengths, bad iov counts,
 * unknown flags and enum values, wrong-class fids in binds, and closed
 * (stale) or forged fids: a copy of an object's struct made before it was
 * closed (the ops pointers stay valid, the handle is dead), never a
 * dangling pointer. Nothing here may crash the process.
 *
 * For each call it prints, unbuffered,
 *     > NAME             before the call (the last one names a crash)
 *     NAME RC WANT       after it
 * where WANT is what the man pages (or, where they say nothing, the Go
 * API's documented error for the same input) allow: a number (-22 is
 * -FI_EINVAL), "neg" (any negative fi errno), "le0" (0 or negative, for
 * calls that may legitimately do nothing), "any" (no crash is all that is
 * asked). The Go test (hostile_test.go) checks RC against WANT; this
 * program only reports. It ends with "done"; an object it cannot open is
 * reported (WANT 0) and the calls that need it are left out.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define WANT_NEG "neg"
#define WANT_LE0 "le0"
#define WANT_ANY "any"
#define WANT_OK "0"

static char wbuf[32];

/* E(x): exactly -x. */
static const char *E(int x)
{
	snprintf(wbuf, sizeof(wbuf), "%d", -x);
	return wbuf;
}

/* DG(x): exactly -x on a datagram endpoint; on the unconnected msg
 * endpoint the state check may come first (-FI_EOPBADSTATE), so any error. */
#define DG(x) (dgram || connected ? E(x) : WANT_NEG)

static void before(const char *name)
{
	printf("> %s\n", name);
	fflush(stdout);
}

static long after(const char *name, long rc, const char *want)
{
	printf("%s %ld %s\n", name, rc, want);
	fflush(stdout);
	return rc;
}

/* T(name, want, call): report call's return code. */
#define T(name, want, call) (before(name), after(name, (long)(call), (want)))

/* A flag bit no call defines in 1.17 (bits 14, 15 and 23 are free; 59,
 * for one, is FI_SELECTIVE_COMPLETION, FI_CLAIM and FI_DIRECTED_RECV). */
#define BADFLAG (1ULL << 23)
#define HUGE ((size_t)-1)
#define BADENUM 0x7fff

/* Stale copies: struct gofab_X is struct fid_X followed by uint64_t h
 * (gofab.h); the copy keeps the fid (ops pointers, fclass) and the handle. */
union stale {
	uint64_t align;
	char raw[512];
};

#define STALE(dst, obj, T)                                      \
	do {                                                    \
		memcpy((dst)->raw, (obj), sizeof(T) + 8);       \
	} while (0)
#define STALE_H(dst, T) ((uint64_t *)((dst)->raw + sizeof(T)))

static struct fi_info *info;
static int dgram, connected;
static char cmbuf[sizeof(struct fi_eq_cm_entry) + 256];

/* wait_event waits (up to ~5 s) for event on eq, copying its entry into
 * out; 0 when it came, else the error. Other events are skipped. */
static int wait_event(struct fid_eq *eq, uint32_t want, void *out)
{
	uint32_t event;
	ssize_t n;
	int i;

	for (i = 0; i < 50; i++) {
		n = fi_eq_sread(eq, &event, out, sizeof(cmbuf), 100, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n < 0)
			return (int)n;
		if (event == want)
			return 0;
		fprintf(stderr, "wait_event: event %u while waiting for %u\n", event, want);
	}
	return -FI_ETIMEDOUT;
}
static char buf[8192];
static char buf2[8192];

/* drain_err reads the error entry at the head of cq, if any (a message
 * of an accepted bad call may have ended in a truncation). */
static void drain_err(struct fid_cq *cq)
{
	struct fi_cq_err_entry e;

	memset(&e, 0, sizeof(e));
	while (fi_cq_readerr(cq, &e, 0) == 1)
		memset(&e, 0, sizeof(e));
}

/* selftest receives on rx (completions on rxcq) until the message
 * "hostile-selftest" sent (context 0x3000, completion on txcq) arrives:
 * messages of bad calls that were accepted may come first. 0 when it came
 * intact and the send completed. */
static int selftest(struct fid_cq *txcq, struct fid_ep *rx, struct fid_cq *rxcq)
{
	struct fi_cq_tagged_entry c;
	int sent = 0, got = 0, tries, i;
	ssize_t n;

	for (tries = 0; tries < 16 && !got; tries++) {
		int done = 0;

		memset(buf2, 0, 64);
		if (fi_recv(rx, buf2, 64, NULL, FI_ADDR_UNSPEC, (void *)0x2000))
			return -1;
		for (i = 0; i < 2000 && !done; i++) {
			drain_err(txcq);
			drain_err(rxcq);
			n = fi_cq_read(txcq, &c, 1);
			if (n == 1 && c.op_context == (void *)0x3000)
				sent = 1;
			if (n == 1 && c.op_context == (void *)0x2000)
				done = 1;
			if (rxcq != txcq) {
				n = fi_cq_read(rxcq, &c, 1);
				if (n == 1 && c.op_context == (void *)0x2000)
					done = 1;
			}
			if (!done)
				usleep(1000);
		}
		if (!done)
			return -2;
		got = memcmp(buf2, "hostile-selftest", 17) == 0;
	}
	for (i = 0; i < 2000 && !sent; i++) {
		n = fi_cq_read(txcq, &c, 1);
		if (n == 1 && c.op_context == (void *)0x3000)
			sent = 1;
		else
			usleep(1000);
	}
	return got && sent ? 0 : -3;
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	struct fid_fabric *fab = NULL;
	struct fid_domain *dom = NULL;
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL, *cq2 = NULL;
	struct fid_cntr *cntr = NULL;
	struct fid_av *av = NULL;
	struct fid_mr *mr = NULL, *mr2 = NULL;
	struct fid_ep *ep = NULL, *ep2 = NULL, *alias = NULL;
	uint64_t opsflags;
	struct fid_pep *pep = NULL;
	struct fid_wait *ws = NULL;
	struct fid_poll *ps = NULL;
	union stale s_ep, s_cq, s_cntr, s_eq, s_av, s_mr, s_pep, s_ws, s_ps, s_live;
	int have_ep = 0, have_cq = 0, have_cntr = 0, have_eq = 0, have_av = 0, have_mr = 0;
	int have_pep = 0, have_ws = 0, have_ps = 0;
	struct fi_eq_attr eq_attr;
	struct fi_cq_attr cq_attr;
	struct fi_cntr_attr cntr_attr;
	struct fi_av_attr av_attr;
	struct fi_wait_attr wait_attr;
	struct fi_poll_attr poll_attr;
	struct fi_eq_entry eq_entry;
	struct fi_eq_err_entry eq_err;
	struct fi_cq_err_entry cq_err;
	struct fi_cq_tagged_entry comp[4];
	struct fi_atomic_attr atomic_attr;
	struct fi_mr_attr mr_attr;
	struct iovec iov[2];
	struct fi_msg msg;
	struct fi_msg_tagged tmsg;
	struct fi_msg_rma rmsg;
	struct fi_msg_atomic amsg;
	struct fi_rma_iov rma_iov;
	struct fi_ioc ioc;
	struct fi_rma_ioc rma_ioc;
	void *descs[2];
	struct fid *fids[2];
	void *pctx[4];
	char name[256];
	size_t len, cnt;
	uint64_t u64;
	uint32_t event;
	fi_addr_t self = FI_ADDR_NOTAVAIL, fa[4];
	void *lib, *ops = NULL;
	int (*live)(void);
	int base, rc, i;

	if (argc != 3) {
		fprintf(stderr, "usage: hostile PROVIDER LIBGOFABRIC\n");
		return 2;
	}
	dgram = strcmp(argv[1], "goudp") == 0;
	hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup(argv[1]);
	hints->ep_attr->type = dgram ? FI_EP_DGRAM : FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = ~0ULL;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_ENDPOINT | FI_MR_RAW;
	if (T("fi_getinfo", WANT_OK, fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)))
		return 1;
	if (T("fi_fabric", WANT_OK, fi_fabric(info->fabric_attr, &fab, NULL)))
		return 1;
	if (T("fi_domain", WANT_OK, fi_domain(fab, info, &dom, NULL)))
		return 1;

	lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	live = lib ? (int (*)(void))dlsym(lib, "gofab_debug_handles") : NULL;
	if (!live) {
		fprintf(stderr, "no gofab_debug_handles in %s\n", argv[2]);
		return 1;
	}
	base = live();

	/* ---- event queue ---- */
	memset(&eq_attr, 0, sizeof(eq_attr));
	eq_attr.wait_obj = BADENUM;
	T("eq_open.bad_wait_obj", WANT_NEG, fi_eq_open(fab, &eq_attr, &eq, NULL));
	eq_attr.wait_obj = FI_WAIT_UNSPEC;
	eq_attr.flags = BADFLAG;
	T("eq_open.bad_flags", WANT_NEG, fi_eq_open(fab, &eq_attr, &eq, NULL));
	eq_attr.flags = FI_WRITE; /* fi_eq_write is tested */
	T("eq_open.null_out", WANT_NEG, fi_eq_open(fab, &eq_attr, NULL, NULL));
	T("eq_open.null_fabric_fid", WANT_NEG, fab->ops->eq_open(NULL, &eq_attr, &eq, NULL));
	have_eq = T("eq_open", WANT_OK, fi_eq_open(fab, &eq_attr, &eq, (void *)1)) == 0;
	if (have_eq) {
		T("eq_read.empty", E(FI_EAGAIN), fi_eq_read(eq, &event, &eq_entry, sizeof(eq_entry), 0));
		T("eq_readerr.empty", E(FI_EAGAIN), fi_eq_readerr(eq, &eq_err, 0));
		T("eq_sread.empty_t0", E(FI_EAGAIN), fi_eq_sread(eq, &event, &eq_entry, sizeof(eq_entry), 0, 0));
		T("eq_sread.empty_t10", E(FI_EAGAIN), fi_eq_sread(eq, &event, &eq_entry, sizeof(eq_entry), 10, 0));
		T("eq_read.bad_flags", WANT_NEG, fi_eq_read(eq, &event, &eq_entry, sizeof(eq_entry), BADFLAG));
		T("eq_readerr.null", WANT_NEG, fi_eq_readerr(eq, NULL, 0));
		T("eq_readerr.bad_flags", WANT_NEG, fi_eq_readerr(eq, &eq_err, BADFLAG));
		T("eq_write.null_buf", WANT_NEG, fi_eq_write(eq, FI_NOTIFY, NULL, sizeof(eq_entry), 0));
		T("eq_write.huge_len", WANT_NEG, fi_eq_write(eq, FI_NOTIFY, &eq_entry, HUGE, 0));
		memset(cmbuf, 0, sizeof(cmbuf));
		T("eq_write.cm_huge_len", WANT_NEG, fi_eq_write(eq, FI_CONNECTED, cmbuf, sizeof(struct fi_eq_cm_entry) + (1ULL << 40), 0));
		T("eq_write.cm_short", WANT_NEG, fi_eq_write(eq, FI_CONNECTED, cmbuf, sizeof(struct fi_eq_cm_entry) - 1, 0));
		T("eq_write.bad_flags", WANT_NEG, fi_eq_write(eq, FI_NOTIFY, &eq_entry, sizeof(eq_entry), BADFLAG));
		/* Drain what the bad writes above may have queued. */
		for (i = 0; i < 10 && fi_eq_read(eq, &event, &eq_entry, sizeof(eq_entry), 0) > 0; i++)
			;
		T("eq_write.bad_queued_nothing", WANT_OK, i);
		memset(&eq_entry, 0, sizeof(eq_entry));
		eq_entry.context = (void *)3;
		T("eq_write", "24", fi_eq_write(eq, FI_NOTIFY, &eq_entry, sizeof(eq_entry), 0));
		T("eq_read.null_event", WANT_NEG, fi_eq_read(eq, NULL, &eq_entry, sizeof(eq_entry), FI_PEEK));
		T("eq_read.null_buf", WANT_NEG, fi_eq_read(eq, &event, NULL, sizeof(eq_entry), FI_PEEK));
		T("eq_read.len0", WANT_NEG, fi_eq_read(eq, &event, &eq_entry, 0, FI_PEEK));
		T("eq_read.short", WANT_NEG, fi_eq_read(eq, &event, &eq_entry, 3, FI_PEEK));
		memset(&eq_entry, 0, sizeof(eq_entry));
		rc = T("eq_read.written", "24", fi_eq_read(eq, &event, &eq_entry, sizeof(eq_entry), 0));
		T("eq_read.written_ok", WANT_OK, rc == 24 && event == FI_NOTIFY && eq_entry.context == (void *)3 ? 0 : -1);
		T("eq_control.bad_cmd", WANT_NEG, fi_control(&eq->fid, BADENUM, &u64));
		T("eq_control.getwait_null", WANT_NEG, fi_control(&eq->fid, FI_GETWAIT, NULL));
		T("eq_open_ops", E(FI_ENOSYS), fi_open_ops(&eq->fid, "bogus", 0, &ops, NULL));
		T("eq_strerror.null_buf", WANT_ANY, fi_eq_strerror(eq, -12345, NULL, NULL, 0) == NULL);
		T("eq_strerror.small_buf", WANT_ANY, fi_eq_strerror(eq, 1, NULL, name, 1) == NULL);
	}

	/* ---- wait set ---- */
	memset(&wait_attr, 0, sizeof(wait_attr));
	wait_attr.wait_obj = BADENUM;
	T("wait_open.bad_wait_obj", WANT_NEG, fi_wait_open(fab, &wait_attr, &ws));
	wait_attr.wait_obj = FI_WAIT_UNSPEC;
	wait_attr.flags = BADFLAG;
	T("wait_open.bad_flags", WANT_NEG, fi_wait_open(fab, &wait_attr, &ws));
	wait_attr.flags = 0;
	T("wait_open.null_out", WANT_NEG, fi_wait_open(fab, &wait_attr, NULL));
	T("wait_open.null_attr", WANT_NEG, fi_wait_open(fab, NULL, &ws));
	have_ws = T("wait_open", WANT_OK, fi_wait_open(fab, &wait_attr, &ws)) == 0;
	if (have_ws) {
		T("wait.empty_t0", E(FI_ETIMEDOUT), fi_wait(ws, 0));
		T("wait.empty_t10", E(FI_ETIMEDOUT), fi_wait(ws, 10));
		T("wait_control.bad_cmd", WANT_NEG, fi_control(&ws->fid, BADENUM, &u64));
	}
	T("trywait.null", WANT_NEG, fi_trywait(fab, NULL, 1));
	fids[0] = &dom->fid;
	T("trywait.domain_fid", WANT_NEG, fi_trywait(fab, fids, 1));
	T("trywait.neg_count", WANT_NEG, fi_trywait(fab, fids, -1));
	fids[0] = &fab->fid;
	T("trywait.fabric_fid", WANT_NEG, fi_trywait(fab, fids, 1));

	/* ---- completion queue ---- */
	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.format = BADENUM;
	T("cq_open.bad_format", WANT_NEG, fi_cq_open(dom, &cq_attr, &cq, NULL));
	cq_attr.format = FI_CQ_FORMAT_TAGGED;
	cq_attr.wait_obj = BADENUM;
	T("cq_open.bad_wait_obj", WANT_NEG, fi_cq_open(dom, &cq_attr, &cq, NULL));
	cq_attr.wait_obj = FI_WAIT_UNSPEC;
	cq_attr.wait_cond = BADENUM;
	T("cq_open.bad_wait_cond", WANT_NEG, fi_cq_open(dom, &cq_attr, &cq, NULL));
	cq_attr.wait_cond = FI_CQ_COND_NONE;
	cq_attr.flags = BADFLAG;
	T("cq_open.bad_flags", WANT_NEG, fi_cq_open(dom, &cq_attr, &cq, NULL));
	cq_attr.flags = 0;
	T("cq_open.null_out", WANT_NEG, fi_cq_open(dom, &cq_attr, NULL, NULL));
	T("cq_open.null_domain_fid", WANT_NEG, dom->ops->cq_open(NULL, &cq_attr, &cq, NULL));
	have_cq = T("cq_open", WANT_OK, fi_cq_open(dom, &cq_attr, &cq, NULL)) == 0;
	if (have_cq) {
		T("cq_read.empty", E(FI_EAGAIN), fi_cq_read(cq, comp, 1));
		T("cq_read.null_buf", WANT_NEG, fi_cq_read(cq, NULL, 1));
		T("cq_read.count0", WANT_LE0, fi_cq_read(cq, comp, 0));
		T("cq_read.huge_count", WANT_NEG, fi_cq_read(cq, NULL, HUGE));
		T("cq_readfrom.empty", E(FI_EAGAIN), fi_cq_readfrom(cq, comp, 1, fa));
		T("cq_readerr.empty", E(FI_EAGAIN), fi_cq_readerr(cq, &cq_err, 0));
		T("cq_readerr.null", WANT_NEG, fi_cq_readerr(cq, NULL, 0));
		T("cq_readerr.bad_flags", WANT_NEG, fi_cq_readerr(cq, &cq_err, BADFLAG));
		T("cq_sread.empty_t0", E(FI_EAGAIN), fi_cq_sread(cq, comp, 1, NULL, 0));
		T("cq_sread.empty_t10", E(FI_EAGAIN), fi_cq_sread(cq, comp, 1, NULL, 10));
		T("cq_sread.null_buf", WANT_NEG, fi_cq_sread(cq, NULL, 1, NULL, 0));
		T("cq_sreadfrom.empty_t0", E(FI_EAGAIN), fi_cq_sreadfrom(cq, comp, 1, fa, NULL, 0));
		T("cq_strerror", WANT_ANY, fi_cq_strerror(cq, -12345, NULL, NULL, 0) == NULL);
		T("cq_strerror.small_buf", WANT_ANY, fi_cq_strerror(cq, 1, NULL, name, 1) == NULL);
		T("cq_control.bad_cmd", WANT_NEG, fi_control(&cq->fid, BADENUM, &u64));
		T("cq_control.getwait_null", WANT_NEG, fi_control(&cq->fid, FI_GETWAIT, NULL));
		T("cq_open_ops", E(FI_ENOSYS), fi_open_ops(&cq->fid, "bogus", 0, &ops, NULL));
		T("cq_signal", WANT_OK, fi_cq_signal(cq));
		T("cq_sread.after_signal", E(FI_EAGAIN), fi_cq_sread(cq, comp, 1, NULL, 1000));
		have_cq = T("cq_open.second", WANT_OK, fi_cq_open(dom, &cq_attr, &cq2, NULL)) == 0;
	}

	/* ---- counter ---- */
	memset(&cntr_attr, 0, sizeof(cntr_attr));
	cntr_attr.events = BADENUM;
	T("cntr_open.bad_events", WANT_NEG, fi_cntr_open(dom, &cntr_attr, &cntr, NULL));
	cntr_attr.events = FI_CNTR_EVENTS_COMP;
	cntr_attr.wait_obj = BADENUM;
	T("cntr_open.bad_wait_obj", WANT_NEG, fi_cntr_open(dom, &cntr_attr, &cntr, NULL));
	cntr_attr.wait_obj = FI_WAIT_UNSPEC;
	cntr_attr.flags = BADFLAG;
	T("cntr_open.bad_flags", WANT_NEG, fi_cntr_open(dom, &cntr_attr, &cntr, NULL));
	cntr_attr.flags = 0;
	T("cntr_open.null_out", WANT_NEG, fi_cntr_open(dom, &cntr_attr, NULL, NULL));
	have_cntr = T("cntr_open", WANT_OK, fi_cntr_open(dom, &cntr_attr, &cntr, NULL)) == 0;
	if (have_cntr) {
		T("cntr_wait.t0", E(FI_ETIMEDOUT), fi_cntr_wait(cntr, 1, 0));
		T("cntr_wait.huge_t10", E(FI_ETIMEDOUT), fi_cntr_wait(cntr, UINT64_MAX, 10));
		T("cntr_add", WANT_OK, fi_cntr_add(cntr, 5));
		T("cntr_read", "5", (long)fi_cntr_read(cntr));
		T("cntr_set", WANT_OK, fi_cntr_set(cntr, UINT64_MAX));
		T("cntr_add.wrap", WANT_ANY, fi_cntr_add(cntr, 2));
		T("cntr_wait.reached", WANT_OK, fi_cntr_wait(cntr, 1, 0) == 0 || fi_cntr_read(cntr) == 1 ? 0 : -1);
		T("cntr_adderr", WANT_OK, fi_cntr_adderr(cntr, 1));
		T("cntr_readerr", "1", (long)fi_cntr_readerr(cntr));
		T("cntr_seterr", WANT_OK, fi_cntr_seterr(cntr, 0));
		T("cntr_control.bad_cmd", WANT_NEG, fi_control(&cntr->fid, BADENUM, &u64));
		T("cntr_control.getwait_null", WANT_NEG, fi_control(&cntr->fid, FI_GETWAIT, NULL));
	}

	/* ---- address vector ---- */
	memset(&av_attr, 0, sizeof(av_attr));
	av_attr.type = BADENUM;
	T("av_open.bad_type", WANT_NEG, fi_av_open(dom, &av_attr, &av, NULL));
	av_attr.type = FI_AV_TABLE;
	av_attr.flags = BADFLAG;
	T("av_open.bad_flags", WANT_NEG, fi_av_open(dom, &av_attr, &av, NULL));
	av_attr.flags = 0;
	T("av_open.null_out", WANT_NEG, fi_av_open(dom, &av_attr, NULL, NULL));
	T("av_open.null_attr", WANT_NEG, fi_av_open(dom, NULL, &av, NULL));
	if (dgram) {
		have_av = T("av_open", WANT_OK, fi_av_open(dom, &av_attr, &av, NULL)) == 0;
	}
	if (have_av) {
		T("av_insert.null_addr", WANT_LE0, fi_av_insert(av, NULL, 1, fa, 0, NULL));
		T("av_insert.huge_count", WANT_LE0, fi_av_insert(av, NULL, HUGE, fa, 0, NULL));
		T("av_insert.bad_flags", WANT_NEG, fi_av_insert(av, buf, 1, fa, BADFLAG, NULL));
		T("av_insert.count0", WANT_OK, fi_av_insert(av, buf, 0, fa, 0, NULL));
		/* A failed insertion sets its fi_addr to FI_ADDR_NOTAVAIL (fi_av(3)). */
		memset(name, 0, sizeof(name)); /* family AF_UNSPEC */
		fa[0] = 77;
		T("av_insert.unspec_family", WANT_LE0, fi_av_insert(av, name, 1, fa, 0, NULL));
		T("av_insert.unspec_family_notavail", WANT_OK, fa[0] == FI_ADDR_NOTAVAIL ? 0 : -1);
		fa[0] = 77;
		T("av_insertsvc.bad_service_notavail", WANT_LE0, fi_av_insertsvc(av, "127.0.0.1", "no-such-service", fa, 0, NULL) <= 0 && fa[0] != FI_ADDR_NOTAVAIL ? 1 : 0);
		T("av_insertsvc.null", WANT_LE0, fi_av_insertsvc(av, NULL, NULL, fa, 0, NULL));
		T("av_insertsvc.bad_service", WANT_LE0, fi_av_insertsvc(av, "127.0.0.1", "no-such-service", fa, 0, NULL));
		T("av_insertsym.null", WANT_LE0, fi_av_insertsym(av, NULL, 1, NULL, 1, fa, 0, NULL));
		T("av_remove.null", WANT_NEG, fi_av_remove(av, NULL, 1, 0));
		fa[0] = 12345;
		T("av_remove.unknown", WANT_NEG, fi_av_remove(av, fa, 1, 0));
		T("av_remove.bad_flags", WANT_NEG, fi_av_remove(av, fa, 1, BADFLAG));
		len = sizeof(name);
		T("av_lookup.unknown", WANT_NEG, fi_av_lookup(av, 12345, name, &len));
		T("av_lookup.notavail", WANT_NEG, fi_av_lookup(av, FI_ADDR_NOTAVAIL, name, &len));
		T("av_lookup.null_len", WANT_NEG, fi_av_lookup(av, 0, name, NULL));
		len = sizeof(name);
		T("av_straddr.null_addr", WANT_ANY, fi_av_straddr(av, NULL, name, &len) == NULL);
		T("av_control.bad_cmd", WANT_NEG, fi_control(&av->fid, BADENUM, &u64));
		T("av_bind.domain", WANT_NEG, fi_av_bind(av, &dom->fid, 0));
		T("av_set.null", WANT_NEG, fi_av_set(av, NULL, NULL, NULL));
	}

	/* ---- memory registration ---- */
	T("mr_reg.bad_flags", E(FI_EBADFLAGS), fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 0, BADFLAG, &mr, NULL));
	T("mr_reg.bad_access", WANT_NEG, fi_mr_reg(dom, buf, sizeof(buf), BADFLAG, 0, 0, 0, &mr, NULL));
	T("mr_reg.null_out", WANT_NEG, fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 0, 0, NULL, NULL));
	T("mr_reg.null_buf", WANT_NEG, fi_mr_reg(dom, NULL, 4096, FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL));
	T("mr_reg.huge_len", E(FI_EINVAL), fi_mr_reg(dom, buf, HUGE, FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL));
	/* Within the address space: nothing says a provider must refuse. */
	if (T("mr_reg.half_huge_len", WANT_ANY, fi_mr_reg(dom, buf, HUGE / 2, FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL)) == 0)
		T("mr_reg.half_huge_len_close", WANT_OK, fi_close(&mr->fid));
	T("mr_regv.null_iov", WANT_NEG, fi_mr_regv(dom, NULL, 1, FI_SEND, 0, 0, 0, &mr, NULL));
	iov[0].iov_base = buf;
	iov[0].iov_len = 64;
	T("mr_regv.huge_count", WANT_NEG, fi_mr_regv(dom, iov, 100000, FI_SEND, 0, 0, 0, &mr, NULL));
	iov[0].iov_base = NULL;
	iov[0].iov_len = 64;
	T("mr_regv.null_base", WANT_NEG, fi_mr_regv(dom, iov, 1, FI_SEND, 0, 0, 0, &mr, NULL));
	T("mr_regattr.null_attr", WANT_NEG, fi_mr_regattr(dom, NULL, 0, &mr));
	memset(&mr_attr, 0, sizeof(mr_attr));
	mr_attr.mr_iov = NULL;
	mr_attr.iov_count = 3;
	mr_attr.access = FI_SEND;
	T("mr_regattr.null_iov", WANT_NEG, fi_mr_regattr(dom, &mr_attr, 0, &mr));
	iov[0].iov_base = buf;
	mr_attr.mr_iov = iov;
	mr_attr.iov_count = 1;
	mr_attr.iface = BADENUM;
	T("mr_regattr.bad_iface", WANT_NEG, fi_mr_regattr(dom, &mr_attr, 0, &mr));
	have_mr = T("mr_reg", WANT_OK, fi_mr_reg(dom, buf, sizeof(buf), FI_SEND | FI_RECV | FI_READ | FI_WRITE |
						   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 7, 0, &mr, NULL)) == 0;
	if (have_mr) {
		if (!(info->domain_attr->mr_mode & FI_MR_PROV_KEY))
			T("mr_reg.dup_key", E(FI_ENOKEY), fi_mr_reg(dom, buf2, sizeof(buf2), FI_SEND, 0, 7, 0, &mr2, NULL));
		T("mr_bind.domain", WANT_NEG, fi_mr_bind(mr, &dom->fid, 0));
		T("mr_bind.null", WANT_NEG, fi_mr_bind(mr, NULL, 0));
		if (have_cq)
			T("mr_bind.cq", WANT_NEG, fi_mr_bind(mr, &cq->fid, FI_REMOTE_WRITE));
		if (have_cntr)
			T("mr_bind.cntr_bad_flags", WANT_NEG, fi_mr_bind(mr, &cntr->fid, BADFLAG));
		T("mr_refresh.null_iov", WANT_NEG, fi_mr_refresh(mr, NULL, 1, 0));
		T("mr_control.bad_cmd", WANT_NEG, fi_control(&mr->fid, BADENUM, &u64));
		T("mr_open_ops", E(FI_ENOSYS), fi_open_ops(&mr->fid, "bogus", 0, &ops, NULL));
		T("mr_raw_attr.null", WANT_NEG, fi_mr_raw_attr(mr, NULL, NULL, NULL, 0));
		T("mr_enable.live", WANT_LE0, fi_mr_enable(mr));
	}

	/* ---- domain ---- */
	T("domain_bind.null", WANT_NEG, fi_domain_bind(dom, NULL, 0));
	T("domain_bind.fabric", WANT_NEG, fi_domain_bind(dom, &fab->fid, 0));
	if (have_cq)
		T("domain_bind.cq", WANT_NEG, fi_domain_bind(dom, &cq->fid, 0));
	if (have_eq)
		T("domain_bind.eq_bad_flags", WANT_NEG, fi_domain_bind(dom, &eq->fid, BADFLAG));
	T("query_atomic.bad_datatype", WANT_NEG, fi_query_atomic(dom, BADENUM, FI_SUM, &atomic_attr, 0));
	T("query_atomic.bad_op", WANT_NEG, fi_query_atomic(dom, FI_INT32, BADENUM, &atomic_attr, 0));
	T("query_atomic.null_attr", WANT_NEG, fi_query_atomic(dom, FI_INT32, FI_SUM, NULL, 0));
	T("query_atomic.bad_flags", WANT_NEG, fi_query_atomic(dom, FI_INT32, FI_SUM, &atomic_attr, BADFLAG));
	T("endpoint.null_info", WANT_NEG, fi_endpoint(dom, NULL, &ep, NULL));
	T("endpoint.null_out", WANT_NEG, fi_endpoint(dom, info, NULL, NULL));
	T("endpoint2.bad_flags", WANT_NEG, fi_endpoint2(dom, info, &ep, BADFLAG, NULL));
	T("scalable_ep.null_info", WANT_NEG, fi_scalable_ep(dom, NULL, &ep, NULL));
	T("stx_context.null_out", WANT_NEG, fi_stx_context(dom, NULL, NULL, NULL));
	T("srx_context.null_out", WANT_NEG, fi_srx_context(dom, NULL, NULL, NULL));
	T("domain_control.bad_cmd", WANT_NEG, fi_control(&dom->fid, BADENUM, &u64));
	T("domain_control.map_raw_null", WANT_NEG, fi_control(&dom->fid, FI_MAP_RAW_MR, NULL));
	T("fabric_control.bad_cmd", WANT_NEG, fi_control(&fab->fid, BADENUM, &u64));
	T("domain_set_ops", WANT_NEG, fi_set_ops(&dom->fid, "bogus", 0, NULL, NULL));
	T("query_collective", WANT_NEG, fi_query_collective(dom, FI_BARRIER, NULL, 0));
	T("passive_ep.null_info", WANT_NEG, fi_passive_ep(fab, NULL, &pep, NULL));
	T("passive_ep.null_out", WANT_NEG, fi_passive_ep(fab, info, NULL, NULL));

	/* ---- poll set ---- */
	memset(&poll_attr, 0, sizeof(poll_attr));
	poll_attr.flags = BADFLAG;
	T("poll_open.bad_flags", WANT_NEG, fi_poll_open(dom, &poll_attr, &ps));
	poll_attr.flags = 0;
	T("poll_open.null_out", WANT_NEG, fi_poll_open(dom, &poll_attr, NULL));
	have_ps = T("poll_open", WANT_OK, fi_poll_open(dom, &poll_attr, &ps)) == 0;
	if (have_ps) {
		T("poll_add.null", WANT_NEG, fi_poll_add(ps, NULL, 0));
		T("poll_add.domain", WANT_NEG, fi_poll_add(ps, &dom->fid, 0));
		T("poll_add.fabric", WANT_NEG, fi_poll_add(ps, &fab->fid, 0));
		if (have_cq) {
			T("poll_del.not_added", WANT_NEG, fi_poll_del(ps, &cq->fid, 0));
			T("poll_add.cq_bad_flags", WANT_NEG, fi_poll_add(ps, &cq->fid, BADFLAG));
		}
		T("poll.empty", WANT_OK, fi_poll(ps, pctx, 4));
		T("poll.neg_count", WANT_NEG, fi_poll(ps, pctx, -1));
		T("poll_control.bad_cmd", WANT_NEG, fi_control(&ps->fid, BADENUM, &u64));
	}

	/* ---- passive endpoint (msg) ---- */
	if (!dgram) {
		have_pep = T("passive_ep", WANT_OK, fi_passive_ep(fab, info, &pep, NULL)) == 0;
		if (have_pep) {
			T("pep_bind.null", WANT_NEG, fi_pep_bind(pep, NULL, 0));
			T("pep_bind.domain", WANT_NEG, fi_pep_bind(pep, &dom->fid, 0));
			if (have_cq)
				T("pep_bind.cq", WANT_NEG, fi_pep_bind(pep, &cq->fid, 0));
			if (have_eq)
				T("pep_bind.eq_bad_flags", WANT_NEG, fi_pep_bind(pep, &eq->fid, BADFLAG));
			T("listen.no_eq", WANT_NEG, fi_listen(pep));
			T("reject.null", WANT_NEG, fi_reject(pep, NULL, NULL, 0));
			T("reject.domain", WANT_NEG, fi_reject(pep, &dom->fid, NULL, 0));
			T("pep_connect", WANT_NEG, pep->cm->connect((struct fid_ep *)pep, NULL, NULL, 0));
			len = sizeof(name);
			T("pep_getopt.bad_level", E(FI_ENOPROTOOPT), fi_getopt(&pep->fid, BADENUM, 0, name, &len));
			T("pep_control.bad_cmd", WANT_NEG, fi_control(&pep->fid, BADENUM, &u64));
			if (have_eq) {
				T("pep_bind.eq", WANT_OK, fi_pep_bind(pep, &eq->fid, 0));
				T("listen", WANT_OK, fi_listen(pep));
				len = 1;
				T("pep_getname.small", E(FI_ETOOSMALL), fi_getname(&pep->fid, name, &len));
				T("pep_getname.small_len", WANT_OK, len > 1 && len <= sizeof(name) ? 0 : -1);
				T("pep_getname.null_len", WANT_NEG, fi_getname(&pep->fid, name, NULL));
				T("pep_setname.null", WANT_NEG, fi_setname(&pep->fid, NULL, 16));
				T("eq_close.bound_pep", E(FI_EBUSY), fi_close(&eq->fid));
			}
		}
	} else {
		T("passive_ep.dgram", WANT_NEG, fi_passive_ep(fab, info, &pep, NULL));
	}

	/* ---- active endpoint ---- */
	have_ep = T("endpoint", WANT_OK, fi_endpoint(dom, info, &ep, (void *)0x10)) == 0;
	if (have_ep) {
		memcpy(&s_live, ep, sizeof(struct fid_ep) + 8);
		/* Data calls before enable. */
		T("send.not_enabled", E(FI_EOPBADSTATE), fi_send(ep, buf, 8, NULL, 0, NULL));
		T("recv.not_enabled", E(FI_EOPBADSTATE), fi_recv(ep, buf, 8, NULL, 0, NULL));
		T("enable.nothing_bound", dgram ? E(FI_ENOAV) : E(FI_ENOEQ), fi_enable(ep));

		/* Binds: NULL, wrong class, stale, forged, mistyped, bad flags. */
		T("ep_bind.null", WANT_NEG, fi_ep_bind(ep, NULL, 0));
		T("ep_bind.fabric", E(FI_EINVAL), fi_ep_bind(ep, &fab->fid, 0));
		T("ep_bind.domain", E(FI_EINVAL), fi_ep_bind(ep, &dom->fid, 0));
		T("ep_bind.self", E(FI_EINVAL), fi_ep_bind(ep, &ep->fid, 0));
		if (have_mr)
			T("ep_bind.mr", E(FI_EINVAL), fi_ep_bind(ep, &mr->fid, 0));
		if (have_ws)
			T("ep_bind.waitset", E(FI_EINVAL), fi_ep_bind(ep, &ws->fid, 0));
		if (have_cq) {
			T("ep_bind.cq_no_flags", E(FI_EBADFLAGS), fi_ep_bind(ep, &cq->fid, 0));
			T("ep_bind.cq_bad_flags", E(FI_EBADFLAGS), fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | BADFLAG));
			/* A live CQ's struct relabelled as a counter: the handle
			 * is real but of the wrong kind. FI_REMOTE_WRITE, a
			 * counter flag, would be -FI_EBADFLAGS for a CQ. */
			memcpy(&s_cq, cq, sizeof(struct fid_cq) + 8);
			((struct fid *)s_cq.raw)->fclass = FI_CLASS_CNTR;
			T("ep_bind.cq_as_cntr", E(FI_EINVAL), fi_ep_bind(ep, (struct fid *)s_cq.raw, FI_REMOTE_WRITE));
			memcpy(&s_cq, cq, sizeof(struct fid_cq) + 8);
			*STALE_H(&s_cq, struct fid_cq) ^= 0x5a5a000000ULL;
			T("ep_bind.cq_forged", E(FI_EINVAL), fi_ep_bind(ep, (struct fid *)s_cq.raw, FI_TRANSMIT));
		}
		memcpy(&s_ep, &s_live, sizeof(s_live));
		((struct fid *)s_ep.raw)->fclass = FI_CLASS_CQ;
		T("ep_bind.ep_as_cq", E(FI_EINVAL), fi_ep_bind(ep, (struct fid *)s_ep.raw, FI_TRANSMIT));
		if (have_cntr)
			T("ep_bind.cntr_no_flags", E(FI_EBADFLAGS), fi_ep_bind(ep, &cntr->fid, 0));
		if (have_av) {
			T("ep_bind.av_bad_flags", E(FI_EBADFLAGS), fi_ep_bind(ep, &av->fid, FI_SEND));
		}
		if (have_eq && dgram)
			T("ep_bind.eq_bad_flags", E(FI_EBADFLAGS), fi_ep_bind(ep, &eq->fid, BADFLAG));

		/* Options, control, alias. */
		len = sizeof(u64);
		T("getopt.bad_level", E(FI_ENOPROTOOPT), fi_getopt(&ep->fid, BADENUM, FI_OPT_MIN_MULTI_RECV, &u64, &len));
		T("getopt.bad_name", E(FI_ENOPROTOOPT), fi_getopt(&ep->fid, FI_OPT_ENDPOINT, BADENUM, &u64, &len));
		len = 1;
		T("getopt.small", E(FI_ETOOSMALL), fi_getopt(&ep->fid, FI_OPT_ENDPOINT,
							     dgram ? FI_OPT_MIN_MULTI_RECV : FI_OPT_CM_DATA_SIZE, &u64, &len));
		T("getopt.null_val", WANT_NEG, fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, NULL, &len));
		T("getopt.null_len", WANT_NEG, fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &u64, NULL));
		T("setopt.null_val", WANT_NEG, fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, NULL, 8));
		T("setopt.short", WANT_NEG, fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &u64, 1));
		T("setopt.bad_name", E(FI_ENOPROTOOPT), fi_setopt(&ep->fid, FI_OPT_ENDPOINT, BADENUM, &u64, 8));
		T("ep_control.bad_cmd", WANT_NEG, fi_control(&ep->fid, BADENUM, &u64));
		T("ep_control.getopsflag_null", WANT_NEG, fi_control(&ep->fid, FI_GETOPSFLAG, NULL));
		/* fi_endpoint(3) lists no check of the flags set: the Go
		 * API stores them (they only add to what each call asks). */
		u64 = FI_TRANSMIT;
		T("ep_control.getopsflag", WANT_OK, fi_control(&ep->fid, FI_GETOPSFLAG, &u64));
		opsflags = u64 | FI_TRANSMIT;
		u64 = BADFLAG | FI_TRANSMIT;
		T("ep_control.setopsflag_bad", WANT_ANY, fi_control(&ep->fid, FI_SETOPSFLAG, &u64));
		T("ep_control.setopsflag_restore", WANT_OK, fi_control(&ep->fid, FI_SETOPSFLAG, &opsflags));
		u64 = FI_TRANSMIT | FI_RECV;
		T("ep_control.getopsflag_both", WANT_NEG, fi_control(&ep->fid, FI_GETOPSFLAG, &u64));
		/* fi_alias, not fi_ep_alias: the inline stores through its
		 * alias_ep argument on success. */
		T("ep_alias.null", WANT_NEG, fi_alias(&ep->fid, NULL, FI_TRANSMIT));
		if (T("ep_alias.bad_flags", WANT_NEG, fi_ep_alias(ep, &alias, BADFLAG)) == 0)
			fi_close(&alias->fid);
		if (T("ep_alias", WANT_OK, fi_ep_alias(ep, &alias, FI_TRANSMIT)) == 0) {
			T("ep_alias.fclass", WANT_OK, alias->fid.fclass == FI_CLASS_EP ? 0 : -1);
			T("ep_alias.close", WANT_OK, fi_close(&alias->fid));
		}
		T("ep_open_ops", E(FI_ENOSYS), fi_open_ops(&ep->fid, "bogus", 0, &ops, NULL));
		T("cancel.unknown_ctx", WANT_LE0, fi_cancel(&ep->fid, (void *)0x4321));
		T("cancel.null_ctx", WANT_LE0, fi_cancel(&ep->fid, NULL));
		T("rx_size_left", WANT_ANY, ep->ops->rx_size_left(ep)); /* deprecated calls */
		T("tx_size_left", WANT_ANY, ep->ops->tx_size_left(ep));
		T("ep_set_ops", WANT_NEG, fi_set_ops(&ep->fid, "bogus", 0, NULL, NULL));
		T("join.null_addr", WANT_NEG, fi_join(ep, NULL, 0, NULL, NULL));
		/* The collective ops are reached without a check: the table
		 * must be there (fi_barrier2 checks, fi_barrier does not). */
		T("ep.collective_table", WANT_OK, ep->collective ? 0 : -1);
		if (ep->collective)
			T("barrier", WANT_NEG, fi_barrier(ep, 0, NULL));
		len = 1;
		T("getname.null_len", WANT_NEG, fi_getname(&ep->fid, name, NULL));
		T("setname.null", WANT_NEG, fi_setname(&ep->fid, NULL, 16));
		T("setname.short", WANT_NEG, fi_setname(&ep->fid, name, 1));

		/* Real binds and enable. */
		if (have_cq)
			T("ep_bind.cq", WANT_OK, fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
		if (have_cq)
			T("ep_bind.cq_again", E(FI_EINVAL), fi_ep_bind(ep, &cq2->fid, FI_TRANSMIT));
		if (have_cntr)
			T("ep_bind.cntr", WANT_OK, fi_ep_bind(ep, &cntr->fid, FI_SEND));
		if (dgram && have_av)
			T("ep_bind.av", WANT_OK, fi_ep_bind(ep, &av->fid, 0));
		if (!dgram && have_eq)
			T("ep_bind.eq", WANT_OK, fi_ep_bind(ep, &eq->fid, 0));
		if (have_cq)
			T("cq_close.bound", E(FI_EBUSY), fi_close(&cq->fid));
		if (have_av)
			T("av_close.bound", E(FI_EBUSY), fi_close(&av->fid));
		if (have_cntr)
			T("cntr_close.bound", E(FI_EBUSY), fi_close(&cntr->fid));
		T("domain_close.busy", E(FI_EBUSY), fi_close(&dom->fid));
		T("fabric_close.busy", E(FI_EBUSY), fi_close(&fab->fid));
		rc = T("enable", WANT_OK, fi_enable(ep));
		if (have_cq)
			T("ep_bind.after_enable", WANT_NEG, fi_ep_bind(ep, &cq2->fid, FI_RECV));

		len = 1;
		T("getname.small", E(FI_ETOOSMALL), fi_getname(&ep->fid, name, &len));
		T("getname.small_len", WANT_OK, len > 1 && len <= sizeof(name) ? 0 : -1);
		if (dgram && have_av) {
			len = sizeof(name);
			T("getname", WANT_OK, fi_getname(&ep->fid, name, &len));
			T("av_insert.self", "1", fi_av_insert(av, name, 1, &self, 0, NULL));
			len = 1;
			T("av_lookup.small", WANT_OK, fi_av_lookup(av, self, name, &len));
			T("av_lookup.small_len", WANT_OK, len > 1 && len <= sizeof(name) ? 0 : -1);
		}

		/* msg: the endpoint is not connected. */
		if (!dgram) {
			/* fi_endpoint(3) names -FI_EOPBADSTATE for a bad state;
			 * the tcp provider documents -FI_ENOTCONN here (its
			 * doc.go, as the C tcp provider). */
			T("send.unconnected", E(FI_ENOTCONN), fi_send(ep, buf, 8, NULL, 0, NULL));
			T("connect.null_addr", WANT_NEG, fi_connect(ep, NULL, NULL, 0));
			T("connect.huge_param", WANT_NEG, fi_connect(ep, name, buf, HUGE));
			T("accept.no_connreq", WANT_NEG, fi_accept(ep, NULL, 0));
			T("shutdown.unconnected", WANT_NEG, fi_shutdown(ep, 0));
			len = sizeof(name);
			T("getpeer.unconnected", WANT_NEG, fi_getpeer(ep, name, &len));
			T("getpeer.null_len", WANT_NEG, fi_getpeer(ep, name, NULL));
			/* Connect ep to pep in this process, accepting on ep2:
			 * the data calls below then meet a connected endpoint. */
			if (have_pep && have_eq && have_cq) {
				struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)cmbuf;

				len = sizeof(name);
				T("connect.pep_getname", WANT_OK, fi_getname(&pep->fid, name, &len));
				T("connect", WANT_OK, fi_connect(ep, name, NULL, 0));
				rc = T("connect.connreq", WANT_OK, wait_event(eq, FI_CONNREQ, cm));
				if (rc == 0) {
					T("connect.endpoint", WANT_OK, fi_endpoint(dom, cm->info, &ep2, NULL));
					fi_freeinfo(cm->info);
					T("connect.ep2_bind_eq", WANT_OK, fi_ep_bind(ep2, &eq->fid, 0));
					T("connect.ep2_bind_cq", WANT_OK, fi_ep_bind(ep2, &cq2->fid, FI_TRANSMIT | FI_RECV));
					T("connect.ep2_enable", WANT_OK, fi_enable(ep2));
					T("accept.null_param_len", WANT_NEG, fi_accept(ep2, NULL, HUGE));
					T("accept", WANT_OK, fi_accept(ep2, NULL, 0));
					T("connect.connected1", WANT_OK, wait_event(eq, FI_CONNECTED, cm));
					T("connect.connected2", WANT_OK, wait_event(eq, FI_CONNECTED, cm));
					connected = 1;
					len = 1;
					T("getpeer.small", E(FI_ETOOSMALL), fi_getpeer(ep, name, &len));
					len = sizeof(name);
					T("getpeer", WANT_OK, fi_getpeer(ep, name, &len));
					T("accept.again", WANT_NEG, fi_accept(ep2, NULL, 0));
					T("connect.again", WANT_NEG, fi_connect(ep, name, NULL, 0));
				}
			}
		} else {
			T("connect.dgram", WANT_NEG, fi_connect(ep, name, NULL, 0));
			T("accept.dgram", WANT_NEG, fi_accept(ep, NULL, 0));
			T("shutdown.dgram", WANT_NEG, fi_shutdown(ep, 0));
			len = sizeof(name);
			T("getpeer.dgram", WANT_NEG, fi_getpeer(ep, name, &len));
		}

		/* Messages. */
		T("send.null_buf", WANT_NEG, fi_send(ep, NULL, 8, NULL, self, NULL));
		T("send.huge_len", WANT_NEG, fi_send(ep, buf, HUGE, NULL, self, NULL));
		T("send.len_2_62", WANT_NEG, fi_send(ep, buf, 1ULL << 62, NULL, self, NULL));
		if (info->ep_attr->max_msg_size < HUGE / 2)
			T("send.over_max", DG(FI_EMSGSIZE), fi_send(ep, buf, info->ep_attr->max_msg_size + 1, NULL, self, NULL));
		T("send.len0", WANT_ANY, fi_send(ep, buf, 0, NULL, self, NULL));
		if (dgram)
			T("send.unknown_addr", WANT_NEG, fi_send(ep, buf, 8, NULL, 12345, NULL));
		T("sendv.null_iov", WANT_NEG, fi_sendv(ep, NULL, NULL, 1, self, NULL));
		iov[0].iov_base = buf;
		iov[0].iov_len = 8;
		T("sendv.huge_count", DG(FI_EINVAL), fi_sendv(ep, iov, NULL, 100000, self, NULL));
		T("sendv.count_max", WANT_NEG, fi_sendv(ep, iov, NULL, HUGE, self, NULL));
		iov[0].iov_base = NULL;
		T("sendv.null_base", WANT_NEG, fi_sendv(ep, iov, NULL, 1, self, NULL));
		iov[0].iov_base = buf;
		iov[1].iov_base = buf;
		iov[1].iov_len = HUGE;
		T("sendv.huge_iov_len", WANT_NEG, fi_sendv(ep, iov, NULL, 2, self, NULL));
		T("sendmsg.null", WANT_NEG, fi_sendmsg(ep, NULL, 0));
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.iov_count = 100000;
		msg.addr = self;
		T("sendmsg.huge_count", DG(FI_EINVAL), fi_sendmsg(ep, &msg, 0));
		msg.iov_count = 1;
		T("sendmsg.bad_flags", DG(FI_EBADFLAGS), fi_sendmsg(ep, &msg, BADFLAG));
		msg.msg_iov = NULL;
		T("sendmsg.null_iov", WANT_NEG, fi_sendmsg(ep, &msg, 0));
		/* Descriptors that are readable memory but no live MR: a
		 * zeroed struct, and a closed MR's copy (below, once closed).
		 * Without FI_MR_LOCAL a provider may ignore descriptors. */
		memset(&s_mr, 0, sizeof(s_mr));
		descs[0] = descs[1] = s_mr.raw;
		msg.msg_iov = iov;
		msg.desc = descs;
		T("sendmsg.zero_desc", WANT_LE0, fi_sendmsg(ep, &msg, 0));
		T("send.zero_desc", WANT_LE0, fi_send(ep, buf, 8, s_mr.raw, self, NULL));
		T("inject.over_inject", DG(FI_EINVAL), fi_inject(ep, buf, info->tx_attr->inject_size + 1, self));
		T("inject.null_buf", WANT_NEG, fi_inject(ep, NULL, 4, self));
		T("inject.huge", WANT_NEG, fi_inject(ep, buf, HUGE, self));
		T("senddata.null_buf", WANT_NEG, fi_senddata(ep, NULL, 8, NULL, 1, self, NULL));
		T("injectdata.huge", WANT_NEG, fi_injectdata(ep, buf, HUGE, 1, self));
		/* A NULL receive buffer is a zero-length one, as in the C
		 * providers (fabtests post them; cabi/README.md). */
		T("recv.null_buf", WANT_LE0, fi_recv(ep, NULL, 8, NULL, FI_ADDR_UNSPEC, NULL));
		T("recv.huge_len", WANT_NEG, fi_recv(ep, buf, HUGE, NULL, FI_ADDR_UNSPEC, NULL));
		T("recvv.null_iov", WANT_NEG, fi_recvv(ep, NULL, NULL, 1, FI_ADDR_UNSPEC, NULL));
		T("recvv.huge_count", E(FI_EINVAL), fi_recvv(ep, iov, NULL, 100000, FI_ADDR_UNSPEC, NULL));
		T("recvmsg.null", WANT_NEG, fi_recvmsg(ep, NULL, 0));
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.iov_count = 1;
		msg.addr = FI_ADDR_UNSPEC;
		T("recvmsg.bad_flags", E(FI_EBADFLAGS), fi_recvmsg(ep, &msg, BADFLAG));
		msg.iov_count = 100000;
		T("recvmsg.huge_count", E(FI_EINVAL), fi_recvmsg(ep, &msg, 0));

		/* Tagged, RMA, atomics: not in the caps asked for (FI_MSG). */
		T("tsend.no_cap", WANT_NEG, fi_tsend(ep, buf, 8, NULL, self, 1, NULL));
		T("tsend.null_buf", WANT_NEG, fi_tsend(ep, NULL, 8, NULL, self, 1, NULL));
		T("trecv.huge_len", WANT_NEG, fi_trecv(ep, buf, HUGE, NULL, FI_ADDR_UNSPEC, 1, 0, NULL));
		T("tsendmsg.null", WANT_NEG, fi_tsendmsg(ep, NULL, 0));
		memset(&tmsg, 0, sizeof(tmsg));
		tmsg.msg_iov = iov;
		tmsg.iov_count = 100000;
		T("trecvmsg.huge_count", WANT_NEG, fi_trecvmsg(ep, &tmsg, 0));
		T("tinject.huge", WANT_NEG, fi_tinject(ep, buf, HUGE, self, 1));
		T("tsendv.null_iov", WANT_NEG, fi_tsendv(ep, NULL, NULL, 1, self, 1, NULL));
		T("trecvv.huge_count", WANT_NEG, fi_trecvv(ep, iov, NULL, 100000, FI_ADDR_UNSPEC, 1, 0, NULL));
		T("tsenddata.null_buf", WANT_NEG, fi_tsenddata(ep, NULL, 8, NULL, 1, self, 1, NULL));
		T("tinjectdata.huge", WANT_NEG, fi_tinjectdata(ep, buf, HUGE, 1, self, 1));
		T("read.no_cap", WANT_NEG, fi_read(ep, buf, 8, NULL, self, 0, 1, NULL));
		T("write.null_buf", WANT_NEG, fi_write(ep, NULL, 8, NULL, self, 0, 1, NULL));
		T("write.huge", WANT_NEG, fi_write(ep, buf, HUGE, NULL, self, 0, 1, NULL));
		T("readmsg.null", WANT_NEG, fi_readmsg(ep, NULL, 0));
		memset(&rmsg, 0, sizeof(rmsg));
		rmsg.msg_iov = iov;
		rmsg.iov_count = 1;
		rmsg.rma_iov = &rma_iov;
		rmsg.rma_iov_count = 100000;
		T("writemsg.huge_rma_count", WANT_NEG, fi_writemsg(ep, &rmsg, 0));
		rmsg.rma_iov = NULL;
		rmsg.rma_iov_count = 1;
		T("writemsg.null_rma_iov", WANT_NEG, fi_writemsg(ep, &rmsg, 0));
		T("inject_write.huge", WANT_NEG, fi_inject_write(ep, buf, HUGE, self, 0, 1));
		T("readv.null_iov", WANT_NEG, fi_readv(ep, NULL, NULL, 1, self, 0, 1, NULL));
		T("writev.huge_count", WANT_NEG, fi_writev(ep, iov, NULL, 100000, self, 0, 1, NULL));
		T("writedata.null_buf", WANT_NEG, fi_writedata(ep, NULL, 8, NULL, 1, self, 0, 1, NULL));
		T("inject_writedata.huge", WANT_NEG, fi_inject_writedata(ep, buf, HUGE, 1, self, 0, 1));
		T("atomic.bad_datatype", WANT_NEG, fi_atomic(ep, buf, 1, NULL, self, 0, 1, BADENUM, FI_SUM, NULL));
		T("atomic.bad_op", WANT_NEG, fi_atomic(ep, buf, 1, NULL, self, 0, 1, FI_INT32, BADENUM, NULL));
		T("atomic.huge_count", WANT_NEG, fi_atomic(ep, buf, HUGE, NULL, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("atomic.null_buf", WANT_NEG, fi_atomic(ep, NULL, 1, NULL, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("fetch_atomic.null_result", WANT_NEG, fi_fetch_atomic(ep, buf, 1, NULL, NULL, NULL, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("compare_atomic.null_compare", WANT_NEG, fi_compare_atomic(ep, buf, 1, NULL, NULL, NULL, buf2, NULL, self, 0, 1, FI_INT32, FI_CSWAP, NULL));
		T("inject_atomic.huge_count", WANT_NEG, fi_inject_atomic(ep, buf, HUGE, self, 0, 1, FI_INT32, FI_SUM));
		T("atomicmsg.null", WANT_NEG, fi_atomicmsg(ep, NULL, 0));
		memset(&amsg, 0, sizeof(amsg));
		ioc.addr = buf;
		ioc.count = 1;
		rma_ioc.addr = 0;
		rma_ioc.count = 1;
		rma_ioc.key = 1;
		amsg.msg_iov = &ioc;
		amsg.iov_count = 100000;
		amsg.rma_iov = &rma_ioc;
		amsg.rma_iov_count = 1;
		amsg.datatype = FI_INT32;
		amsg.op = FI_SUM;
		T("atomicmsg.huge_count", WANT_NEG, fi_atomicmsg(ep, &amsg, 0));
		T("fetch_atomicmsg.null_result", WANT_NEG, fi_fetch_atomicmsg(ep, &amsg, NULL, NULL, 1, 0));
		T("compare_atomicmsg.null", WANT_NEG, fi_compare_atomicmsg(ep, &amsg, NULL, NULL, 1, NULL, NULL, 1, 0));
		T("atomicv.null_ioc", WANT_NEG, fi_atomicv(ep, NULL, NULL, 1, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("fetch_atomicv.huge_count", WANT_NEG, fi_fetch_atomicv(ep, &ioc, NULL, 100000, &ioc, NULL, 1, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("compare_atomicv.null", WANT_NEG, fi_compare_atomicv(ep, &ioc, NULL, 1, NULL, NULL, 0, &ioc, NULL, 1, self, 0, 1, FI_INT32, FI_CSWAP, NULL));
		cnt = 0;
		T("atomicvalid.bad_datatype", WANT_NEG, fi_atomicvalid(ep, BADENUM, FI_SUM, &cnt));
		T("atomicvalid.null_count", WANT_NEG, fi_atomicvalid(ep, FI_INT32, FI_SUM, NULL));
		T("fetch_atomicvalid.bad_op", WANT_NEG, fi_fetch_atomicvalid(ep, FI_INT32, BADENUM, &cnt));
		T("compare_atomicvalid.not_compare_op", WANT_NEG, fi_compare_atomicvalid(ep, FI_INT32, FI_SUM, &cnt));

		/* After all that, a message still goes through (nothing was
		 * lost or corrupted by the bad calls): to ourselves over
		 * udp, from ep to ep2 over tcp. */
		if (have_cq && ((dgram && self != FI_ADDR_NOTAVAIL) || connected)) {
			struct fid_ep *rx = dgram ? ep : ep2;
			struct fid_cq *rxcq = dgram ? cq : cq2;

			T("selftest.send", WANT_OK, fi_send(ep, "hostile-selftest", 17, NULL, self, (void *)0x3000));
			T("selftest", WANT_OK, selftest(cq, rx, rxcq));
		}
		if (connected) {
			T("shutdown", WANT_OK, fi_shutdown(ep, 0));
			T("shutdown.event", WANT_OK, wait_event(eq, FI_SHUTDOWN, cmbuf));
			T("send.after_shutdown", WANT_NEG, fi_send(ep, buf, 8, NULL, self, NULL));
		}
	}

	/* ---- scalable endpoint, shared contexts ---- */
	if (have_ep && have_cq) {
		struct fid_ep *sep = NULL, *ctx = NULL, *srx = NULL;
		struct fid_stx *stx = NULL;
		union stale s_srx;

		T("tx_context.not_scalable", WANT_NEG, fi_tx_context(ep, 0, NULL, &ctx, NULL));
		T("rx_context.not_scalable", WANT_NEG, fi_rx_context(ep, 0, NULL, &ctx, NULL));
		/* The providers may not offer them (-FI_ENOSYS). */
		if (T("scalable_ep", WANT_ANY, fi_scalable_ep(dom, info, &sep, NULL)) == 0) {
			T("sep_tx_context.bad_index", WANT_NEG, fi_tx_context(sep, 100000, NULL, &ctx, NULL));
			T("sep_rx_context.neg_index", WANT_NEG, fi_rx_context(sep, -1, NULL, &ctx, NULL));
			T("sep_tx_context.null_out", WANT_NEG, fi_tx_context(sep, 0, NULL, NULL, NULL));
			T("sep_bind.cq", WANT_NEG, fi_scalable_ep_bind(sep, &cq->fid, 0));
			T("sep_bind.null", WANT_NEG, fi_scalable_ep_bind(sep, NULL, 0));
			T("sep_send", WANT_NEG, fi_send(sep, buf, 8, NULL, self, NULL));
			T("sep_close", WANT_OK, fi_close(&sep->fid));
		}
		if (T("srx_context", WANT_ANY, fi_srx_context(dom, info->rx_attr, &srx, NULL)) == 0) {
			T("srx_send", WANT_NEG, fi_send(srx, buf, 8, NULL, self, NULL));
			T("srx_recv.huge", WANT_NEG, fi_recv(srx, buf, HUGE, NULL, FI_ADDR_UNSPEC, NULL));
			T("srx_recvv.huge_count", WANT_NEG, fi_recvv(srx, iov, NULL, 100000, FI_ADDR_UNSPEC, NULL));
			T("srx_bind.cq", WANT_NEG, fi_ep_bind(srx, &cq->fid, FI_RECV));
			T("ep_bind.srx_enabled_ep", WANT_NEG, fi_ep_bind(ep, &srx->fid, 0));
			memcpy(&s_srx, srx, sizeof(struct fid_ep) + 8);
			T("srx_close", WANT_OK, fi_close(&srx->fid));
			T("stale_srx.close", E(FI_EINVAL), fi_close((struct fid *)s_srx.raw));
			T("stale_srx.recv", E(FI_EINVAL), fi_recv((struct fid_ep *)s_srx.raw, buf, 8, NULL, FI_ADDR_UNSPEC, NULL));
		}
		if (T("stx_context", WANT_ANY, fi_stx_context(dom, info->tx_attr, &stx, NULL)) == 0) {
			T("ep_bind.stx_enabled_ep", WANT_NEG, fi_ep_bind(ep, &stx->fid, 0));
			T("stx_close", WANT_OK, fi_close(&stx->fid));
		}
	}

	/* ---- closing, then the stale and forged copies ---- */
	if (have_ep) {
		memcpy(&s_ep, ep, sizeof(struct fid_ep) + 8);
		T("ep_close", WANT_OK, fi_close(&ep->fid));
		T("stale_ep.close", E(FI_EINVAL), fi_close((struct fid *)s_ep.raw));
		T("stale_ep.send", E(FI_EINVAL), fi_send((struct fid_ep *)s_ep.raw, buf, 8, NULL, self, NULL));
		T("stale_ep.recv", E(FI_EINVAL), fi_recv((struct fid_ep *)s_ep.raw, buf, 8, NULL, self, NULL));
		T("stale_ep.inject", E(FI_EINVAL), fi_inject((struct fid_ep *)s_ep.raw, buf, 8, self));
		T("stale_ep.tsend", WANT_NEG, fi_tsend((struct fid_ep *)s_ep.raw, buf, 8, NULL, self, 1, NULL));
		T("stale_ep.write", WANT_NEG, fi_write((struct fid_ep *)s_ep.raw, buf, 8, NULL, self, 0, 1, NULL));
		T("stale_ep.atomic", WANT_NEG, fi_atomic((struct fid_ep *)s_ep.raw, buf, 1, NULL, self, 0, 1, FI_INT32, FI_SUM, NULL));
		T("stale_ep.enable", E(FI_EINVAL), fi_enable((struct fid_ep *)s_ep.raw));
		T("stale_ep.bind", E(FI_EINVAL), fi_ep_bind((struct fid_ep *)s_ep.raw, &fab->fid, 0));
		len = sizeof(name);
		T("stale_ep.getname", E(FI_EINVAL), fi_getname((struct fid *)s_ep.raw, name, &len));
		T("stale_ep.getopt", E(FI_EINVAL), fi_getopt((struct fid *)s_ep.raw, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &u64, &len));
		T("stale_ep.cancel", E(FI_EINVAL), fi_cancel((struct fid *)s_ep.raw, NULL));
		T("stale_ep.control", E(FI_EINVAL), fi_control((struct fid *)s_ep.raw, FI_GETOPSFLAG, &u64));
		T("stale_ep.shutdown", WANT_NEG, fi_shutdown((struct fid_ep *)s_ep.raw, 0));
		*STALE_H(&s_ep, struct fid_ep) = 0x12345678deadULL;
		T("forged_ep.close", E(FI_EINVAL), fi_close((struct fid *)s_ep.raw));
		T("forged_ep.send", E(FI_EINVAL), fi_send((struct fid_ep *)s_ep.raw, buf, 8, NULL, self, NULL));
	}
	if (ep2)
		T("ep2_close", WANT_OK, fi_close(&ep2->fid));
	if (have_pep) {
		memcpy(&s_pep, pep, sizeof(struct fid_pep) + 8);
		T("pep_close", WANT_OK, fi_close(&pep->fid));
		T("stale_pep.close", E(FI_EINVAL), fi_close((struct fid *)s_pep.raw));
		T("stale_pep.listen", E(FI_EINVAL), fi_listen((struct fid_pep *)s_pep.raw));
		T("stale_pep.bind", E(FI_EINVAL), fi_pep_bind((struct fid_pep *)s_pep.raw, &fab->fid, 0));
		T("stale_pep.reject", E(FI_EINVAL), fi_reject((struct fid_pep *)s_pep.raw, &fab->fid, NULL, 0));
		*STALE_H(&s_pep, struct fid_pep) = 0x12345678deadULL;
		T("forged_pep.close", E(FI_EINVAL), fi_close((struct fid *)s_pep.raw));
	}
	if (have_mr) {
		memcpy(&s_mr, mr, sizeof(struct fid_mr) + 8);
		T("mr_close", WANT_OK, fi_close(&mr->fid));
		T("stale_mr.close", E(FI_EINVAL), fi_close((struct fid *)s_mr.raw));

		T("stale_mr.bind", E(FI_EINVAL), fi_mr_bind((struct fid_mr *)s_mr.raw, &fab->fid, 0));
		T("stale_mr.refresh", WANT_NEG, fi_mr_refresh((struct fid_mr *)s_mr.raw, iov, 1, 0));
		T("stale_mr.enable", WANT_NEG, fi_mr_enable((struct fid_mr *)s_mr.raw));
		*STALE_H(&s_mr, struct fid_mr) = 0x12345678deadULL;
		T("forged_mr.close", E(FI_EINVAL), fi_close((struct fid *)s_mr.raw));
	}
	if (have_av) {
		memcpy(&s_av, av, sizeof(struct fid_av) + 8);
		T("av_close", WANT_OK, fi_close(&av->fid));
		T("stale_av.close", E(FI_EINVAL), fi_close((struct fid *)s_av.raw));
		T("stale_av.insert", WANT_NEG, fi_av_insert((struct fid_av *)s_av.raw, name, 1, fa, 0, NULL));
		T("stale_av.remove", E(FI_EINVAL), fi_av_remove((struct fid_av *)s_av.raw, fa, 1, 0));
		len = sizeof(name);
		T("stale_av.lookup", E(FI_EINVAL), fi_av_lookup((struct fid_av *)s_av.raw, 0, name, &len));
		len = sizeof(name);
		T("stale_av.straddr", WANT_ANY, fi_av_straddr((struct fid_av *)s_av.raw, name, buf2, &len) == NULL);
		*STALE_H(&s_av, struct fid_av) = 0x12345678deadULL;
		T("forged_av.close", E(FI_EINVAL), fi_close((struct fid *)s_av.raw));
	}
	if (have_cntr) {
		memcpy(&s_cntr, cntr, sizeof(struct fid_cntr) + 8);
		T("cntr_close", WANT_OK, fi_close(&cntr->fid));
		T("stale_cntr.close", E(FI_EINVAL), fi_close((struct fid *)s_cntr.raw));
		T("stale_cntr.add", E(FI_EINVAL), fi_cntr_add((struct fid_cntr *)s_cntr.raw, 1));
		T("stale_cntr.set", E(FI_EINVAL), fi_cntr_set((struct fid_cntr *)s_cntr.raw, 1));
		T("stale_cntr.wait", E(FI_EINVAL), fi_cntr_wait((struct fid_cntr *)s_cntr.raw, 1, 0));
		T("stale_cntr.read", WANT_ANY, (long)fi_cntr_read((struct fid_cntr *)s_cntr.raw));
		*STALE_H(&s_cntr, struct fid_cntr) = 0x12345678deadULL;
		T("forged_cntr.close", E(FI_EINVAL), fi_close((struct fid *)s_cntr.raw));
	}
	if (have_cq) {
		T("cq2_close", WANT_OK, fi_close(&cq2->fid));
		memcpy(&s_cq, cq, sizeof(struct fid_cq) + 8);
		T("cq_close", WANT_OK, fi_close(&cq->fid));
		T("stale_cq.close", E(FI_EINVAL), fi_close((struct fid *)s_cq.raw));
		T("stale_cq.read", E(FI_EINVAL), fi_cq_read((struct fid_cq *)s_cq.raw, comp, 1));
		T("stale_cq.readerr", E(FI_EINVAL), fi_cq_readerr((struct fid_cq *)s_cq.raw, &cq_err, 0));
		T("stale_cq.sread", E(FI_EINVAL), fi_cq_sread((struct fid_cq *)s_cq.raw, comp, 1, NULL, 0));
		T("stale_cq.signal", E(FI_EINVAL), fi_cq_signal((struct fid_cq *)s_cq.raw));
		T("stale_cq.strerror", WANT_ANY, fi_cq_strerror((struct fid_cq *)s_cq.raw, 1, NULL, name, sizeof(name)) == NULL);
		*STALE_H(&s_cq, struct fid_cq) = 0x12345678deadULL;
		T("forged_cq.close", E(FI_EINVAL), fi_close((struct fid *)s_cq.raw));
		T("forged_cq.read", E(FI_EINVAL), fi_cq_read((struct fid_cq *)s_cq.raw, comp, 1));
	}
	if (have_ps) {
		memcpy(&s_ps, ps, sizeof(struct fid_poll) + 8);
		T("poll_close", WANT_OK, fi_close(&ps->fid));
		T("stale_poll.close", E(FI_EINVAL), fi_close((struct fid *)s_ps.raw));
		T("stale_poll.poll", E(FI_EINVAL), fi_poll((struct fid_poll *)s_ps.raw, pctx, 4));
		T("stale_poll.add", E(FI_EINVAL), fi_poll_add((struct fid_poll *)s_ps.raw, &fab->fid, 0));
	}
	if (have_eq) {
		memcpy(&s_eq, eq, sizeof(struct fid_eq) + 8);
		T("eq_close", WANT_OK, fi_close(&eq->fid));
		T("stale_eq.close", E(FI_EINVAL), fi_close((struct fid *)s_eq.raw));
		T("stale_eq.read", E(FI_EINVAL), fi_eq_read((struct fid_eq *)s_eq.raw, &event, &eq_entry, sizeof(eq_entry), 0));
		T("stale_eq.readerr", E(FI_EINVAL), fi_eq_readerr((struct fid_eq *)s_eq.raw, &eq_err, 0));
		T("stale_eq.write", E(FI_EINVAL), fi_eq_write((struct fid_eq *)s_eq.raw, FI_NOTIFY, &eq_entry, sizeof(eq_entry), 0));
		T("stale_eq.sread", E(FI_EINVAL), fi_eq_sread((struct fid_eq *)s_eq.raw, &event, &eq_entry, sizeof(eq_entry), 0, 0));
		*STALE_H(&s_eq, struct fid_eq) = 0x12345678deadULL;
		T("forged_eq.close", E(FI_EINVAL), fi_close((struct fid *)s_eq.raw));
	}
	if (have_ws) {
		memcpy(&s_ws, ws, sizeof(struct fid_wait) + 8);
		T("wait_close", WANT_OK, fi_close(&ws->fid));
		T("stale_wait.close", E(FI_EINVAL), fi_close((struct fid *)s_ws.raw));
		T("stale_wait.wait", E(FI_EINVAL), fi_wait((struct fid_wait *)s_ws.raw, 0));
	}
	T("domain_close", WANT_OK, fi_close(&dom->fid));
	T("fabric_close", WANT_OK, fi_close(&fab->fid));
	T("handles_left", WANT_OK, live() - base + 2);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	printf("done\n");
	return 0;
}

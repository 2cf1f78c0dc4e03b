/* Interop peer for prov/tcp's RDM tests: drives libfabric 1.17's
 * tcp;ofi_rxm (FI_EP_RDM) through its public API against a Go endpoint.
 * Roles:
 *   initiator HEX KEY SIZE  the Go endpoint HEX exposes 64 bytes under KEY:
 *       tagged send (SIZE bytes, tag 0x1234) and receive (tag 0x5678),
 *       fi_write, fi_writedata (data 0xd00d, 2 bytes at 48), fi_read,
 *       fi_fetch_atomic (FI_SUM), fi_compare_atomic
 *       (FI_CSWAP), and a fetch atomic with a wrong key (error completion)
 *   stream HEX SIZE...  send the Go endpoint one message of each SIZE, in
 *       order, untagged and tagged (tag = index) alternately, each
 *       pattern(SIZE, 'a' + index % 7); print "SENT" once all are posted;
 *       after "BYE" on stdin, waits for every send to complete.
 *   target SIZE   expose 64 bytes under key 0xc0de, read "PEER <hex>" from
 *       stdin, answer the Go endpoint's tagged message (tag 0x1234) with
 *       one of SIZE bytes (tag 0x5678), serve its RMA and atomics (a
 *       writedata of "wd" at 48 with data 0xd00d among them) until
 *       "CHECK" arrives, then check the memory.
 * Prints "NAME <hex>" first and "OK" on success; exit 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#define CHK(x) do { long _r = (long)(x); if (_r < 0) { fprintf(stderr, "%s:%d %s = %ld (%s)\n", __FILE__, __LINE__, #x, _r, fi_strerror((int)-_r)); exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { fprintf(stderr, "%s:%d check failed: %s: ", __FILE__, __LINE__, #c); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } } while (0)

static struct fi_info *hints, *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_mr *mr;
static char mem[64];
static fi_addr_t peer;
static time_t start;

/* Completions seen, by context (the contexts are the addresses of these). */
enum { C_TSEND, C_TRECV, C_WRITE, C_WDATA, C_READ, C_FETCH, C_CSWAP, C_BAD, NCTX };
static int ctxs[NCTX];
static int done[NCTX], errs[NCTX];
static int remote_data; /* a remote CQ data completion with data 0xd00d arrived */

static void pump(void) {
	struct fi_cq_tagged_entry e[8];
	ssize_t n = fi_cq_read(cq, e, 8);
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry ee;
		memset(&ee, 0, sizeof ee);
		CHK(fi_cq_readerr(cq, &ee, 0));
		for (int i = 0; i < NCTX; i++)
			if (ee.op_context == &ctxs[i]) { done[i] = 1; errs[i] = ee.err; }
		return;
	}
	if (n == -FI_EAGAIN) return;
	CHK(n);
	for (ssize_t k = 0; k < n; k++) {
		for (int i = 0; i < NCTX; i++)
			if (e[k].op_context == &ctxs[i]) done[i] = 1;
		if ((e[k].flags & FI_REMOTE_CQ_DATA) && (e[k].flags & FI_REMOTE_WRITE) && e[k].data == 0xd00d)
			remote_data = 1;
	}
	if (time(NULL) - start > 20) { fprintf(stderr, "timeout\n"); exit(1); }
}

static void wait_for(int i) {
	while (!done[i]) pump();
}

static void wait_ok(int i) {
	wait_for(i);
	EXPECT(errs[i] == 0, "context %d: error completion %d (%s)", i, errs[i], fi_strerror(errs[i]));
}

static void hexname(void) {
	char name[64];
	size_t len = sizeof name;
	CHK(fi_getname(&ep->fid, name, &len));
	printf("NAME ");
	for (size_t i = 0; i < len; i++) printf("%02x", (unsigned char) name[i]);
	printf("\n");
	fflush(stdout);
}

static void insert(const char *hex) {
	unsigned char a[64];
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++) sscanf(hex + 2 * i, "%2hhx", &a[i]);
	EXPECT(fi_av_insert(av, a, 1, &peer, 0, NULL) == 1, "av insert");
}

static void setup(void) {
	hints = fi_allocinfo();
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
	hints->domain_attr->mr_mode = 0;
	hints->mode = FI_CONTEXT;
	CHK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info));
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	CHK(fi_cq_open(dom, &ca, &cq, NULL));
	struct fi_av_attr aa = { .type = FI_AV_MAP };
	CHK(fi_av_open(dom, &aa, &av, NULL));
	CHK(fi_endpoint(dom, info, &ep, NULL));
	CHK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHK(fi_ep_bind(ep, &av->fid, 0));
	CHK(fi_enable(ep));
}

static char *pattern(size_t n, char base) {
	char *b = malloc(n + 1);
	for (size_t i = 0; i < n; i++) b[i] = base + (char) (i % 23);
	return b;
}

static void initiator(const char *hex, uint64_t key, size_t size) {
	insert(hex);
	char *rbuf = calloc(1, size + 16);
	CHK(fi_trecv(ep, rbuf, size + 16, NULL, FI_ADDR_UNSPEC, 0x5678, 0, &ctxs[C_TRECV]));
	char *sbuf = pattern(size, 'A');
	ssize_t r;
	while ((r = fi_tsend(ep, sbuf, size, NULL, peer, 0x1234, &ctxs[C_TSEND])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_TSEND);

	char w[16] = "c-wrote-this!!!";
	while ((r = fi_write(ep, w, 16, NULL, peer, 0, key, &ctxs[C_WRITE])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_WRITE);
	while ((r = fi_writedata(ep, "wd", 2, NULL, 0xd00d, peer, 48, key, &ctxs[C_WDATA])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_WDATA);
	char rd[16];
	while ((r = fi_read(ep, rd, 16, NULL, peer, 16, key, &ctxs[C_READ])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_READ);
	EXPECT(memcmp(rd, "go-memory-16-31", 16) == 0, "read back %.16s", rd);

	uint64_t two = 2, old = 0;
	while ((r = fi_fetch_atomic(ep, &two, 1, NULL, &old, NULL, peer, 32, key, FI_UINT64, FI_SUM,
				    &ctxs[C_FETCH])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_FETCH);
	EXPECT(old == 40, "fetched %llu want 40", (unsigned long long) old);
	uint64_t swap = 9, cmp = 7, prev = 0;
	while ((r = fi_compare_atomic(ep, &swap, 1, NULL, &cmp, NULL, &prev, NULL, peer, 40, key, FI_UINT64,
				      FI_CSWAP, &ctxs[C_CSWAP])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_CSWAP);
	EXPECT(prev == 7, "compare fetched %llu want 7", (unsigned long long) prev);
	while ((r = fi_fetch_atomic(ep, &two, 1, NULL, &old, NULL, peer, 32, key + 1, FI_UINT64, FI_SUM,
				    &ctxs[C_BAD])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_for(C_BAD);
	EXPECT(errs[C_BAD] != 0, "fetch atomic with a wrong key succeeded");

	wait_ok(C_TRECV);
	char *want = pattern(size, 'a');
	EXPECT(memcmp(rbuf, want, size) == 0, "tagged message from Go differs");
	printf("OK\n");
	fflush(stdout);
	/* Keep progressing until told to go (our sends may still be read). */
	char line[64];
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	for (;;) {
		pump();
		if (poll(&pfd, 1, 0) > 0) {
			if (!fgets(line, sizeof line, stdin)) break;
			if (strncmp(line, "BYE", 3) == 0) break;
		}
	}
}

static void target(size_t size) {
	uint64_t key = 0xc0de;
	memset(mem, 0, sizeof mem);
	memcpy(mem + 16, "c-memory-16-31!", 16);
	uint64_t v = 100;
	memcpy(mem + 32, &v, 8);
	v = 5;
	memcpy(mem + 40, &v, 8);
	CHK(fi_mr_reg(dom, mem, sizeof mem, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, NULL));
	hexname();
	char line[256];
	EXPECT(fgets(line, sizeof line, stdin) && strncmp(line, "PEER ", 5) == 0, "peer line");
	line[strcspn(line, "\r\n")] = 0;
	insert(line + 5);
	char *rbuf = calloc(1, size + 16);
	CHK(fi_trecv(ep, rbuf, size + 16, NULL, FI_ADDR_UNSPEC, 0x1234, 0, &ctxs[C_TRECV]));
	wait_ok(C_TRECV);
	char *want = pattern(size, 'a');
	EXPECT(memcmp(rbuf, want, size) == 0, "tagged message from Go differs");
	char *sbuf = pattern(size, 'A');
	ssize_t r;
	while ((r = fi_tsend(ep, sbuf, size, NULL, peer, 0x5678, &ctxs[C_TSEND])) == -FI_EAGAIN) pump();
	CHK(r);
	wait_ok(C_TSEND);
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	for (;;) {
		pump();
		if (poll(&pfd, 1, 0) > 0) {
			EXPECT(fgets(line, sizeof line, stdin), "stdin closed");
			if (strncmp(line, "CHECK", 5) == 0) break;
		}
	}
	EXPECT(memcmp(mem, "go-wrote-this!!", 16) == 0, "memory 0..15 %.16s", mem);
	EXPECT(memcmp(mem + 48, "wd", 2) == 0 && remote_data, "writedata: memory %.2s, remote CQ data seen %d",
	       mem + 48, remote_data);
	memcpy(&v, mem + 32, 8);
	EXPECT(v == 103, "sum %llu want 103", (unsigned long long) v);
	memcpy(&v, mem + 40, 8);
	EXPECT(v == 11, "swapped %llu want 11", (unsigned long long) v);
	printf("OK\n");
	fflush(stdout);
}

static void stream(const char *hex, int n, char **sizes) {
	insert(hex);
	char **bufs = calloc(n, sizeof *bufs);
	int *sctx = calloc(n, sizeof *sctx);
	int left = n;
	for (int i = 0; i < n; i++) {
		size_t size = strtoull(sizes[i], NULL, 0);
		bufs[i] = pattern(size, 'a' + i % 7);
		ssize_t r;
		for (;;) {
			r = (i % 2) ? fi_tsend(ep, bufs[i], size, NULL, peer, i, &sctx[i])
				    : fi_send(ep, bufs[i], size, NULL, peer, &sctx[i]);
			if (r != -FI_EAGAIN) break;
			pump();
		}
		CHK(r);
	}
	printf("SENT\n");
	fflush(stdout);
	char line[64];
	int bye = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	for (;;) {
		struct fi_cq_tagged_entry e;
		ssize_t r = fi_cq_read(cq, &e, 1);
		if (r == 1) {
			left--;
		} else if (r == -FI_EAVAIL) {
			struct fi_cq_err_entry ee;
			memset(&ee, 0, sizeof ee);
			CHK(fi_cq_readerr(cq, &ee, 0));
			fprintf(stderr, "send error %d (%s)\n", ee.err, fi_strerror(ee.err));
			exit(1);
		} else if (r != -FI_EAGAIN) {
			CHK(r);
		}
		if (time(NULL) - start > 20) { fprintf(stderr, "timeout, %d sends not complete\n", left); exit(1); }
		if (bye && left == 0) break;
		if (!bye && poll(&pfd, 1, 0) > 0) {
			EXPECT(fgets(line, sizeof line, stdin), "stdin closed");
			bye = strncmp(line, "BYE", 3) == 0;
		}
	}
}

int main(int argc, char **argv) {
	start = time(NULL);
	setup();
	if (argc == 5 && strcmp(argv[1], "initiator") == 0) {
		hexname();
		initiator(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	} else if (argc >= 4 && strcmp(argv[1], "stream") == 0) {
		hexname();
		stream(argv[2], argc - 3, argv + 3);
	} else if (argc == 3 && strcmp(argv[1], "target") == 0) {
		target(strtoull(argv[2], NULL, 0));
	} else {
		fprintf(stderr, "usage: rdm_ops initiator HEX KEY SIZE | target SIZE\n");
		return 2;
	}
	fi_close(&ep->fid);
	if (mr) fi_close(&mr->fid);
	fi_close(&av->fid);
	fi_close(&cq->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}

/* Interop peer for prov/tcp's tests: drives libfabric 1.17's tcp provider
 * (FI_EP_MSG) through its public API against a Go peer. Roles:
 *   server        listen, accept, check messages/RMA from Go, send back, truncate
 *   server-reject listen, reject the request with "go-away"
 *   client HEX    connect to the Go listener HEX, messages and RMA, shutdown
 *   client-reject HEX  connect, expect ECONNREFUSED with the reject data
 * Prints "NAME <hex>" (server roles) and "OK" on success; exit 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_eq.h>

#define CHK(x) do { long _r = (long)(x); if (_r < 0) { fprintf(stderr, "%s:%d %s = %ld (%s)\n", __FILE__, __LINE__, #x, _r, fi_strerror((int)-_r)); exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { fprintf(stderr, "%s:%d check failed: %s: ", __FILE__, __LINE__, #c); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } } while (0)

static struct fi_info *hints, *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_eq *eq;
static struct fid_pep *pep;
static struct fid_ep *ep;
static struct fid_cq *txcq, *rxcq;
static struct fid_mr *mr;
static char mem[4096];

static void die_after(time_t start) { if (time(NULL) - start > 10) { fprintf(stderr, "timeout\n"); exit(1); } }

/* wait_cq returns 0 with *e filled, or the (positive) error of an error entry. */
static int wait_cq(struct fid_cq *cq, struct fi_cq_data_entry *e, struct fi_cq_err_entry *ee) {
	time_t start = time(NULL);
	for (;;) {
		ssize_t n = fi_cq_read(cq, e, 1);
		if (n == 1) return 0;
		if (n == -FI_EAVAIL) {
			memset(ee, 0, sizeof *ee);
			CHK(fi_cq_readerr(cq, ee, 0));
			return ee->err;
		}
		if (n != -FI_EAGAIN) CHK(n);
		die_after(start);
	}
}

static void wait_ok(struct fid_cq *cq, struct fi_cq_data_entry *e, void *ctx) {
	struct fi_cq_err_entry ee;
	int r = wait_cq(cq, e, &ee);
	EXPECT(r == 0, "error completion %d (%s) ctx %p", r, fi_strerror(r), ee.op_context);
	EXPECT(e->op_context == ctx, "context %p want %p", e->op_context, ctx);
}

/* wait_eq returns the event, or -err for an error entry (with *ee filled). */
static int wait_eq(struct fi_eq_cm_entry *cm, size_t len, struct fi_eq_err_entry *ee, ssize_t *got) {
	time_t start = time(NULL);
	uint32_t ev;
	for (;;) {
		ssize_t n = fi_eq_read(eq, &ev, cm, len, 0);
		if (n >= 0) { *got = n; return (int)ev; }
		if (n == -FI_EAVAIL) {
			memset(ee, 0, sizeof *ee);
			CHK(fi_eq_readerr(eq, ee, 0));
			return -ee->err;
		}
		if (n != -FI_EAGAIN) CHK(n);
		die_after(start);
	}
}

static void setup(const char *node, const char *svc, void *dest, size_t destlen) {
	hints = fi_allocinfo();
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = 0;
	hints->fabric_attr->prov_name = strdup("tcp");
	if (dest) {
		hints->dest_addr = malloc(destlen);
		memcpy(hints->dest_addr, dest, destlen);
		hints->dest_addrlen = destlen;
	}
	CHK(fi_getinfo(FI_VERSION(1, 17), node, svc, 0, hints, &info));
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	struct fi_eq_attr ea = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	CHK(fi_eq_open(fab, &ea, &eq, NULL));
}

static void open_ep(struct fi_info *fi) {
	CHK(fi_domain(fab, fi, &dom, NULL));
	CHK(fi_endpoint(dom, fi, &ep, NULL));
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE };
	CHK(fi_cq_open(dom, &ca, &txcq, NULL));
	CHK(fi_cq_open(dom, &ca, &rxcq, NULL));
	CHK(fi_ep_bind(ep, &eq->fid, 0));
	CHK(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT));
	CHK(fi_ep_bind(ep, &rxcq->fid, FI_RECV));
	CHK(fi_enable(ep));
	strcpy(mem, "remote-memory-contents");
	CHK(fi_mr_reg(dom, mem, sizeof mem, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0xc0de, 0, &mr, NULL));
}

static void print_name(void) {
	char name[128];
	size_t len = sizeof name;
	CHK(fi_getname(&pep->fid, name, &len));
	printf("NAME ");
	for (size_t i = 0; i < len; i++) printf("%02x", (unsigned char)name[i]);
	printf("\n");
	fflush(stdout);
}

static void listen_pep(void) {
	CHK(fi_passive_ep(fab, info, &pep, NULL));
	CHK(fi_pep_bind(pep, &eq->fid, 0));
	CHK(fi_listen(pep));
	print_name();
}

static struct fi_info *wait_connreq(void) {
	struct { struct fi_eq_cm_entry cm; char data[256]; } e;
	struct fi_eq_err_entry ee;
	ssize_t got;
	int ev = wait_eq(&e.cm, sizeof e, &ee, &got);
	EXPECT(ev == FI_CONNREQ, "event %d", ev);
	EXPECT(got == (ssize_t)(sizeof e.cm + 11) && memcmp(e.data, "go-conn-req", 11) == 0, "connreq data %zd", got);
	return e.cm.info;
}

static void wait_connected(const char *data) {
	struct { struct fi_eq_cm_entry cm; char data[256]; } e;
	struct fi_eq_err_entry ee;
	ssize_t got;
	int ev = wait_eq(&e.cm, sizeof e, &ee, &got);
	EXPECT(ev == FI_CONNECTED, "event %d err %d", ev, ee.err);
	EXPECT(e.cm.fid == &ep->fid, "connected fid");
	size_t n = data ? strlen(data) : 0;
	EXPECT(got == (ssize_t)(sizeof e.cm + n) && (n == 0 || memcmp(e.data, data, n) == 0), "connected data size %zd", got);
}

static void wait_shutdown(void) {
	struct fi_eq_cm_entry cm;
	struct fi_eq_err_entry ee;
	ssize_t got;
	int ev = wait_eq(&cm, sizeof cm, &ee, &got);
	EXPECT(ev == FI_SHUTDOWN, "event %d", ev);
}

static void post(void *buf, size_t len, void *ctx) { CHK(fi_recv(ep, buf, len, NULL, 0, ctx)); }

static void sendmsg_flags(const void *buf, size_t len, uint64_t data, uint64_t flags, void *ctx) {
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1, .context = ctx, .data = data };
	CHK(fi_sendmsg(ep, &m, flags | FI_COMPLETION));
	struct fi_cq_data_entry e;
	wait_ok(txcq, &e, ctx);
	EXPECT(e.flags == (FI_SEND | FI_MSG), "send flags %llx", (unsigned long long)e.flags);
}

static int ctx[32];

static int server(int reject) {
	setup(NULL, NULL, NULL, 0);
	listen_pep();
	struct fi_info *ri = wait_connreq();
	if (reject) {
		CHK(fi_reject(pep, ri->handle, "go-away", 7));
		fi_freeinfo(ri);
		printf("OK\n");
		return 0;
	}
	open_ep(ri);
	char rA[64], rB[64], rC[256], rD[64], rF[64], rG[50];
	post(rA, sizeof rA, &ctx[0]);
	post(rB, sizeof rB, &ctx[1]);
	post(rC, sizeof rC, &ctx[2]);
	post(rD, sizeof rD, &ctx[3]);
	post(rF, sizeof rF, &ctx[4]);
	post(rG, sizeof rG, &ctx[5]);
	CHK(fi_accept(ep, "c-accept-data", 13));
	wait_connected(NULL);
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry ee;
	wait_ok(rxcq, &e, &ctx[0]);
	EXPECT(e.len == 16 && memcmp(rA, "0123456789abcdef", 16) == 0 && e.flags == (FI_RECV | FI_MSG), "send 16");
	wait_ok(rxcq, &e, &ctx[1]);
	EXPECT(e.len == 16 && (e.flags & FI_REMOTE_CQ_DATA) && e.data == 0x1122334455667788ULL, "senddata %llx", (unsigned long long)e.data);
	wait_ok(rxcq, &e, &ctx[2]);
	EXPECT(e.len == 200 && rC[0] == 1 && rC[199] == (char)(199 * 7 + 1), "send 200");
	wait_ok(rxcq, &e, &ctx[3]);
	EXPECT(e.len == 8 && memcmp(rD, "01234567", 8) == 0, "delivery complete send");
	wait_ok(rxcq, &e, NULL);
	EXPECT(e.flags == (FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA) && e.data == 0xaabbccdd, "writedata completion flags %llx data %llx",
	       (unsigned long long)e.flags, (unsigned long long)e.data);
	wait_ok(rxcq, &e, &ctx[4]);
	EXPECT(e.len == 5 && memcmp(rF, "check", 5) == 0, "check message");
	EXPECT(memcmp(mem + 64, "0123456789abcdef", 16) == 0, "write @64: %.16s", mem + 64);
	EXPECT(memcmp(mem + 96, "01234567", 8) == 0, "writedata @96");
	EXPECT(memcmp(mem + 0x80, "0123", 4) == 0 && memcmp(mem + 0xa0, "4567", 4) == 0, "2-iov write");

	sendmsg_flags("server-to-client", 16, 0, 0, &ctx[10]);
	sendmsg_flags("c-data", 6, 0x55, FI_REMOTE_CQ_DATA, &ctx[11]);
	char big[100];
	for (int i = 0; i < 100; i++) big[i] = (char)i;
	sendmsg_flags(big, 100, 0, 0, &ctx[12]);
	sendmsg_flags("after-trunc", 11, 0, 0, &ctx[13]);
	char rd[16];
	CHK(fi_read(ep, rd, 16, NULL, 0, 0, 0xbeef, &ctx[14]));
	wait_ok(txcq, &e, &ctx[14]);
	EXPECT(e.flags == (FI_RMA | FI_READ) && memcmp(rd, "go-memory-conten", 16) == 0, "read from Go: %.16s", rd);
	CHK(fi_write(ep, "c-writes", 8, NULL, 0, 32, 0xbeef, &ctx[15]));
	wait_ok(txcq, &e, &ctx[15]);
	EXPECT(e.flags == (FI_RMA | FI_WRITE), "write flags");
	CHK(fi_writedata(ep, "wdat", 4, NULL, 0x77, 0, 48, 0xbeef, &ctx[16]));
	wait_ok(txcq, &e, &ctx[16]);
	sendmsg_flags("sync", 4, 0, FI_DELIVERY_COMPLETE, &ctx[17]);
	/* Go sends 100 bytes into the 50-byte receive: libfabric truncates and
	 * drops the connection. */
	int r = wait_cq(rxcq, &e, &ee);
	EXPECT(r == FI_ETRUNC && ee.op_context == &ctx[5], "truncation: %d", r);
	wait_shutdown();
	printf("OK\n");
	return 0;
}

static int client(const char *hex, int expect_reject) {
	unsigned char name[64];
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++) sscanf(hex + 2 * i, "%2hhx", &name[i]);
	setup(NULL, NULL, name, n);
	open_ep(info);
	char r1[64];
	post(r1, sizeof r1, &ctx[0]);
	CHK(fi_connect(ep, name, "go-conn-req", 11));
	if (expect_reject) {
		struct fi_eq_cm_entry cm;
		struct fi_eq_err_entry ee;
		ssize_t got;
		int ev = wait_eq(&cm, sizeof cm, &ee, &got);
		EXPECT(ev == -FI_ECONNREFUSED, "event %d", ev);
		EXPECT(ee.err_data_size == 14 && memcmp(ee.err_data, "go-reject-data", 14) == 0, "reject data size %zu", ee.err_data_size);
		printf("OK\n");
		return 0;
	}
	wait_connected("go-accept-data");
	struct fi_cq_data_entry e;
	sendmsg_flags("c2s-message", 11, 0, 0, &ctx[10]);
	sendmsg_flags("c2s-data", 8, 0x99, FI_REMOTE_CQ_DATA, &ctx[11]);
	CHK(fi_write(ep, "c-w", 3, NULL, 0, 8, 0xbeef, &ctx[12]));
	wait_ok(txcq, &e, &ctx[12]);
	CHK(fi_writedata(ep, "cwd", 3, NULL, 0x66, 0, 16, 0xbeef, &ctx[13]));
	wait_ok(txcq, &e, &ctx[13]);
	char rd[16];
	CHK(fi_read(ep, rd, 16, NULL, 0, 0, 0xbeef, &ctx[14]));
	wait_ok(txcq, &e, &ctx[14]);
	/* The write of "c-w" at offset 8 precedes the read (FI_ORDER_RAW). */
	EXPECT(memcmp(rd, "go-memorc-wonten", 16) == 0, "read from Go: %.16s", rd);
	sendmsg_flags("done", 4, 0, FI_TRANSMIT_COMPLETE, &ctx[15]);
	wait_ok(rxcq, &e, &ctx[0]);
	EXPECT(e.len == 3 && memcmp(r1, "bye", 3) == 0, "bye");
	CHK(fi_shutdown(ep, 0));
	printf("OK\n");
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 2) return 2;
	if (!strcmp(argv[1], "server")) return server(0);
	if (!strcmp(argv[1], "server-reject")) return server(1);
	if (!strcmp(argv[1], "client") && argc > 2) return client(argv[2], 0);
	if (!strcmp(argv[1], "client-reject") && argc > 2) return client(argv[2], 1);
	return 2;
}

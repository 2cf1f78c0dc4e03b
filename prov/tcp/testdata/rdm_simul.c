/* Interop peer for prov/tcp's RDM tests: a libfabric 1.17 "tcp;ofi_rxm"
 * FI_EP_RDM endpoint that sends to a Go endpoint at the same moment as the
 * Go endpoint sends to it (simultaneous connects).
 *
 *   rdm_simul N   prints "NAME <hex>"; reads "PEER <hex>" and "GO" lines
 *                 on stdin; at GO sends N tagged messages "c<i>" (tag i)
 *                 to the peer while N receives (any tag) are posted; says
 *                 "OK" when all completed, then keeps progressing until
 *                 stdin says "BYE" or closes.
 *   rdm_simul echo  prints "NAME <hex>"; reads "PEER <hex>"; answers every
 *                 tagged message "ping <i>" with "pong <i>" (same tag) until
 *                 stdin says "BYE"; then prints "ECHOED <count>".
 * Exit 1 on failure (with the reason on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/select.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#define CHK(x) do { long _r = (long)(x); if (_r < 0) { fprintf(stderr, "%s:%d %s = %ld (%s)\n", __FILE__, __LINE__, #x, _r, fi_strerror((int)-_r)); exit(1); } } while (0)
#define EXPECT(c, ...) do { if (!(c)) { fprintf(stderr, "%s:%d check failed: %s: ", __FILE__, __LINE__, #c); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } } while (0)

#define MAXN 256

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_cq *txcq, *rxcq;
static char rbuf[MAXN][32];
static int ntx, nrx;
static int echo;
static fi_addr_t echo_dest;
static char echo_msg[MAXN][32];
static int nechoed;

static int hexval(char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; }

/* poll reads what the CQs hold; errors are fatal. */
static void poll_cqs(void) {
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry ee;
	ssize_t n;
	while ((n = fi_cq_read(txcq, e, 8)) > 0) ntx += (int)n;
	if (n == -FI_EAVAIL) {
		memset(&ee, 0, sizeof ee);
		fi_cq_readerr(txcq, &ee, 0);
		EXPECT(0, "send error %d (%s)", ee.err, fi_strerror(ee.err));
	}
	while ((n = fi_cq_read(rxcq, e, 8)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			int k = (int)(long)e[i].op_context;
			if (echo) {
				EXPECT(e[i].len > 5 && !memcmp(rbuf[k], "ping ", 5), "echo message %.*s", (int)e[i].len, rbuf[k]);
				snprintf(echo_msg[k], sizeof echo_msg[k], "pong %.*s", (int)e[i].len - 5, rbuf[k] + 5);
				ssize_t r;
				time_t start = time(NULL);
				while ((r = fi_tsend(ep, echo_msg[k], strlen(echo_msg[k]), NULL, echo_dest, e[i].tag, NULL)) == -FI_EAGAIN) {
					struct fi_cq_tagged_entry te;
					if (fi_cq_read(txcq, &te, 1) == 1) ntx++;
					EXPECT(time(NULL) - start <= 10, "reply still EAGAIN after 10 s");
				}
				CHK(r);
				CHK(fi_trecv(ep, rbuf[k], sizeof rbuf[k], NULL, FI_ADDR_UNSPEC, 0, ~0ULL, (void *)(long)k));
				nechoed++;
				continue;
			}
			char want[32];
			snprintf(want, sizeof want, "g%d", (int)e[i].tag);
			EXPECT(e[i].len == strlen(want) && memcmp(rbuf[k], want, e[i].len) == 0, "message %d: %.*s tag %d",
			       k, (int)e[i].len, rbuf[k], (int)e[i].tag);
		}
		nrx += (int)n;
	}
	if (n == -FI_EAVAIL) {
		memset(&ee, 0, sizeof ee);
		fi_cq_readerr(rxcq, &ee, 0);
		EXPECT(0, "receive error %d (%s)", ee.err, fi_strerror(ee.err));
	}
}

/* readline reads a line from stdin, progressing meanwhile; NULL at EOF. */
static char *readline(char *buf, size_t len, time_t limit) {
	size_t have = 0;
	time_t start = time(NULL);
	for (;;) {
		fd_set r;
		struct timeval tv = { 0, 1000 };
		FD_ZERO(&r);
		FD_SET(0, &r);
		if (select(1, &r, NULL, NULL, &tv) > 0) {
			ssize_t n = read(0, buf + have, 1);
			if (n <= 0) return NULL;
			if (buf[have] == '\n') {
				buf[have] = 0;
				return buf;
			}
			if (have < len - 2) have++;
		}
		poll_cqs();
		EXPECT(time(NULL) - start <= limit, "no line on stdin within %ld s", (long)limit);
	}
}

int main(int argc, char **argv) {
	EXPECT(argc == 2, "usage: rdm_simul N | echo");
	echo = !strcmp(argv[1], "echo");
	int n = echo ? 16 : atoi(argv[1]);
	EXPECT(n > 0 && n <= MAXN, "N %d", n);
	struct fi_info *hints = fi_allocinfo(), *info;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	CHK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &info));
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	CHK(fi_av_open(dom, &aa, &av, NULL));
	struct fi_cq_attr ca = { .size = 1024, .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE };
	CHK(fi_cq_open(dom, &ca, &txcq, NULL));
	CHK(fi_cq_open(dom, &ca, &rxcq, NULL));
	CHK(fi_endpoint(dom, info, &ep, NULL));
	CHK(fi_ep_bind(ep, &av->fid, 0));
	CHK(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT));
	CHK(fi_ep_bind(ep, &rxcq->fid, FI_RECV));
	CHK(fi_enable(ep));
	char name[128];
	size_t len = sizeof name;
	CHK(fi_getname(&ep->fid, name, &len));
	printf("NAME ");
	for (size_t i = 0; i < len; i++) printf("%02x", (unsigned char)name[i]);
	printf("\n");
	fflush(stdout);

	char line[512], peer[128];
	EXPECT(readline(line, sizeof line, 10) && !strncmp(line, "PEER ", 5), "peer line");
	size_t plen = strlen(line + 5) / 2;
	EXPECT(plen <= sizeof peer, "peer length");
	for (size_t i = 0; i < plen; i++) peer[i] = (char)(hexval(line[5 + 2 * i]) << 4 | hexval(line[6 + 2 * i]));
	fi_addr_t dest;
	EXPECT(fi_av_insert(av, peer, 1, &dest, 0, NULL) == 1, "av insert");
	if (echo) {
		echo_dest = dest;
		for (int i = 0; i < n; i++) CHK(fi_trecv(ep, rbuf[i], sizeof rbuf[i], NULL, FI_ADDR_UNSPEC, 0, ~0ULL, (void *)(long)i));
		while (readline(line, sizeof line, 60) && strcmp(line, "BYE")) {
		}
		printf("ECHOED %d\n", nechoed);
		fflush(stdout);
		return 0;
	}
	for (int i = 0; i < n; i++) CHK(fi_trecv(ep, rbuf[i], sizeof rbuf[i], NULL, FI_ADDR_UNSPEC, 0, ~0ULL, (void *)(long)i));
	EXPECT(readline(line, sizeof line, 10) && !strcmp(line, "GO"), "go line");
	static char msg[MAXN][32];
	time_t start = time(NULL);
	for (int i = 0; i < n; i++) {
		snprintf(msg[i], sizeof msg[i], "c%d", i);
		ssize_t r;
		while ((r = fi_tsend(ep, msg[i], strlen(msg[i]), NULL, dest, (uint64_t)i, (void *)(long)i)) == -FI_EAGAIN) {
			poll_cqs();
			EXPECT(time(NULL) - start <= 10, "send %d still EAGAIN after 10 s", i);
		}
		CHK(r);
	}
	while (ntx < n || nrx < n) {
		poll_cqs();
		EXPECT(time(NULL) - start <= 10, "%d sends, %d receives of %d within 10 s", ntx, nrx, n);
	}
	printf("OK\n");
	fflush(stdout);
	while (readline(line, sizeof line, 30) && strcmp(line, "BYE")) {
	}
	fi_close(&ep->fid);
	fi_close(&txcq->fid);
	fi_close(&rxcq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	return 0;
}

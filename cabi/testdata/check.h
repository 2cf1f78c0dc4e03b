/* Checks of the C test programs: on failure, print the failing check
 * (file:line, the expression, and for CHECKRC what it returned with its
 * fi_strerror) on stderr and exit 1. */
#ifndef GOFAB_TEST_CHECK_H
#define GOFAB_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <rdma/fi_errno.h>

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #c);                                \
			exit(1);                                              \
		}                                                             \
	} while (0)

#define CHECKRC(expr, want)                                                    \
	do {                                                                   \
		long long got_ = (long long)(expr);                            \
		if (got_ != (long long)(want)) {                               \
			fprintf(stderr, "%s:%d: %s = %lld (%s), want %lld\n",  \
				__FILE__, __LINE__, #expr, got_,               \
				fi_strerror((int)-got_), (long long)(want));   \
			exit(1);                                               \
		}                                                              \
	} while (0)

#endif

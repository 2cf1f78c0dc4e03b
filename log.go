package fabric

import (
	"log/slog"

	"github.com/gofabric/fabric/provider"
)

// Logging follows libfabric's (fabric(7), "Logging interface") in Go's
// terms: records go through log/slog.
//
// Three environment variables, read once when the process starts, select
// what is logged:
//
//   - FI_LOG_LEVEL: warn (the default), trace, info or debug, from least to
//     most verbose; each level includes the ones before it. As slog levels
//     they are slog.LevelWarn, slog.LevelInfo+2 (libfabric's trace sits
//     between warn and info), slog.LevelInfo and slog.LevelDebug.
//   - FI_LOG_PROV: the providers that log, a comma-separated list of names
//     or, with a leading '^', the names that do not ("tcp", "^udp"). The
//     library itself logs as provider "core".
//   - FI_LOG_SUBSYS: the subsystems that log, in the same syntax: core,
//     fabric, domain, ep_ctrl, ep_data, av, cq, eq, mr, cntr.
//
// Every record carries the attributes prov= and subsys= and the source
// position of the call. What is logged: provider registration and
// FI_PROVIDER filtering (core, info), each provider Info that GetInfo's
// hints rejected and the field that failed (core, info), fallbacks such as
// an unknown FI_<PROV>_IFACE interface (warn), and connection management
// (ep_ctrl: connect, accept, reject, shutdown at info; failures and
// malformed peers at warn).
//
// By default records at warn and above are written to standard error by a
// slog.TextHandler, one line each, with libfabric's level names:
//
//	time=2026-11-24T16:50:00.000Z level=WARN msg="unknown interface, using all" prov=tcp subsys=core iface=eth9
//
// Logging costs one atomic load and a comparison while the level is off;
// nothing is formatted or allocated.

// SetLogHandler sends the library's and the providers' log records to h,
// in place of the default text handler on standard error; nil restores
// the default. It may be called at any time, from any goroutine.
//
// When FI_LOG_LEVEL is set, it decides the lowest level passed to h. When
// it is not, the lowest of libfabric's levels (debug, info, trace, warn)
// for which h.Enabled reports true when SetLogHandler is called decides.
// h.Enabled is also asked for every record. FI_LOG_PROV and FI_LOG_SUBSYS
// apply in both cases.
func SetLogHandler(h slog.Handler) { provider.SetLogHandler(h) }

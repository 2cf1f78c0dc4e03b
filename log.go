package fabric

import (
	"log/slog"

	"github.com/gofabric/fabric/provider"
)

// SetLogHandler sends the log records of the library and of every provider
// to h, in place of the default handler; nil restores the default. It may
// be called at any time, from any goroutine.
//
// Logging follows libfabric's (fabric(7), "Logging interface") in Go's
// terms, through log/slog. Three environment variables, read once when
// the process starts, select what is logged:
//
//   - FI_LOG_LEVEL: warn (the default), trace, info or debug, from least to
//     most verbose; each level includes the ones before it. As slog levels
//     they are slog.LevelWarn, slog.LevelInfo+2 (libfabric's trace sits
//     between warn and info), slog.LevelInfo and slog.LevelDebug. An
//     unrecognised value means warn (and is warned about).
//   - FI_LOG_PROV: the providers that log, a comma-separated list of names
//     or, with a leading '^', of names that do not ("tcp", "^udp"). The
//     library itself logs as provider "core".
//   - FI_LOG_SUBSYS: the subsystems that log, in the same syntax: core,
//     fabric, domain, ep_ctrl, ep_data, av, cq, eq, mr, cntr.
//
// When FI_LOG_LEVEL is set it decides the lowest level passed to h. When
// it is not, the lowest of libfabric's levels (debug, info, trace, warn)
// for which h.Enabled reports true when SetLogHandler is called decides;
// h.Enabled is also asked for every record. FI_LOG_PROV and FI_LOG_SUBSYS
// apply in both cases.
//
// Every record carries the attributes prov= and subsys= and the source
// position of the logging call (see slog.HandlerOptions.AddSource). What
// is logged: provider registration (core, info); each provider Info that
// GetInfo's hints rejected, with the hint field that failed, and
// FI_PROVIDER exclusions (core, info); fallbacks such as an unknown
// FI_<PROV>_IFACE interface or an unusable variable value (warn); and
// connection management (ep_ctrl: connect, request, accept, reject,
// shutdown at info; malformed or incomplete requests and failed connects
// at warn).
//
// The default handler is a slog.TextHandler on standard error showing
// libfabric's level names, one line per record, so that, as with
// libfabric, warnings reach standard error and nothing else does unless
// FI_LOG_LEVEL asks for it:
//
//	time=2026-11-24T16:50:00.000Z level=WARN msg="no such interface in FI_TCP_IFACE, using all interfaces" prov=tcp subsys=core iface=eth9
//
// A log call whose level is off costs one atomic load and a comparison;
// nothing is formatted or allocated.
func SetLogHandler(h slog.Handler) { provider.SetLogHandler(h) }

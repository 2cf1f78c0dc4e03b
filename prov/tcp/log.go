package tcp

import (
	"log/slog"

	"github.com/gofabric/fabric/provider"
)

// logCM logs a connection-management event (subsys ep_ctrl) with the
// peer's address; nothing is formatted unless the level is enabled.
func logCM(level slog.Level, msg string, peer []byte, attrs ...slog.Attr) {
	if !log.Enabled(level, provider.SubsysEPCtrl) {
		return
	}
	all := make([]slog.Attr, 0, len(attrs)+1)
	if peer != nil {
		all = append(all, slog.String("peer", formatSockaddr(peer)))
	}
	log.Log(level, provider.SubsysEPCtrl, msg, append(all, attrs...)...)
}

// errAttr is an error as a log attribute.
func errAttr(e provider.Errno) slog.Attr { return slog.String("err", e.Error()) }

package ipaddr

import (
	"log/slog"
	"net"
	"os"

	infohints "github.com/gofabric/fabric/internal/hints"
	"github.com/gofabric/fabric/internal/sys"
	"github.com/gofabric/fabric/provider"
)

// InfoConfig describes an IP provider to GetInfo.
type InfoConfig struct {
	Network  string          // "udp" or "tcp": the service namespace
	EPType   provider.EPType // the one endpoint type the provider offers
	IfaceEnv string          // FI_<PROV>_IFACE
	// Base returns the provider's Info for hints, without addresses.
	Base func(hints *provider.Info) *provider.Info
	// Log is the provider's logger (fallbacks are logged); may be nil.
	Log *provider.Logger
}

const commCaps = provider.CapLocalComm | provider.CapRemoteComm

// GetInfo is fi_getinfo for an IP provider: one Info per local interface
// address (the Iface environment variable restricts the interface; loopback
// addresses come last, with
// FI_LOCAL_COMM only), or, when node/service or addresses are given, one
// Info with src_addr/dest_addr resolved as libfabric's util_getinfo does:
// with FlagSource node/service name the source (port 0 without a service),
// otherwise the destination, and the source is then the local address the
// kernel would route from, with port 0.
//
// Hints asking for FI_REMOTE_COMM (or FI_LOCAL_COMM) skip the interface
// addresses that cannot serve it: loopback addresses offer FI_LOCAL_COMM
// only. When that leaves none (FI_<PROV>_IFACE=lo and FI_REMOTE_COMM), one
// Info without src_addr is returned, as libfabric's util_getinfo does; an
// endpoint opened from it binds as one opened without src_addr does.
//
// A hint this function cannot serve (address format, endpoint type) gives
// a *hints.Mismatch naming it.
func (c InfoConfig) GetInfo(version uint32, node, service string, flags provider.Flags,
	hints *provider.Info) ([]*provider.Info, error) {
	format := provider.FormatUnspec
	if hints != nil {
		format = hints.AddrFormat
		switch format {
		case provider.FormatUnspec, provider.SockAddr, provider.SockAddrIn, provider.SockAddrIn6:
		default:
			return nil, &infohints.Mismatch{Field: "addr_format", Reason: format.String() + " not supported (provider: FI_SOCKADDR)"}
		}
		if hints.EPAttr != nil && hints.EPAttr.Type != provider.EPUnspec && hints.EPAttr.Type != c.EPType {
			return nil, &infohints.Mismatch{Field: "ep_attr.type",
				Reason: hints.EPAttr.Type.String() + " not supported (provider: " + c.EPType.String() + ")"}
		}
	}
	if flags&provider.FlagSource != 0 && node == "" && service == "" {
		return nil, provider.EINVAL
	}
	var src, dest []byte
	var err error
	if flags&provider.FlagSource != 0 {
		if src, err = Resolve(c.Network, node, service, true, format, flags); err != nil {
			return nil, err
		}
		if hints != nil && hints.DestAddr != nil {
			dest = append([]byte(nil), hints.DestAddr...)
		}
	} else {
		if node != "" || service != "" {
			if dest, err = Resolve(c.Network, node, service, false, format, flags); err != nil {
				return nil, err
			}
		} else if hints != nil && hints.DestAddr != nil {
			dest = append([]byte(nil), hints.DestAddr...)
		}
		if hints != nil && hints.SrcAddr != nil {
			src = append([]byte(nil), hints.SrcAddr...)
		}
	}
	for _, a := range [][]byte{src, dest} {
		if a == nil {
			continue
		}
		if _, f, ok := Decode(a); !ok || !FormatOK(format, f) {
			return nil, provider.ENODATA
		}
	}
	if dest != nil && src == nil {
		src = SourceFor(dest)
	}
	addrs, _ := sys.ListAddrs(c.iface())
	var out []*provider.Info
	if src == nil && dest == nil {
		var wantComm provider.Caps
		if hints != nil {
			wantComm = hints.Caps & commCaps
		}
		formatSeen := false
		for _, a := range addrs {
			sa := Append(nil, IfaceSockaddr(a))
			_, f, _ := Decode(sa)
			if !FormatOK(format, f) {
				continue
			}
			formatSeen = true
			if a.Loopback && wantComm&provider.CapRemoteComm != 0 {
				continue
			}
			info := c.Base(hints)
			info.AddrFormat = f
			info.SrcAddr = sa
			SetNames(info, a)
			if a.Loopback {
				info.Caps &^= provider.CapRemoteComm
			}
			out = append(out, info)
		}
		if len(out) == 0 && formatSeen {
			info := c.Base(hints)
			info.AddrFormat = provider.SockAddr
			if format != provider.FormatUnspec {
				info.AddrFormat = format
			}
			out = append(out, info)
		}
	} else {
		info := c.Base(hints)
		info.SrcAddr, info.DestAddr = src, dest
		a := src
		if a == nil {
			a = dest
		}
		_, info.AddrFormat, _ = Decode(a)
		if src != nil {
			for _, ia := range addrs {
				if SameIP(Append(nil, IfaceSockaddr(ia)), src) {
					SetNames(info, ia)
					break
				}
			}
		}
		out = append(out, info)
	}
	if len(out) == 0 {
		return nil, provider.ENODATA
	}
	return out, nil
}

// iface returns the FI_<PROV>_IFACE value; a name that is no interface of
// this host is logged and ignored (every interface is used), as libfabric
// does.
func (c InfoConfig) iface() string {
	name := os.Getenv(c.IfaceEnv)
	if name == "" {
		return ""
	}
	if _, err := net.InterfaceByName(name); err != nil {
		c.Log.Warn(provider.SubsysCore, "no such interface in "+c.IfaceEnv+", using all interfaces",
			slog.String("iface", name))
		return ""
	}
	return name
}

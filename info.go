package fabric

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	infohints "github.com/gofabric/fabric/internal/hints"
	"github.com/gofabric/fabric/provider"
)

// Discovery: fi_getinfo(3) and friends map to Go as follows.
//
//	fi_getinfo(version, node, service, flags, hints, &info)  GetInfo(version, node, service, flags, hints) ([]*Info, error)
//	fi_freeinfo(info)                                       (garbage collected; nothing to call)
//	fi_allocinfo()                                          AllocInfo()
//	fi_dupinfo(info)                                        Dup(info) (or info.Dup())
//	fi_tostr(info, FI_TYPE_INFO)                            InfoToString(info)
//	fi_getparams(&params, &count)                           EnvVars()
//	FI_VERSION(major, minor)                                Version(major, minor)
//
// The linked list of fi_info becomes a slice; info->next does not exist.

// FI_PROVIDER is read on every GetInfo call.
const infoEnvProvider = "FI_PROVIDER"

// GetInfo returns the ways to communicate that the registered providers
// offer, subject to node, service, flags and hints (fi_getinfo).
//
// version is the API version the application is written for, built with
// Version(1, 17); a version newer than APIVersion, or older than 1.0,
// returns an error matching ErrNoSys. (C libfabric accepts versions below
// 1.0 without complaint; no such version was ever released.)
//
// node and service are optional ("" for none). Without FlagSource they
// name the destination: every returned Info has DestAddr set to the
// resolved node:service (and SrcAddr to a local address that reaches it).
// With FlagSource they name the local address: SrcAddr is the resolved
// node:service, and at least one of them must be given. FlagNumericHost
// says node is a numeric address: IP providers then do no name look-up,
// and Infos with socket address formats are not returned for a node that
// is not a numeric IP address.
//
// hints may be nil: every configuration of every provider is returned, as
// the provider describes it. Otherwise every non-zero field of hints must
// be satisfied and the returned Infos are narrowed to the hints (see
// fi_getinfo(3) and package internal/hints for the exact rules):
//
//   - Caps: the requested primary capabilities are present and no other
//     primary capability is (secondary ones such as FI_SOURCE or
//     FI_LOCAL_COMM may be); TxAttr.Caps and RxAttr.Caps are subsets of
//     Caps. Zero means the provider's defaults.
//   - Mode: the mode bits the application supports. Zero (in non-nil
//     hints) means none: Infos that need a mode bit are not returned. A
//     provider may drop a mode it prefers but can do without.
//   - FabricAttr.ProvName selects a provider by name, case-insensitively;
//     for a layered name such as "tcp;ofi_rxm" the first component selects
//     the provider. FabricAttr.Name and DomainAttr.Name must match.
//   - EPAttr.Type, AddrFormat (FI_SOCKADDR accepts FI_SOCKADDR_IN and
//     FI_SOCKADDR_IN6), DomainAttr.Threading, ControlProgress,
//     DataProgress (echoed when the provider can honour them),
//     ResourceMgmt, AVType, MRMode (the returned mr_mode is a subset of
//     the requested bits; legacy FI_MR_BASIC/FI_MR_SCALABLE are returned
//     as requested), CQDataSize, MsgOrder (the returned order is a
//     superset), sizes and limits (the returned values are at least the
//     requested ones), OpFlags (the default operation flags, returned as
//     requested: those the provider lists, plus FI_COMPLETION, and
//     FI_MULTI_RECV on receives when the provider offers FI_MULTI_RECV).
//   - Handle is copied to every returned Info (a passive endpoint whose
//     address the endpoint opened from the Info adopts).
//   - A nil attribute structure (DomainAttr, EPAttr ...) places no
//     constraint on that structure.
//
// The FI_PROVIDER environment variable, read on each call, restricts the
// providers used: a comma-separated list of names, or, with a leading '^',
// of names to exclude.
//
// The returned Infos are fresh copies the caller may modify, ordered by
// provider registration and then as each provider ranks them. Each has
// FabricAttr.ProvName, ProvVersion and APIVersion (= version) set. With no
// match GetInfo returns nil and an *OpError{Op: "fi_getinfo"} matching
// ErrNoData whose text says why each provider was passed over, e.g.
// "fi_getinfo: no provider matches: udp: ep_attr.type: FI_EP_MSG not
// supported (provider: FI_EP_DGRAM); tcp: caps: FI_TAGGED not supported".
// Each rejection is also logged at info (FI_LOG_LEVEL=info), with the
// provider as prov= and the hint field as field=.
//
// With flags exactly FlagProvAttrOnly, GetInfo returns one Info per
// registered provider, whatever FI_PROVIDER and hints say, with only
// FabricAttr.ProvName, ProvVersion and APIVersion set (what `fi_info -l`
// lists).
func GetInfo(version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error) {
	return getInfo(version, node, service, flags, hints, "", infoProvFilter())
}

// GetInfoProvider is GetInfo asked of the one provider named prov, without
// the FI_PROVIDER filter: what a C libfabric provider's getinfo entry
// answers (the C core applies FI_PROVIDER itself, with its own names). The
// C plugin (module .../cabi) uses it. hints.FabricAttr.ProvName, if set,
// must name prov too.
func GetInfoProvider(prov string, version uint32, node, service string, flags Flags, hints *Info) ([]*Info, error) {
	if prov == "" {
		return nil, opErr("fi_getinfo", "", ErrInval)
	}
	return getInfo(version, node, service, flags, hints, prov, infohints.ProvFilter{})
}

func getInfo(version uint32, node, service string, flags Flags, hints *Info, only string,
	filter infohints.ProvFilter) ([]*Info, error) {
	const op = "fi_getinfo"
	if version > APIVersion || version < Version(1, 0) {
		return nil, opErr(op, "", ErrNoSys)
	}
	provs := provider.Providers()
	if flags == FlagProvAttrOnly {
		out := make([]*Info, 0, len(provs))
		for _, p := range provs {
			info := AllocInfo()
			info.FabricAttr.ProvName = p.Name()
			info.FabricAttr.ProvVersion = p.Version()
			info.FabricAttr.APIVersion = version
			out = append(out, info)
		}
		if len(out) == 0 {
			return nil, opErr(op, "", ErrNoData)
		}
		return out, nil
	}
	if flags&FlagSource != 0 && node == "" && service == "" {
		return nil, opErr(op, "", &noMatchError{reasons: []string{"FI_SOURCE without node or service"}})
	}
	var want string
	if hints != nil && hints.FabricAttr != nil {
		want = infohints.FirstProvName(hints.FabricAttr.ProvName)
	}
	if only != "" {
		if want != "" && !strings.EqualFold(want, only) {
			return nil, opErr(op, "", &noMatchError{reasons: []string{only + ": hints name provider " + strconv.Quote(want)}})
		}
		want = only
	}
	var out []*Info
	var why noMatchError
	considered := false
	for _, p := range provs {
		name := p.Name()
		if want != "" && !strings.EqualFold(want, name) {
			continue
		}
		if filter.Excludes(name) {
			why.add(name, "excluded by "+infoEnvProvider)
			infoLogger(name).Info(provider.SubsysCore, "provider excluded by "+infoEnvProvider)
			continue
		}
		considered = true
		// Each provider gets its own copy of the hints, so that neither
		// the caller's hints nor the next provider's view can be changed.
		var h *Info
		if hints != nil {
			h = hints.Dup()
			if pe, ok := h.Handle.(*PassiveEndpoint); ok {
				if pe.fab.prov != p {
					why.add(name, "hints.handle is another provider's passive endpoint")
					continue
				}
				h.Handle = pe.p // the provider sees its own passive endpoint
			}
		}
		rc := takeRootCaps(h)
		got, err := p.GetInfo(version, node, service, flags, h)
		if err != nil {
			// As in libfabric, one provider's failure (usually
			// ENODATA) does not hide the others' results.
			why.add(name, err.Error())
			infoReject(name, err)
			continue
		}
		for _, pi := range got {
			if pi = giveRootCaps(pi, rc); pi == nil {
				continue
			}
			info, err := infoFilter(version, name, p.Version(), node, service, flags, pi, hints)
			if err != nil {
				why.add(name, err.Error())
				infoReject(name, err)
				continue
			}
			if hints != nil && hints.Handle != nil {
				info.Handle = hints.Handle
			}
			bufRecvMode(p, info, hints)
			out = append(out, info)
		}
	}
	if len(out) == 0 {
		if !considered && want != "" && len(why.reasons) == 0 {
			why.reasons = append(why.reasons, "no provider named "+strconv.Quote(want))
		} else if len(provs) == 0 {
			why.reasons = append(why.reasons, "no provider registered")
		}
		return nil, opErr(op, "", &why)
	}
	return out, nil
}

// noMatchError is GetInfo's error when nothing matches: why each provider
// was passed over. It matches ErrNoData.
type noMatchError struct {
	reasons []string // "udp: ep_attr.type: FI_EP_MSG not supported (provider: FI_EP_DGRAM)"
}

// add records a reason once.
func (e *noMatchError) add(prov, reason string) {
	r := prov + ": " + reason
	for _, have := range e.reasons {
		if have == r {
			return
		}
	}
	e.reasons = append(e.reasons, r)
}

func (e *noMatchError) Error() string {
	if len(e.reasons) == 0 {
		return ErrNoData.Error()
	}
	return "no provider matches: " + strings.Join(e.reasons, "; ")
}

func (e *noMatchError) Unwrap() error { return ErrNoData }

// infoLoggers holds a *provider.Logger per provider name, for what
// GetInfo logs on a provider's behalf.
var infoLoggers sync.Map

func infoLogger(prov string) *provider.Logger {
	if l, ok := infoLoggers.Load(prov); ok {
		return l.(*provider.Logger)
	}
	l, _ := infoLoggers.LoadOrStore(prov, provider.NewLogger(prov))
	return l.(*provider.Logger)
}

// infoReject logs, at info, why one of a provider's Infos (or all of them)
// did not match the hints, as libfabric's ofi_check_info does.
func infoReject(prov string, err error) {
	l := infoLogger(prov)
	if !l.Enabled(provider.LevelInfo, provider.SubsysCore) {
		return
	}
	var m *infohints.Mismatch
	if errors.As(err, &m) {
		l.Info(provider.SubsysCore, "hints not supported", slog.String("field", m.Field), slog.String("reason", m.Reason))
		return
	}
	l.Info(provider.SubsysCore, "no match", slog.String("reason", err.Error()))
}

// infoProvFilter parses FI_PROVIDER.
func infoProvFilter() infohints.ProvFilter {
	v, ok := os.LookupEnv(infoEnvProvider)
	return infohints.ParseProvFilter(v, ok)
}

// infoFilter copies one provider Info, completes its fabric attributes and
// applies the generic hint rules; it returns why if the Info does not
// match.
func infoFilter(version uint32, provName string, provVersion uint32, node, service string, flags Flags,
	pi, user *Info) (*Info, error) {
	info := pi.Dup()
	infohints.Normalize(info)
	fa := info.FabricAttr
	if fa.ProvName == "" {
		fa.ProvName = provName
	}
	fa.ProvVersion = provVersion
	if err := infohints.Check(version, info, user); err != nil {
		return nil, err
	}
	infohints.Alter(version, info, user)
	fa.APIVersion = version
	if node != "" || service != "" {
		if flags&FlagSource != 0 {
			if len(info.SrcAddr) == 0 {
				return nil, errors.New("no src_addr for node/service")
			}
		} else if len(info.DestAddr) == 0 {
			return nil, errors.New("no dest_addr for node/service")
		}
	}
	if flags&FlagNumericHost != 0 && node != "" && infoIPFormat(info.AddrFormat) && !infoNumericHost(node) {
		return nil, errors.New("FI_NUMERICHOST: node is not a numeric address")
	}
	return info, nil
}

func infoIPFormat(f AddrFormat) bool {
	return f == SockAddr || f == SockAddrIn || f == SockAddrIn6
}

// infoNumericHost reports whether node is a numeric IP address (optionally
// in brackets, optionally with an IPv6 zone), as getaddrinfo with
// AI_NUMERICHOST accepts it.
func infoNumericHost(node string) bool {
	node = strings.TrimSuffix(strings.TrimPrefix(node, "["), "]")
	_, err := netip.ParseAddr(node)
	return err == nil
}

// Dup returns a deep copy of info (fi_dupinfo): addresses, attribute
// structures and authentication keys are copied; Handle is shared. Dup of
// nil returns AllocInfo().
func Dup(info *Info) *Info { return info.Dup() }

// AllocInfo returns an Info whose attribute structures are allocated and
// zero (fi_allocinfo), ready to be filled in as hints.
func AllocInfo() *Info { return (*Info)(nil).Dup() }

// InfoToString renders info exactly as fi_tostr(info, FI_TYPE_INFO) does
// in libfabric 1.17, which is the block `fi_info -v` prints for each info:
//
//	fi_info:
//	    caps: [ FI_MSG, FI_RECV, FI_SEND ]
//	    ...
//	    fi_tx_attr:
//	        caps: [ FI_MSG, FI_SEND ]
//	    ...
//	    nic: (nil)
//
// Addresses print as "fi_sockaddr_in://127.0.0.1:0", absent ones as
// "(null)", empty names as "(null)", empty bit sets as "[  ]".
func InfoToString(info *Info) string { return infohints.Format(info) }

// ParamType is the type of a configuration variable (enum fi_param_type).
type ParamType = provider.ParamType

// Configuration variable types.
const (
	ParamString = provider.ParamString // FI_PARAM_STRING: a string
	ParamInt    = provider.ParamInt    // FI_PARAM_INT: an integer
	ParamBool   = provider.ParamBool   // FI_PARAM_BOOL: a boolean (0/1, yes/no, true/false, on/off)
	ParamSize   = provider.ParamSize   // FI_PARAM_SIZE_T: a size
)

// EnvVar describes an environment variable the library reads (struct
// fi_param).
type EnvVar struct {
	Name string // e.g. "FI_PROVIDER", "FI_UDP_IFACE"
	Type ParamType
	// Help is the description as `fi_info -e` prints it; variables of a
	// provider carry the provider's name as prefix ("udp: Specify
	// interface name").
	Help string
	// Provider is the provider that reads the variable, or "" for the
	// core library.
	Provider string
}

// Value returns the variable's value in the environment and whether it is
// set.
func (v EnvVar) Value() (string, bool) { return os.LookupEnv(v.Name) }

// infoCoreEnv lists the variables the core library reads, in the order
// `fi_info -e` of libfabric 1.17 prints them.
func infoCoreEnv() []EnvVar {
	var out []EnvVar
	for _, p := range provider.LogParams() {
		out = append(out, EnvVar{Name: p.Name, Type: p.Type, Help: p.Help})
	}
	return append(out, EnvVar{Name: infoEnvProvider, Type: ParamString,
		Help: "Only use specified provider (default: all available)"},
		EnvVar{Name: infoEnvHook, Type: ParamString,
			// libfabric 1.17's text, which `fi_info -e` prints the same
			// (our hooks: chaos).
			Help: "Intercept calls to underlying provider and apply the specified functionality to them.  Hook option: perf (gather performance data)"})
}

// EnvVars returns the environment variables the library reads
// (fi_getparams): the core library's (FI_LOG_LEVEL, FI_LOG_PROV,
// FI_LOG_SUBSYS, FI_PROVIDER, FI_HOOK), then those of each registered
// provider that has any, in registration order, then those of each
// registered hook (provider.Hook; Provider is the hook's name).
func EnvVars() []EnvVar {
	out := infoCoreEnv()
	for _, p := range provider.Providers() {
		pl, ok := p.(provider.ParamLister)
		if !ok {
			continue
		}
		for _, pv := range pl.Params() {
			out = append(out, EnvVar{Name: pv.Name, Type: pv.Type, Help: p.Name() + ": " + pv.Help, Provider: p.Name()})
		}
	}
	for _, h := range provider.Hooks() {
		pl, ok := h.(provider.ParamLister)
		if !ok {
			continue
		}
		for _, pv := range pl.Params() {
			out = append(out, EnvVar{Name: pv.Name, Type: pv.Type, Help: h.Name() + ": " + pv.Help, Provider: h.Name()})
		}
	}
	return out
}

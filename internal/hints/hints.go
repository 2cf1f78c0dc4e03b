package hints

import (
	"fmt"
	"strings"

	"github.com/gofabric/fabric/provider"
)

// Capability groups as libfabric's util layer uses them (FI_PRIMARY_CAPS and
// FI_SECONDARY_CAPS of include/ofi.h). Unlike provider.PrimaryCaps, the
// primary set here includes the primary modifiers (FI_READ, FI_SEND ...),
// because Alter takes them from the hints when the application names them.
// FI_AV_USER_ID and FI_PEER are primary (domain) capabilities, as in later
// libfabric releases: a provider reports them only when they are requested.
const (
	PrimaryCaps = provider.CapMsg | provider.CapRMA | provider.CapTagged | provider.CapAtomic |
		provider.CapMulticast | provider.CapNamedRxCtx | provider.CapDirectedRecv |
		provider.CapRead | provider.CapWrite | provider.CapRecv | provider.CapSend |
		provider.CapRemoteRead | provider.CapRemoteWrite | provider.CapVariableMsg |
		provider.CapHMEM | provider.CapCollective | provider.CapAVUserID | provider.CapPeer

	SecondaryCaps = provider.CapMultiRecv | provider.CapSource | provider.CapRMAEvent |
		provider.CapSharedAV | provider.CapTrigger | provider.CapFence | provider.CapLocalComm |
		provider.CapRemoteComm | provider.CapSourceErr | provider.CapRMAPmem

	msgDirCaps = provider.CapSend | provider.CapRecv
	rmaDirCaps = provider.CapRead | provider.CapWrite | provider.CapRemoteRead | provider.CapRemoteWrite

	// Primary capabilities (in the man page's sense, without modifiers)
	// that concern the transmit and the receive side.
	txPrimary = provider.CapMsg | provider.CapRMA | provider.CapTagged | provider.CapAtomic |
		provider.CapMulticast | provider.CapNamedRxCtx | provider.CapCollective | provider.CapHMEM
	rxPrimary = provider.CapMsg | provider.CapRMA | provider.CapTagged | provider.CapAtomic |
		provider.CapDirectedRecv | provider.CapVariableMsg | provider.CapCollective | provider.CapHMEM

	// mrRMATarget is OFI_MR_MODE_RMA_TARGET: the mr_mode bits that only
	// matter when the endpoint is the target of RMA or atomics.
	mrRMATarget = provider.MRRaw | provider.MRVirtAddr | provider.MRProvKey | provider.MRRMAEvent
)

var v1_5 = provider.Version(1, 5)

// Mismatch is the reason Check rejected an Info: the hint field that could
// not be satisfied and, where it helps, what was asked and what the
// provider offers. It matches provider.ENODATA under errors.Is.
type Mismatch struct {
	Field  string // e.g. "caps", "ep_attr.type", "domain_attr.mr_mode"
	Reason string // e.g. "FI_EP_MSG not supported (provider: FI_EP_DGRAM)"; may be empty
}

// Error names the hint field that no provider value satisfies, and why:
// "ep_attr.type: FI_EP_MSG not supported (provider: FI_EP_DGRAM)".
func (m *Mismatch) Error() string {
	if m.Reason == "" {
		return m.Field + ": not supported"
	}
	return m.Field + ": " + m.Reason
}

// Is reports whether target is provider.ENODATA.
func (m *Mismatch) Is(target error) bool { return target == provider.ENODATA }

func miss(field string) error { return &Mismatch{Field: field} }

// missf is a Mismatch with a reason.
func missf(field, format string, args ...any) error {
	return &Mismatch{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// unsupported is the reason of an enumerated hint the provider does not
// serve.
func unsupported(field string, user, prov any) error {
	return missf(field, "%v not supported (provider: %v)", user, prov)
}

// tooLarge is the reason of a size hint beyond the provider's limit.
func tooLarge(field string, user, prov uint64) error {
	return missf(field, "%d exceeds the provider's %d", user, prov)
}

// NameEqual compares provider, fabric and domain names the way libfabric
// does (strcasecmp).
func NameEqual(a, b string) bool { return strings.EqualFold(a, b) }

// FirstProvName returns the core component of a layered provider name:
// "tcp" for "tcp;ofi_rxm".
func FirstProvName(name string) string {
	if i := strings.IndexByte(name, ';'); i >= 0 {
		return name[:i]
	}
	return name
}

// Normalize allocates every nil attribute structure of info, as
// fi_allocinfo would have, so that code reading an Info never meets nil.
func Normalize(info *provider.Info) {
	if info.TxAttr == nil {
		info.TxAttr = &provider.TxAttr{}
	}
	if info.RxAttr == nil {
		info.RxAttr = &provider.RxAttr{}
	}
	if info.EPAttr == nil {
		info.EPAttr = &provider.EPAttr{}
	}
	if info.DomainAttr == nil {
		info.DomainAttr = &provider.DomainAttr{}
	}
	if info.FabricAttr == nil {
		info.FabricAttr = &provider.FabricAttr{}
	}
}

// Check reports whether the provider Info prov satisfies the hints user for
// API version version (ofi_check_info). It returns nil on a match and a
// *Mismatch otherwise. A nil user matches everything. prov must be
// normalized (see Normalize); neither argument is modified.
func Check(version uint32, prov, user *provider.Info) error {
	if user == nil {
		return nil
	}
	if user.EPAttr != nil && !epTypeOK(prov.EPAttr.Type, user.EPAttr.Type) {
		return unsupported("ep_attr.type", user.EPAttr.Type, prov.EPAttr.Type)
	}
	if missing := user.Caps &^ prov.Caps; missing != 0 {
		return missf("caps", "%v not supported", missing)
	}
	if err := checkTxRxPrimary(prov, user.Caps); err != nil {
		return err
	}
	provMode := provModeFor(version, user, prov)
	if user.Mode&provMode != provMode {
		return missf("mode", "provider requires %v", provMode&^user.Mode)
	}
	if !AddrFormatOK(prov.AddrFormat, user.AddrFormat) {
		return unsupported("addr_format", user.AddrFormat, prov.AddrFormat)
	}
	if user.FabricAttr != nil {
		if err := checkFabric(prov.FabricAttr, user.FabricAttr); err != nil {
			return err
		}
	}
	if user.DomainAttr != nil {
		if err := checkDomain(version, prov, user); err != nil {
			return err
		}
	}
	if user.EPAttr != nil {
		if err := checkEP(prov, user); err != nil {
			return err
		}
	}
	if user.RxAttr != nil {
		if err := checkRx(prov, user.RxAttr, user.Mode); err != nil {
			return err
		}
	}
	if user.TxAttr != nil {
		if err := checkTx(prov.TxAttr, user.TxAttr, user.Mode); err != nil {
			return err
		}
	}
	return nil
}

// checkTxRxPrimary makes sure the transmit and receive attributes can carry
// the primary capabilities requested for the endpoint, so that after Alter
// tx_attr.caps ⊇ requested∩tx and rx_attr.caps ⊇ requested∩rx.
func checkTxRxPrimary(prov *provider.Info, caps provider.Caps) error {
	if want := caps & txPrimary &^ provider.CapCollective &^ provider.CapHMEM; want&^prov.TxAttr.Caps != 0 {
		// FI_COLLECTIVE and FI_HMEM may legitimately sit on one side only.
		return missf("tx_attr.caps", "%v not supported on transmit", want&^prov.TxAttr.Caps)
	}
	if want := caps & rxPrimary &^ provider.CapCollective &^ provider.CapHMEM; want&^prov.RxAttr.Caps != 0 {
		return missf("rx_attr.caps", "%v not supported on receive", want&^prov.RxAttr.Caps)
	}
	return nil
}

func epTypeOK(prov, user provider.EPType) bool {
	return user == provider.EPUnspec || prov == provider.EPUnspec || user == prov
}

// AddrFormatOK reports whether a provider Info of address format prov
// serves an application asking for format user (fi_valid_addr_format).
// FI_SOCKADDR in the hints accepts FI_SOCKADDR_IN and FI_SOCKADDR_IN6; an
// FI_SOCKADDR_IB provider accepts every socket format. Unlike C, an
// FI_SOCKADDR_IN6 Info does not satisfy an FI_SOCKADDR_IN request: our
// Infos describe one concrete address each, and an application asking for
// IPv4 addresses must not receive IPv6 ones.
func AddrFormatOK(prov, user provider.AddrFormat) bool {
	if user == provider.FormatUnspec || prov == provider.FormatUnspec {
		return true
	}
	switch prov {
	case provider.SockAddr:
		return user <= provider.SockAddrIn6
	case provider.SockAddrIn, provider.SockAddrIn6:
		return user == provider.SockAddr || user == prov
	case provider.SockAddrIB:
		return user <= provider.SockAddrIB
	default:
		return user == prov
	}
}

// checkFabric checks the fabric attributes. As in libfabric, the provider
// name is not checked here: the caller selects providers by name (a
// provider may report a composite name of its own). api_version is not
// checked either: the returned Infos carry the version GetInfo was called
// with, whatever the provider's template says, so a hint copied from an
// earlier result must not exclude it.
func checkFabric(prov, user *provider.FabricAttr) error {
	if user.Name != "" && !NameEqual(user.Name, prov.Name) {
		return missf("fabric_attr.name", "%q does not match %q", user.Name, prov.Name)
	}
	if user.ProvVersion > prov.ProvVersion {
		return miss("fabric_attr.prov_version")
	}
	return nil
}

// Threading models ranked by parallelism (fi_thread_level); a hint may ask
// for a less parallel (higher-ranked) model than the provider offers.
func threadLevel(t provider.Threading) int {
	switch t {
	case provider.ThreadSafe:
		return 1
	case provider.ThreadFID:
		return 2
	case provider.ThreadEndpoint:
		return 3
	case provider.ThreadCompletion:
		return 4
	case provider.ThreadDomain:
		return 5
	case provider.ThreadUnspec:
		return 6
	}
	return -1
}

// Progress models ranked by automation (fi_progress_level): an AUTO
// provider serves a MANUAL request, not the reverse.
func progressLevel(p provider.Progress) int {
	switch p {
	case provider.ProgressAuto:
		return 1
	case provider.ProgressManual:
		return 2
	case provider.ProgressUnspec:
		return 3
	}
	return -1
}

func rmLevel(r provider.ResourceMgmt) int {
	switch r {
	case provider.RMEnabled:
		return 1
	case provider.RMDisabled:
		return 2
	case provider.RMUnspec:
		return 3
	}
	return -1
}

// rmaTargetAllowed reports whether caps let the endpoint be the target of
// RMA or atomics (ofi_rma_target_allowed).
func rmaTargetAllowed(caps provider.Caps) bool {
	if caps&(provider.CapRMA|provider.CapAtomic) == 0 {
		return false
	}
	if caps&(provider.CapRemoteRead|provider.CapRemoteWrite) != 0 {
		return true
	}
	return caps&(provider.CapRead|provider.CapWrite) == 0
}

// capMRMode removes mr_mode bits the capabilities make unnecessary
// (ofi_cap_mr_mode).
func capMRMode(caps provider.Caps, mode provider.MRMode) provider.MRMode {
	if !rmaTargetAllowed(caps) {
		if mode&provider.MRLocal == 0 {
			return 0
		}
		mode &^= mrRMATarget
	}
	return mode &^ (provider.MRBasic | provider.MRScalable)
}

// provModeFor returns the mode bits the provider Info requires of this
// application: its mode, plus FI_LOCAL_MR when it needs FI_MR_LOCAL and the
// application did not offer FI_MR_LOCAL (ofi_mr_get_prov_mode).
func provModeFor(version uint32, user, prov *provider.Info) provider.Mode {
	if version < v1_5 || (user.DomainAttr != nil && user.DomainAttr.MRMode&provider.MRLocal == 0) {
		if prov.DomainAttr.MRMode&provider.MRLocal != 0 {
			return prov.Mode | provider.ModeLocalMR
		}
	}
	return prov.Mode
}

// checkMRMode is ofi_check_mr_mode.
func checkMRMode(version uint32, provMode provider.MRMode, user *provider.Info) bool {
	userMode := user.DomainAttr.MRMode
	if provMode&provider.MRLocal != 0 && user.Mode&provider.ModeLocalMR == 0 && userMode&provider.MRLocal == 0 {
		return false
	}
	if version < v1_5 {
		switch userMode {
		case provider.MRUnspec:
			return provMode&(provider.MRScalable|provider.MRBasic) != 0
		case provider.MRBasic:
			return provMode&provider.MRBasic != 0
		case provider.MRScalable:
			return provMode&provider.MRScalable != 0
		}
		return false
	}
	switch {
	case userMode&provider.MRBasic != 0:
		return userMode == provider.MRBasic && provMode&provider.MRBasic != 0
	case userMode&provider.MRScalable != 0:
		return userMode == provider.MRScalable && provMode&provider.MRScalable != 0
	}
	pm := capMRMode(user.Caps, provMode)
	return userMode&pm == pm
}

func checkDomain(version uint32, prov, user *provider.Info) error {
	p, u := prov.DomainAttr, user.DomainAttr
	if u.Name != "" && !NameEqual(u.Name, p.Name) {
		return missf("domain_attr.name", "%q does not match %q", u.Name, p.Name)
	}
	if threadLevel(u.Threading) < threadLevel(p.Threading) {
		return unsupported("domain_attr.threading", u.Threading, p.Threading)
	}
	if progressLevel(u.ControlProgress) < progressLevel(p.ControlProgress) {
		return unsupported("domain_attr.control_progress", u.ControlProgress, p.ControlProgress)
	}
	if progressLevel(u.DataProgress) < progressLevel(p.DataProgress) {
		return unsupported("domain_attr.data_progress", u.DataProgress, p.DataProgress)
	}
	if rmLevel(u.ResourceMgmt) < rmLevel(p.ResourceMgmt) {
		return unsupported("domain_attr.resource_mgmt", u.ResourceMgmt, p.ResourceMgmt)
	}
	if p.AVType != provider.AVUnspec && u.AVType != provider.AVUnspec && p.AVType != u.AVType {
		return unsupported("domain_attr.av_type", u.AVType, p.AVType)
	}
	if u.CQDataSize > p.CQDataSize {
		return tooLarge("domain_attr.cq_data_size", uint64(u.CQDataSize), uint64(p.CQDataSize))
	}
	if !checkMRMode(version, p.MRMode, user) {
		return unsupported("domain_attr.mr_mode", user.DomainAttr.MRMode, p.MRMode)
	}
	if version < v1_5 {
		return nil
	}
	if u.CntrCnt > p.CntrCnt {
		return miss("domain_attr.cntr_cnt")
	}
	if u.MRIOVLimit > p.MRIOVLimit {
		return miss("domain_attr.mr_iov_limit")
	}
	if u.Caps&^p.Caps != 0 {
		return miss("domain_attr.caps")
	}
	if u.Mode&p.Mode != p.Mode {
		return miss("domain_attr.mode")
	}
	if u.MaxErrData > p.MaxErrData {
		return miss("domain_attr.max_err_data")
	}
	if u.MRCnt > p.MRCnt {
		return miss("domain_attr.mr_cnt")
	}
	return nil
}

func checkEP(prov, user *provider.Info) error {
	p, u, d := prov.EPAttr, user.EPAttr, prov.DomainAttr
	if u.Protocol != provider.ProtoUnspec && u.Protocol != p.Protocol {
		return unsupported("ep_attr.protocol", u.Protocol, p.Protocol)
	}
	if u.ProtocolVersion != 0 && u.ProtocolVersion > p.ProtocolVersion {
		return miss("ep_attr.protocol_version")
	}
	if u.MaxMsgSize > p.MaxMsgSize {
		return tooLarge("ep_attr.max_msg_size", uint64(u.MaxMsgSize), uint64(p.MaxMsgSize))
	}
	if u.TxCtxCnt > d.MaxEPTxCtx {
		if u.TxCtxCnt != provider.SharedContext || d.MaxEPStxCtx == 0 {
			return miss("ep_attr.tx_ctx_cnt")
		}
	}
	if u.RxCtxCnt > d.MaxEPRxCtx {
		if u.RxCtxCnt != provider.SharedContext || d.MaxEPSrxCtx == 0 {
			return miss("ep_attr.rx_ctx_cnt")
		}
	}
	if user.Caps&(provider.CapRMA|provider.CapAtomic) != 0 {
		if u.MaxOrderRAWSize > p.MaxOrderRAWSize {
			return miss("ep_attr.max_order_raw_size")
		}
		if u.MaxOrderWARSize > p.MaxOrderWARSize {
			return miss("ep_attr.max_order_war_size")
		}
		if u.MaxOrderWAWSize > p.MaxOrderWAWSize {
			return miss("ep_attr.max_order_waw_size")
		}
	}
	if len(u.AuthKey) != 0 && len(u.AuthKey) != len(p.AuthKey) {
		return miss("ep_attr.auth_key")
	}
	return nil
}

func checkRx(prov *provider.Info, u *provider.RxAttr, infoMode provider.Mode) error {
	p := prov.RxAttr
	if u.Caps&^p.Caps != 0 {
		return miss("rx_attr.caps")
	}
	if u.Mode != 0 {
		infoMode = u.Mode
	}
	if infoMode&p.Mode != p.Mode {
		return miss("rx_attr.mode")
	}
	if u.OpFlags&^rxOpFlagsAccepted(prov) != 0 {
		return miss("rx_attr.op_flags")
	}
	if u.MsgOrder&^p.MsgOrder != 0 {
		return miss("rx_attr.msg_order")
	}
	if u.CompOrder&^p.CompOrder != 0 {
		return miss("rx_attr.comp_order")
	}
	if u.TotalBufferedRecv > p.TotalBufferedRecv {
		return miss("rx_attr.total_buffered_recv")
	}
	if u.Size > p.Size {
		return tooLarge("rx_attr.size", uint64(u.Size), uint64(p.Size))
	}
	if u.IOVLimit > p.IOVLimit {
		return tooLarge("rx_attr.iov_limit", uint64(u.IOVLimit), uint64(p.IOVLimit))
	}
	return nil
}

// rxOpFlagsAccepted is the set of default receive flags a hint may ask
// for: the provider's, plus those the shared machinery implements for every
// provider: FI_COMPLETION (selective completion is handled above the
// provider) and, when the provider claims FI_MULTI_RECV, FI_MULTI_RECV
// (multi-receive buffers live in the shared receive queue). Transmit hints
// likewise always accept FI_COMPLETION.
func rxOpFlagsAccepted(prov *provider.Info) provider.Flags {
	f := prov.RxAttr.OpFlags | provider.FlagCompletion
	if (prov.Caps|prov.RxAttr.Caps)&provider.CapMultiRecv != 0 {
		f |= provider.FlagMultiRecv
	}
	return f
}

func checkTx(p, u *provider.TxAttr, infoMode provider.Mode) error {
	if u.Caps&^p.Caps != 0 {
		return miss("tx_attr.caps")
	}
	if u.Mode != 0 {
		infoMode = u.Mode
	}
	if infoMode&p.Mode != p.Mode {
		return miss("tx_attr.mode")
	}
	if u.OpFlags&^(p.OpFlags|provider.FlagCompletion) != 0 {
		return miss("tx_attr.op_flags")
	}
	if u.MsgOrder&^p.MsgOrder != 0 {
		return miss("tx_attr.msg_order")
	}
	if u.CompOrder&^p.CompOrder != 0 {
		return miss("tx_attr.comp_order")
	}
	if u.InjectSize > p.InjectSize {
		return tooLarge("tx_attr.inject_size", uint64(u.InjectSize), uint64(p.InjectSize))
	}
	if u.Size > p.Size {
		return tooLarge("tx_attr.size", uint64(u.Size), uint64(p.Size))
	}
	if u.IOVLimit > p.IOVLimit {
		return tooLarge("tx_attr.iov_limit", uint64(u.IOVLimit), uint64(p.IOVLimit))
	}
	if u.RMAIOVLimit > p.RMAIOVLimit {
		return miss("tx_attr.rma_iov_limit")
	}
	return nil
}

// getCaps is ofi_get_caps: the capabilities of one attribute structure
// given the endpoint's capabilities, the hint for that structure and the
// structure's own capabilities.
func getCaps(infoCaps, hintCaps, attrCaps provider.Caps) provider.Caps {
	var caps provider.Caps
	if hintCaps == 0 {
		caps = infoCaps&attrCaps&PrimaryCaps | attrCaps&SecondaryCaps
	} else {
		caps = hintCaps&PrimaryCaps | attrCaps&SecondaryCaps
	}
	if caps&(provider.CapMsg|provider.CapTagged) != 0 && caps&msgDirCaps == 0 {
		caps |= attrCaps & msgDirCaps
	}
	if caps&(provider.CapRMA|provider.CapAtomic) != 0 && caps&rmaDirCaps == 0 {
		caps |= attrCaps & rmaDirCaps
	}
	return caps
}

// infoCaps is ofi_get_info_caps: the endpoint capabilities after the hints,
// minus the remote RMA access the application's mr_mode cannot support.
func infoCaps(version uint32, prov, user *provider.Info) provider.Caps {
	caps := getCaps(prov.Caps, user.Caps, prov.Caps)
	provMode := prov.DomainAttr.MRMode
	if !rmaTargetAllowed(caps) || provMode&mrRMATarget == 0 || user.DomainAttr == nil {
		return caps
	}
	userMode := user.DomainAttr.MRMode
	if (version < v1_5 && userMode == provider.MRUnspec) || userMode == provider.MRBasic ||
		userMode&provMode&mrRMATarget == provMode&mrRMATarget {
		return caps
	}
	return caps &^ (provider.CapRemoteWrite | provider.CapRemoteRead)
}

// Alter narrows info, which passed Check against user, to the hints
// (ofi_alter_info). With nil hints it does nothing. info must be
// normalized; it is modified in place.
func Alter(version uint32, info, user *provider.Info) {
	if user == nil {
		return
	}
	info.Caps = infoCaps(version, info, user)
	if info.DomainAttr.MRMode&provider.MRLocal != 0 && (version < v1_5 ||
		(user.DomainAttr != nil && user.DomainAttr.MRMode&(provider.MRBasic|provider.MRScalable) != 0)) {
		info.Mode |= provider.ModeLocalMR
	}
	info.Handle = user.Handle
	alterDomain(version, info.DomainAttr, user.DomainAttr, info.Caps)
	alterEP(info.EPAttr, user.EPAttr, info.Caps)
	alterRx(info.RxAttr, user.RxAttr, info.Caps)
	alterTx(info.TxAttr, user.TxAttr, info.Caps)
	// The transmit and receive capabilities are subsets of the endpoint's
	// (fi_getinfo(3): "tx/rx caps ⊆ info caps").
	info.TxAttr.Caps &= info.Caps
	info.RxAttr.Caps &= info.Caps
}

func alterDomain(version uint32, attr, h *provider.DomainAttr, caps provider.Caps) {
	if h == nil {
		attr.Caps = getCaps(caps, 0, attr.Caps)
		return
	}
	hm := h.MRMode
	switch {
	case hm&(provider.MRBasic|provider.MRScalable) != 0:
		attr.MRMode = hm
	case version < v1_5:
		if attr.MRMode != 0 && attr.MRMode != provider.MRScalable {
			attr.MRMode = provider.MRBasic
		} else {
			attr.MRMode = provider.MRScalable
		}
	case hm&attr.MRMode != attr.MRMode:
		attr.MRMode = capMRMode(caps, attr.MRMode&hm)
	}
	attr.Caps = getCaps(caps, h.Caps, attr.Caps)
	if h.Threading != provider.ThreadUnspec {
		attr.Threading = h.Threading
	}
	if h.ControlProgress != provider.ProgressUnspec {
		attr.ControlProgress = h.ControlProgress
	}
	if h.DataProgress != provider.ProgressUnspec {
		attr.DataProgress = h.DataProgress
	}
	if h.AVType != provider.AVUnspec {
		attr.AVType = h.AVType
	}
}

func alterEP(attr, h *provider.EPAttr, caps provider.Caps) {
	if h == nil {
		return
	}
	if caps&(provider.CapRMA|provider.CapAtomic) != 0 {
		if h.MaxOrderRAWSize != 0 {
			attr.MaxOrderRAWSize = h.MaxOrderRAWSize
		}
		if h.MaxOrderWARSize != 0 {
			attr.MaxOrderWARSize = h.MaxOrderWARSize
		}
		if h.MaxOrderWAWSize != 0 {
			attr.MaxOrderWAWSize = h.MaxOrderWAWSize
		}
	}
	if h.TxCtxCnt != 0 {
		attr.TxCtxCnt = h.TxCtxCnt
	}
	if h.RxCtxCnt != 0 {
		attr.RxCtxCnt = h.RxCtxCnt
	}
}

func alterRx(attr, h *provider.RxAttr, caps provider.Caps) {
	if h == nil {
		attr.Caps = getCaps(caps, 0, attr.Caps)
		return
	}
	attr.Caps = getCaps(caps, h.Caps, attr.Caps)
	attr.OpFlags = h.OpFlags
	// total_buffered_recv stays the provider's: a hint is checked against
	// it (checkRx) but not copied, as C's ofi_alter_rx_attr copies it, so
	// that the value returned is what the endpoint buffers (fi_endpoint(3):
	// the provider may adjust or ignore the hint; ours ignore it).
	if h.Size != 0 {
		attr.Size = h.Size
	}
	if h.IOVLimit != 0 {
		attr.IOVLimit = h.IOVLimit
	}
}

func alterTx(attr, h *provider.TxAttr, caps provider.Caps) {
	if h == nil {
		attr.Caps = getCaps(caps, 0, attr.Caps)
		return
	}
	attr.Caps = getCaps(caps, h.Caps, attr.Caps)
	attr.OpFlags = h.OpFlags
	if h.InjectSize != 0 {
		attr.InjectSize = h.InjectSize
	}
	if h.Size != 0 {
		attr.Size = h.Size
	}
	if h.IOVLimit != 0 {
		attr.IOVLimit = h.IOVLimit
	}
	if h.RMAIOVLimit != 0 {
		attr.RMAIOVLimit = h.RMAIOVLimit
	}
}

package fabric

import (
	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/provider"
)

// domainExt holds domain state owned by the shared machinery: the
// domain-wide memory registration key table, and the progress of counters
// bound to regions (mrcntr.go).
type domainExt struct {
	mr  *mrkey.Table
	mrp mrProgress // endpoints progressed by counters bound to regions
}

// initExt is called by OpenDomain once the provider domain is open.
func (d *Domain) initExt() {
	var cfg mrkey.Config
	if a := d.info.DomainAttr; a != nil {
		mode := a.MRMode
		if mode&MRBasic != 0 {
			// Legacy FI_MR_BASIC means FI_MR_ALLOCATED|FI_MR_PROV_KEY|FI_MR_VIRT_ADDR.
			mode |= provider.MRBasicMap
		}
		cfg.ProvKey = mode&MRProvKey != 0
		cfg.VirtAddr = mode&MRVirtAddr != 0
		cfg.KeySize = a.MRKeySize
	}
	d.ext.mr = mrkey.New(cfg)
}

// mrKeys is the domain's MR key table, handed to provider endpoints in
// provider.Resources.MR.
func (d *Domain) mrKeys() provider.MRKeys { return d.ext.mr }

// mrEffectiveMode returns the domain's effective mr_mode bits.
func (d *Domain) mrEffectiveMode() MRMode {
	if d.info.DomainAttr == nil {
		return 0
	}
	m := d.info.DomainAttr.MRMode
	if m&MRBasic != 0 {
		m |= provider.MRBasicMap
	}
	return m
}

// rmEnabled reports whether the domain manages resources (resource_mgmt is
// not FI_RM_DISABLED; FI_RM_UNSPEC takes the providers' default, enabled):
// its CQs never overrun and its receive queues reserve CQ room (see
// provider.CQReserver).
func (d *Domain) rmEnabled() bool {
	return d.info.DomainAttr == nil || d.info.DomainAttr.ResourceMgmt != RMDisabled
}

// localMR reports whether the domain requires descriptors for local
// buffers: FI_MR_LOCAL in its mr_mode, or the legacy FI_LOCAL_MR mode bit.
func (d *Domain) localMR() bool {
	return d.mrEffectiveMode()&MRLocal != 0 || d.info.Mode&ModeLocalMR != 0
}

// descOK reports whether desc may describe b under FI_MR_LOCAL: an empty
// b needs nothing; otherwise desc is a live registration of this domain
// (or of the domain it imports) that allows access and covers b.
func (d *Domain) descOK(b []byte, desc MRDesc, access Flags) bool {
	if len(b) == 0 {
		return true
	}
	r, ok := desc.Registration().(*mrkey.Region)
	if !ok || r.Table() != d.ext.mr || r.Removed() {
		return false
	}
	return desc.Access()&access == access && desc.Contains(b)
}

// descsOK checks the descriptors of one local operand of a data call:
// buf with desc when iov is nil, else iov with descs. A descriptor vector
// is empty or has one element per buffer; under FI_MR_LOCAL (d.mrLocal)
// every non-empty buffer needs a descriptor that descOK accepts. It does
// not allocate.
func (d *Domain) descsOK(buf []byte, iov [][]byte, desc MRDesc, descs []MRDesc, access Flags) bool {
	if iov != nil && len(descs) != 0 && len(descs) != len(iov) {
		return false
	}
	if !d.mrLocal {
		return true
	}
	if iov == nil {
		return d.descOK(buf, desc, access)
	}
	for i, b := range iov {
		var dd MRDesc
		if len(descs) != 0 {
			dd = descs[i]
		}
		if !d.descOK(b, dd, access) {
			return false
		}
	}
	return true
}

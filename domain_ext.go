package fabric

import (
	"github.com/gofabric/fabric/internal/mrkey"
	"github.com/gofabric/fabric/provider"
)

// domainExt holds domain state owned by the shared machinery: the
// domain-wide memory registration key table.
type domainExt struct {
	mr *mrkey.Table
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

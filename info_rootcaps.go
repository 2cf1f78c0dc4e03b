package fabric

// rootCaps are the capabilities this package provides for every provider,
// whatever the provider reports: FI_AV_USER_ID (every AV is this
// package's and honours user ids, fi_av(3)). GetInfo asks a provider
// without them and adds the ones the hints request to its answers; like
// the other primary capabilities, they are reported only when requested.
const rootCaps = CapAVUserID

// takeRootCaps removes rootCaps from the provider's copy of the hints h
// and returns the ones it held.
func takeRootCaps(h *Info) Caps {
	if h == nil {
		return 0
	}
	c := h.Caps & rootCaps
	h.Caps &^= rootCaps
	if h.DomainAttr != nil {
		c |= h.DomainAttr.Caps & rootCaps
		h.DomainAttr.Caps &^= rootCaps
	}
	return c
}

// giveRootCaps returns pi with the capabilities c (from takeRootCaps)
// added, copied when it changes; nil when pi cannot have them (FI_AV_USER_ID
// on a connection-oriented endpoint, which has no AV).
func giveRootCaps(pi *Info, c Caps) *Info {
	if c == 0 || pi == nil {
		return pi
	}
	if c&CapAVUserID != 0 && pi.EPAttr != nil && pi.EPAttr.Type == EPMsg {
		return nil
	}
	pi = pi.Dup()
	pi.Caps |= c
	if pi.DomainAttr != nil {
		pi.DomainAttr.Caps |= c
	}
	return pi
}

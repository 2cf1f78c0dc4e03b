package hints

import "strings"

// ProvFilter is a parsed FI_PROVIDER value (ofi_create_filter): a
// comma-separated list of provider names to use, or, with a leading '^',
// to exclude. Names compare case-insensitively and are not trimmed, as in
// libfabric (" udp" matches no provider). The zero value filters nothing.
type ProvFilter struct {
	set     bool
	negated bool
	names   []string
}

// ParseProvFilter parses the value of FI_PROVIDER; set reports whether the
// variable is set at all. A set but empty value, like libfabric's, admits
// no provider.
func ParseProvFilter(value string, set bool) ProvFilter {
	if !set {
		return ProvFilter{}
	}
	f := ProvFilter{set: true}
	if strings.HasPrefix(value, "^") {
		f.negated = true
		value = value[1:]
	}
	f.names = strings.Split(value, ",")
	return f
}

// Excludes reports whether the provider named name is filtered out
// (ofi_apply_filter).
func (f ProvFilter) Excludes(name string) bool {
	if !f.set {
		return false
	}
	for _, n := range f.names {
		if NameEqual(n, name) {
			return f.negated
		}
	}
	return !f.negated
}

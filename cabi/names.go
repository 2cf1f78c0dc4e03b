package main

import (
	"strings"

	"github.com/gofabric/fabric/provider"

	// The providers the plugin offers: each registers itself in the Go
	// registry, and names.go registers each with C libfabric as "go"+name.
	// A new provider is added here (and gets a lib go<name>-fi.so shim).
	_ "github.com/gofabric/fabric/prov/lnx"
	_ "github.com/gofabric/fabric/prov/shm"
	_ "github.com/gofabric/fabric/prov/sim"
	_ "github.com/gofabric/fabric/prov/tcp"
	_ "github.com/gofabric/fabric/prov/udp"
)

// The name table: Go provider X is C provider goX. It is built once from
// the Go registry; a provider's slot (its index) selects the C trampolines
// of its struct fi_provider (provider.c), whose getinfo has no provider
// argument.

// cPrefix is prepended to a Go provider's name to make its C name: the C
// library keeps one provider per name, and ours must not collide with its
// own tcp and udp.
const cPrefix = "go"

type provName struct {
	goName, cName string
	prov          provider.Provider
}

var provNames = buildNames()

func buildNames() []provName {
	var out []provName
	for _, p := range provider.Providers() {
		out = append(out, provName{goName: p.Name(), cName: cPrefix + p.Name(), prov: p})
	}
	return out
}

// cNames returns the C provider names, in slot order.
func cNames() []string {
	out := make([]string, len(provNames))
	for i, n := range provNames {
		out[i] = n.cName
	}
	return out
}

// slotOf returns the slot of C provider name c, or -1.
func slotOf(c string) int {
	for i, n := range provNames {
		if n.cName == c {
			return i
		}
	}
	return -1
}

// goProvName maps a provider name from C to Go: goX (case-insensitively,
// as libfabric compares names) and layered names "goX;ofi_rxm" map their
// first component; other names are returned unchanged (they match none of
// ours).
func goProvName(c string) string {
	first, rest, layered := strings.Cut(c, ";")
	for _, n := range provNames {
		if strings.EqualFold(first, n.cName) {
			if layered {
				return n.goName + ";" + rest
			}
			return n.goName
		}
	}
	return c
}

// cProvName maps a Go provider name to its C name (goName unchanged if it
// is not ours).
func cProvName(g string) string {
	for _, n := range provNames {
		if n.goName == g {
			return n.cName
		}
	}
	return g
}

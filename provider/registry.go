package provider

import (
	"log/slog"
	"strconv"
	"sync"
)

var (
	regMu     sync.RWMutex
	registry  []Provider
	regByName = map[string]Provider{}
)

// Register makes a provider available by name. It panics if p is nil or a
// provider of the same name is already registered, as sql.Register does.
// Providers call it from init.
func Register(p Provider) {
	if p == nil {
		panic("provider: Register of nil provider")
	}
	regMu.Lock()
	defer regMu.Unlock()
	name := p.Name()
	if _, dup := regByName[name]; dup {
		panic("provider: Register called twice for provider " + name)
	}
	regByName[name] = p
	registry = append(registry, p)
	coreLog.Info(SubsysCore, "registering provider", slog.String("name", name),
		slog.String("version", VersionString(p.Version())))
}

// VersionString renders a version built by Version (FI_VERSION(major,
// minor)) as "major.minor", as fi_info prints it.
func VersionString(v uint32) string {
	return strconv.FormatUint(uint64(v>>16), 10) + "." + strconv.FormatUint(uint64(v&0xffff), 10)
}

// Lookup returns the registered provider with the given name.
func Lookup(name string) (Provider, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	p, ok := regByName[name]
	return p, ok
}

// Providers returns the registered providers in registration order.
func Providers() []Provider {
	regMu.RLock()
	defer regMu.RUnlock()
	return append([]Provider(nil), registry...)
}

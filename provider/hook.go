package provider

import (
	"log/slog"
	"sync"
)

// Hook is a hooking provider (libfabric's hooks, fi_provider(7) "Hooking
// providers", selected with FI_HOOK): it is installed over the fabric that
// a core provider opened, at fi_fabric, and sees every call the root
// package makes on that fabric and on the objects opened below it
// (domains, endpoints ...), which it forwards to the core provider's
// objects, observing or changing them on the way (tracing, fault
// injection).
//
// The root package installs hooks in OpenFabric: those FI_HOOK names (a
// comma-separated list, read on each call), or those the application
// passes to fabric.OpenHooked. The fabric keeps the core provider's name
// and Provider: a hooked fabric answers GetInfo, AddrHandler and the
// registry's other provider-level questions as the core provider does.
//
// A hook's objects stand for the core provider's everywhere the root
// package would have used them, so they must:
//
//   - have the optional interfaces whose presence the root acts on
//     exactly when the core object has them (Waiter, FDWaiter,
//     BufferedEndpoint, AtomicDomain; Progresser and Backlogger of a
//     passive endpoint), and answer the others as the root answers for an
//     object without them (ENOSYS, ENOPROTOOPT ...);
//   - report events about the core object (EQEntry.FID) as about the
//     hook's object, which the root then reports as its own;
//   - hand the core provider its own objects where the root passes them
//     back (Info.Handle naming a passive endpoint).
//
// prov/chaos is the model.
type Hook interface {
	// Name is the name FI_HOOK selects the hook by.
	Name() string
	// Fabric returns the hook's fabric layered over f, the fabric that
	// provider p opened from attr. The hook owns f: the returned
	// fabric's Close closes it. On error the caller closes f.
	Fabric(attr *FabricAttr, p Provider, f Fabric) (Fabric, error)
}

var (
	hookMu     sync.RWMutex
	hooks      []Hook
	hookByName = map[string]Hook{}
)

// RegisterHook makes a hook available to FI_HOOK by name. It panics if h
// is nil or a hook of the same name is already registered, as Register
// does. Hooks call it from init.
func RegisterHook(h Hook) {
	if h == nil {
		panic("provider: RegisterHook of nil hook")
	}
	hookMu.Lock()
	defer hookMu.Unlock()
	name := h.Name()
	if _, dup := hookByName[name]; dup {
		panic("provider: RegisterHook called twice for hook " + name)
	}
	hookByName[name] = h
	hooks = append(hooks, h)
	coreLog.Info(SubsysCore, "registering hook", slog.String("name", name))
}

// LookupHook returns the registered hook with the given name.
func LookupHook(name string) (Hook, bool) {
	hookMu.RLock()
	defer hookMu.RUnlock()
	h, ok := hookByName[name]
	return h, ok
}

// Hooks returns the registered hooks in registration order. A hook that
// reads environment variables lists them as a provider does
// (ParamLister).
func Hooks() []Hook {
	hookMu.RLock()
	defer hookMu.RUnlock()
	return append([]Hook(nil), hooks...)
}

// Package chaos is the hook "chaos": a hooking provider (libfabric's
// FI_HOOK, provider.Hook) that layers over any provider, to inject the
// faults real fabrics inflict so that applications can test what they do
// about them. This version forwards every call unchanged.
//
// # Selecting it
//
// Like libfabric's hooks, chaos is not a provider of its own: GetInfo
// answers as before, and the hook is installed over the fabric a core
// provider opens, seeing every call made on it and on every object opened
// below it (domains, endpoints, passive endpoints, scalable endpoints and
// their contexts). The fabric keeps the core provider's name. Two ways:
//
//   - the environment: FI_HOOK=chaos with the usual provider selection
//     (FI_PROVIDER=tcp, or hints naming the provider); Env returns that
//     hook:
//
//     FI_HOOK=chaos FI_PROVIDER=udp ./app
//
//   - Go: New(&Config{...}) and fabric.OpenHooked(info, hook), or Open,
//     which does both, with info from fabric.GetInfo naming the provider
//     below:
//
//     infos, _ := fabric.GetInfo(fabric.APIVersion, "127.0.0.1", "", fabric.FlagSource, hints)
//     fab, hook, err := chaos.Open(infos[0], &chaos.Config{})
//
// # Mapping
//
//	FI_HOOK=chaos    fabric.OpenFabric installs Env(); fabric.OpenHooked(info, New(cfg))
//	(none)           Hook.Stats
//
// # Transparency
//
// With the zero Config every call is forwarded unchanged and the root
// package sees the core provider's objects with the same optional
// operations: the conformance suite passes over udp, tcp (FI_EP_MSG and
// FI_EP_RDM) and shm through chaos (conformance_test.go). Events the core
// objects report about themselves reach the event queue as about the
// hooked objects.
//
// The package imports only the root package, peer and provider (the
// architecture test, internal/archtest, enforces it): it wraps the core
// provider's objects through the provider SPI (provider.Hook).
package chaos

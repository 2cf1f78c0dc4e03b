// Package provider is the provider interface of the fabric library: the
// vocabulary shared by the public object model and the providers (error
// numbers, flags, capabilities, attributes, completion entries), the
// operations a provider implements (Provider, Fabric, Domain, Endpoint and
// their optional extensions), the fi_peer(3) owner and peer operations
// through which providers report completions and match receives, and the
// provider registry, and the logging providers use (NewLogger: libfabric's
// FI_LOG_* semantics through log/slog; see Logger).
//
// It plays the role of database/sql/driver: applications use package
// fabric; providers implement this package's interfaces and call Register
// from init.
package provider

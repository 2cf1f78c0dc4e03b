package main

/*
#include "gofab.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/gofabric/fabric/provider"
)

// Every exported entry point returns libfabric's convention: 0 (or a count)
// on success, a negative FI_E* number on error. errno translates a Go
// error; recoverRC, deferred first in every entry point, turns a panic into
// -FI_EOTHER (logged) so the host process survives:
//
//	//export gofab_x_y
//	func gofab_x_y(fid *C.struct_fid, ...) (rc C.int) {
//		defer recoverRC("fi_x_y", &rc)
//		...
//		return errno(err)
//	}

// errno returns 0 for nil, -e for an error matching a provider.Errno e (the
// Go Errno values are libfabric's numbers), -FI_EOTHER otherwise.
func errno(err error) C.int {
	if err == nil {
		return 0
	}
	var e provider.Errno
	if errors.As(err, &e) && e > 0 {
		return -C.int(e)
	}
	return -C.FI_EOTHER
}

// errnoSize is errno for the ssize_t entries.
func errnoSize(err error) C.ssize_t { return C.ssize_t(errno(err)) }

// rcType is the return type of an entry point.
type rcType interface{ ~int32 | ~int64 }

// recoverRC, deferred directly, recovers a panic of the entry point op,
// logs it with the stack, and sets *rc to -FI_EOTHER.
func recoverRC[T rcType](op string, rc *T) {
	if r := recover(); r != nil {
		log.Warn(provider.SubsysCore, "panic in C entry point", slog.String("op", op),
			slog.String("panic", fmt.Sprint(r)), slog.String("stack", string(debug.Stack())))
		*rc = -T(C.FI_EOTHER)
	}
}

// log is the plugin's logger (FI_LOG_LEVEL etc. apply).
var log = provider.NewLogger("cabi")

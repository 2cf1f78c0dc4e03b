// Command cabi is the C plugin: built with -buildmode=c-shared it is
// libgofabric.so, which makes the C libfabric 1.17 load our Go providers
// (as goudp, gotcp, ...) through the shims lib go<name>-fi.so whose
// fi_prov_ini() returns gofabric_provider("go<name>"). See build.sh and
// /work/coord/cabi.md.
//
// This is the only package of the repository that uses cgo. Run as a
// program (go run .), it prints the C provider names, one a line, which
// build.sh uses to build one shim per provider.
package main

/*
#include "gofab.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

func main() {
	for _, n := range cNames() {
		fmt.Println(n)
	}
}

var (
	provMu  sync.Mutex
	provOut [C.GOFAB_MAX_PROVIDERS]*C.struct_fi_provider
)

// gofabric_provider returns the struct fi_provider of C provider name
// (gotcp, goudp ...), allocated once; NULL for an unknown name, which makes
// the C library skip the shim.
//
//export gofabric_provider
func gofabric_provider(name *C.char) (p *C.struct_fi_provider) {
	defer func() {
		if r := recover(); r != nil {
			p = nil
		}
	}()
	if name == nil {
		return nil
	}
	slot := slotOf(C.GoString(name))
	if slot < 0 || slot >= C.GOFAB_MAX_PROVIDERS {
		return nil
	}
	provMu.Lock()
	defer provMu.Unlock()
	if provOut[slot] == nil {
		n := provNames[slot]
		cs := C.CString(n.cName)
		provOut[slot] = C.gofab_provider_new(C.int(slot), cs, C.uint32_t(n.prov.Version()))
		if provOut[slot] == nil {
			C.free(unsafe.Pointer(cs))
		}
	}
	return provOut[slot]
}

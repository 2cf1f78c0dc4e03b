package main

/*
#include "gofab.h"
*/
import "C"

// gofab_debug_handles returns the number of live handles: the C tests
// check that closing every object leaves none (no leak).
//
//export gofab_debug_handles
func gofab_debug_handles() C.int { return C.int(handles.count()) }

// opsNulls is gofab_ops_nulls for the Go tests (no cgo in _test files).
func opsNulls() int { return int(C.gofab_ops_nulls()) }

// freeInfoForTest frees an fi_info built by infoToC.
func freeInfoForTest(ci *C.struct_fi_info) { C.gofab_freeinfo(ci) }

//go:build !linux

package shmring

import "errors"

// StandinDir is where region files are created.
var StandinDir = "/dev/shm"

var errNoSys = errors.New("shmring: shared memory files are not supported on this system")

// StandinFile is a mapped region file.
type StandinFile struct{}

// StandinCreate is not supported on this system.
func StandinCreate(name string, size int) (*StandinFile, error) { return nil, errNoSys }

// StandinOpen is not supported on this system.
func StandinOpen(name string) (*StandinFile, error) { return nil, errNoSys }

// Bytes returns nil.
func (f *StandinFile) Bytes() []byte { return nil }

// Close does nothing.
func (f *StandinFile) Close() error { return errNoSys }

// Unlink does nothing.
func (f *StandinFile) Unlink() error { return errNoSys }

package shm

import (
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/sys"
)

// AttachForTest maps the region of the endpoint named addr, as another
// process of the same user could; close unmaps it.
func AttachForTest(addr []byte) (r *shmring.Region, close func(), err error) {
	id, ok := parseName(addr)
	if !ok {
		return nil, nil, errnoOf(nil)
	}
	f, err := sys.OpenShm(fileName(id))
	if err != nil {
		return nil, nil, err
	}
	h, err := shmring.Attach(f.Bytes())
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return shmring.NewRegion(f.Bytes(), h), func() { f.Close() }, nil
}

// Command constants for tests outside the package.
const (
	OpMsg      = shmring.OpMsg
	OpTagged   = shmring.OpTagged
	FlagFirst  = shmring.FlagFirst
	FlagLast   = shmring.FlagLast
	FlagInline = shmring.FlagInline
)

// MakeStaleForTest leaves the region file of service as a process that
// died would: created, then closed without being unlinked.
func MakeStaleForTest(service string) error {
	f, err := sys.CreateShm(fileName(serviceID(service)), 4096)
	if err != nil {
		return err
	}
	return f.Close()
}

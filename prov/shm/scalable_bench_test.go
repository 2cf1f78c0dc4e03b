package shm_test

import (
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/fabtest"
)

// BenchmarkScalableMsgRate measures the message rate (msgs/s) of a
// scalable endpoint's transmit/receive context pairs used from 1, 2 and 4
// goroutines at once (fabtest.BenchScalable).
func BenchmarkScalableMsgRate(b *testing.B) {
	fabtest.BenchScalable(b, fabtest.Target{Provider: "shm", EPType: fabric.EPRDM}, 64)
}

package shm

import (
	"github.com/gofabric/fabric/internal/shmring"
	"github.com/gofabric/fabric/internal/sys"
)

// futexWake wakes the sleepers of region r (its owner's waits sleep on the
// wake word, a shared futex). Region.Wake has already bumped the word.
func futexWake(r *shmring.Region) { sys.FutexWakeAtomic(r.Seq(), sys.FutexWakeAll) }

package shm

import "github.com/gofabric/fabric/internal/shmring"

// futexWake wakes the sleepers of region r. Until the shared futex of
// internal/sys lands, sleepers poll with a bounded sleep and nothing needs
// waking.
func futexWake(r *shmring.Region) {}

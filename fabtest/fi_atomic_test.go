package fabtest

import (
	"bytes"
	"testing"

	fabric "github.com/gofabric/fabric"
	"github.com/gofabric/fabric/internal/atomics"
)

// TestAtomicReferenceAgreesWithInternalAtomics: the suite's reference and
// the operation table providers share were written apart; on every
// operation, datatype and test vector both compute, they agree.
func TestAtomicReferenceAgreesWithInternalAtomics(t *testing.T) {
	checked := 0
	for dt := fabric.Datatype(0); dt <= fabric.DatatypeUint128; dt++ {
		ref, ok := refTypes[dt]
		for op := fabric.AtomicOp(0); op <= fabric.AtomicMSwap; op++ {
			valid := atomics.Valid(op, dt) || atomics.FetchValid(op, dt) || atomics.CompareValid(op, dt)
			if !valid {
				continue
			}
			if !ok {
				t.Errorf("internal/atomics computes %v on %v; the suite has no reference type", op, dt)
				continue
			}
			for e := range nvec {
				tv, ov, cv := ref.vec(e)
				want, ok := ref.apply(op, tv, ov, cv)
				if !ok {
					t.Errorf("internal/atomics computes %v on %v; the suite's reference does not", op, dt)
					break
				}
				got, res := bytes.Clone(tv), make([]byte, len(tv))
				var err error
				switch {
				case atomics.CompareValid(op, dt):
					err = atomics.ApplyCompare(op, dt, got, ov, cv, res)
				case atomics.FetchValid(op, dt):
					err = atomics.ApplyFetch(op, dt, got, ov, res)
				}
				if err != nil {
					t.Fatalf("%v on %v: %v", op, dt, err)
				}
				if !bytes.Equal(got, want) || !bytes.Equal(res, tv) {
					t.Errorf("%v on %v element %d (target %x operand %x compare %x): internal/atomics %x fetched %x; reference %x",
						op, dt, e, tv, ov, cv, got, res, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing compared")
	}
}

package experiment

import (
	"math"
	"testing"
)

func TestUnboundedIsAThousandfold(t *testing.T) {
	if math.Abs(Unbounded-math.Log(1000)) > 1e-12 {
		t.Errorf("Unbounded %v, want ln(1000) = %v", Unbounded, math.Log(1000))
	}
}

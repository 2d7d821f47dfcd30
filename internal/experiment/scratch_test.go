package experiment

import (
	"fmt"
	"math"
	"testing"
)

func TestScratchMult(t *testing.T) {
	for _, g := range []float64{30, 100, 300, 1000} {
		for _, a := range []float64{0.05, 0.01, 0.0025} {
			line := fmt.Sprintf("g=%5.0f a=%.4f:", g, a)
			for _, n := range []int{3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100} {
				line += fmt.Sprintf(" %d:%.1f", n, halfWidth(n, 1, a, g)*math.Sqrt(float64(n)))
			}
			t.Log(line)
		}
	}
}

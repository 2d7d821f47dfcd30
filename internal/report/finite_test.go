package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/tune"
)

func TestFiniteSavesWhatJSONCannot(t *testing.T) {
	type inner struct{ X float64 }
	type outer struct {
		A  float64
		P  *inner
		S  []inner
		M  map[string]float64
		MS map[string]inner
		ok float64
	}
	v := &outer{A: math.NaN(), P: &inner{math.Inf(1)}, S: []inner{{1}, {math.NaN()}}, M: map[string]float64{"k": math.Inf(-1)},
		MS: map[string]inner{"q": {math.NaN()}}, ok: math.NaN()}
	bad := Finite(v)
	if len(bad) != 5 {
		t.Errorf("found %v, want 5 places", bad)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		t.Errorf("still not encodable: %v", err)
	}
}

// KeepFinite saves a tune result's figures that are not numbers as 0, and says where in its warnings.
func TestKeepFinite(t *testing.T) {
	res := &tune.Result{ElapsedS: math.NaN()}
	KeepFinite(res)
	if res.ElapsedS != 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not a number and is saved as 0: .ElapsedS") {
		t.Errorf("elapsed %v, warnings %q", res.ElapsedS, res.Warnings)
	}
}

package report

import (
	"math"
	"reflect"
	"strconv"

	"github.com/phptune/phptune/internal/tune"
)

// Finite sets every NaN or infinite float reachable from v (a pointer) to 0 and returns where they were: JSON
// has no such numbers, and a result must be saved whatever one figure of it came out as. The paths name the
// figures for a warning (they point at a defect upstream).
func Finite(v any) []string {
	var bad []string
	finite(reflect.ValueOf(v), "", &bad, 0)
	return bad
}

// KeepFinite zeroes res's figures that are not numbers (Finite) and says where in its warnings.
func KeepFinite(res *tune.Result) {
	for _, where := range Finite(res) {
		res.Warnings = append(res.Warnings, "internal: a figure was not a number and is saved as 0: "+where)
	}
}

func finite(v reflect.Value, path string, bad *[]string, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			finite(v.Elem(), path, bad, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				finite(v.Field(i), path+"."+t.Field(i).Name, bad, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			finite(v.Index(i), path+"["+strconv.Itoa(i)+"]", bad, depth+1)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if (e.Kind() == reflect.Float64 || e.Kind() == reflect.Float32) && !isFinite(e.Float()) {
				*bad = append(*bad, path+"["+k.String()+"]")
				v.SetMapIndex(k, reflect.Zero(e.Type()))
				continue
			}
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			finite(c, path+"["+k.String()+"]", bad, depth+1)
			v.SetMapIndex(k, c)
		}
	case reflect.Float64, reflect.Float32:
		if !isFinite(v.Float()) && v.CanSet() {
			*bad = append(*bad, path)
			v.SetFloat(0)
		}
	}
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

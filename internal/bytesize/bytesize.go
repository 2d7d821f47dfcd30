// Package bytesize reads sizes: as a person writes them on a command line (4GiB, 1.5G, 100MB), and as php.ini
// and nginx write them in their configs (16k, 128M), which is stricter, since those programs accept nothing
// else.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type unit struct {
	suffix string
	mult   float64
	config bool // php.ini and nginx accept it
}

// units, longest suffix first. K, M and G are 1024-based, as in php.ini, nginx and free(1); KB, MB and GB
// are decimal.
var units = []unit{
	{"GiB", 1 << 30, false}, {"MiB", 1 << 20, false}, {"KiB", 1 << 10, false},
	{"GB", 1e9, false}, {"MB", 1e6, false}, {"KB", 1e3, false}, {"kB", 1e3, false},
	{"G", 1 << 30, true}, {"M", 1 << 20, true}, {"K", 1 << 10, true},
	{"g", 1 << 30, true}, {"m", 1 << 20, true}, {"k", 1 << 10, true},
	{"B", 1, false},
}

// Parse reads a size as a person writes it: 4GiB, 512MiB, 1.5G, 512M, 16k, 100MB, or plain bytes.
func Parse(s string) (int64, error) {
	t, mult := split(s, false)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v >= 0) || v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: want a size such as 4GiB, 512MiB or 512M", s)
	}
	return int64(v * mult), nil
}

// ParseConfig reads a size as php.ini and nginx write it: a whole number with an optional k, m or g (either
// case, 1024-based).
func ParseConfig(s string) (int64, error) {
	t, mult := split(s, true)
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || float64(n)*mult >= math.MaxInt64 || t != strings.TrimSpace(t) {
		return 0, fmt.Errorf("size %q: want a whole number with an optional k, M or G", s)
	}
	return n * int64(mult), nil
}

// split takes the unit off s: the number's text and the unit's multiplier.
func split(s string, config bool) (string, float64) {
	t := strings.TrimSpace(s)
	for _, u := range units {
		if (u.config || !config) && strings.HasSuffix(t, u.suffix) {
			num := strings.TrimSuffix(t, u.suffix)
			if !config {
				num = strings.TrimSpace(num)
			}
			return num, u.mult
		}
	}
	return t, 1
}

// Format writes a size for people in binary units, a tenth of a unit below a hundred of it: 512 B, 51.2 KiB,
// 1.0 MiB, 370 MiB, 2.7 GiB (negative sizes with a minus sign).
func Format(b float64) string {
	sign := ""
	if b < 0 {
		sign, b = "-", -b
	}
	unit, mult := Unit(b)
	if v := b / mult; unit != "B" && v < 99.95 {
		return fmt.Sprintf("%s%.1f %s", sign, v, unit)
	}
	return fmt.Sprintf("%s%.0f %s", sign, b/mult, unit)
}

// Unit is the binary unit Format writes b in, and its size in bytes.
func Unit(b float64) (name string, mult float64) {
	b = math.Abs(b)
	for _, u := range []struct {
		name string
		mult float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.mult*0.99995 {
			return u.name, u.mult
		}
	}
	return "B", 1
}

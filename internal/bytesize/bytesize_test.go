package bytesize

import "testing"

func TestParse(t *testing.T) {
	good := map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "1.5G": 3 << 29, "512M": 512 << 20, "16k": 16 << 10,
		"100MB": 100e6, "2 GB": 2e9, "4096": 4096, "10B": 10, " 1K ": 1024}
	for in, want := range good {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1M", "4 gigs", "1e30G", "NaN", "0x10"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseConfig(t *testing.T) {
	good := map[string]int64{"16k": 16 << 10, "16K": 16 << 10, "128M": 128 << 20, "1g": 1 << 30, "4096": 4096, "0": 0}
	for in, want := range good {
		if got, err := ParseConfig(in); err != nil || got != want {
			t.Errorf("ParseConfig(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// What php.ini or nginx would not take is refused, not read as something else.
	for _, in := range []string{"16KiB", "1.5M", "100MB", "16 k", "", "-1", "10B", "99999999999999G"} {
		if got, err := ParseConfig(in); err == nil {
			t.Errorf("ParseConfig(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for b, want := range map[float64]string{0: "0 B", 512: "512 B", 1023: "1023 B", 1024: "1.0 KiB", 52429: "51.2 KiB",
		1 << 20: "1.0 MiB", 370 << 20: "370 MiB", 2.7 * (1 << 30): "2.7 GiB", -1536: "-1.5 KiB", 99.96 * (1 << 20): "100 MiB",
		2.5 * (1 << 40): "2.5 TiB"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%g) = %q, want %q", b, got, want)
		}
	}
}

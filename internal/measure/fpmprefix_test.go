package measure

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFPMPrefixes: the official image's layout under a prefix reads whole under the prefix its place suggests,
// not Debian's; --prefix is taken alone.
func TestFPMPrefixes(t *testing.T) {
	prefix := t.TempDir()
	os.MkdirAll(filepath.Join(prefix, "etc", "php-fpm.d"), 0o755)
	conf := filepath.Join(prefix, "etc", "php-fpm.conf")
	os.WriteFile(conf, []byte("[global]\ninclude=etc/php-fpm.d/*.conf\n"), 0o644)
	os.WriteFile(filepath.Join(prefix, "etc", "php-fpm.d", "zz-docker.conf"), []byte("[www]\nlisten = 9000\n"), 0o644)
	if got := FPMPrefixes(conf, 0, ""); !slices.Equal(got, []string{prefix, "/usr", "/usr/local"}) {
		t.Errorf("FPMPrefixes = %v", got)
	}
	if got := FPMPrefixes(conf, 0, "/srv"); !slices.Equal(got, []string{"/srv"}) {
		t.Errorf("FPMPrefixes with --prefix = %v", got)
	}
	c, err := ReadFPMConfigFrom(conf, []string{"/usr", prefix}, nil, []string{"www"})
	if err != nil || c.Prefix != prefix || len(c.Pools) != 1 || c.Pools[0].Address != "127.0.0.1:9000" {
		t.Errorf("ReadFPMConfigFrom: %+v %v", c, err)
	}
}

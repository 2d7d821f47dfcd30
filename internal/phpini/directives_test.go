package phpini

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"
)

func TestParseDirectives(t *testing.T) {
	info := []byte(`Core

PHP Version => 8.2.36

Directive => Local Value => Master Value
allow_url_fopen => On => On
memory_limit => 128M => 128M

opcache

Opcode Caching => Up and running

Directive => Local Value => Master Value
opcache.jit => tracing => tracing
`)
	if got := parseDirectives(info); !reflect.DeepEqual(got, []string{"allow_url_fopen", "memory_limit", "opcache.jit"}) {
		t.Errorf("parseDirectives = %q", got)
	}
}

// The real php-fpm lists its own directives and those of the extensions its conf.d loads (opcache).
func TestDirectivesOfTheRealPHPFPM(t *testing.T) {
	fpm := "/usr/sbin/php-fpm8.2"
	if _, err := os.Stat(fpm); err != nil {
		t.Fatalf("php-fpm (make deps installs it): %v", err)
	}
	names, err := Directives(context.Background(), fpm)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memory_limit", "realpath_cache_size", "opcache.jit_buffer_size", "opcache.validate_timestamps"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not among the %d directives of %s", want, len(names), fpm)
		}
	}
	if slices.Contains(names, "pm.max_children") {
		t.Errorf("a pool directive among the ini directives")
	}
}

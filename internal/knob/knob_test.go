package knob

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestKnobsSetAndGet(t *testing.T) {
	c := Debian()
	for _, k := range append(All("preload.php", []string{"/a/php-fpm", "/b/php-fpm"}), MaxChildren()) {
		for _, v := range k.Candidates(c) {
			cc := c.Clone()
			if err := k.Set(&cc, v); err != nil {
				t.Fatalf("%s=%s: %v", k.Name, v, err)
			}
			if got := k.Get(cc); got != v {
				t.Errorf("%s: set %q, got %q", k.Name, v, got)
			}
		}
		if err := k.Set(&c, "nonsense"); err == nil {
			t.Errorf("%s accepted nonsense", k.Name)
		}
	}
	if got := Neighbours(8); len(got) != 2 || got[0] != 6 || got[1] != 12 {
		t.Errorf("Neighbours(8) = %v", got)
	}
	if got := Neighbours(1); len(got) != 1 || got[0] != 2 {
		t.Errorf("Neighbours(1) = %v", got)
	}
	// Debian's spare servers from 5 children are 2, 1, 3.
	if s, lo, hi := Debian().spares(); s != 2 || lo != 1 || hi != 3 {
		t.Errorf("spares %d %d %d", s, lo, hi)
	}
	k, err := Fixed("precision", []string{"14", "15"})
	if err != nil || k.Name != "precision" || len(k.Candidates(c)) != 2 {
		t.Fatalf("ini knob: %v", err)
	}
	if k, err := Fixed("max_requests", []string{"0", "500"}); err != nil || k.Name != "max_requests" {
		t.Errorf("max_requests is a pool setting, not an ini one: %v %v", k.Name, err)
	}
	j := JIT()
	jc := Debian()
	if j.Set(&jc, "tracing") != nil || jc.Defines["opcache.jit_buffer_size"] != "64M" || j.Set(&jc, "off") != nil || jc.Defines["opcache.jit_buffer_size"] != "" {
		t.Errorf("jit: %+v", jc)
	}
	if _, err := Fixed("pm", []string{"static", "lazy"}); err == nil {
		t.Error("a bad value of a known knob was accepted")
	}
}

func TestFromFiles(t *testing.T) {
	dir := t.TempDir()
	pool := dir + "/www.conf"
	os.WriteFile(pool, []byte("[www]\nuser = www-data\nlisten = 127.0.0.1:9000\npm = static\npm.max_children = 12 ; comment\n"+
		"php_admin_value[memory_limit] = 256M\nphp_value[opcache.memory_consumption] = 256\n"), 0o644)
	ini := dir + "/php.ini"
	os.WriteFile(ini, []byte("[PHP]\n; comment\nrealpath_cache_size = 4096k\nopcache.enable = 0\n"), 0o644)
	c := Debian()
	if err := c.FromPoolFile(pool); err != nil {
		t.Fatal(err)
	}
	if err := c.FromINIFile(ini); err != nil {
		t.Fatal(err)
	}
	if c.PM != "static" || c.MaxChildren != 12 || c.Listen != "tcp" || c.INI["memory_limit"] != "256M" ||
		c.Defines["opcache.memory_consumption"] != "256" || c.INI["opcache.enable"] != "0" || c.INI["realpath_cache_size"] != "4096k" {
		t.Errorf("config %+v", c)
	}
	os.WriteFile(pool, []byte("pm.max_children = many\n"), 0o644)
	if err := c.FromPoolFile(pool); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("bad pool file: %v", err)
	}
}

func TestSkipReasons(t *testing.T) {
	c := Debian()
	cases := []struct {
		k    Knob
		f    Facts
		skip bool
	}{
		{FastCGIBuffers(), Facts{MaxResponse: 20 << 10}, true},
		{FastCGIBuffers(), Facts{MaxResponse: 200 << 10}, false},
		{Backlog(), Facts{Concurrency: 128}, true},
		{Backlog(), Facts{Concurrency: 2000}, false},
		{HugeCodePages(), Facts{THP: "never"}, true},
		{HugeCodePages(), Facts{THP: "never", HugePages: 64}, false},
		{HugeCodePages(), Facts{THP: "madvise"}, false},
		{Preload(""), Facts{}, true},
		{Preload("preload.php"), Facts{}, false},
		{RealpathCache(), Facts{RealpathUsed: 100 << 10, RealpathLimit: 4 << 20}, true},
		{RealpathCache(), Facts{RealpathUsed: 4000 << 10, RealpathLimit: 4 << 20}, false},
		{Binary([]string{"/a"}), Facts{}, true},
		{Binary([]string{"/a", "/b"}), Facts{}, false},
	}
	for _, tc := range cases {
		why := tc.k.Skip(tc.f, c)
		if (why != "") != tc.skip {
			t.Errorf("%s with %+v: skip %q, want skipped=%v", tc.k.Name, tc.f, why, tc.skip)
		}
	}
	off := Debian()
	off.SetINI("opcache.enable", "0")
	for _, k := range []Knob{JIT(), Preload("preload.php"), ValidateTimestamps(), HugeCodePages()} {
		if k.Skip(Facts{THP: "madvise"}, off) == "" {
			t.Errorf("%s is tried with opcache off", k.Name)
		}
	}
	if n, err := BuffersBytes("16 16k"); err != nil || n != 256<<10 {
		t.Errorf("BuffersBytes: %d %v", n, err)
	}
	if _, err := BuffersBytes("16"); err == nil {
		t.Error("BuffersBytes accepted a count alone")
	}
}

// TestUserValuesAreTried: --knob values replace suggestions and skip rules, and opcache_memory's three sizes can
// be given as one value among several.
func TestUserValuesAreTried(t *testing.T) {
	b, err := Fixed("backlog", []string{"0", "4096"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Skip != nil && b.Skip(Facts{Concurrency: 128}, Debian()) != "" {
		t.Error("--knob backlog=0,4096 is skipped at 128 connections")
	}
	full := &OpcacheUse{MemoryUsed: 127 << 20, MemoryFree: 1 << 20, InternedUsed: 7 << 20, InternedFree: 1 << 20, Keys: 100, MaxKeys: 10000}
	m, err := Fixed("opcache_memory", []string{"", "512/32/40000"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Values(Facts{Opcache: full}, Debian()); len(got) != 2 || got[1] != "512/32/40000" {
		t.Errorf("opcache_memory values %q, want the user's", got)
	}
	c := Debian()
	if err := m.Set(&c, "512/32/40000"); err != nil {
		t.Fatal(err)
	}
	if c.Defines["opcache.memory_consumption"] != "512" || c.Defines["opcache.max_accelerated_files"] != "40000" || m.Get(c) != "512/32/40000" {
		t.Errorf("set 512/32/40000: %v, get %q", c.Defines, m.Get(c))
	}
	if err := m.Set(&c, "512,32,40000"); err == nil {
		t.Error("a comma-separated opcache_memory value was taken")
	}
}

// TestKeyCoversEveryField: a configuration that differs in any one field has another key, so that two
// configurations that render differently never share a running stack.
func TestKeyCoversEveryField(t *testing.T) {
	base := Config{}
	v := reflect.ValueOf(&base).Elem()
	for i := 0; i < v.NumField(); i++ {
		c := Config{}
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"k": "v"}))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
		if c.Key() == base.Key() {
			t.Errorf("field %s does not change the key", v.Type().Field(i).Name)
		}
	}
}

// TestKeepaliveLeavesHalfThePool: nginx's kept connections pin php-fpm workers; together they keep at most half
// the pool (bench/keepstall.sh: keeping the whole pool stalled every trial), and a pool too small for that is
// not offered keep-alive.
func TestKeepaliveLeavesHalfThePool(t *testing.T) {
	c := Debian()
	c.Keepalive, c.MaxChildren = true, 8
	if got := c.KeepaliveConns(2); got != 2 {
		t.Errorf("pool of 8, 2 nginx workers: %d kept a worker, want 2", got)
	}
	k := Keepalive()
	c.Keepalive, c.MaxChildren = false, 2
	if why := k.Skip(Facts{NginxWorkers: 2}, c); !strings.Contains(why, "pool of 2") {
		t.Errorf("pool of 2, 2 nginx workers: skip %q, want a reason", why)
	}
	if why := k.Skip(Facts{NginxWorkers: 2}, Config{MaxChildren: 4}); why != "" {
		t.Errorf("pool of 4: skip %q, want keep-alive tried", why)
	}
}

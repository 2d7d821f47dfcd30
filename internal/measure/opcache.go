package measure

// opcache's state as the pool sees it, read through FastCGI from a small script phptune places in its run dir
// (never in the user's docroot): opcache's memory lives in the php-fpm master's shared segment, so only a
// request served by the pool can read it.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/textline"
)

// OpcacheScriptName is the status script's file name in the run dir.
const OpcacheScriptName = "phptune-opcache-status.php"

// opcacheScript prints opcache_get_status(false) and the settings that bound it as JSON. It is one file with no
// include, so it adds one key to the cache it measures.
const opcacheScript = `<?php
// written by phptune: opcache's state for phptune profile
header('Content-Type: application/json');
$loaded = extension_loaded('Zend OPcache');
$st = ($loaded && function_exists('opcache_get_status')) ? @opcache_get_status(false) : false;
echo json_encode([
    'loaded' => $loaded,
    'status' => $st,
    'realpath' => ['used' => realpath_cache_size(), 'limit' => ini_get('realpath_cache_size')],
    'ini' => [
        'opcache.enable' => ini_get('opcache.enable'),
        'opcache.memory_consumption' => ini_get('opcache.memory_consumption'),
        'opcache.interned_strings_buffer' => ini_get('opcache.interned_strings_buffer'),
        'opcache.max_accelerated_files' => ini_get('opcache.max_accelerated_files'),
        'opcache.validate_timestamps' => ini_get('opcache.validate_timestamps'),
        'opcache.revalidate_freq' => ini_get('opcache.revalidate_freq'),
        'opcache.huge_code_pages' => ini_get('opcache.huge_code_pages'),
        'opcache.jit' => ini_get('opcache.jit'),
        'opcache.jit_buffer_size' => ini_get('opcache.jit_buffer_size'),
    ],
]);
`

// WriteOpcacheScript writes the status script into dir (readable by the workers' user) and returns its path.
func WriteOpcacheScript(dir string) (string, error) {
	return WriteOpcacheScriptAs(filepath.Join(dir, OpcacheScriptName))
}

// WriteOpcacheScriptAs writes the status script at path.
func WriteOpcacheScriptAs(path string) (string, error) {
	if err := atomicfile.Write(path, []byte(opcacheScript), 0o644); err != nil {
		return "", fmt.Errorf("write opcache status script: %w", err)
	}
	return path, nil
}

// Opcache is opcache's state in a pool.
type Opcache struct {
	Loaded    bool `json:"loaded"`
	Enabled   bool `json:"enabled"` // opcache_enabled: caching in this pool
	CacheFull bool `json:"cache_full"`
	// Memory of the shared segment (opcache.memory_consumption), bytes.
	MemoryUsed   int64   `json:"memory_used"`
	MemoryFree   int64   `json:"memory_free"`
	MemoryWasted int64   `json:"memory_wasted"`
	WastedPct    float64 `json:"wasted_percent"`
	// Interned strings buffer (opcache.interned_strings_buffer), bytes.
	InternedUsed    int64 `json:"interned_strings_used"`
	InternedFree    int64 `json:"interned_strings_free"`
	InternedBuffer  int64 `json:"interned_strings_buffer"`
	InternedStrings int64 `json:"interned_strings"`
	// Keys: cached scripts and keys against max_cached_keys (opcache.max_accelerated_files rounded up to a prime).
	CachedScripts int64   `json:"cached_scripts"`
	CachedKeys    int64   `json:"cached_keys"`
	MaxCachedKeys int64   `json:"max_cached_keys"`
	Hits          int64   `json:"hits"`
	Misses        int64   `json:"misses"`
	HitRate       float64 `json:"hit_rate"` // percent
	// HitRateWindow says what Hits, Misses and HitRate cover: "" = since start-up (opcache's counters), or the
	// requests a caller took the difference over.
	HitRateWindow  string `json:"hit_rate_window,omitempty"`
	OOMRestarts    int64  `json:"oom_restarts"`
	HashRestarts   int64  `json:"hash_restarts"`
	ManualRestarts int64  `json:"manual_restarts"`
	JITBufferSize  int64  `json:"jit_buffer_size,omitempty"`
	JITBufferFree  int64  `json:"jit_buffer_free,omitempty"`
	// INI are the opcache settings the pool runs with, as ini_get reports them.
	INI map[string]string `json:"ini"`
	// RealpathUsed and RealpathLimit are the serving worker's realpath cache: bytes used and its size.
	RealpathUsed  int64 `json:"realpath_cache_used"`
	RealpathLimit int64 `json:"realpath_cache_limit"`
}

type opcacheJSON struct {
	Loaded bool `json:"loaded"`
	// false when opcache is off: decoded into a pointer that stays nil.
	Status   json.RawMessage   `json:"status"`
	INI      map[string]string `json:"ini"`
	Realpath struct {
		Used  int64  `json:"used"`
		Limit string `json:"limit"`
	} `json:"realpath"`
}

type opcacheStatusJSON struct {
	Enabled     bool `json:"opcache_enabled"`
	CacheFull   bool `json:"cache_full"`
	MemoryUsage struct {
		Used   int64   `json:"used_memory"`
		Free   int64   `json:"free_memory"`
		Wasted int64   `json:"wasted_memory"`
		Pct    float64 `json:"current_wasted_percentage"`
	} `json:"memory_usage"`
	Interned struct {
		Buffer  int64 `json:"buffer_size"`
		Used    int64 `json:"used_memory"`
		Free    int64 `json:"free_memory"`
		Strings int64 `json:"number_of_strings"`
	} `json:"interned_strings_usage"`
	Stats struct {
		Scripts        int64   `json:"num_cached_scripts"`
		Keys           int64   `json:"num_cached_keys"`
		MaxKeys        int64   `json:"max_cached_keys"`
		Hits           int64   `json:"hits"`
		Misses         int64   `json:"misses"`
		HitRate        float64 `json:"opcache_hit_rate"`
		OOMRestarts    int64   `json:"oom_restarts"`
		HashRestarts   int64   `json:"hash_restarts"`
		ManualRestarts int64   `json:"manual_restarts"`
	} `json:"opcache_statistics"`
	JIT *struct {
		BufferSize int64 `json:"buffer_size"`
		BufferFree int64 `json:"buffer_free"`
	} `json:"jit"`
}

// ReadOpcache requests the status script at scriptPath from the pool at network/address.
func ReadOpcache(ctx context.Context, network, address, scriptPath string) (*Opcache, error) {
	params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: scriptPath, DocumentRoot: filepath.Dir(scriptPath)})
	status, body, stderr, err := fcgi.Get(ctx, network, address, params)
	if err != nil {
		return nil, fmt.Errorf("read opcache status from %s: %w", address, err)
	}
	if status != 200 {
		return nil, fmt.Errorf("opcache status script %s: status %d %s", scriptPath, status, textline.First(string(stderr)))
	}
	return parseOpcache(body)
}

func parseOpcache(body []byte) (*Opcache, error) {
	var raw opcacheJSON
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("opcache status: not the script's JSON (%v): %.200q", err, body)
	}
	o := &Opcache{Loaded: raw.Loaded, INI: raw.INI, RealpathUsed: raw.Realpath.Used, RealpathLimit: iniBytes(raw.Realpath.Limit)}
	if len(raw.Status) == 0 || string(raw.Status) == "false" || string(raw.Status) == "null" {
		return o, nil
	}
	var st opcacheStatusJSON
	if err := json.Unmarshal(raw.Status, &st); err != nil {
		return nil, fmt.Errorf("opcache status: %w", err)
	}
	o.Enabled, o.CacheFull = st.Enabled, st.CacheFull
	o.MemoryUsed, o.MemoryFree, o.MemoryWasted, o.WastedPct = st.MemoryUsage.Used, st.MemoryUsage.Free, st.MemoryUsage.Wasted, st.MemoryUsage.Pct
	o.InternedBuffer, o.InternedUsed, o.InternedFree, o.InternedStrings = st.Interned.Buffer, st.Interned.Used, st.Interned.Free, st.Interned.Strings
	s := st.Stats
	o.CachedScripts, o.CachedKeys, o.MaxCachedKeys = s.Scripts, s.Keys, s.MaxKeys
	o.Hits, o.Misses, o.HitRate = s.Hits, s.Misses, s.HitRate
	o.OOMRestarts, o.HashRestarts, o.ManualRestarts = s.OOMRestarts, s.HashRestarts, s.ManualRestarts
	if st.JIT != nil {
		o.JITBufferSize, o.JITBufferFree = st.JIT.BufferSize, st.JIT.BufferFree
	}
	return o, nil
}

// Warnings says what in the state costs requests: a full cache, keys or interned strings running out, a hit
// rate below 99%, restarts.
func (o *Opcache) Warnings() []string {
	if o == nil || !o.Enabled {
		return nil
	}
	var w []string
	if o.CacheFull {
		w = append(w, "opcache is full: scripts beyond it are compiled on every request; raise opcache.memory_consumption or opcache.max_accelerated_files")
	}
	total := o.MemoryUsed + o.MemoryFree + o.MemoryWasted
	if total > 0 && float64(o.MemoryFree) < 0.05*float64(total) && !o.CacheFull {
		w = append(w, fmt.Sprintf("opcache memory nearly full (%.1f MiB free of %.0f MiB): raise opcache.memory_consumption", float64(o.MemoryFree)/(1<<20), float64(total)/(1<<20)))
	}
	if o.MaxCachedKeys > 0 && float64(o.CachedKeys) > 0.9*float64(o.MaxCachedKeys) {
		w = append(w, fmt.Sprintf("opcache keys nearly used up (%d of %d): raise opcache.max_accelerated_files", o.CachedKeys, o.MaxCachedKeys))
	}
	if o.InternedBuffer > 0 && float64(o.InternedFree) < 0.05*float64(o.InternedBuffer) {
		w = append(w, fmt.Sprintf("interned strings buffer nearly full (%d KiB free of %d KiB): raise opcache.interned_strings_buffer", o.InternedFree>>10, o.InternedBuffer>>10))
	}
	if o.Hits+o.Misses > 0 && o.HitRate < 99 {
		w = append(w, fmt.Sprintf("opcache hit rate %.2f%% is below 99%% after warm-up: scripts are being compiled again", o.HitRate))
	}
	if o.OOMRestarts+o.HashRestarts > 0 {
		w = append(w, fmt.Sprintf("opcache restarted %d time(s) for lack of memory or keys", o.OOMRestarts+o.HashRestarts))
	}
	return w
}

// iniBytes reads an ini size such as 4096K, 16M or 1G (0 when unreadable).
func iniBytes(v string) int64 {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			v = v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n * mult
}

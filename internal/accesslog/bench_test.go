package accesslog

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// benchLog is an n-line combined log with request times: mostly pages with IDs and slugs, plus
// assets, searches, health checks, posts and errors, as a PHP site's log looks.
func benchLog(n int) []byte {
	rng := rand.New(rand.NewSource(1))
	var b bytes.Buffer
	for i := range n {
		method, status := "GET", 200
		var uri string
		switch k := rng.Intn(100); {
		case k < 30:
			uri = fmt.Sprintf("/post/%d", rng.Intn(5000))
		case k < 45:
			uri = fmt.Sprintf("/blog/some-article-title-%d", rng.Intn(300))
		case k < 55:
			uri = fmt.Sprintf("/search?q=term%d&page=%d", rng.Intn(1000), rng.Intn(5))
		case k < 75:
			uri = fmt.Sprintf("/assets/app.%x.js", rng.Intn(50))
		case k < 80:
			uri = "/healthz"
		case k < 85:
			method, uri = "POST", "/wp-admin/admin-ajax.php"
		case k < 90:
			uri, status = fmt.Sprintf("/missing/%d", i), 404
		default:
			uri = "/"
		}
		fmt.Fprintf(&b, `203.0.113.%d - - [10/Oct/2024:13:55:%02d +0000] "%s %s HTTP/1.1" %d %d "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36" %.3f`+"\n",
			rng.Intn(256), i%60, method, uri, status, rng.Intn(50000), rng.Float64()/10)
	}
	return b.Bytes()
}

func BenchmarkRead100k(b *testing.B) {
	const lines = 100_000
	data := benchLog(lines)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		m, err := ReadFrom(bytes.NewReader(data), "bench.log", Options{})
		if err != nil || m.Lines != lines {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "lines/s")
}

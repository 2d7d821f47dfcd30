package accesslog_test

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/accesslog"
)

func ExampleReadFrom() {
	log := `203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "GET /post/12 HTTP/1.1" 200 5123 "-" "Mozilla/5.0"
203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "GET /post/12 HTTP/1.1" 200 5123 "-" "Mozilla/5.0"
203.0.113.7 - - [10/Oct/2024:13:55:37 +0000] "GET /post/7 HTTP/1.1" 200 5123 "-" "Mozilla/5.0"
203.0.113.7 - - [10/Oct/2024:13:55:37 +0000] "GET /app.css HTTP/1.1" 200 900 "-" "Mozilla/5.0"
203.0.113.7 - - [10/Oct/2024:13:55:38 +0000] "GET /search?q=fpm HTTP/1.1" 200 5123 "-" "Mozilla/5.0"
`
	mix, err := accesslog.ReadFrom(strings.NewReader(log), "access.log", accesslog.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range mix.Routes {
		for _, e := range r.Examples {
			fmt.Printf("%s %s weight %d\n", r.Pattern, e.URI, e.Weight)
		}
	}
	// Output:
	// /post/{n} /post/12 weight 500
	// /post/{n} /post/7 weight 250
	// /search?q= /search?q=fpm weight 250
}

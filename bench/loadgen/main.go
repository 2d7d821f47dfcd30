// Command loadgen summarizes bench/loadgen.sh's rounds: each tool's CPU per request (median over the rounds)
// and, for each pair of tools measured in the same rounds, the ratio of their CPU per request with its 95%
// interval (internal/stats.Paired: the Hodges-Lehmann estimate of the rounds' log ratios, signed-rank interval;
// a round's two runs are neighbours in time, so the machine's load of the moment cancels in their ratio).
// Input lines: CONNECTIONS TOOL ROUND CPU_US_PER_REQUEST REQUESTS.
package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/stats"
)

// ratios are the pairs printed, numerator over reference, when both were measured.
var ratios = [][2]string{
	{"phptune", "wrk"},
	{"phptune-php", "wrk-php"},
	{"phptune-fcgi", "wrk-php"},
	{"phptune-fcgi", "phptune-php"},
	{"base", "wrk"},
	{"phptune", "base"},
	{"phptune-fcgi", "base-fcgi"},
	{"phptune", "ab"},
	{"k6", "phptune"},
}

type key struct {
	conns int
	tool  string
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: loadgen RESULTS")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	rows, order, err := read(bufio.NewScanner(f))
	if err != nil {
		return err
	}
	var conns []int
	for _, k := range order {
		if !slices.Contains(conns, k.conns) {
			conns = append(conns, k.conns)
		}
	}
	for _, c := range conns {
		printConns(c, rows, order)
	}
	return nil
}

// read parses the results: per connections and tool, CPU us per request by round.
func read(sc *bufio.Scanner) (map[key]map[int]float64, []key, error) {
	rows := map[key]map[int]float64{}
	var order []key
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		c, err1 := strconv.Atoi(f[0])
		r, err2 := strconv.Atoi(f[2])
		us, err3 := strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, nil, fmt.Errorf("bad line %q", sc.Text())
		}
		k := key{c, f[1]}
		if rows[k] == nil {
			rows[k] = map[int]float64{}
			order = append(order, k)
		}
		rows[k][r] = us
	}
	return rows, order, sc.Err()
}

func printConns(c int, rows map[key]map[int]float64, order []key) {
	fmt.Printf("%d connections: generator CPU per request (us), median of the rounds\n", c)
	for _, k := range order {
		if k.conns != c {
			continue
		}
		v := values(rows[k])
		fmt.Printf("  %-13s %7.2f  (%d rounds: %s)\n", k.tool, stats.Median(v), len(v), list(v))
	}
	for _, p := range ratios {
		a, b := rows[key{c, p[1]}], rows[key{c, p[0]}]
		ref, x := paired(a, b)
		if len(ref) < 2 {
			continue
		}
		cmp, err := stats.Paired(ref, x, 0.95)
		if err != nil {
			fmt.Printf("  %s/%s: %v\n", p[0], p[1], err)
			continue
		}
		fmt.Printf("  ratio %s/%s %.3f [%.3f, %.3f] (95%%, achieved %.0f%%, %d rounds)\n", p[0], p[1],
			1+cmp.Estimate, 1+cmp.Lo, 1+cmp.Hi, 100*cmp.ConfAchieved, cmp.N)
	}
}

// paired are the two tools' figures of the rounds that measured both.
func paired(a, b map[int]float64) (x, y []float64) {
	var rs []int
	for r := range a {
		if _, ok := b[r]; ok {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	for _, r := range rs {
		x, y = append(x, a[r]), append(y, b[r])
	}
	return x, y
}

func values(m map[int]float64) []float64 {
	var rs []int
	for r := range m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = m[r]
	}
	return v
}

func list(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(s, " ")
}

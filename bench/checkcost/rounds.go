package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// roundLog keeps each round as it completes, one line of tab-separated figures (without check: goodput,
// capacity; with it: goodput, capacity, check's CPU a second), appended, so that runs on different days pool
// into one interval (-from) and an interrupted run loses nothing.
type roundLog struct{ f *os.File }

// openRoundLog opens path for appending; an empty path keeps nothing.
func openRoundLog(path string) (*roundLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("-rounds-file: %w", err)
	}
	return &roundLog{f: f}, nil
}

func (l *roundLog) add(without, with figures) error {
	if l == nil {
		return nil
	}
	_, err := fmt.Fprintf(l.f, "%g\t%g\t%g\t%g\t%g\n", without.goodput, without.capacity, with.goodput, with.capacity, with.checkCPU)
	return err
}

func (l *roundLog) Close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}

// readRounds reads the rounds a roundLog kept.
func readRounds(path string) (without, with arm, err error) {
	f, err := os.Open(path)
	if err != nil {
		return without, with, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			return without, with, fmt.Errorf("%s:%d: want 5 figures, found %d", path, n, len(fields))
		}
		var v [5]float64
		for i, s := range fields {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil || v[i] < 0 {
				return without, with, fmt.Errorf("%s:%d: %q is not a figure", path, n, s)
			}
		}
		without.goodput, without.capacity = append(without.goodput, v[0]), append(without.capacity, v[1])
		with.goodput, with.capacity, with.cpu = append(with.goodput, v[2]), append(with.capacity, v[3]), append(with.cpu, v[4])
	}
	return without, with, sc.Err()
}

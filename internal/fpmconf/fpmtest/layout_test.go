package fpmtest

import "testing"

// TestDockerLayoutAsPHPFPMReadsIt: the official image's layout, laid out, is taken by php-fpm, and its dump
// shows the pool of www.conf with zz-docker.conf's listen (the last file read sets it), as in the image.
func TestDockerLayoutAsPHPFPMReadsIt(t *testing.T) {
	main, prefix := Docker(t).Lay(t)
	d := DumpOf(t, main, prefix)
	www, ok := d["www"]
	if !ok {
		t.Fatalf("no [www] pool in php-fpm's dump: %v", d)
	}
	if l := www["listen"]; len(l) == 0 || l[len(l)-1] != "9000" {
		t.Errorf("[www] listen %v, want zz-docker.conf's 9000", l)
	}
	if _, ok := Test(t, main, "", false); ok && prefix != "" {
		t.Errorf("the layout needs -p %s (its includes are relative to the prefix), yet php-fpm took it without", prefix)
	}
}

package k6

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
)

// Export writes script into dir as a test to run elsewhere: script.js (k6 run runs it as is), testrun.yaml (its
// k6-operator TestRun of n runners, Manifests) and collect.sh (Collect).
func Export(dir, name, script string, n int) error {
	files := []struct {
		name, data string
	}{{"script.js", script}, {"testrun.yaml", Manifests(name, script, n)}, {"collect.sh", Collect(name)}}
	for _, f := range files {
		if err := atomicfile.Save(filepath.Join(dir, f.name), []byte(f.data)); err != nil {
			return err
		}
	}
	return nil
}

// Manifests are the Kubernetes objects that run script as one k6-operator TestRun of n runners: the script in a
// ConfigMap, every runner writing its raw points to its standard output (its log), which Collect gathers.
func Manifests(name, script string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Written by phptune export k6: the test phptune would run, as a k6-operator TestRun of %d runners
# (https://github.com/grafana/k6-operator). kubectl apply -f testrun.yaml; when its runners have finished:
# sh collect.sh (their raw points into out/), then phptune ingest k6 out/*.json.
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  script.js: |
`, n, name)
	for _, l := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	fmt.Fprintf(&b, `---
apiVersion: k6.io/v1alpha1
kind: TestRun
metadata:
  name: %s
spec:
  parallelism: %d
  script:
    configMap:
      name: %s
      file: script.js
  # Each runner's raw points on its standard output, k6's log on stderr: collect.sh keeps them.
  arguments: --out json=- --quiet --no-summary --no-thresholds --log-output=stderr --no-usage-report
`, name, n, name)
	return b.String()
}

// Collect is a shell script that saves each finished runner's output of the TestRun name into out/.
func Collect(name string) string {
	return fmt.Sprintf(`#!/bin/sh
# Written by phptune export k6: saves each k6-operator runner's output (its raw points) into out/, for
# phptune ingest k6 out/*.json. The runners' pods must still exist (the TestRun without cleanup: post).
set -eu
mkdir -p out
pods=$(kubectl get pods -l k6_cr=%[1]s,runner=true -o name)
[ -n "$pods" ] || { echo "collect: no runner pods of TestRun %[1]s" >&2; exit 1; }
for p in $pods; do
	kubectl logs "$p" >"out/${p#pod/}.json"
done
echo "collect: $(echo "$pods" | wc -l) runner outputs in out/; next: phptune ingest k6 out/*.json --out result"
`, name)
}

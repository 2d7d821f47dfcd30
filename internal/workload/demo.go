package workload

import "github.com/phptune/phptune/workloads"

func demoPreset() *Preset {
	return &Preset{
		Name:     "demo",
		Summary:  "the bundled demo app (articles from JSON, templates, an API, a remote wait)",
		Front:    "index.php",
		Embedded: workloads.Demo(),
		// The listing, detail and API pages with their content markers, and the route that waits on a
		// "remote service".
		URLs: []URL{
			{Path: "/articles", Weight: 3, Marker: `phptune-demo:list`},
			{Path: "/articles/7", Weight: 3, Marker: `phptune-demo:detail`},
			{Path: "/api/articles", Weight: 2, Marker: `phptune-demo:api`},
			{Path: "/remote", Weight: 1, Marker: `phptune-demo:remote`},
		},
	}
}

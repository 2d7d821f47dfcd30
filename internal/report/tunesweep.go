package report

import "github.com/phptune/phptune/internal/tune"

// sweepModel is the saturation sweep as it is shown: one figure a load, the knee and the peak judged on them.
type sweepModel struct {
	Pool   int `json:"pool"`
	Trials int `json:"trials_a_point,omitempty"`
	// Knee is where throughput levels off: the fewest connections not shown below tune.KneeShare of the peak's.
	Knee   int          `json:"knee"`
	Peak   int          `json:"peak"`
	Points []sweepPoint `json:"points"`
	// Medians: the figures are the trials' medians (what the sweep judged its peak and knee on); else their
	// means, in results from before the medians were recorded.
	Medians bool `json:"medians"`
}

// sweepPoint is one load of the sweep: its figure, and the 95% interval of the trials' mean.
type sweepPoint struct {
	Conns  int     `json:"connections"`
	RPS    float64 `json:"rps"`
	Lo     float64 `json:"-"`
	Hi     float64 `json:"-"`
	Mean   float64 `json:"-"`
	P99Us  float64 `json:"-"`
	Errors int64   `json:"-"`
}

// sweepOf is s as shown (nil without a sweep): the medians where the result has them, as the peak is the point
// of the best median, so that the figure marked as the peak is the table's largest.
func sweepOf(s *tune.Saturation, trials int) *sweepModel {
	if s == nil || len(s.Points) == 0 {
		return nil
	}
	m := &sweepModel{Pool: s.Pool, Trials: trials, Knee: s.Knee, Peak: s.Peak}
	for _, p := range s.Points {
		m.Medians = m.Medians || p.Median > 0
	}
	for _, p := range s.Points {
		v := p.RPS
		if m.Medians {
			v = p.Median
		}
		m.Points = append(m.Points, sweepPoint{Conns: p.Concurrency, RPS: v, Lo: p.Lo, Hi: p.Hi, Mean: p.RPS, P99Us: p.P99Us, Errors: p.Errors})
	}
	return m
}

// figureWord is what a sweep point's figure is: "median" or "mean".
func (m *sweepModel) figureWord() string {
	if m.Medians {
		return "median"
	}
	return "mean"
}

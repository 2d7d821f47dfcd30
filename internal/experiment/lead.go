package experiment

// A lead that lasts the run: some figures read one arm ahead of the other by an amount that every round of a run
// shares, fresh stacks or not, and that differs from run to run. The gate's p99 at a fixed rate is one: in 303
// comparisons of a version against a copy of itself (docs/ci.md), the comparisons' means spread beyond what their
// rounds allow by 2.0 to 3.9% (2.7% pooled), and in one run four rounds on fresh stacks read the mix's p99 8.6 to
// 10.1% longer in NEW, and its p50 7.5% longer. The rounds' spread cannot show such a lead (it is the same in
// each), and more rounds only make it surer: read as the arms' effect, it is a false verdict. A sequence told its
// spread (Figure.LeadSD) allows for it as for a pair on one stack each (offsets.go): the mean moves with variance
// LeadSD², which a round's variance carries as LeadSD² n, so no interval is narrower than the lead allows however
// many rounds it holds.

// leadVariance is the variance a round carries for a lasting lead of spread sd over n rounds.
func leadVariance(sd float64, n int) float64 {
	return sd * sd * float64(n)
}

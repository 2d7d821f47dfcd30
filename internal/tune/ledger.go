package tune

import "sync"

// ledger is what the phases record for the result as they go: the trials and warnings (from a round's arms at
// once), the mix as checked, the knobs' rows with their comparisons, the screens, the budget's turns and the
// checks of the end. No phase reads or writes Result: finish assembles it from the ledger, once.
type ledger struct {
	mu       sync.Mutex
	trials   []TrialRecord
	warnings []string
	urls     []URL
	knobs    []*knobEntry
	screens  []Screen
	turns    []Turn
	headline *Headline
	soak     *Soak
	peak     *PeakCheck
	p99      *P99Check
}

// knobEntry is one knob's row with its comparisons: a race's, which its second looks replace; earlier are those
// of a race that was raced again from scratch, kept beside the new ones as what the first race showed.
type knobEntry struct {
	row     KnobRow
	earlier []Comparison
	comps   []Comparison
}

// addTrial records a trial.
func (l *ledger) addTrial(r TrialRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trials = append(l.trials, r)
}

// warn records a warning.
func (l *ledger) warn(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warnings = append(l.warnings, s)
}

// addKnob records a knob's row and its comparisons, in the order the result lists them, and returns the entry
// for a second look to update.
func (l *ledger) addKnob(row KnobRow, comps ...Comparison) *knobEntry {
	e := &knobEntry{row: row, comps: comps}
	l.knobs = append(l.knobs, e)
	return e
}

// rows are the knobs' rows and their comparisons, in the order they were recorded.
func (l *ledger) rows() ([]KnobRow, []Comparison) {
	var rows []KnobRow
	var comps []Comparison
	for _, e := range l.knobs {
		rows = append(rows, e.row)
		comps = append(comps, e.earlier...)
		comps = append(comps, e.comps...)
	}
	return rows, comps
}

// into puts what the ledger holds in res.
func (l *ledger) into(res *Result) {
	res.Trials, res.Warnings, res.URLs, res.Screens, res.Turns = l.trials, l.warnings, l.urls, l.screens, l.turns
	res.Knobs, res.Comparisons = l.rows()
	res.Headline, res.Soak, res.PeakCheck, res.P99Check = l.headline, l.soak, l.peak, l.p99
}

// Package experiment is phptune's one way to compare: arms measured in interleaved rounds, decided
// sequentially, within an error budget. tune uses it for every knob, the pool size and the final comparison.
//
// # Arms, rounds, orders
//
// An Arm starts (a warm stack), runs one trial at a time and stops. A round runs one trial of every arm still
// in, in a Williams order (every arm equally often in every position and after every other arm, so that drift
// and carry-over fall on all arms alike); the orders start over when an arm leaves. Trials of one round pair
// up: the comparisons work on the log ratio of two arms' figures in each round.
//
// # The decision rule: confidence sequences
//
// For each pair of arms the rounds' log ratios feed a confidence sequence for their mean (Sequence): an
// interval at every look that covers the true mean at all looks at once with probability 1 - alpha, so the
// comparison may stop at the first look that decides, however many looks it takes. It is the mixture (Bayes
// factor) martingale of the one-sample t-test with a normal prior of variance g on the standardised effect
// and the right-Haar prior on the scale (Lai 1976; Rouder et al. 2009 give the closed form; Perez-Ortiz,
// Lardy, de Heide and Grunwald 2024 show it is an e-process whatever the variance), inverted: the mean mu0 is
// outside the interval when the Bayes factor against mu0 reaches 1/alpha, and Ville's inequality bounds the
// chance that this ever happens to the true mean by alpha. Its interval has a closed form.
//
// Why this rule: rank tests cannot reach a small p with few pairs (the smallest two-sided signed-rank p is
// 2/2^n, so a 40% effect needed 10 pairs); a fixed number of pairs wastes rounds on large effects and is short on
// small ones; group-sequential designs fix the looks and the most rounds in advance, which a budget shared by
// races that end early does not allow. A confidence sequence needs neither, its p-value is valid at any stop,
// and the interval printed is the one the verdict was decided on. The price is width: at a look it is wider
// than a fixed-n t interval (about 1.6 times, at a few thousandths of alpha), which is paid for by stopping
// early. The model (normal log ratios) is checked by simulation on replayed real rounds, heavy tails and all
// (bench/engine): error rates, power and coverage are what the targets ask, not what the model promises.
//
// g = DefaultMixture was chosen by simulation: larger g decides large effects (opcache, the JIT: tens of
// standard deviations of a round) a round sooner, smaller g decides small effects in fewer rounds.
//
// # Verdicts
//
// A comparison of B against A is better when its interval excludes zero and its estimate is at least the
// minimum effect in B's favour, worse the other way, no_difference when the interval lies within +-MinEffect
// (an equivalence shown, as in TOST), and inconclusive when the experiment ended first (with the rounds that
// would have decided it at the spread seen). An arm that fails to start or in a trial gets error, never worse.
//
// # What a spread of rounds does not show
//
// Three things the confidence sequence's model (independent normal rounds) leaves out are allowed for. A figure
// that moves in steps (Observation.Step: a goodput trial of 30 requests moves in steps of 3%) is never given a
// spread below what rounding adds (step²/12 a figure, Sheppard), its interval is widened by what rounding may have
// biased the mean by (half a step unless the figure is shown to vary by half a step: rounding alone spreads a
// figure between two steps by up to half a step), and no verdict, nor Smallest's within, rests on rounds whose
// log ratios are all identical (quantize.go). A stack's own offset lasts its life,
// so rounds of one pair of stacks read it as the configurations' effect: given the spread of stacks' offsets
// (Spec.StackSD) and the stack each trial ran on (Observation.Stack), a pair's spread includes what the offsets
// of its stacks add (offsets.go). Failures are counted by trial, below.
//
// # Failures
//
// Failed requests are not served requests: an arm shown to fail more than another is worse, whatever its
// figure (OnErrors). Failures come in bursts (a stall times out every request in flight), so the unit is a
// trial with failures, not a request: among the rounds in which one arm's trial failed requests and the
// other's did not, each is either arm's with chance 1/2 when their failures are alike, whatever the bursts'
// sizes, and a sequential sign test (the Krichevsky-Trofimov mixture of binomial likelihood ratios, an
// e-process) shows which arm fails more. Failures cluster too: a stack may fail often for its whole life, so
// when told that stacks differ (StackSD) the unit is a block of rounds on one pair of stacks (its first round
// in which one arm failed alone); and a stall may outlast its trial and fail the next one run, in AB, BA order
// the same arm's, so a round that opens with the arm whose failing trial closed the round before does not count
// for that arm's pairs. A value that serves none of its requests in each of its first trials (blocks) while the
// other serves in all of them is shown at once: that has a chance of at most 4^-n whatever the rate of empty
// trials (7 at a knob's share of alpha; failures.go). A pair's alpha is spent once: three quarters on its
// sequences (split between the figures when there are two), a quarter on its failure tests. A verdict in favour
// of an arm that failed in two more rounds than its rival waits: failures take more rounds to show than a figure.
//
// # Races
//
// In a Race (irace's F-race, sequential) every arm runs in the same rounds; a challenger shown worse than another
// arm is dropped, and one shown within the minimum effect of the incumbent (Arms[0]) is dropped too (the
// incumbent keeps its place unless another arm is shown better); an incumbent shown worse stays as the reference
// until every challenger still in is decided against it; the race ends when one arm is left, or when the budget
// (Continue) or a futility rule (FutileAfter: no challenger's estimate a third of the minimum effect in its
// favour) ends it. An arm's interval against the incumbent is narrowed through a third arm when both links are
// decided the same way: the sum of the links' intervals bounds it whenever both hold. The tightest chain of the
// K-2 third arms is stated, so the narrowed interval holds at 2K-3 times a sequence's alpha (the direct sequence
// and two links through each third arm: three for three arms), which it states, with a p computed for the
// chain (2K-3 times the least level at which the direct interval or the chain excludes zero).
// Versus compares each arm with Arms[0] until each comparison is decided (on both figures, with Spec.Second).
// Smallest finds the first arm, in the order given, shown within the minimum effect of the best (smallest.go).
//
// # Two figures
//
// Spec.Second judges a second figure of the same trials (tune's final comparison: goodput at the load measured,
// and capacity, requests per CPU-second) by the same rule on the same rounds, each with its own interval and
// verdict (ArmResult.Vs2), the pair's alpha split between them: one error budget over both. In a race the
// second figure may be a guard (Figure.Guard, guard.go: tune's p99 beside goodput): a challenger shown worse on it
// than the incumbent leaves the race whatever its first figure, and one it leans against does not replace the
// incumbent while rounds remain.
//
// # One error budget
//
// A run's alpha (Budget) is shared by every pair of arms its experiments may compare: an experiment draws its
// share before it starts, split evenly over its pairs (all pairs in a race, each arm against the first in
// Versus). The union bound over pairs and experiments keeps the chance of any wrong verdict in the run within
// alpha, whatever the experiments decide and in whatever order; shares of experiments that do not run go to
// later ones. A comparison's P is its anytime-valid p-value; PAdjusted states it against the run's alpha, so a
// verdict is better or worse exactly when PAdjusted is below the run's alpha and the estimate reaches the
// minimum effect.
//
// # Replay
//
// Noise and Replay replay rounds recorded in real runs around planted effects, the way real runs are hard: in
// blocks of consecutive recorded rounds (drift, what a trial leaves to the next), each round's trials in the
// order they ran, each stack with an offset of its own (ReplayOptions.StackSD, which may exceed what the engine
// is told), failure bursts planted, clustered on failure-prone stacks and spilling into the next trial. Each
// arm's mean in its recorded experiment is taken out (the replay plants stacks' offsets itself). Duet rounds
// replay the noise of recorded duet rounds (their trials share the machine's noise, which alternating rounds'
// do not), each arm's slot drawn when the engine prepares it, in the round's order, so that a seed replays the
// same race whatever order the trials' goroutines run in. Simulated
// experiments, and simulated tune runs (tune.Simulate), take milliseconds each, which is how the error rates
// and power are shown (the tests, bench/engine). The noise files say which recorded runs chose the engine's
// parameters (Noise.Tuning); bench/engine reports its figures on the others (Noise.Held).
package experiment

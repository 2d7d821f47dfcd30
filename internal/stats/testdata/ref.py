#!/usr/bin/python3
"""Reference values for internal/stats tests, computed independently of the Go code.

Run with Debian's python3-scipy (scipy 1.10.1, numpy 1.24.2 on bookworm):

    apt-get install -y python3-scipy
    /usr/bin/python3 internal/stats/testdata/ref.py

Sources of each number:
  * p-values: scipy.stats.wilcoxon (method="exact" without ties/zeros; method="approx", correction=True,
    zero_method="wilcox" for n > 50) and scipy.stats.mannwhitneyu (method="exact" without ties;
    method="asymptotic", use_continuity=True for large samples). scipy's "exact" modes do not handle ties, so
    for small tied samples the exact conditional p-value is computed here by brute-force enumeration of all
    sign flips (paired) or all splits of the pooled mid-ranks (unpaired): two-sided = min(1, 2 min(lower,
    upper)).
  * Hodges-Lehmann estimates: numpy median of the Walsh averages (paired) or of all differences (unpaired).
  * Confidence intervals, untied data: by inverting scipy's test -- the interval is the range of shifts theta
    whose test (exact, or approx with continuity correction for large n) gives p > 1 - conf, evaluated at the
    midpoints between consecutive sorted Walsh averages / differences. This is a different route from the Go
    code's order-statistic formula. For tied data (where scipy's tests cannot be inverted exactly) the
    interval comes from the order-statistic formula with the critical value from brute-force enumeration (or
    the normal approximation for n > 50), and for untied data both routes are checked to agree here.
Data sets are given by integer formulas or literal lists shared with stats_ref_test.go. The R example data
(R's ?wilcox.test, from Hollander & Wolfe) are included because R's documented output is well known:
paired one-sided V = 40, p = 0.01953; two-sample one-sided W = 35, p = 0.1272.
"""
import itertools
import math

import numpy as np
from scipy import stats

CONF = 0.95
ALPHA = 1 - CONF


def logratio(a, b):
    # same as the Go code: +ln(max/min) or -ln(max/min)
    return [math.log(y / x) if y >= x else -math.log(x / y) for x, y in zip(a, b)]


def midranks(v):
    return stats.rankdata(v)


# ---------- brute-force exact distributions ----------

def signrank_exact_p(d):
    """Exact conditional two-sided p of the signed-rank test, zeros dropped, mid-ranks, by enumeration."""
    d = [x for x in d if x != 0]
    n = len(d)
    if n == 0:
        return 1.0
    r2 = [int(round(2 * x)) for x in midranks(np.abs(d))]
    t2 = sum(r for r, x in zip(r2, d) if x > 0)
    lower = upper = 0
    for signs in itertools.product((0, 1), repeat=n):
        s = sum(r for r, g in zip(r2, signs) if g)
        lower += s <= t2
        upper += s >= t2
    return min(1.0, 2 * min(lower, upper) / 2 ** n)


def signrank_crit_exact(n, conf):
    """k (1-based) with k-1 the largest t such that P(T+ <= t) <= (1-conf)/2, untied, by enumeration or
    by scipy's exact distribution for larger n; and the achieved coverage."""
    tail = (1 - conf) / 2
    if n <= 16:
        counts = np.zeros(n * (n + 1) // 2 + 1)
        for signs in itertools.product((0, 1), repeat=n):
            counts[sum(i + 1 for i, g in enumerate(signs) if g)] += 1
        pmf = counts / 2 ** n
    else:
        from scipy.stats._morestats import _get_wilcoxon_distr
        pmf = _get_wilcoxon_distr(n)
    cdf = np.cumsum(pmf)
    t = -1
    while t + 1 < len(cdf) and cdf[t + 1] <= tail * (1 + 1e-12):
        t += 1
    k = max(t + 1, 1)
    mass = cdf[k - 1]
    return k, 1 - 2 * mass


def signrank_crit_normal(n, conf):
    z = stats.norm.ppf(1 - (1 - conf) / 2)
    mu = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    k = math.floor(mu - z * sd - 0.5) + 1
    return k, 1 - 2 * stats.norm.cdf((k - 1 + 0.5 - mu) / sd)


def mwu_exact_p_ties(a, b):
    """Exact conditional two-sided p of Mann-Whitney on pooled mid-ranks, by enumerating all splits."""
    pooled = list(a) + list(b)
    r2 = [int(round(2 * x)) for x in midranks(pooled)]
    m, n = len(a), len(b)
    w2 = sum(r2[m:])
    lower = upper = total = 0
    for idx in itertools.combinations(range(m + n), n):
        s = sum(r2[i] for i in idx)
        lower += s <= w2
        upper += s >= w2
        total += 1
    return min(1.0, 2 * min(lower, upper) / total)


def mwu_crit_exact(m, n, conf):
    tail = (1 - conf) / 2
    from scipy.stats._mannwhitneyu import _mwu_state
    u = -1
    while _mwu_state.cdf(u + 1, m, n) <= tail * (1 + 1e-12):
        u += 1
    k = max(u + 1, 1)
    return k, 1 - 2 * float(_mwu_state.cdf(k - 1, m, n))


def mwu_crit_normal(m, n, conf):
    z = stats.norm.ppf(1 - (1 - conf) / 2)
    mu = m * n / 2
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    k = math.floor(mu - z * sd - 0.5) + 1
    return k, 1 - 2 * stats.norm.cdf((k - 1 + 0.5 - mu) / sd)


# ---------- HL and intervals ----------

def walsh(r):
    n = len(r)
    return np.sort([(r[i] + r[j]) / 2 for i in range(n) for j in range(i, n)])


def invert(sorted_vals, accept):
    """Interval from test inversion: accepted midpoints between consecutive sorted values."""
    v = sorted_vals
    mids = [(v[i] + v[i + 1]) / 2 for i in range(len(v) - 1) if v[i] < v[i + 1]]
    ok = [i for i, t in enumerate(mids) if accept(t)]
    lo_mid, hi_mid = mids[ok[0]], mids[ok[-1]]
    lo = max(x for x in v if x < lo_mid)
    hi = min(x for x in v if x > hi_mid)
    return lo, hi


def paired_ref(name, a, b, d=None, invert_mode=None):
    r = np.array(logratio(a, b) if d is None else d)
    n = len(r)
    nz = int(np.sum(r != 0))
    ties = len(set(np.abs(r[r != 0]))) < nz
    if nz <= 50:
        if not ties and nz == n:
            p = stats.wilcoxon(r, method="exact").pvalue
            src = "scipy wilcoxon exact"
        else:
            p = signrank_exact_p(r)
            src = "brute-force sign flips on mid-ranks"
    else:
        p = stats.wilcoxon(r, method="approx", correction=True, zero_method="wilcox").pvalue
        src = "scipy wilcoxon approx, correction=True, zero_method=wilcox"
    w = walsh(r)
    hl = float(np.median(w))
    k, ach = signrank_crit_exact(n, CONF) if n <= 50 else signrank_crit_normal(n, CONF)
    lo, hi = w[k - 1], w[len(w) - k]
    csrc = "order statistics, k=%d" % k
    if not ties and nz == n:
        mode = "exact" if n <= 50 else "approx"
        lo2, hi2 = invert(w, lambda t: stats.wilcoxon(r - t, method=mode, correction=True).pvalue > ALPHA)
        assert (lo2, hi2) == (lo, hi), (name, lo, hi, lo2, hi2)
        csrc += ", equal to inversion of scipy wilcoxon " + mode
    print("// %s: n=%d nonzero=%d ties=%s; p from %s; CI from %s" % (name, n, nz, ties, src, csrc))
    print('{name: "%s", p: %.17g, hl: %.17g, lo: %.17g, hi: %.17g, conf: %.17g},' % (name, p, hl, lo, hi, ach))


def unpaired_ref(name, a, b):
    m, n = len(a), len(b)
    pooled = list(a) + list(b)
    ties = len(set(pooled)) < m + n
    if m <= 50 and n <= 50:
        if not ties:
            p = stats.mannwhitneyu(b, a, method="exact").pvalue
            src = "scipy mannwhitneyu exact"
        else:
            p = mwu_exact_p_ties(a, b)
            src = "brute-force splits of mid-ranks (scipy asymptotic would give %.6g)" % (
                stats.mannwhitneyu(b, a, method="asymptotic", use_continuity=True).pvalue)
    else:
        p = stats.mannwhitneyu(b, a, method="asymptotic", use_continuity=True).pvalue
        src = "scipy mannwhitneyu asymptotic, use_continuity=True"
    la, lb = np.log(a), np.log(b)
    d = np.sort([y - x for y in lb for x in la])
    hl = float(np.median(d))
    k, ach = mwu_crit_exact(m, n, CONF) if (m <= 50 and n <= 50) else mwu_crit_normal(m, n, CONF)
    lo, hi = d[k - 1], d[len(d) - k]
    csrc = "order statistics, k=%d" % k
    if not ties:
        mode = "exact" if (m <= 50 and n <= 50) else "asymptotic"
        lo2, hi2 = invert(d, lambda t: stats.mannwhitneyu(lb - t, la, method=mode).pvalue > ALPHA)
        assert (lo2, hi2) == (lo, hi), (name, lo, hi, lo2, hi2)
        csrc += ", equal to inversion of scipy mannwhitneyu " + mode
    print("// %s: m=%d n=%d ties=%s; p from %s; CI from %s" % (name, m, n, ties, src, csrc))
    print('{name: "%s", p: %.17g, hl: %.17g, lo: %.17g, hi: %.17g, conf: %.17g},' % (name, p, hl, lo, hi, ach))


# ---------- data sets (keep in step with stats_ref_test.go) ----------

P1A = [1012, 987, 1043, 998, 1021, 1005, 979, 1030, 1016, 992]
P1B = [1049, 1003, 1061, 1040, 1019, 1052, 1010, 1041, 1068, 1015]
P2A = [100, 200, 105, 300, 100, 250, 120, 100, 400, 90, 110, 130]
P2B = [105, 210, 100, 300, 103, 260, 118, 97, 412, 95, 115, 133]
P3A = [100 * (1 + i % 3) for i in range(60)]
P3B = [100 * (1 + i % 3) + ((i * 7) % 13 - 4) * (1 + i % 3) for i in range(60)]
P4A = [10000 + (i * 7919) % 1009 for i in range(60)]
P4B = [10000 + (i * 104729) % 1013 + 150 for i in range(60)]
P5A = [5000 + (i * 7919) % 997 for i in range(30)]
P5B = [5060 + (i * 6007) % 991 for i in range(30)]
# R ?wilcox.test (Hollander & Wolfe): depression scale before (x) and after (y); differences x - y
RX = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
RY = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
RD = [x - y for x, y in zip(RX, RY)]
# R ?wilcox.test two-sample example: x normal subjects, y hospitalised
U1A = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
U1B = [1.15, 0.88, 0.90, 0.74, 1.21]
U2A = [31, 35, 35, 40, 42, 42, 42]
U2B = [35, 38, 42, 44, 44, 47, 50, 51]
U3A = [200 + (i * 37) % 41 for i in range(60)]
U3B = [205 + (i * 53) % 43 for i in range(55)]
U5A = [3000 + 2 * ((i * 389) % 401) for i in range(18)]
U5B = [3041 + 2 * ((i * 577) % 409) for i in range(22)]
U4A = [20000 + 2 * ((i * 7919) % 1009) for i in range(60)]
U4B = [20081 + 2 * ((i * 104729) % 1013) for i in range(70)]

print("// paired")
paired_ref("P1", P1A, P1B)
paired_ref("P2", P2A, P2B)
paired_ref("P3", P3A, P3B)
paired_ref("P4", P4A, P4B)
paired_ref("RD", None, None, d=RD)
print("// R: one-sided paired p = %.6g (R prints 0.01953)" % stats.wilcoxon(RD, alternative="greater", method="exact").pvalue)
paired_ref("P5", P5A, P5B)
print("// unpaired")
unpaired_ref("U1", U1A, U1B)
unpaired_ref("U2", U2A, U2B)
unpaired_ref("U3", U3A, U3B)
unpaired_ref("U4", U4A, U4B)
unpaired_ref("U5", U5A, U5B)
print("// R: one-sided two-sample p (x > y) = %.6g (R prints 0.1272)" % stats.mannwhitneyu(U1A, U1B, alternative="greater", method="exact").pvalue)
print("// exact signed-rank critical k for n = 6..50 at 0.95 (n: k)")
print("// " + " ".join("%d:%d" % (n, signrank_crit_exact(n, CONF)[0]) for n in range(6, 51)))

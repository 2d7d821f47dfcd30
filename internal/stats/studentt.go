package stats

import "math"

// TQuantile is Student's t distribution's p quantile with df degrees of freedom (p in (0, 1), df >= 1): the
// CDF from the regularized incomplete beta function, inverted by bisection (about 60 steps to 1e-12).
func TQuantile(p float64, df int) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		if m := (lo + hi) / 2; tCDF(m, df) < p {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t^2).
func tCDF(t float64, df int) float64 {
	v := float64(df)
	return 1 - 0.5*regIncBeta(v/2, 0.5, v/(v+t*t))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz's
// method), on the side where it converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range []float64{fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)), -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}

// FQuantile is the F distribution's p quantile with d1 and d2 degrees of freedom (p in (0, 1), both > 0): the
// CDF, I_x(d1/2, d2/2) at x = d1 f / (d1 f + d2), inverted by bisection as TQuantile is.
func FQuantile(p, d1, d2 float64) float64 {
	cdf := func(f float64) float64 { return regIncBeta(d1/2, d2/2, d1*f/(d1*f+d2)) }
	lo, hi := 0.0, 1.0
	for cdf(hi) < p {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		if m := (lo + hi) / 2; cdf(m) < p {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

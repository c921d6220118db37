package impair

import (
	"fmt"
	"math"
	"sync"
)

// Delay distribution tables, computed as iproute2's generators compute
// /usr/lib/tc/{normal,pareto,paretonormal}.dist (netem/normal.c,
// pareto.c, paretonormal.c, from NIST Net): each is an inverse CDF
// sampled at 4096 points, scaled by NETEM_DIST_SCALE. netem draws a
// uniform index into the table and adds table[i]*jitter/8192 to the
// delay. Computing them makes the tables independent of whether and
// where iproute2 installed its .dist files; a test compares them with
// the installed files where there are some.

const (
	distScale     = 8192  // NETEM_DIST_SCALE
	distTableSize = 16384 // TABLESIZE of the generators
)

var tables struct {
	sync.Once
	normal, pareto, paretoNormal []int16
}

// DistTable returns the table netem gets for d (nil for uniform).
func DistTable(d Distribution) ([]int16, error) {
	tables.Do(func() {
		inv := inverseNormal()
		tables.normal = normalTable(inv)
		tables.pareto = paretoTable()
		tables.paretoNormal = paretoNormalTable(inv)
	})
	switch d {
	case Uniform:
		return nil, nil
	case Normal:
		return tables.normal, nil
	case Pareto:
		return tables.pareto, nil
	case ParetoNormal:
		return tables.paretoNormal, nil
	}
	return nil, fmt.Errorf("no table for distribution %q", string(d))
}

// inverseNormal is normal.c's table: table[i] = the x whose normal CDF
// rounds to i/16384, found by walking x from -10 in steps of 0.00005 (the
// same accumulated float steps as the C loop).
func inverseNormal() []float64 {
	t := make([]float64, distTableSize+1)
	for x := -10.0; x < 10.05; x += .00005 {
		i := int(math.RoundToEven(distTableSize * (.5 + .5*math.Erf(x/math.Sqrt2))))
		t[i] = x
	}
	return t
}

func clampS16(v int) int16 { return int16(max(math.MinInt16, min(math.MaxInt16, v))) }

func normalTable(inv []float64) []int16 {
	out := make([]int16, 0, distTableSize/4)
	for i := 0; i < distTableSize; i += 4 {
		out = append(out, clampS16(int(math.RoundToEven(inv[i]*distScale))))
	}
	return out
}

// paretoValue is pareto.c's value for index i of 65536 (shape a = 3,
// shifted by 1.5 and scaled by 4/3 so the table has mean about 0).
func paretoValue(i int) int {
	d := 1.0 / math.Pow(float64(i)/65536, 1.0/3.0)
	d = (d - 1.5) * (4.0 / 3.0) * distScale
	if d > 32767 {
		d = 32767
	}
	return int(math.RoundToEven(d))
}

func paretoTable() []int16 {
	out := make([]int16, 0, 65536/16)
	for i := 65536; i > 0; i -= 16 {
		out = append(out, int16(paretoValue(i)))
	}
	return out
}

// paretoNormalTable is .25*normal + .75*pareto, with C's truncating
// integer division.
func paretoNormalTable(inv []float64) []int16 {
	out := make([]int16, 0, distTableSize/4)
	for i := 0; i < distTableSize; i += 4 {
		norm := int(math.RoundToEven(inv[i] * distScale))
		par := paretoValue(65536 - 4*i)
		out = append(out, clampS16((norm+3*par)/4))
	}
	return out
}

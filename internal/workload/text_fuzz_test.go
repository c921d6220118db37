package workload

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzNum: the drivers read every number of a tool's report with Num.
// A number the tool prints reads back as itself; text without a digit
// (a "-nan", an "n/a", a blank) is never a finite number, and a number
// out of float64's range is missing (NaN), not an infinity.
func FuzzNum(f *testing.F) {
	for _, s := range []string{"940.12", "0.000", "-nan", "n/a", "inf", "1e400", "-1e400", "4.2e-05", "12,345", " 7", "0x1p-2", ""} {
		f.Add(s, 1.5)
	}
	f.Add("", math.MaxFloat64)
	f.Add("", math.SmallestNonzeroFloat64)
	f.Fuzz(func(t *testing.T, s string, x float64) {
		for _, p := range []string{strconv.FormatFloat(x, 'f', -1, 64), strconv.FormatFloat(x, 'g', -1, 64)} {
			if Finite(x) && Num(p) != x {
				t.Errorf("%v printed %q reads as %v", x, p, Num(p))
			}
		}
		v := Num(s)
		if Finite(v) && !strings.ContainsAny(s, "0123456789") {
			t.Errorf("%q reads as the number %v", s, v)
		}
		if math.IsInf(v, 0) && !strings.Contains(strings.ToLower(s), "inf") {
			t.Errorf("%q reads as %v", s, v)
		}
	})
}

// FuzzClip: tool output quoted in an error is its start, n bytes at most
// and a "..." where it was cut.
func FuzzClip(f *testing.F) {
	f.Add("iperf3: error - unable to connect to server: Connection refused", 20)
	f.Add("short", 200)
	f.Add("", 0)
	f.Add("h\u00e9llo", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 {
			return // the drivers pass a constant
		}
		c := Clip(s, n)
		kept, cut := strings.CutSuffix(c, "...")
		if len(s) <= n && c != s || len(s) > n && (!cut || len(kept) != n || !strings.HasPrefix(s, kept)) {
			t.Errorf("Clip(%q, %d) = %q", s, n, c)
		}
	})
}

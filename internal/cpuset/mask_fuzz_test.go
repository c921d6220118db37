package cpuset

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseMask: rps_cpus and friends come from the kernel (or an agent
// on another machine). Whatever ParseMask accepts is a sorted set without
// duplicates, none above MaxCPU, that survives a round trip through Mask.
func FuzzParseMask(f *testing.F) {
	for _, s := range []string{"00000007", "0,0000000f", "ffffffff,00000000", " f\n", ",", "g", "1,,1",
		"1" + strings.Repeat(",00000000", 128), "80000000" + strings.Repeat(",0", 127), strings.Repeat("0,", 200) + "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, m string) {
		s, err := ParseMask(m)
		if err != nil {
			return
		}
		if !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != len(s) {
			t.Fatalf("ParseMask(%q) = %v: not a sorted set", m, s)
		}
		if len(s) > 0 && (s[0] < 0 || s[len(s)-1] > MaxCPU) {
			t.Fatalf("ParseMask(%q) = %v: a CPU outside 0-%d", m, s, MaxCPU)
		}
		back, err := ParseMask(s.Mask(0))
		if err != nil || !slices.Equal(back, s) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", m, s, s.Mask(0), back, err)
		}
	})
}

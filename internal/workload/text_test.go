package workload

import (
	"math"
	"testing"
)

func TestTextHelpers(t *testing.T) {
	if Num("1.5") != 1.5 || !math.IsNaN(Num("n/a")) {
		t.Error("Num")
	}
	if !Finite(1, 2) || Finite(1, math.NaN()) || Finite(math.Inf(1)) {
		t.Error("Finite")
	}
	if Clip("abcdef", 3) != "abc..." || Clip("ab", 3) != "ab" {
		t.Error("Clip")
	}
}

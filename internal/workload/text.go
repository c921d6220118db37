package workload

import (
	"math"
	"strconv"
)

// Helpers the drivers' parsers of tool output share.

// Num parses a number a tool printed; NaN when it is not one, so a
// missing or garbled field shows as missing rather than as zero.
func Num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// Finite reports whether every value is a real number.
func Finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Clip shortens tool output quoted in an error message to n bytes.
func Clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

package procs

import (
	"math"
	"testing"
)

// FuzzParseRSS: /proc/PID/status of a daemon; an accepted VmRSS is a
// finite, non-negative number of bytes.
func FuzzParseRSS(f *testing.F) {
	f.Add([]byte("Name:\tflanneld\nVmPeak:\t  1000 kB\nVmRSS:\t   12345 kB\nThreads:\t8\n"))
	f.Add([]byte("VmRSS:\t1 MB\n"))
	f.Add([]byte("VmRSS: NaN kB\n"))
	f.Add([]byte("VmRSS: -5 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseRSS(b)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
			t.Fatalf("ParseRSS(%q) = %v", b, v)
		}
	})
}

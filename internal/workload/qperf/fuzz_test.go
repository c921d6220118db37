package qperf

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseClient: any text gives a report with positive, finite latency
// and rate, or an error; never a panic.
func FuzzParseClient(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte(nil))
	}
	f.Add([]byte("tcp_lat:\n latency = 1,234.5 us\n msg_rate = 1.5 K/sec\n"), []byte("x"))
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		r, err := ParseClient(stdout, stderr)
		if err != nil {
			return
		}
		for _, v := range []float64{r.LatencySec, r.MsgRate, r.RTTUs(), r.TransactionsPerSec()} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("report %+v has a value %v", r, v)
			}
		}
	})
}

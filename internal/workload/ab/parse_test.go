package ab

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func read(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	r, err := Parse(read(t, "c4-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Concurrency != 4 || r.DocumentBytes != 1048576 || r.Complete <= 0 || r.Failed != 0 {
		t.Errorf("%+v", r)
	}
	if len(r.Percent) != 101 || r.Percent[50] <= 0 || r.Percent[100] < r.Percent[99] {
		t.Errorf("percentiles %v", r.Percent)
	}
	// Documented tolerance: transfer rate = requests/s x (body + headers);
	// headers are ~240 B on a 1 MiB body, so within 1%.
	if x := r.TransferBps / (r.RequestsPerSec * r.DocumentBytes * 8); math.Abs(x-1) > 0.01 {
		t.Errorf("transfer %v vs rps x body %v (ratio %v)", r.TransferBps, r.RequestsPerSec*r.DocumentBytes*8, x)
	}
	if c1, err := Parse(read(t, "c1-1M.txt")); err != nil || c1.Concurrency != 1 {
		t.Errorf("c1: %v %+v", err, c1)
	}
}

func TestParseNon2xx(t *testing.T) {
	r, err := Parse(read(t, "err-404.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Non2xx != r.Complete || r.Errors() != r.Complete {
		t.Errorf("non-2xx %v of %v", r.Non2xx, r.Complete)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		kind error
	}{{"err-refused.txt", ErrConnect}, {"err-timeout.txt", ErrTimeout}} {
		_, err := Parse(read(t, tc.file))
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v, want %v", tc.file, err, tc.kind)
		}
	}
	if _, err := Parse(nil); err == nil {
		t.Error("empty output parsed")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err == nil && !(r.Seconds > 0 && r.Complete > 0) {
			t.Errorf("accepted %+v", r)
		}
	})
}

func TestResultDropsEmptyDistribution(t *testing.T) {
	r, err := Parse(read(t, "c4-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	empty := *r
	empty.Percent = map[int]float64{50: 0, 99: 0, 100: 0}
	res := result([]*Report{r, &empty})
	if _, ok := res.PerReplica[1][MetricP99]; ok {
		t.Error("all-zero percentile table reported as latencies")
	}
	if res.Metrics[MetricP99] != r.Percent[99] {
		t.Errorf("trial p99 %v, want the one pair that has it: %v", res.Metrics[MetricP99], r.Percent[99])
	}
	if _, ok := res.PerReplica[0][MetricP99]; !ok || res.Series[0] == nil || res.Series[1] != nil {
		t.Errorf("per replica %v series %v", res.PerReplica, res.Series)
	}
}

package ab

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload"
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
	}{
		{"err-refused.txt", ErrConnect},
		// -r turns refusals into failed requests with nothing transferred.
		{"err-refused-r.txt", ErrConnect},
		{"err-timeout.txt", ErrTimeout},
		// -q: the error follows "(be patient)..." on the same line.
		{"timeout-c4-none.txt", ErrTimeout},
		// -c above the open-file limit: ab's socket() fails (EMFILE).
		{"err-files.txt", ErrOpenFiles},
	} {
		_, err := Parse(read(t, tc.file))
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v, want %v", tc.file, err, tc.kind)
		}
		if tc.kind == ErrTimeout && !strings.Contains(fmt.Sprint(err), "before any request completed") {
			t.Errorf("%s: %v does not say nothing completed", tc.file, err)
		}
	}
	if _, err := Parse(nil); err == nil {
		t.Error("empty output parsed")
	}
}

// The driver's own flags (-q -r -e /dev/stdout), read through a pipe:
// the CSV header follows "(be patient)..." on one line.
func TestParseQuiet(t *testing.T) {
	r, err := Parse(read(t, "c2-q-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.TimedOut || r.Complete != 1360 || r.Concurrency != 2 || r.Timeouts != 0 || len(r.Percent) != 101 {
		t.Errorf("%+v", r)
	}
}

// TestParseTimeout: ab gave up on a response after some requests had
// completed (nginx stopped with SIGSTOP mid-run, ab -s 1). Only the
// completed count is known; the rest stays unknown (NaN), not zero.
func TestParseTimeout(t *testing.T) {
	for file, want := range map[string]float64{"timeout-c4-partial.txt": 1329, "timeout-c1-partial.txt": 1060} {
		r, err := Parse(read(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !r.TimedOut || r.Complete != want || len(r.Percent) != 0 {
			t.Errorf("%s: %+v", file, r)
		}
		if !math.IsNaN(r.RequestsPerSec) || !math.IsNaN(r.TransferBps) || !math.IsNaN(r.MeanMs) {
			t.Errorf("%s: rates invented: %+v", file, r)
		}
		// The same output as a terminal shows it with 2>&1 (stderr first).
		b := read(t, file)
		i := bytes.Index(b, []byte("apr_pollset_poll"))
		swapped := append(append([]byte{}, b[i:]...), b[:i]...)
		if r2, err := Parse(swapped); err != nil || !r2.TimedOut || r2.Complete != want {
			t.Errorf("%s, stderr first: %v %+v", file, err, r2)
		}
	}
}

// TestResultCountsTimeouts: a pair that timed out reports its completed
// requests and its timeouts (in errors_count too) but no transfer rate,
// mean or percentiles; the trial sums counters over pairs and averages
// rates over the pairs that have them.
func TestResultCountsTimeouts(t *testing.T) {
	ok, err := Parse(read(t, "c4-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	to, err := Parse(read(t, "timeout-c4-partial.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// What runAB fills in for a timed-out run (it knows the wall time).
	to.Seconds, to.Timeouts, to.Concurrency, to.DocumentBytes = 3.5, 4, 4, 1<<20
	to.RequestsPerSec = to.Complete / to.Seconds
	res := result([]*Report{ok, to}, 0)
	p1 := res.PerReplica[1]
	if p1[MetricTimeouts] != 4 || p1[MetricErrors] != 4 || p1[MetricRequests] != 1329 || p1[MetricRPS] != 1329/3.5 {
		t.Errorf("timed-out pair %v", p1)
	}
	for _, m := range []string{MetricTransfer, MetricMean, MetricP50, MetricP99} {
		if _, has := p1[m]; has {
			t.Errorf("timed-out pair reports %s = %v", m, p1[m])
		}
	}
	if res.Series[1] != nil {
		t.Error("timed-out pair has a latency distribution")
	}
	if v, has := res.PerReplica[0][MetricTimeouts]; !has || v != 0 {
		t.Errorf("pair without timeouts: timeouts_count %v %v", v, has)
	}
	m := res.Metrics
	if m[MetricTimeouts] != 4 || m[MetricErrors] != ok.Errors()+4 || m[MetricRequests] != ok.Complete+1329 {
		t.Errorf("trial counters %v", m)
	}
	if want := (ok.RequestsPerSec + 1329/3.5) / 2; math.Abs(m[MetricRPS]-want) > 1e-9*want {
		t.Errorf("requests/s %v, want the mean of both pairs %v", m[MetricRPS], want)
	}
	if m[MetricTransfer] != ok.TransferBps || m[MetricP99] != ok.Percent[99] {
		t.Errorf("transfer %v p99 %v: want the pair that has them", m[MetricTransfer], m[MetricP99])
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("Benchmarking x (be patient)...Total of 7 requests completed\napr_pollset_poll: The timeout specified has expired (70007)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		switch {
		case !(r.Complete > 0) || !workload.Finite(r.Complete):
			t.Errorf("accepted %+v", r)
		case r.TimedOut && (len(r.Percent) != 0 || !math.IsNaN(r.RequestsPerSec)):
			t.Errorf("timed out but with numbers ab does not print then: %+v", r)
		case !r.TimedOut && !(r.Seconds > 0):
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
	res := result([]*Report{r, &empty}, 0)
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

// ab's top percentiles of a run of few requests index one past its
// table (real ab 2.3 output, 20 requests): a time-bounded run prints the
// zero of an unused record, an -n run whatever follows its table. They
// are the slowest request, as ab's 100 says; the percentiles below them
// are ab's as printed.
func TestParsePercentilesPastTheTable(t *testing.T) {
	for _, tc := range []struct {
		file          string
		p97, bad, top float64
	}{
		{"few-t2-c1.txt", 102.843, 0, 102.843},
		{"few-n20-c1.txt", 103.665, 0.257, 103.665},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw := read(t, tc.file)
			if !bytes.Contains(raw, fmt.Appendf(nil, "\n98,%.3f\n99,%.3f\n", tc.bad, tc.bad)) {
				t.Fatalf("fixture lacks ab's past-the-end percentiles 98,%.3f and 99,%.3f", tc.bad, tc.bad)
			}
			r, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if r.Complete != 20 || r.Percent[100] != tc.top || r.Percent[97] != tc.p97 {
				t.Fatalf("complete %v, p97 %v, p100 %v", r.Complete, r.Percent[97], r.Percent[100])
			}
			for _, p := range []int{98, 99} {
				if r.Percent[p] != tc.top {
					t.Errorf("p%d = %v, want the slowest request %v", p, r.Percent[p], tc.top)
				}
			}
			res := result([]*Report{r}, 0)
			if res.Metrics[MetricP99] != tc.top {
				t.Errorf("latency_p99_ms %v, want %v", res.Metrics[MetricP99], tc.top)
			}
			cdf := r.CDF()
			for i := 1; i < len(cdf); i++ {
				if cdf[i][0] < cdf[i-1][0] {
					t.Errorf("CDF falls at %v: %v after %v", cdf[i][1], cdf[i][0], cdf[i-1][0])
				}
			}
		})
	}
	// Enough requests: no index reaches the end, nothing is replaced.
	r, err := Parse(read(t, "c4-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	raw := read(t, "c4-1M.txt")
	if !bytes.Contains(raw, fmt.Appendf(nil, "\n99,%.3f\n", r.Percent[99])) || r.Percent[99] == r.Percent[100] {
		t.Errorf("p99 %v of %v requests changed (p100 %v)", r.Percent[99], r.Complete, r.Percent[100])
	}
}

package ab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

func TestSite(t *testing.T) {
	s, err := newSite("10.0.0.1:8080", 100000)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(s.Dir, "www", "body"))
	if err != nil || st.Size() != 100000 {
		t.Fatalf("body: %v %v", st, err)
	}
	conf, _ := os.ReadFile(filepath.Join(s.Dir, "nginx.conf"))
	for _, want := range []string{"listen 10.0.0.1:8080", "daemon off;", "pid " + s.Dir + "/nginx.pid", "access_log off;"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q", want)
		}
	}
	if got := strings.Join(s.argv("nginx"), " "); !strings.HasPrefix(got, "nginx -e "+s.Dir) {
		t.Errorf("argv %s", got)
	}
	if err := s.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Error("site directory left behind")
	}
}

func TestPlanAndArgv(t *testing.T) {
	d := New()
	tr := workload.Trial{Pairs: make([]workload.Pair, 1), Duration: 12 * time.Second, Warmup: 2 * time.Second,
		Spec: study.Workload{Tool: "ab", Size: "5M", Concurrency: []int{50}}}
	p, err := d.plan(tr)
	if err != nil {
		t.Fatal(err)
	}
	if p.size != 5<<20 || p.conc != 50 || p.warm != 2 || p.measured != 10 {
		t.Errorf("plan %+v", p)
	}
	got := strings.Join(d.abArgv(p, "http://10.0.0.1:8080/body", 10, p.requestLimit(10, true)), " ")
	if got != "ab -q -c 50 -t 10 -n 500000 -s 30 -r -e /dev/stdout http://10.0.0.1:8080/body" {
		t.Errorf("ab argv %s", got)
	}
	// A request count bounds the measured run, not the warm-up.
	tr.Spec.Requests = 2000
	if p, err = d.plan(tr); err != nil {
		t.Fatal(err)
	}
	if p.requestLimit(10, true) != 2000 || p.requestLimit(2, false) != 100000 {
		t.Errorf("ab -n measured %d, warm-up %d; want 2000 and 100000", p.requestLimit(10, true), p.requestLimit(2, false))
	}
	res := result([]*Report{{Complete: 1500}, {Complete: 2000}}, 2000)
	if res.Metrics[MetricTarget] != 4000 || res.Metrics[MetricRequests] != 3500 {
		t.Errorf("requests %v of target %v; want 3500 of 4000 (summed over pairs)", res.Metrics[MetricRequests], res.Metrics[MetricTarget])
	}
}

// TestRequestsBadInput: a request count below the concurrency (ab refuses
// -c above -n) or out of bounds is refused at its field.
func TestRequestsBadInput(t *testing.T) {
	const base = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: a}\nspec:\n  tunings: [baseline]\n" +
		"  replicas: [1]\n  duration: 3s\n  trials: 1\n  datapaths: [bridge]\n  workloads:\n"
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: []spec.Tool{New().Describe()}}
	for _, c := range []struct{ w, want string }{
		{"{tool: ab, concurrency: [1, 50], requests: 10}", "a.yaml:11: spec.workloads[0].concurrency[1]: 50 requests in flight is more than the 10 requests"},
		{"{tool: ab, requests: -1}", "spec.workloads[0].requests: requests must be between 1 and 10000000"},
	} {
		_, err := study.Parse("a.yaml", []byte(base+"    - "+c.w+"\n"), study.Options{}, cat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.w, err, c.want)
		}
	}
	if _, err := study.Parse("a.yaml", []byte(base+"    - {tool: ab, concurrency: [1, 50], requests: 500000}\n"), study.Options{}, cat); err != nil {
		t.Errorf("the paper's 500K requests: %v", err)
	}
}

package ab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
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
	got := strings.Join(d.abArgv(p, "http://10.0.0.1:8080/body", 10), " ")
	if got != "ab -q -c 50 -t 10 -n 500000 -s 30 -r -e /dev/stdout http://10.0.0.1:8080/body" {
		t.Errorf("ab argv %s", got)
	}
}

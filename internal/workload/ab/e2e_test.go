package ab

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestHTTPAcrossNodes fetches a 1 MiB body at concurrency 4 across two
// emulated nodes. Tolerance: ab's transfer rate counts headers too (~240
// B per 1 MiB response) and partial responses at the end, so it equals
// requests/s x body size within 2%.
func TestHTTPAcrossNodes(t *testing.T) {
	d := New()
	if err := d.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	_, pairs := workloadtest.Cluster(t, "flannel-vxlan", 1)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	tr := workload.Trial{Pairs: pairs, Spec: study.Workload{Tool: "ab", Protocol: "tcp", Size: "1M", Concurrency: []int{4}},
		Duration: 3 * time.Second, Warmup: time.Second, BasePort: 8080}
	res, err := d.Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	t.Logf("%v", m)
	if x := m[MetricTransfer] / (m[MetricRPS] * m[MetricBody] * 8); math.Abs(x-1) > 0.02 {
		t.Errorf("transfer %v bit/s vs requests/s x body %v (ratio %v)", m[MetricTransfer], m[MetricRPS]*m[MetricBody]*8, x)
	}
	if m[MetricBody] != 1<<20 || m[MetricErrors] != 0 || m[MetricConc] != 4 {
		t.Errorf("metrics %v", m)
	}
	if !(m[MetricP50] <= m[MetricP90] && m[MetricP90] <= m[MetricP99]) {
		t.Errorf("percentiles %v", m)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	if len(after) > len(before) {
		t.Errorf("nginx directories left behind: %v", after)
	}
}

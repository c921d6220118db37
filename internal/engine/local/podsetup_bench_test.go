package local

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/kerneltest"
)

// BenchmarkPodSetup measures the pod network set-up and teardown per pod
// (namespace + wiring, as PodTimes records them) with 1, 10 and 100 pods
// per node on a bridge datapath, wired by netlink and by the reference
// CNI plugins: the target is at most 5 ms per pod with netlink,
// flat from 1 to 100. A speed goal, so a benchmark and a documented run
// (docs/cni-compare.md), never a timed test:
//
//	go test -run '^$' -bench PodSetup -benchtime 1x ./internal/engine/local/
func BenchmarkPodSetup(b *testing.B) {
	kerneltest.RequireRoot(b)
	d, err := catalog.Lookup("bridge")
	if err != nil {
		b.Fatal(err)
	}
	kerneltest.RequireFeatures(b, d)
	for _, wiring := range []string{WiringNetlink, WiringCNI} {
		for _, n := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/pods=%d", wiring, n), func(b *testing.B) {
				var add, del []time.Duration
				for range b.N {
					cfg := Config{RunID: kerneltest.RunID(), Datapath: d, Wiring: wiring, Kill: cleanup.KillInNetns}
					cfg.Recorder = kerneltest.Journal(b, cfg.RunID)
					c, err := Up(context.Background(), cfg)
					if err != nil {
						b.Skipf("skipped: up bridge with wiring %s: %v", wiring, err)
					}
					if _, _, err := c.ScalePods(context.Background(), n); err != nil {
						c.Close()
						b.Fatal(err)
					}
					if _, _, err := c.ScalePods(context.Background(), 0); err != nil {
						c.Close()
						b.Fatal(err)
					}
					if err := c.Close(); err != nil {
						b.Fatal(err)
					}
					for _, pt := range c.PodTimes() {
						add, del = append(add, pt.Setup), append(del, pt.Teardown)
					}
				}
				b.ReportMetric(ms(quantile(add, 0.5)), "ms/pod-add")
				b.ReportMetric(ms(quantile(del, 0.5)), "ms/pod-del")
				b.ReportMetric(ms(quantile(add, 0.95)), "ms/pod-add-p95")
			})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

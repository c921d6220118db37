package report

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

var testCatalog = study.Catalog{
	Datapaths: []string{"calico-vxlan"},
	Tools:     registry.Tools(),
}

// synthRun describes the synthetic run directory: baseline and rfs+ at 1, 4
// and 16 replicas, 3 trials each, 4 CPUs shared by both nodes. It imitates
// the paper: at baseline core 3 takes the softirqs, rfs+ spreads them and
// gains 20% at 16 replicas. The study also lists rps, rps+ and rfs, which
// have no samples, so the report must show missing cells.
var (
	synthTunings  = []string{"baseline", "rfs+"}
	synthReplicas = []int{1, 4, 16}
)

const synthTrials, synthCPUs = 3, 4

// writeSyntheticRun writes the run through results.Writer, as a real run
// does, and returns the samples written.
func writeSyntheticRun(t testing.TB, dir string) []results.Sample {
	t.Helper()
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{"replicas=[1,4,16]", "trials=3"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	env := results.Env{
		Tool: "cnibench", Version: "test", RunID: "synthetic", Engine: "local", Hostname: "testhost",
		Kernel: "6.1.0-test", CPUModel: "Synthetic CPU", CPUs: synthCPUs, NUMANodes: 1, Started: t0,
		Tools:    map[string]string{"iperf3": "3.12"},
		NodeCPUs: map[string][]int{"server": {}, "client": {}},
		Notes:    []string{"synthetic data for tests"},
		Origin:   &results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--set", "replicas=[1,16]"}},
	}
	if err := w.WriteStudy(y); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEnv(env); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(scale float64) float64 { return (rng.Float64()*2 - 1) * scale }
	var out []results.Sample
	for _, reps := range synthReplicas {
		r := float64(reps)
		for trial := 1; trial <= synthTrials; trial++ {
			for _, tn := range synthTunings {
				gain := 1.0
				if tn == "rfs+" {
					gain = 1 + 0.2*(r-1)/15
				}
				br := 9e9 / r * gain * (1 + noise(0.02))
				smp := results.Sample{
					Cell:  results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: reps},
					Trial: trial, Start: t0, End: t0.Add(4 * time.Second),
					Metrics: map[string]float64{
						results.MetricBitrate: br, results.MetricBitrateSum: br * r, results.MetricRetransmits: float64(rng.IntN(20)),
					},
				}
				for cpu := range synthCPUs {
					idle, soft := 95-2.2*r, 1+0.3*r
					switch {
					case tn == "rfs+":
						idle, soft = 95-2.6*r, 1+r
					case cpu == 3:
						idle, soft = 95-4*r, 3+2.5*r
					}
					smp.Cores = append(smp.Cores, results.CoreStat{
						CPU: cpu,
						CPUPercent: results.CPUPercent{
							Idle: idle + noise(1), SoftIRQ: soft + noise(0.5), System: 2, User: 100 - idle - soft - 2,
						},
						NetRxPerSec: 500 * soft,
					})
				}
				if err := w.AppendSample(smp); err != nil {
					t.Fatal(err)
				}
				var pts []results.CPUPoint
				for _, c := range smp.Cores {
					pts = append(pts, results.CPUPoint{Cell: smp.Cell, Trial: trial, Time: t0, CPU: c.CPU, CPUPercent: c.CPUPercent})
				}
				if err := w.AppendCPU(pts); err != nil {
					t.Fatal(err)
				}
				out = append(out, smp)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func syntheticDir(t testing.TB) (string, []results.Sample) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	return dir, writeSyntheticRun(t, dir)
}

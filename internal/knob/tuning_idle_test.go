package knob

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// idleFS is a machine's host sysfs holding only its CPUs' idle states
// and PM QoS limits, by path.
type idleFS map[string]string

func newIdleFS(cpus cpuset.Set) idleFS {
	f := idleFS{}
	for _, c := range cpus {
		for i, lat := range []string{"0", "170"} {
			dir := fmt.Sprintf("%s/cpu%d/cpuidle/state%d", cpuidle.Dir, c, i)
			f[dir+"/latency"], f[dir+"/name"], f[dir+"/disable"] = lat, []string{"POLL", "C6"}[i], "0"
		}
		f[cpuidle.LimitPath(c)] = "0"
	}
	return f
}

func (f idleFS) Read(ns, fs, p string) (string, error) {
	if v, ok := f[p]; ok && ns == "" && fs == tune.FSSysfs {
		return v, nil
	}
	return "", fmt.Errorf("%s %s:%s: %w", ns, fs, p, os.ErrNotExist)
}

func (f idleFS) Write(ns, fs, p, v string) error {
	if _, err := f.Read(ns, fs, p); err != nil {
		return err
	}
	f[p] = v
	return nil
}

func (f idleFS) List(ns, fs, dir string) ([]string, error) {
	if path.Base(dir) == "queues" {
		// Every device has one receive queue, which a cpuIdle tuning
		// lists (tune.Plan) but does not write.
		return []string{"rx-0"}, nil
	}
	var out []string
	for p := range f {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok && ns == "" && fs == tune.FSSysfs {
			out = append(out, strings.SplitN(rest, "/", 2)[0])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, os.ErrNotExist)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// A cpuIdle tuning with side: both on emulated nodes whose ends have CPUs
// of their own bounds the server's CPUs and the client's, and the record
// (env.json "tunings", the report's table) names all four, once, as the
// host's: the client side's limits are not the server side's writes
// found again. Revert puts every limit back.
func TestTuningCPUIdleBothSidesRecorded(t *testing.T) {
	f := newIdleFS(cpuset.Range(4))
	j, err := journal.Open(t.TempDir(), "t", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	tu := study.Tuning{Name: "poll", Side: study.SideBoth, CPUIdle: &study.CPUIdle{}}
	kt := &Target{Cluster: fakeCluster{srv: &fakeNode{name: "srv", ns: "cnb-t-srv"}, cli: &fakeNode{name: "cli", ns: "cnb-t-cli"}},
		FS: func(engine.Node) tune.FS { return f }, Journal: j, Tuning: tu,
		SteerCPUs: cpuset.Set{0, 1}, ClientSteerCPUs: cpuset.Set{2, 3}}
	undo, err := applyTuning(context.Background(), kt)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		if got := f[cpuidle.LimitPath(c)]; got != "n/a" {
			t.Errorf("during the trial cpu%d's limit is %q, want n/a", c, got)
		}
	}
	want := []results.TuningSetting{{Where: results.WhereHost, Knob: path.Base(cpuidle.LimitPath(0)), Value: "n/a",
		Devices: []string{"cpu0", "cpu1", "cpu2", "cpu3"}, Found: []string{"0"}}}
	if fmt.Sprint(kt.Tuned) != fmt.Sprint(want) {
		t.Errorf("recorded %+v, want %+v", kt.Tuned, want)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		if got := f[cpuidle.LimitPath(c)]; got != "0" {
			t.Errorf("after the trial cpu%d's limit is %q, want 0 back", c, got)
		}
	}
}

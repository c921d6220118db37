package knob_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/sysfs"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelTuningSysctls: a tuning's sysctls on emulated nodes, for one
// trial: the global net.core.busy_read on the host, the per-namespace
// net.core.somaxconn in the server node's namespace and (pods: true) the
// measured pod's, the host's own somaxconn and the client node's left
// alone; after the trial every value is back.
func TestKernelTuningSysctls(t *testing.T) {
	const busy, somax = "net.core.busy_read", "net.core.somaxconn"
	kerneltest.RequireKernel(t, probe.Sysctl(busy), probe.Sysctl(somax))
	cl, pairs := workloadtest.Cluster(t, "bridge", 1)
	fs := tune.LocalFS{}
	read := func(ns, name string) string {
		t.Helper()
		v, err := fs.Read(ns, tune.FSProc, study.SysctlPath(name))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	srv, cli := cl.Server().Netns(), cl.Client().Netns()
	pod := cl.Server().PodIface(pairs[0].Server).Netns
	where := map[string]string{"host busy": "", "host somax": "", "server": srv, "client": cli, "pod": pod}
	before := map[string]string{}
	for k, ns := range where {
		name := somax
		if k == "host busy" {
			name = busy
		}
		before[k] = read(ns, name)
	}
	busyV, somaxV := next(before["host busy"], 50), next(before["server"], 1031)
	tu := study.Tuning{Name: "busy", Pods: true, Sysctls: map[string]string{busy: busyV, somax: somaxV}}
	tg := &knob.Target{Cluster: cl, FS: func(engine.Node) tune.FS { return fs }, Journal: kerneltest.Journal(t, kerneltest.RunID()), Tuning: tu,
		Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}, Measured: []engine.Pod{pairs[0].Server}}
	trial, err := knob.Apply(context.Background(), knob.Trial, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { trial.Revert() })
	// What the run records of it (env.json "tunings"): the global one on
	// the host, the other in the node and the pod, with what was there.
	recorded := fmt.Sprint(tg.Tuned)
	for _, want := range []string{
		fmt.Sprintf("{host %s %s [] [%s] false}", busy, busyV, before["host busy"]),
		fmt.Sprintf("{node %s %s [] [%s] false}", somax, somaxV, before["server"]),
		fmt.Sprintf("{pods %s %s [] [%s] false}", somax, somaxV, before["pod"]),
	} {
		if !strings.Contains(recorded, want) {
			t.Errorf("recorded settings %s lack %s", recorded, want)
		}
	}
	for k, want := range map[string]string{"host busy": busyV, "host somax": before["host somax"], "server": somaxV, "client": before["client"], "pod": somaxV} {
		name := somax
		if k == "host busy" {
			name = busy
		}
		if got := read(where[k], name); got != want {
			t.Errorf("during the trial, %s %s = %s, want %s", k, name, got, want)
		}
	}
	if err := trial.Revert(); err != nil {
		t.Fatal(err)
	}
	for k, want := range before {
		name := somax
		if k == "host busy" {
			name = busy
		}
		if got := read(where[k], name); got != want {
			t.Errorf("after the trial, %s %s = %s, want %s back", k, name, got, want)
		}
	}
}

// next is v+d as text, a value different from v.
func next(v string, d int) string {
	n, _ := strconv.Atoi(v)
	return strconv.Itoa(n + d)
}

// TestKernelTuningClientSide: side: client puts a per-namespace sysctl
// in the client node's namespace and (pods: true) the measured client's,
// leaving the server end alone; side: both puts it at both ends, and a
// global one once on the host. The record names each end (the host once,
// with the value found before the run, not the server side's), and after
// the trial every value is back.
func TestKernelTuningClientSide(t *testing.T) {
	const somax, budget = "net.core.somaxconn", "net.core.netdev_budget"
	kerneltest.RequireKernel(t, probe.Sysctl(somax), probe.Sysctl(budget))
	cl, pairs := workloadtest.Cluster(t, "bridge", 1)
	fs := tune.LocalFS{}
	where := map[string]string{
		"server node": cl.Server().Netns(), "server pods": cl.Server().PodIface(pairs[0].Server).Netns,
		"client node": cl.Client().Netns(), "client pods": cl.Client().PodIface(pairs[0].Client).Netns, "host": "",
	}
	read := func() map[string]string {
		out := map[string]string{}
		for k, ns := range where {
			v, err := fs.Read(ns, tune.FSProc, study.SysctlPath(somax))
			if err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		return out
	}
	before := read()
	v := next(before["client node"], 1033)
	budgetBefore, err := fs.Read("", tune.FSProc, study.SysctlPath(budget))
	if err != nil {
		t.Fatal(err)
	}
	for side, changed := range map[string][]string{
		study.SideClient: {"client node", "client pods"},
		study.SideBoth:   {"server node", "server pods", "client node", "client pods"},
	} {
		tu := study.Tuning{Name: "somax", Pods: true, Side: side, Sysctls: map[string]string{somax: v, budget: next(budgetBefore, 7)}}
		tg := &knob.Target{Cluster: cl, FS: func(engine.Node) tune.FS { return fs }, Journal: kerneltest.Journal(t, kerneltest.RunID()), Tuning: tu,
			Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client},
			Measured: []engine.Pod{pairs[0].Server}, MeasuredClients: []engine.Pod{pairs[0].Client}}
		trial, err := knob.Apply(context.Background(), knob.Trial, tg)
		if err != nil {
			t.Fatal(err)
		}
		during := read()
		var recorded []string
		for _, s := range tg.Tuned {
			if s.Knob == budget {
				if s.Where != results.WhereHost || strings.Join(s.Found, ",") != budgetBefore || s.Unchanged {
					t.Errorf("side %s: %s recorded %+v, want once on the host over %s", side, budget, s, budgetBefore)
				}
				continue
			}
			recorded = append(recorded, map[string]string{results.WhereNode: "server node", results.WherePods: "server pods",
				results.WhereClientNode: "client node", results.WhereClientPods: "client pods"}[s.Where])
		}
		if err := trial.Revert(); err != nil {
			t.Fatal(err)
		}
		for k := range where {
			want := before[k]
			if slices.Contains(changed, k) {
				want = v
			}
			if during[k] != want {
				t.Errorf("side %s: during the trial %s %s = %s, want %s", side, k, somax, during[k], want)
			}
		}
		if strings.Join(recorded, ",") != strings.Join(changed, ",") {
			t.Errorf("side %s: recorded at %v, want %v", side, recorded, changed)
		}
		if after := read(); !maps.Equal(after, before) {
			t.Errorf("side %s: after the trial %v, want %v", side, after, before)
		}
		if got, _ := fs.Read("", tune.FSProc, study.SysctlPath(budget)); got != budgetBefore {
			t.Errorf("side %s: after the trial %s = %s, want %s", side, budget, got, budgetBefore)
		}
	}
}

// TestKernelTuningCPUIdle: a cpuIdle tuning with side: both sets the PM
// QoS resume latency limit of the CPUs of both ends (on emulated nodes,
// this machine's; the server end the first half, the client end the
// rest, when there are two CPUs or more), so that while the trial lasts
// the CPUs idle in the polling state only; it records the limit once, as
// the host's, naming every CPU of both ends, and after the trial every
// limit is as it was.
func TestKernelTuningCPUIdle(t *testing.T) {
	kerneltest.RequireKernel(t, probe.CPUIdle)
	cl, pairs := workloadtest.Cluster(t, "bridge", 1)
	r := sysfs.Dir("/sys")
	cpus := cpuset.Range(runtime.NumCPU())
	limits := func() []string { return kerneltest.IdleLimits(t, cpus) }
	before := limits()
	kerneltest.RequireIdleBound(t)
	st0, _ := cpuidle.States(r, 0)
	tu := study.Tuning{Name: "poll", Side: study.SideBoth, CPUIdle: &study.CPUIdle{}}
	tg := &knob.Target{Cluster: cl, FS: func(engine.Node) tune.FS { return tune.LocalFS{} }, Journal: kerneltest.Journal(t, kerneltest.RunID()), Tuning: tu,
		Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client},
		Measured: []engine.Pod{pairs[0].Server}, MeasuredClients: []engine.Pod{pairs[0].Client},
		SteerCPUs: cpus[:max(1, len(cpus)/2)], ClientSteerCPUs: cpus[len(cpus)/2:]}
	trial, err := knob.Apply(context.Background(), knob.Trial, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { trial.Revert() })
	if got := limits(); slices.ContainsFunc(got, func(v string) bool { return v != "n/a" }) {
		t.Errorf("during the trial the limits are %v, want n/a (no resume latency) on every CPU", got)
	}
	// The governor keeps out of every state but polling: CPU 0's other
	// states are not entered while the limit holds.
	usage := func() (n int64) {
		for _, s := range cpuidle.Slower(st0, 0) {
			v, _ := r.Read(fmt.Sprintf("%s/cpu0/cpuidle/state%d/usage", cpuidle.Dir, s.Index))
			u, _ := strconv.ParseInt(v, 10, 64)
			n += u
		}
		return n
	}
	// The cores' idle time is polling now, and the sampler says so
	// (CoreStat.Poll), where /proc/stat calls it idle.
	smp := metrics.NewSampler("", time.Hour).WithIdle(r)
	if err := smp.Start(); err != nil {
		t.Fatal(err)
	}
	u0 := usage()
	time.Sleep(300 * time.Millisecond)
	u := usage()
	w, err := smp.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if u != u0 {
		t.Errorf("CPU 0 entered its slower idle states %d times under the limit", u-u0)
	}
	if c := w.Cores[0]; st0[0].Name != cpuidle.PollName {
		t.Logf("CPU 0's state0 is %s, not a polling state: no polling time to check", st0[0].Name)
	} else if c.Poll == nil {
		t.Error("CPU 0 polls under the limit, but the sampler measured no polling share")
	} else if *c.Poll < c.Idle/2 {
		t.Errorf("CPU 0 idled %.1f%% of the window under the limit, but the sampler's polling share is %.1f%%, want at least half of it", c.Idle, *c.Poll)
	}
	want := fmt.Sprintf("{host pm_qos_resume_latency_us n/a [%s]", strings.Join(slices.Sorted(slices.Values(cpuNames(cpus))), " "))
	if got := fmt.Sprint(tg.Tuned); !strings.Contains(got, want) || strings.Count(got, "pm_qos") != 1 {
		t.Errorf("recorded settings %s: want the limit once, the host's: %s", got, want)
	}
	if err := trial.Revert(); err != nil {
		t.Fatal(err)
	}
	if got := limits(); !slices.Equal(got, before) {
		t.Errorf("after the trial the limits are %v, want %v back", got, before)
	}
}
func cpuNames(cpus cpuset.Set) []string {
	out := make([]string, len(cpus))
	for i, c := range cpus {
		out[i] = "cpu" + strconv.Itoa(c)
	}
	return out
}

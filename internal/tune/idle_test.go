package tune

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// addIdle gives each CPU of cpus the states POLL (0 µs), C1 (2 µs) and
// C6 (170 µs), all enabled, and no PM QoS limit ("0"), in the host's
// sysfs.
func (f *fakeFS) addIdle(cpus cpuset.Set) {
	for _, c := range cpus {
		for i, lat := range []string{"0", "2", "170"} {
			dir := fmt.Sprintf("%s/cpu%d/cpuidle/state%d", cpuidle.Dir, c, i)
			f.vals[key("", FSSysfs, dir+"/latency")] = lat
			f.vals[key("", FSSysfs, dir+"/name")] = []string{"POLL", "C1", "C6"}[i]
			f.vals[key("", FSSysfs, dir+"/disable")] = "0"
		}
		f.vals[key("", FSSysfs, cpuidle.LimitPath(c))] = "0"
	}
}

func idleTuning(us int) study.Tuning {
	return study.Tuning{Name: "idle", CPUIdle: &study.CPUIdle{MaxExitLatency: study.Duration{Duration: time.Duration(us) * time.Microsecond}}}
}

// A cpuIdle tuning sets the PM QoS resume latency limit of each of the
// target's CPUs in the host's sysfs, and nothing else ("n/a" for a bound
// of 0); the record names the CPUs; Revert and a crashed run's replay
// put every limit back.
func TestIdlePlanApplyRevert(t *testing.T) {
	f, tgt := fixture()
	tgt.NodeNetns = nodeNS
	tgt.CPUs = cpuset.Set{1, 3}
	f.addIdle(cpuset.Range(4))
	plan, err := Plan(idleTuning(2), tgt, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{FS: FSSysfs, Path: cpuidle.LimitPath(1), Value: "2"}, {FS: FSSysfs, Path: cpuidle.LimitPath(3), Value: "2"}}
	if !slices.Equal(plan, want) {
		t.Fatalf("plan(2 µs) = %v, want %v", plan, want)
	}
	before := f.snapshot()
	j := openJournal(t)
	a, err := Apply(j, f, idleTuning(0), tgt)
	if err != nil {
		t.Fatal(err)
	}
	if f.get("", FSSysfs, cpuidle.LimitPath(3)) != "n/a" || f.get("", FSSysfs, cpuidle.LimitPath(0)) != "0" {
		t.Fatal("limit not set on the target's CPUs only")
	}
	got := a.Settings(tgt)
	wantSet := []results.TuningSetting{
		{Where: results.WhereHost, Knob: "pm_qos_resume_latency_us", Value: "n/a", Devices: []string{"cpu1", "cpu3"}, Found: []string{"0"}},
	}
	if !slices.EqualFunc(got, wantSet, func(a, b results.TuningSetting) bool {
		return a.Where == b.Where && a.Knob == b.Knob && a.Value == b.Value && slices.Equal(a.Devices, b.Devices) && slices.Equal(a.Found, b.Found)
	}) {
		t.Errorf("Settings = %+v\nwant %+v", got, wantSet)
	}
	if err := a.Revert(); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(f.snapshot(), before) {
		t.Fatal("Revert left a limit")
	}
	// A run killed while the states were disabled: cleanup's replay.
	if _, err := Apply(j, f, idleTuning(0), tgt); err != nil {
		t.Fatal(err)
	}
	r, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RevertReplayOutcomes(r, f, false); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(f.snapshot(), before) {
		t.Fatal("replay left a limit")
	}
}

// A CPU without idle states is the kernel lacking the knob, and a bound
// no enabled state exceeds is refused: the tuning would change nothing
// and be measured as if it did something.
func TestIdlePlanErrors(t *testing.T) {
	f, tgt := fixture()
	if _, err := Plan(idleTuning(0), tgt, f); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "no cpuidle states") {
		t.Errorf("no states: err = %v", err)
	}
	f.addIdle(tgt.CPUs)
	if _, err := Plan(idleTuning(170), tgt, f); err == nil || !strings.Contains(err.Error(), "no enabled idle state of CPUs 0-3 exits slower than 170 µs") {
		t.Errorf("nothing to disable: err = %v", err)
	}
}

// side: both on emulated nodes: the client side's Settings, given the
// server side's Applied, leave out the host writes the server side made
// too (the RFS table, the limit of a CPU both ends share), which found
// the server side's values, and keep the limits of the client's own
// CPUs, with the values the machine held: the record names every CPU
// bound, each with what was there before the run.
func TestIdleSettingsBothSides(t *testing.T) {
	f, srv := fixture()
	srv.NodeNetns, srv.CPUs = nodeNS, cpuset.Set{0, 1}
	f.addIdle(cpuset.Range(4))
	f.vals[key("", FSSysfs, cpuidle.LimitPath(2))] = "5"
	cli := Target{NodeNetns: "cnb-r-client", CPUs: cpuset.Set{1, 2, 3}, SoftIRQCore: -1,
		NodeWhere: results.WhereClientNode, PodsWhere: results.WhereClientPods}
	tu := idleTuning(0)
	tu.RFS = &study.RFS{SockFlowEntries: 4096, FlowCnt: 256}
	j := openJournal(t)
	as, err := Apply(j, f, tu, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Revert()
	ac, err := Apply(j, f, tu, cli)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Revert()
	got := results.MergeSettings(as.Settings(srv), ac.Settings(cli, as))
	host := func(knob, value string, devices, found []string) results.TuningSetting {
		return results.TuningSetting{Where: results.WhereHost, Knob: knob, Value: value, Devices: devices, Found: found}
	}
	node := []string{"cali0", "cali1", "eth1", "vxlan.calico"}
	same(t, got, []results.TuningSetting{
		host("net.core.rps_sock_flow_entries", "4096", nil, []string{"0"}),
		host("pm_qos_resume_latency_us", "n/a", []string{"cpu0", "cpu1", "cpu2", "cpu3"}, []string{"0", "5"}),
		{Where: results.WhereNode, Knob: "rps_flow_cnt", Value: "256", Devices: node, Found: []string{"0"}},
	})
	// On a cluster the ends are two machines: nothing is left out.
	cli.NodeNetns = ""
	if got := ac.Settings(cli, as); len(got) != 2 {
		t.Errorf("cluster client end: %+v, want its RFS table and its limits", got)
	}
}

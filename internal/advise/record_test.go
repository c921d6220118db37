package advise

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// envOf is the env.json a run on the fixture's machine would have
// written: what it records of the machine as a run records it.
func envOf(in *inspect.Inspection) results.Env {
	env := results.Env{Engine: "local", Hostname: "fixture", Kernel: in.Kernel + " #1 SMP", CPUs: in.CPUs, NUMANodes: in.NUMANodes,
		Sysctls:  map[string]string{},
		Steering: map[string]string{inspect.SysRPSSockFlowEntries: "error: no such file"}}
	for _, name := range []string{inspect.SysBusyRead, inspect.SysBusyPoll, inspect.SysRPSSockFlowEntries} {
		if v, ok := in.Sysctls[name]; ok {
			env.Sysctls[name] = strconv.FormatInt(v, 10)
		}
	}
	if in.CPUIdle != nil {
		c := *in.CPUIdle
		env.CPUIdle = &c
		if q := in.IdleQoS; q != nil {
			online, _ := cpuset.Parse(in.OnlineCPUs)
			if in.OnlineCPUs == "" {
				online = cpuset.Range(in.CPUs)
			}
			l := &results.IdleLimits{GlobalUS: q.GlobalUS, HaltPollNS: q.HaltPollNS, ResumeUS: map[int]int64{}}
			for _, cpu := range online {
				l.ResumeUS[cpu] = -1
				if us, ok := q.ResumeUS[cpu]; ok {
					l.ResumeUS[cpu] = us
				}
			}
			env.CPUIdle.Limits = l
		}
	}
	return env
}

// From a run's record (advise --no-inspect) a rule is decided as on the
// machine it recorded, or left out: never decided otherwise. Each
// fixture's machine, recorded as a run's env.json records it, gives
// every rule its status on the fixture or "left out"; the ones that read
// devices, netfilter or conntrack are left out even where the record's
// zeros would have made them "not applicable" (no overlay, no rules).
func TestRecordDecidesAsTheMachineOrLeavesOut(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	decided := map[string]bool{}
	for fixture, statuses := range want {
		rec := inspect.FromEnv("results/run", envOf(load(t, fixture)), true)
		for _, r := range rules {
			got := Evaluate(r, rec)
			if got.Status != LeftOut && got.Status != statuses[r.Name] {
				t.Errorf("%s: rule %s from the record is %s (%v), on the machine %s", fixture, r.Name, got.Status, got.Why, statuses[r.Name])
			}
			if got.Status == LeftOut && (len(got.Why) != 2 || !strings.Contains(got.Why[0], "--no-inspect") || !strings.HasPrefix(got.Why[1], "reads ")) {
				t.Errorf("%s: rule %s left out without saying why: %q", fixture, r.Name, got.Why)
			}
			decided[r.Name] = decided[r.Name] || got.Status != LeftOut
		}
	}
	// The rules a record decides; the others read the live machine.
	var names []string
	for _, n := range Names() {
		if decided[n] {
			names = append(names, n)
		}
	}
	if w := []string{"numa-placement", "busy-poll", "cpu-idle"}; !slices.Equal(names, w) {
		t.Errorf("rules a record decides: %v, want %v", names, w)
	}
	// numa-placement on 2 nodes is a candidate on the machine; from the
	// record its knob's NIC is unknown: left out, naming it.
	rs, _ := Lookup("numa-placement")
	if got := Evaluate(rs[0], inspect.FromEnv("results/run", envOf(load(t, "calico-vxlan-jumbo")), true)); got.Status != LeftOut || !strings.Contains(got.Why[1], "{nic") {
		t.Errorf("numa-placement on 2 nodes from a record: %s %q", got.Status, got.Why)
	}
}

// A run without env.json records nothing of its machine: every rule is
// left out, and the pages say why once.
func TestRecordWithoutEnv(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(rules, inspect.FromEnv("results/run", results.Env{}, false), time.Now())
	if len(rep.Candidates) != 0 || len(rep.Listed()) != 0 {
		t.Fatalf("candidates %v, listed %v: want every rule left out", rep.Candidates, rep.Listed())
	}
	if l := rep.LeftOutLine(); !strings.Contains(l, "the run has no env.json: rfs (reads ") {
		t.Errorf("left-out line %q", l)
	}
	if len(rep.Found) != 1 || !strings.Contains(rep.Found[0].Value, "which has no env.json") {
		t.Errorf("found %v: want the machine line alone", rep.Found)
	}
}

// A sysctl a record may hold but the run did not record (no tuning set
// busy polling) is unknown, saying so, as on a machine where it cannot be
// read: busy-poll is unknown, not left out and not decided on a zero.
// env.json's per-CPU limits (-1: none) become an inspection's (listed
// only where set), and their CPUs the online ones.
func TestFromEnv(t *testing.T) {
	n := int64(0)
	env := results.Env{Engine: "local", Hostname: "h", Kernel: "6.1.0-25-amd64 #1 SMP Debian", CPUs: 4, NUMANodes: 1,
		CPUIdle: &results.CPUIdle{Driver: "intel_idle", Governor: "menu", States: []results.IdleState{{Name: "POLL"}, {Name: "C6", LatencyUS: 133}},
			Limits: &results.IdleLimits{GlobalUS: nil, ResumeUS: map[int]int64{0: -1, 1: 0, 2: 50, 3: -1}, HaltPollNS: &n}},
		Sysctls: map[string]string{"client: net.core.busy_read": "0", inspect.SysBusyPoll: "error: denied"}}
	in := inspect.FromEnv("d", env, true)
	if in.Kernel != "6.1.0-25-amd64" || in.OnlineCPUs != "0-3" || in.CPUIdle.Limits != nil ||
		len(in.IdleQoS.ResumeUS) != 2 || in.IdleQoS.ResumeUS[1] != 0 || in.IdleQoS.ResumeUS[2] != 50 || in.IdleQoS.HaltPollNS != &n {
		t.Errorf("inspection %+v, qos %+v", in, in.IdleQoS)
	}
	for _, k := range []string{"cpu_dma_latency", "sysctl " + inspect.SysBusyRead, "sysctl " + inspect.SysBusyPoll} {
		if !strings.HasPrefix(in.Unknown[k], inspect.NotRecorded) {
			t.Errorf("unknown[%s] = %q: want it not recorded", k, in.Unknown[k])
		}
	}
	rs, _ := Lookup("busy-poll")
	if got := Evaluate(rs[0], in); got.Status != Unknown || !strings.Contains(strings.Join(got.Why, "; "), "not in the run's env.json") {
		t.Errorf("busy-poll: %s %q", got.Status, got.Why)
	}
}

// The facts and placeholders a record holds are facts and placeholders:
// a renamed one would leave its rules out without a word from the tests.
func TestRecordedNamesExist(t *testing.T) {
	for _, f := range recordedFacts {
		if _, ok := facts[f]; !ok {
			t.Errorf("recorded fact %q is no fact", f)
		}
	}
	for _, p := range recordedParams {
		if _, ok := params[p]; !ok {
			t.Errorf("recorded placeholder %q is no placeholder", p)
		}
	}
}

// A finding answered only by rules left out says so, naming them, as a
// finding answered by rules --rule left unevaluated does: never "no
// rule answers it", nor "no candidate here" on a rule not evaluated.
func TestRecordSightingLeftOut(t *testing.T) {
	rules, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(rules, inspect.FromEnv("results/run", envOf(load(t, "this-machine")), true), time.Now())
	rep.AddSightings("results/run", []Sighting{{Finding: FindingOneCore, Run: "results/run", Text: "2 of its 4 cells were bound by one core"}})
	s := rep.Seen[0]
	if !slices.Equal(s.LeftOut, []string{"rfs", "irq-spread"}) || len(s.NotBy) != 0 ||
		s.AnswerText() != "answered by rfs, irq-spread (left out: this machine was not inspected (--no-inspect), and the run's env.json does not record what it reads)" {
		t.Errorf("sighting %+v: %q", s, s.AnswerText())
	}
}

// A run that could not read its machine's NUMA nodes records 0 (the kube
// agent leaves the count out where the topology cannot be read): the
// count is unknown, never "fewer than 2" deciding numa-placement, nor "0
// NUMA node(s)" in the summary; a CPU count not recorded is unknown too.
func TestRecordNUMANodesNotRecorded(t *testing.T) {
	rs, _ := Lookup("numa-placement")
	for _, c := range []struct {
		cpus int
		want string
	}{{64, "64 on unknown NUMA node(s)"}, {0, "unknown on unknown NUMA node(s)"}} {
		in := inspect.FromEnv("d", results.Env{Engine: "kube", Hostname: "n", Kernel: "6.8.0", CPUs: c.cpus}, true)
		if !strings.HasPrefix(in.Unknown["numa_nodes"], inspect.NotRecorded) {
			t.Errorf("%d CPUs: unknown[numa_nodes] = %q: want it not recorded", c.cpus, in.Unknown["numa_nodes"])
		}
		got := Evaluate(rs[0], in)
		if why := strings.Join(got.Why, "; "); got.Status != Unknown || !strings.Contains(why, "unknown: "+inspect.NotRecorded) {
			t.Errorf("%d CPUs: numa-placement %s %q: want unknown, not recorded", c.cpus, got.Status, why)
		}
		if v := findingOf(recordSummary(in), "CPUs"); v != c.want {
			t.Errorf("%d CPUs: summary %q, want %q", c.cpus, v, c.want)
		}
	}
}

// A run whose env.json has no cpuidle (made before runs recorded it, or
// on a machine without a driver: the record cannot tell which) leaves
// how the CPUs idled unknown, saying the run did not record it, not
// describing the machine ("no cpuidle driver ... idle=poll would").
func TestRecordCPUIdleNotRecorded(t *testing.T) {
	in := inspect.FromEnv("d", results.Env{Engine: "local", Hostname: "h", Kernel: "6.1.0", CPUs: 8, NUMANodes: 1}, true)
	rs, _ := Lookup("cpu-idle")
	got := Evaluate(rs[0], in)
	if why := strings.Join(got.Why, "; "); got.Status != Unknown || !strings.Contains(why, "cpuidle unknown: "+inspect.NotRecorded) || strings.Contains(why, "idle=poll") {
		t.Errorf("cpu-idle: %s %q: want unknown, not recorded", got.Status, why)
	}
	if _, err := params["idle_states"](in); err == nil || !strings.Contains(err.Error(), "cpuidle unknown: "+inspect.NotRecorded) {
		t.Errorf("{idle_states}: %v: want cpuidle not recorded", err)
	}
	if v := findingOf(recordSummary(in), "CPU idle"); v != "unknown" {
		t.Errorf("summary: CPU idle %q, want unknown", v)
	}
}

// findingOf is the value of the finding named what ("" where none is).
func findingOf(f []Finding, what string) string {
	for _, x := range f {
		if x.What == what {
			return x.Value
		}
	}
	return ""
}

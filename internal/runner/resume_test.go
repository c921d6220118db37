package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
)

// TestResumeSameSetting: a run on a cluster records its server node's
// host, kernel and CPUs (the engine's Describe), not this machine's,
// and was refused on every resume for differing from this machine; it
// resumes, with the interrupted run's node put on record. Another
// engine or build is refused on any engine, saying how to resume; the
// local engine still refuses another machine.
func TestResumeSameSetting(t *testing.T) {
	node := results.Env{Engine: "stub", Version: version.Version, Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96,
		CPUModel: "Xeon", CNI: &results.CNI{Name: "flannel", Mode: "vxlan"}}
	// The kube run's node goes on record once the cluster is up and
	// its server node was checked (writeEnv), not before: a resume that
	// builds no cluster checked nothing.
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	remote := &run{engine: envEngine{}, plan: &plan{remote: true}, out: w, prevEnv: &node,
		study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}, opt: Options{Progress: progress.New(io.Discard)}}
	if err := remote.loadPrevious(&results.Run{Env: node}); err != nil {
		t.Fatalf("kube run resumed from another machine than its nodes: %v", err)
	}
	note := "server node was host worker-1, kernel 6.1.0-cluster, 96 CPUs, CNI flannel"
	for _, n := range remote.env.Notes {
		if strings.Contains(n, note) {
			t.Errorf("before its cluster is up, env notes %q claim the node was checked", remote.env.Notes)
		}
	}
	if err := remote.writeEnv(envCluster{}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(remote.env.Notes, func(n string) bool { return strings.Contains(n, note) }) {
		t.Errorf("notes %q, want the interrupted run's node on record", remote.env.Notes)
	}
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	if err := thisMachine(node, s); err == nil || !strings.Contains(err.Error(), `the run was made with host "worker-1"`) {
		t.Errorf("local run made on another host: %v, want refused", err)
	}
	here := envinfo.Collect(nil)
	same := results.Env{Engine: "stub", Version: version.Version, Hostname: here.Hostname, Kernel: here.Kernel, CPUs: here.CPUs, CPUModel: here.CPUModel}
	if err := thisMachine(same, s); err != nil {
		t.Errorf("local run on this machine: %v", err)
	}
	other := node
	other.Engine = "kube"
	if err := sameBuild(other, "stub"); err == nil || !strings.Contains(err.Error(), `engine "kube", this one would be "stub": resume it with the engine and flags it was started with (--engine kube)`) {
		t.Errorf("another engine: %v", err)
	}
	other = node
	other.Version = "dev-0123456789ab"
	if err := sameBuild(other, "stub"); err == nil || !strings.Contains(err.Error(), "cnibench version") {
		t.Errorf("another build: %v", err)
	}
}

// TestLockRunDir: a run directory is held by one process at a time (a
// second resume with another journal directory is refused, not let
// write the same samples.jsonl), and free again once released.
func TestLockRunDir(t *testing.T) {
	dir := t.TempDir()
	release, err := LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockRunDir(dir); !errors.Is(err, ErrRunDirBusy) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second lock: %v, want ErrRunDirBusy naming %s", err, dir)
	}
	release()
	again, err := LockRunDir(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the lock left %d entries in the run directory", len(entries))
	}
	if _, err := LockRunDir(filepath.Join(dir, "none")); err == nil {
		t.Error("a directory that does not exist locked")
	}
}

// TestResumeRefusesAnEditedStudy: a study.yaml changed after the run
// wrote it (a longer duration by hand) would append trials that do not
// compare with the kept ones; a run recorded before the sum was is not
// refused for it.
func TestResumeRefusesAnEditedStudy(t *testing.T) {
	written := []byte("spec: {duration: 10s}\n")
	old := &results.Run{Study: []byte("spec: {duration: 30s}\n"), Env: results.Env{StudySHA256: studySum(written)}}
	if _, err := sameStudy(old); err == nil || !strings.Contains(err.Error(), "study.yaml was changed after the run wrote it") {
		t.Errorf("edited study: %v, want refused", err)
	}
	old.Study = written
	if sum, err := sameStudy(old); err != nil || sum != old.Env.StudySHA256 {
		t.Errorf("study as written: %q, %v", sum, err)
	}
	old.Env.StudySHA256 = ""
	if _, err := sameStudy(old); err != nil {
		t.Errorf("a run without the sum: %v", err)
	}
}

// TestSameNode: a resumed cluster run whose cluster now has another
// server node or CNI is refused once the cluster is up; the same node,
// a run not resumed, and facts one side lacks pass.
func TestSameNode(t *testing.T) {
	was := results.Env{Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96, CNI: &results.CNI{Name: "flannel", Mode: "vxlan"}}
	if err := sameNode(nil, results.Env{Hostname: "other"}); err != nil {
		t.Errorf("not resumed: %v", err)
	}
	if err := sameNode(&was, was); err != nil {
		t.Errorf("same node: %v", err)
	}
	other := was
	other.Hostname = "worker-2"
	if err := sameNode(&was, other); err == nil || !strings.Contains(err.Error(), `server node host "worker-1", this cluster's is "worker-2"`) {
		t.Errorf("another node: %v", err)
	}
	// A refusal as of a resume before preflight (exit 2, no resume
	// hint), through the errors the run joins it with: before, a plain
	// error, which ended the run with exit 1 and the advice to resume.
	err := errors.Join(fmt.Errorf("round 3: %w", sameNode(&was, other)), errors.New("tear down bridge: gone"))
	if !IsResumeRefused(err) {
		t.Errorf("another node: %v is no resume refusal", err)
	}
	other = was
	other.CNI = &results.CNI{Name: "calico", Mode: "vxlan"}
	if err := sameNode(&was, other); err == nil || !strings.Contains(err.Error(), "CNI") {
		t.Errorf("another CNI: %v", err)
	}
	other.CNI = nil
	if err := sameNode(&was, other); err != nil {
		t.Errorf("CNI not detected now: %v", err)
	}
	// The image's tools and the node's CPU idle are held too.
	was.Tools = map[string]string{"go": "go1.24.0", "iperf3": "iperf 3.16"}
	was.CPUIdle = &results.CPUIdle{Driver: "intel_idle", Governor: "menu"}
	other = was
	other.Tools = map[string]string{"go": "go1.25.0", "iperf3": "iperf 3.17"}
	if err := sameNode(&was, other); !IsResumeRefused(err) || !strings.Contains(err.Error(), `tool iperf3 "iperf 3.16", this cluster's is "iperf 3.17"`) {
		t.Errorf("another iperf3 in the image: %v", err)
	}
	other = was
	other.CPUIdle = &results.CPUIdle{Driver: "intel_idle", Governor: "teo"}
	if err := sameNode(&was, other); !IsResumeRefused(err) || !strings.Contains(err.Error(), `server node CPU idle "driver intel_idle, governor menu", this cluster's is "driver intel_idle, governor teo"`) {
		t.Errorf("another idle governor: %v", err)
	}
	was.Tools, was.CPUIdle = nil, nil
	// A node its agent could not describe has blank facts (CPU count
	// 0), which hold the other run to nothing, either way round.
	blank := results.Env{CNI: was.CNI}
	if err := sameNode(&was, blank); err != nil {
		t.Errorf("node not described now: %v", err)
	}
	if err := sameNode(&blank, was); err != nil {
		t.Errorf("node not described in the interrupted run: %v", err)
	}
	if n := remoteResumeNote(blank); !strings.Contains(n, "host unknown, kernel unknown, unknown CPUs") {
		t.Errorf("resume note %q: want the blank facts said unknown", n)
	}
}

// TestResumeRefusedBeforePreflight: --resume of a run whose study.yaml
// was edited, or made by another build, is refused before the engine's
// preflight, whose probes load modules (ipip adds tunl0 to the host): it
// was refused only after them, having changed the host.
func TestResumeRefusedBeforePreflight(t *testing.T) {
	var needs engine.Needs
	saved := engines
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"stub", func(Options) engine.Engine { return stubEngine{needs: &needs} }})
	t.Cleanup(func() { engines = saved })
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	for _, tc := range []struct {
		name string
		env  results.Env
		want string
	}{
		{"edited study", results.Env{Engine: "stub", Version: version.Version, StudySHA256: studySum([]byte("spec: {duration: 10s}\n"))}, "study.yaml was changed"},
		{"another build", results.Env{Engine: "stub", Version: "dev-0123456789ab"}, "cnibench version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needs = engine.Needs{}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, results.StudyFile), []byte("spec: {duration: 30s}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(tc.env)
			if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, results.SamplesFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), Options{Study: s, OutDir: dir, Resume: true, Engine: "stub", MachineLocked: true,
				Progress: progress.New(io.Discard)})
			if !IsPreflight(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resume = %v; want a preflight refusal saying %q", err, tc.want)
			}
			if needs.Datapaths != nil || needs.Knobs != nil {
				t.Errorf("the engine's preflight ran (given %d datapaths, %d knobs) before the refusal", len(needs.Datapaths), len(needs.Knobs))
			}
		})
	}
}

// TestResumeLocalRefusedBeforePreflight: on the local engine, --resume
// of a run made on another machine (here another host), or whose
// samples.jsonl counts a trial twice, is refused before the engine's
// preflight, whose probes load modules. Both were refused only after
// it (loadPrevious), having maybe changed the host.
func TestResumeLocalRefusedBeforePreflight(t *testing.T) {
	var probed bool
	saved := engines
	engines = []struct {
		name string
		new  func(Options) engine.Engine
	}{{localEngine, func(Options) engine.Engine { return localStub{probed: &probed} }}}
	t.Cleanup(func() { engines = saved })
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	here := envinfo.Collect(nil)
	this := results.Env{Engine: localEngine, Version: version.Version, Hostname: here.Hostname, Kernel: here.Kernel, CPUModel: here.CPUModel, CPUs: here.CPUs}
	elsewhere := this
	elsewhere.Hostname = here.Hostname + "-elsewhere"
	// This machine's iperf3 is a script saying its version; the
	// interrupted run measured with another.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "iperf3"), []byte("#!/bin/sh\necho 'iperf 3.99 (test)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	oldTool := this
	oldTool.Tools = map[string]string{"go": "go1.0", "iperf3": "iperf 3.16"}
	trial, _ := json.Marshal(results.Sample{Cell: results.Cell{Datapath: "bridge", Workload: "tcp", Tuning: "baseline", Replicas: 1},
		Trial: 1, Attempt: 1, Metrics: map[string]float64{results.MetricBitrate: 1e9}})
	twice := append(append(trial, '\n'), append(trial, '\n')...)
	for _, tc := range []struct {
		name    string
		env     results.Env
		samples []byte
		want    string
	}{
		{"another machine", elsewhere, nil, `the run was made with host "` + elsewhere.Hostname + `"`},
		{"another iperf3", oldTool, nil, `the run was made with tool iperf3 "iperf 3.16", this one would be "iperf 3.99 (test)"`},
		{"a trial counted twice", this, twice, "bridge/tcp/baseline/r1 trial 1 is counted twice in " + results.SamplesFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed = false
			dir := t.TempDir()
			b, _ := json.Marshal(tc.env)
			for name, data := range map[string][]byte{results.StudyFile: []byte("spec: {duration: 30s}\n"), results.EnvFile: b, results.SamplesFile: tc.samples} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Run(context.Background(), Options{Study: s, OutDir: dir, JournalDir: t.TempDir(), Resume: true, MachineLocked: true,
				Progress: progress.New(io.Discard)})
			if !IsPreflight(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resume = %v; want a preflight refusal saying %q", err, tc.want)
			}
			if probed {
				t.Error("the engine's preflight ran before the refusal")
			}
		})
	}
}

// TestUnnamedBuild: resuming with a version that does not name one build
// says so; a clean build's resume says nothing.
func TestUnnamedBuild(t *testing.T) {
	if n := unnamedBuild("dev-0123456789ab", "dev-0123456789ab"); n != "" {
		t.Errorf("clean build: %q", n)
	}
	for _, v := range []string{"dev", "dev-0123456789ab-dirty"} {
		if n := unnamedBuild(v, v); !strings.Contains(n, "does not name one build") || !strings.Contains(n, v) {
			t.Errorf("%s: %q", v, n)
		}
	}
}

// TestResumeKeepsEnvRecord: the resumed run's env.json keeps what the
// interrupted run's recorded. Its notes: the skips of datapaths (env.json
// alone has them, and the resumed run's preflight skips none, its
// study.yaml listing only the datapaths that ran, so summary.md's "Not
// run here" list went empty), its warnings and the note of an earlier
// resume; a note this run makes again is not doubled. And its datapaths'
// facts: an interleaved run cut in its last round after datapath bridge
// finished builds only b2 again, and bridge's facts, which compare
// reads, were dropped; b2's are this run's. A warning the interrupted
// run's notes hold is still said to this run's operator when a trial
// gives it again, and not doubled in env.json.
func TestResumeKeepsEnvRecord(t *testing.T) {
	skipA := "datapath calico-wp-ipip skipped: kernel module ipip is not available"
	skipB := "datapaths weave, kube-router skipped: no br_netfilter"
	warn := "tuning rps-7 changes nothing on this machine"
	resumedBefore := "resumed: 3 counted trials kept from run r0 (started 2026-01-01 00:00:00 UTC)"
	here := envinfo.Collect(nil) // the same node as this run's
	old := &results.Run{Env: results.Env{Engine: "stub", Version: version.Version, RunID: "r1", CPUs: here.CPUs,
		Notes:     []string{warn, skipA, skipB, resumedBefore},
		Datapaths: map[string]results.DatapathEnv{"bridge": {Type: "bridge", PodMTU: 1500}, "b2": {Type: "bridge", PodMTU: 1400}}}}
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var log bytes.Buffer
	r := &run{engine: envEngine{}, plan: &plan{remote: true, notes: []string{skipB}}, out: w,
		study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}, opt: Options{Progress: progress.New(&log)}}
	if err := r.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	r.notes = append(r.notes, r.plan.notes...) // as execute adds them
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatal(err)
	}
	if err := r.recordDatapath("b2", results.DatapathEnv{Type: "bridge", PodMTU: 9000}); err != nil {
		t.Fatal(err)
	}
	if err := r.warnOnce([]string{warn}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "warning: "+warn) {
		t.Errorf("log %q: want the repeated warning said", log.String())
	}
	b, err := os.ReadFile(filepath.Join(w.Dir(), results.EnvFile))
	if err != nil {
		t.Fatal(err)
	}
	var got results.Env
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{warn, skipA, skipB, resumedBefore, r.resumed} {
		if c := slices.Index(got.Notes, n); c < 0 || slices.Contains(got.Notes[c+1:], n) {
			t.Errorf("env.json's notes %q: want %q once", got.Notes, n)
		}
	}
	if g := results.SkippedOf(got.Notes); len(g) != 3 {
		t.Errorf("env.json lists %d skipped datapaths, want 3: %+v", len(g), g)
	}
	if got.Datapaths["bridge"].PodMTU != 1500 || got.Datapaths["b2"].PodMTU != 9000 {
		t.Errorf("env.json's datapaths %+v: want bridge's as the interrupted run recorded, b2's as this run built it", got.Datapaths)
	}
}

// envEngine reads 0 everywhere and lists nothing, for writeEnv.
type envEngine struct{ stubEngine }

func (envEngine) FS(engine.Node) tune.FS { return envFS{} }

type envFS struct{ tune.FS }

func (envFS) Read(string, string, string) (string, error)   { return "0", nil }
func (envFS) List(string, string, string) ([]string, error) { return nil, nil }

// envCluster's nodes are one node without a tunnel.
type envCluster struct{ engine.Cluster }

func (envCluster) Server() engine.Node { return envNode{} }
func (envCluster) Client() engine.Node { return envNode{} }

type envNode struct{ engine.Node }

func (envNode) Name() string                { return "server" }
func (envNode) Netns() string               { return "server" }
func (envNode) Underlay() netns.Iface       { return netns.Iface{Name: "eth1", Netns: "server"} }
func (envNode) Tunnel() (netns.Iface, bool) { return netns.Iface{}, false }

// TestSharedSettings: a resume holds the interrupted run to how the CPUs
// idle and to each tool's version, as compare counts them among what
// moves numbers; before, a resume checked neither, and env.json took
// the new values for a mix of old and new trials. What one run did not
// record (a run before cpuidle was kept, a tool that printed no
// version) is unknown and holds the other to nothing; go is cnibench's
// toolchain, which the version check covers.
func TestSharedSettings(t *testing.T) {
	menu := &results.CPUIdle{Driver: "intel_idle", Governor: "menu", States: []results.IdleState{{Name: "C6", LatencyUS: 85}}}
	was := results.Env{CPUIdle: menu, Tools: map[string]string{"go": "go1.24.0", "iperf3": "iperf 3.16", "sockperf": "sockperf 3.10"}}
	for _, tc := range []struct {
		name string
		is   results.Env
		want string
	}{
		{"the same", results.Env{CPUIdle: menu, Tools: map[string]string{"go": "go1.24.0", "iperf3": "iperf 3.16", "sockperf": "sockperf 3.10"}}, ""},
		{"another go", results.Env{CPUIdle: menu, Tools: map[string]string{"go": "go1.25.0", "iperf3": "iperf 3.16"}}, ""},
		{"unknown now", results.Env{Tools: map[string]string{"iperf3": ""}}, ""},
		{"another sockperf", results.Env{CPUIdle: menu, Tools: map[string]string{"sockperf": "sockperf 3.11"}},
			`the run was made with tool sockperf "sockperf 3.10", this one would be "sockperf 3.11": its trials would not compare`},
		{"a state disabled", results.Env{CPUIdle: &results.CPUIdle{Driver: "intel_idle", Governor: "menu",
			States: []results.IdleState{{Name: "C6", LatencyUS: 85, Disabled: true}}}},
			`the run was made with CPU idle "driver intel_idle, governor menu; states (exit latency): C6 (85 µs)", this one would be ` +
				`"driver intel_idle, governor menu; states (exit latency): C6 (85 µs) disabled"`},
	} {
		err := firstDiffering(was, sharedSettings("", was, tc.is))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestResumeRefusesOtherBridgeNetfilter: a resumed run whose datapath,
// once built, passes its bridged frames through iptables where the
// interrupted run's did not (br_netfilter loaded since) is refused
// there, before any of its trials, as a resume refusal (exit 2), and
// env.json keeps the interrupted run's value; before, it went on and
// recorded the new value for old and new trials alike.
func TestResumeRefusesOtherBridgeNetfilter(t *testing.T) {
	s := parseSpec(t, "  datapaths: [bridge]\n  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n")
	for _, tc := range []struct {
		prior, now string
		refused    bool
	}{
		{"absent", "1", true},
		{"1", "1", false},
		{"", "1", false}, // a run before env.json recorded it
	} {
		out, err := results.Create(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c := &brnfCluster{}
		r := &run{engine: brnfEngine{upEngine{c: c}, tc.now}, study: s, out: out, clusters: 1,
			plan: &plan{datapaths: map[string]engine.Datapath{}}, opt: Options{Progress: progress.New(io.Discard)},
			priorDatapaths: map[string]results.DatapathEnv{"bridge": {Type: "bridge", BridgeNFCallIPTables: tc.prior}}}
		ran := false
		err = r.upDatapath(context.Background(), s.Spec.Datapaths[0], func(engine.Cluster, *knob.Target) error { ran = true; return nil }, notLost)
		out.Close()
		if !tc.refused {
			if err != nil || !ran {
				t.Errorf("%q then %q: %v, trials ran %v; want them run", tc.prior, tc.now, err, ran)
			}
			continue
		}
		want := `--resume: the interrupted run measured datapath bridge with bridge-nf-call-iptables "absent", this one's is "1"`
		if !IsResumeRefused(err) || !strings.Contains(err.Error(), want) || ran || !c.closed {
			t.Errorf("%q then %q: %v, trials ran %v, cluster closed %v; want a resume refusal saying %q, no trial, the cluster closed",
				tc.prior, tc.now, err, ran, c.closed, want)
		}
		if b, _ := os.ReadFile(filepath.Join(out.Dir(), results.EnvFile)); len(b) > 0 {
			t.Errorf("env.json written: %s", b)
		}
	}
}

// brnfCluster's nodes are named, and it says whether it was closed.
type brnfCluster struct {
	engine.Cluster
	closed bool
}

func (c *brnfCluster) Server() engine.Node { return sysNode{name: "s"} }
func (c *brnfCluster) Client() engine.Node { return sysNode{name: "c"} }
func (c *brnfCluster) Close() error        { c.closed = true; return nil }

// brnfEngine's nodes read bridge-nf-call-iptables as v.
type brnfEngine struct {
	upEngine
	v string
}

func (e brnfEngine) FS(engine.Node) tune.FS { return constFS{v: e.v} }

type constFS struct {
	tune.FS
	v string
}

func (f constFS) Read(string, string, string) (string, error) { return f.v, nil }

// A resume refused for bridge-nf-call-iptables once its first cluster
// wrote env.json (writeEnv) puts the interrupted run's back: the refused
// run measured nothing, and its run ID, start and "resumed" note were
// what the next resume kept.
func TestRefusedResumePutsBackEnv(t *testing.T) {
	s := parseSpec(t, "  datapaths: [bridge]\n  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n")
	out, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kept := results.Env{Tool: "cnibench", Engine: "stub", RunID: "old1", Notes: []string{"the interrupted run's note"},
		Datapaths: map[string]results.DatapathEnv{"bridge": {Type: "bridge", BridgeNFCallIPTables: "absent"}}}
	// What this run's first cluster wrote (writeEnv: cluster 1 here).
	if err := out.WriteEnv(results.Env{Tool: "cnibench", Engine: "stub", RunID: "new2", Notes: []string{"resumed: 3 counted trials kept from run old1"}}); err != nil {
		t.Fatal(err)
	}
	r := &run{engine: brnfEngine{upEngine{c: &brnfCluster{}}, "1"}, study: s, out: out, id: "new2", clusters: 1,
		plan: &plan{datapaths: map[string]engine.Datapath{}}, opt: Options{Progress: progress.New(io.Discard)},
		done: map[trialKey]bool{}, priorDatapaths: kept.Datapaths, keptEnv: &kept}
	err = r.upDatapath(context.Background(), s.Spec.Datapaths[0], func(engine.Cluster, *knob.Target) error { return nil }, notLost)
	out.Close()
	if !IsResumeRefused(err) {
		t.Fatalf("upDatapath: %v, want a resume refusal", err)
	}
	b, err := os.ReadFile(filepath.Join(out.Dir(), results.EnvFile))
	if err != nil {
		t.Fatal(err)
	}
	var got results.Env
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.RunID != "old1" || !slices.Equal(got.Notes, kept.Notes) || r.env.RunID != "old1" {
		t.Errorf("env.json after the refusal: run %q, notes %q (r.env's run %q); want the interrupted run's, old1, as it was", got.RunID, got.Notes, r.env.RunID)
	}
}

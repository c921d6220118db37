package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/prove"
)

// advise refuses what is not built and unknown rules before it reads
// anything, with one line and exit 2; with --rule it evaluates only those.
func TestAdviseFlags(t *testing.T) {
	for args, msg := range map[string]string{
		"advise --rule nope":                                `unknown rule "nope" (known: rfs, tunnel-mtu`,
		"advise --prove --budget 0s":                        "--budget 0s: want a positive duration",
		"advise --study rps-rfs":                            "--study needs --prove",
		"advise --set trials.max=20":                        "--set needs --prove",
		"advise --prove --set spec=1 --rule rfs":            `(--set): spec: `,
		"advise --prove --set foo=1 --rule rfs":             `unknown field "foo"`,
		"advise --prove --study nope --rule rfs":            `study "nope": no built-in study of that name`,
		"advise --engine kube --kubeconfig /nonexistent/kc": "cluster unreachable",
		"advise --engine docker":                            `unknown engine "docker"`,
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), strings.Fields(args), &out, &errb)
		if code != ExitBadInput || !strings.Contains(errb.String(), msg) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want 2 and one line with %q", args, code, errb.String(), out.String(), msg)
		}
	}
	dir := filepath.Join(t.TempDir(), "a")
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"advise", "--rule", "nic-gro", "--rule", "macvlan", "--out", dir}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, "advice.md"))
	if err != nil || string(md) != out.String() {
		t.Fatalf("stdout is not advice.md (%v)", err)
	}
	for _, r := range []string{"nic-gro", "macvlan"} {
		if !strings.Contains(out.String(), r) {
			t.Errorf("page lacks rule %s", r)
		}
	}
	if strings.Contains(out.String(), "| rfs |") || strings.Contains(out.String(), "### rfs") {
		t.Errorf("--rule limits the rules; rfs appears:\n%s", out.String())
	}
}

// tunnel-mtu's A/B emulates the tunnel the node has: on a Calico IP-in-IP
// node it is calico-ipip at the MTU IP-in-IP allows (calico-vxlan could
// not carry it, and the whole advise run used to exit 2).
func TestProveTunnelMTUFollowsTheTunnel(t *testing.T) {
	in := fixture(t, "ipip-nic-vxlan-offload.json")
	// Calico's default 1440 instead of the fixture's 1480, the most
	// IP-in-IP allows: the rule fires.
	for i := range in.Tunnels {
		in.Tunnels[i].MTU = 1440
	}
	rules, err := advise.Lookup("tunnel-mtu")
	if err != nil {
		t.Fatal(err)
	}
	rep := advise.Build(rules, &in, time.Now())
	if len(rep.Candidates) != 1 {
		t.Fatalf("tunnel-mtu is not a candidate on the ipip fixture: %+v", rep)
	}
	f := &adviseFlags{}
	s, _, err := prove.Plan(prove.Options{Resolve: f.resolver()}, &rep.Candidates[0], &in)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Spec.Datapaths {
		if d.Type != "calico-ipip" {
			t.Errorf("A/B datapath %s is %s, want calico-ipip", d.Name, d.Type)
		}
	}
}

// The built-in A/B's trial maximum follows --budget (a larger budget
// buys trials, not an early futile stop at 10), unless the user set the
// trials; --set applies before the candidate's own overrides.
func TestProveBudgetSetsMax(t *testing.T) {
	in, e := candidate(t, "this-machine.json", "rfs")
	f := &adviseFlags{}
	for _, c := range []struct {
		budget time.Duration
		sets   []string
		max    int
	}{
		{5 * time.Minute, nil, 12},                        // 4 cells of 6 s: 12 trials each in 5 minutes
		{2 * time.Minute, nil, 10},                        // never below the study's own maximum
		{30 * time.Minute, nil, 75},                       // 30 minutes: 75 each
		{30 * time.Minute, []string{"trials.max=15"}, 15}, // the user's maximum stands
		{30 * time.Minute, []string{"replicas=[1]"}, 150}, // two cells
	} {
		s, _, err := prove.Plan(prove.Options{Resolve: f.resolver(), Budget: c.budget, Sets: c.sets}, e, in)
		if err != nil {
			t.Fatal(err)
		}
		if s.Spec.Trials.Max != c.max || s.Spec.Budget.Duration != c.budget {
			t.Errorf("budget %s, sets %v: max %d, budget %s; want %d", c.budget, c.sets, s.Spec.Trials.Max, s.Spec.Budget.Duration, c.max)
		}
		if len(s.Spec.Tunings) != 2 {
			t.Errorf("sets %v: the candidate's tunings were lost: %+v", c.sets, s.Spec.Tunings)
		}
	}
}

// A rule's workload shape (busy-poll: request/response, where busy
// polling shows) replaces the built-in A/B's bulk TCP; a --study keeps
// its own workloads. Either way the A/B is the machine as found against
// both sysctls.
func TestProveShape(t *testing.T) {
	in, e := candidate(t, "calico-vxlan-jumbo.json", "busy-poll")
	want := map[string]string{"net.core.busy_read": "50", "net.core.busy_poll": "50"}
	for _, c := range []struct{ study, tool string }{{"", "sockperf"}, {"rps-rfs", "iperf3"}} {
		f := &adviseFlags{study: c.study}
		s, sets, err := prove.Plan(prove.Options{Resolve: f.resolver(), Study: c.study}, e, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Spec.Workloads) != 1 || s.Spec.Workloads[0].Tool != c.tool {
			t.Errorf("--study %q: workloads %+v, want one of %s", c.study, s.Spec.Workloads, c.tool)
		}
		if len(s.Spec.Tunings) != 2 || s.Spec.Tunings[0].Name != "baseline" || !maps.Equal(s.Spec.Tunings[1].Sysctls, want) {
			t.Errorf("--study %q: tunings %+v", c.study, s.Spec.Tunings)
		}
		if shaped := slices.ContainsFunc(sets, func(v string) bool { return strings.HasPrefix(v, "workloads=") }); shaped != (c.study == "") {
			t.Errorf("--study %q: the proof's overrides %q", c.study, sets)
		}
	}
}

// candidate is the rule's candidate on the inspection of a fixture.
func candidate(t *testing.T, fixtureName, rule string) (*inspect.Inspection, *advise.Entry) {
	t.Helper()
	in := fixture(t, fixtureName)
	rules, err := advise.Lookup(rule)
	if err != nil {
		t.Fatal(err)
	}
	rep := advise.Build(rules, &in, time.Now())
	if len(rep.Candidates) != 1 {
		t.Fatalf("%s is not a candidate on %s", rule, fixtureName)
	}
	return &in, &rep.Candidates[0]
}

// fixture reads an inspection of advise's test data.
func fixture(t *testing.T, name string) inspect.Inspection {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../advise/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var in inspect.Inspection
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestProveStopsWhenChangesAreLeft: a candidate whose A/B left host
// changes unreverted (its journal kept) stops advise --prove at once,
// naming the candidates not proved, and exits 3: the next A/B would
// have measured a host not as found (no stale journal check stands
// between two candidates). Another failure is a warning and the next
// candidate goes on.
func TestProveStopsWhenChangesAreLeft(t *testing.T) {
	rep := &advise.Report{}
	for _, n := range []string{"fails", "leaves", "rfs", "tunnel-mtu"} {
		rep.Candidates = append(rep.Candidates, advise.Entry{Result: advise.Result{Name: n}})
	}
	todo, opts := []int{0, 1, 2, 3}, make([]prove.Options, 4)
	var proved []string
	candidate := func(_ context.Context, _ prove.Options, e *advise.Entry, _ *inspect.Inspection) error {
		proved = append(proved, e.Name)
		switch e.Name {
		case "fails":
			return errors.New("candidate fails: iperf3 exited 1")
		case "leaves":
			return fmt.Errorf("candidate leaves: %w", &journal.PendingError{Path: "/run/cnibench/r1.journal", Pending: 1})
		}
		return nil
	}
	var errb bytes.Buffer
	err := proveEach(context.Background(), &errb, rep, todo, opts, candidate)
	if !slices.Equal(proved, []string{"fails", "leaves"}) {
		t.Errorf("A/Bs run %v: want none after the one that left changes", proved)
	}
	if err == nil || !strings.HasSuffix(err.Error(), "not proved, as their A/B would measure a host that is not as found: rfs, tunnel-mtu") {
		t.Fatalf("error %v: want the candidates not proved named", err)
	}
	if !strings.Contains(errb.String(), "warning: candidate fails") {
		t.Errorf("stderr %q: want the other failure as a warning", errb.String())
	}
	if code := exitCode(context.Background(), newRoot(io.Discard, io.Discard), err, io.Discard); code != ExitAbandoned {
		t.Errorf("exit %d, want %d", code, ExitAbandoned)
	}
	// The candidates after it say why they were not proved, and the
	// report is written all the same: it was not, and the inspection and
	// the verdicts before (hours of A/Bs) were lost.
	for _, e := range rep.Candidates[2:] {
		if e.Verdict != advise.NotProvable || !strings.Contains(e.Measured, "the A/B of leaves before it left host changes unreverted") {
			t.Errorf("%s: %q %q", e.Name, e.Measured, e.Verdict)
		}
	}
	out := t.TempDir()
	cmd := newRoot(io.Discard, io.Discard)
	if serr := proveStopped(context.Background(), cmd, rep, out, err); !errors.Is(serr, err) {
		t.Errorf("stopped: %v, want the A/B's error", serr)
	}
	if _, serr := os.Stat(filepath.Join(out, advise.FileHTML)); serr != nil {
		t.Errorf("no report written: %v", serr)
	}
	// Any other stop before the A/Bs (bad input) writes nothing.
	other := t.TempDir()
	bad := inputErr(errors.New("--set fits neither"))
	if serr := proveStopped(context.Background(), cmd, rep, other, bad); serr != bad {
		t.Errorf("bad input: %v", serr)
	}
	if _, serr := os.Stat(filepath.Join(other, advise.FileHTML)); serr == nil {
		t.Error("bad input wrote a report")
	}
}

// TestProveStoppedWritesThePages: advise --prove stopped by the user
// (Ctrl-C) during its second A/B wrote no pages, and the verdict of the
// first, maybe hours of A/B, was lost (a rerun with that --out is
// refused, as it holds the A/B). The pages are written, the first
// candidate's verdict kept, the stopped one and those after it said
// not proven because advise was stopped, and the exit is the signal's.
func TestProveStoppedWritesThePages(t *testing.T) {
	rep := &advise.Report{Generated: time.Now()}
	for _, n := range []string{"rfs", "busy-poll", "cpu-idle"} {
		rep.Candidates = append(rep.Candidates, advise.Entry{Result: advise.Result{Name: n}, Measured: advise.NotMeasured, Verdict: advise.NotProven})
	}
	out := t.TempDir()
	todo, opts := []int{0, 1, 2}, []prove.Options{{OutDir: out}, {OutDir: out}, {OutDir: out}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var proved []string
	candidate := func(ctx context.Context, _ prove.Options, e *advise.Entry, _ *inspect.Inspection) error {
		proved = append(proved, e.Name)
		if e.Name == "rfs" {
			e.Measured, e.Verdict = "rfs/baseline 1.2 [1.1, 1.3]", advise.Accepted
			return nil
		}
		cancel(&Stopped{Signal: syscall.SIGINT})
		e.Measured, e.Verdict = "the A/B run failed: context canceled", advise.Failed
		return fmt.Errorf("candidate %s: %w", e.Name, ctx.Err())
	}
	err := proveEach(ctx, io.Discard, rep, todo, opts, candidate)
	if err == nil || !slices.Equal(proved, []string{"rfs", "busy-poll"}) {
		t.Fatalf("error %v, A/Bs %v", err, proved)
	}
	var stdout bytes.Buffer
	serr := proveStopped(ctx, newRoot(&stdout, io.Discard), rep, out, err)
	if code := exitCode(ctx, newRoot(io.Discard, io.Discard), serr, io.Discard); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit %d, want %d", code, 128+int(syscall.SIGINT))
	}
	b, rerr := os.ReadFile(filepath.Join(out, advise.FileJSON))
	if rerr != nil {
		t.Fatalf("no advice.json: %v", rerr)
	}
	var got advise.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{advise.Accepted, advise.Stopped, advise.Stopped}
	for i, e := range got.Candidates {
		if e.Verdict != want[i] {
			t.Errorf("%s: verdict %q (%s), want %q", e.Name, e.Verdict, e.Measured, want[i])
		}
	}
	if m := got.Candidates[1].Measured; !strings.Contains(m, "stopped during its A/B (what it measured so far is in "+filepath.Join(out, "prove-busy-poll")) {
		t.Errorf("the stopped candidate: %q", m)
	}
	if m := got.Candidates[2].Measured; m != "not measured: advise was stopped before its A/B" {
		t.Errorf("the candidate after it: %q", m)
	}
	if !strings.Contains(stdout.String(), "| rfs |") {
		t.Errorf("advice.md not on stdout:\n%s", stdout.String())
	}
}

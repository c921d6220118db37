package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// A dry run says, before anything changes, what each tuning will set and
// where; a refused one still does, and offers no command.
func TestDryRunTunings(t *testing.T) {
	s, err := study.Parse("bbr.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: bbr}
spec:
  datapaths: [bridge]
  tunings:
    - baseline
    - {name: bbr, side: client, pods: true, sysctls: {net.ipv4.tcp_congestion_control: bbr}}
  workloads: [{name: tcp, tool: iperf3}]
  trials: 2
  duration: 5s
`), study.Options{}, studyCatalog())
	if err != nil {
		t.Fatal(err)
	}
	d := runner.DryRun{Plan: s.Plan(), Design: "2 trials per cell", Engine: "local"}
	want := "tunings (each set for its own trials only, and put back after each):\n" +
		"  baseline: nothing: the machine as found\n" +
		"  bbr: sysctls net.ipv4.tcp_congestion_control = bbr (a global one on the host, one of each namespace in the client node's namespace and each measured client pod's)\n"
	for _, refused := range []error{nil, errors.New("no iperf3")} {
		var b strings.Builder
		printDryRun(&b, s, d, []string{"cnibench", "run", "bbr.yaml"}, refused)
		if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "to run it:") != (refused == nil) {
			t.Errorf("dry run (refused: %v):\n%s\nwant it to hold:\n%s", refused, b.String(), want)
		}
	}
}

// A study of one tuning that sets something runs every trial with it: the
// dry run says what it sets; the baseline alone is not listed.
func TestDryRunOneTuning(t *testing.T) {
	for _, c := range []struct {
		tunings, want string
		listed        bool
	}{
		{"[{name: poll, side: both, cpuIdle: {maxExitLatency: 0us}}]",
			"  poll: no idle state that exits slower than 0 µs on the server and client nodes' CPUs (their PM QoS resume latency limit)\n", true},
		{"[baseline]", "tunings (", false},
	} {
		s, err := study.Parse("one.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: one}
spec:
  datapaths: [bridge, host]
  tunings: `+c.tunings+`
  workloads: [{name: rr, tool: sockperf, protocol: tcp, messageSize: 64}]
  trials: 2
  duration: 5s
`), study.Options{}, studyCatalog())
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		printDryRun(&b, s, runner.DryRun{Plan: s.Plan(), Design: "2 trials per cell", Engine: "local"}, []string{"cnibench", "run", "one.yaml"}, nil)
		if strings.Contains(b.String(), c.want) != c.listed {
			t.Errorf("tunings %s: listed %v, want %v:\n%s", c.tunings, !c.listed, c.listed, b.String())
		}
	}
}

// A dry run whose probes loaded kernel modules says so instead of
// claiming it changed nothing, passed or refused.
func TestDryRunSaysWhatProbesChanged(t *testing.T) {
	s, err := study.Parse("one.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: one}
spec:
  datapaths: [bridge]
  workloads: [{name: tcp, tool: iperf3}]
  trials: 2
  duration: 5s
`), study.Options{}, studyCatalog())
	if err != nil {
		t.Fatal(err)
	}
	loaded := "probing the study's kernel features loaded module(s) openvswitch"
	for _, refused := range []error{nil, errors.New("no iperf3")} {
		for _, changes := range [][]string{nil, {loaded}} {
			var b strings.Builder
			d := runner.DryRun{Plan: s.Plan(), Design: "2 trials per cell", Engine: "local", HostChanges: changes}
			printDryRun(&b, s, d, []string{"cnibench", "run", "one.yaml"}, refused)
			out := b.String()
			if said := strings.Contains(out, "nothing on this host was changed"); said != (changes == nil) {
				t.Errorf("refused %v, host changes %q: says nothing changed: %v:\n%s", refused, changes, said, out)
			}
			if changes != nil && !strings.Contains(out, "this host was changed only thus: "+loaded) {
				t.Errorf("refused %v: does not say what its probes loaded:\n%s", refused, out)
			}
		}
	}
}

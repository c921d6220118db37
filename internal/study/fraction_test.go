package study

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A float with a fraction where a whole number is wanted (yaml.v3 cut it:
// `replicas: [1.5, 4]` ran 1 and 4, `mtu: 0.5` was 0, the CNI's own MTU,
// `noise: {repeats: 0.5}` 0) is refused at its line and field, with what
// YAML reads; from the file, a profile and --set alike, in every kind of
// whole-number field: a list's entry, a scalar, Trials' count and its
// min and max, a pointer's.
func TestFractionRefused(t *testing.T) {
	checkRefusals(t, []refusal{
		{"  replicas: [1.5, 4]\n", "", "f.yaml:6: spec.replicas[0]: 1.5: want a whole number (YAML reads it as 1)"},
		{"  replicas:\n    - 4\n    - 2.5\n", "", "f.yaml:8: spec.replicas[1]: 2.5: want a whole number (YAML reads it as 2)"},
		{"  trials: {min: 2.5, max: 20}\n", "", "f.yaml:6: spec.trials.min: 2.5: want a whole number (YAML reads it as 2)"},
		{"  trials: 2.5\n", "", "f.yaml:6: spec.trials: 2.5: want a whole number (YAML reads it as 2)"},
		{"  noise: {repeats: 0.5}\n", "", "f.yaml:6: spec.noise.repeats: 0.5: want a whole number (YAML reads it as 0)"},
		{"  datapaths: [{type: calico-vxlan, mtu: 0.5}]\n", "", "f.yaml:6: spec.datapaths[0].mtu: 0.5: want a whole number (YAML reads it as 0)"},
		{"  datapaths: [{type: calico-vxlan, mtu: 1400.5}]\n", "", "f.yaml:6: spec.datapaths[0].mtu: 1400.5: want a whole number (YAML reads it as 1400)"},
		{"  workloads: [{tool: iperf3, parallel: 2.5}]\n", "", "f.yaml:6: spec.workloads[0].parallel: 2.5: want a whole number (YAML reads it as 2)"},
		{"  workloads: [{tool: iperf3, parallels: [1, 1.5e0]}]\n", "", "f.yaml:6: spec.workloads[0].parallels[1]: 1.5e0: want a whole number (YAML reads it as 1)"},
		{"  reference: [{metric: bitrate, value: 1, cpu: -1.5}]\n", "", "f.yaml:6: spec.reference[0].cpu: -1.5: want a whole number (YAML reads it as -1)"},
		// Past what the text shows: the float rounds the fraction off,
		// the text keeps it; -.inf was math.MinInt64.
		{"  replicas: [2.0000000000000001]\n", "", "f.yaml:6: spec.replicas[0]: 2.0000000000000001: want a whole number (YAML reads it as 2)"},
		{"  replicas: [1e-99999999999999999999]\n", "", "f.yaml:6: spec.replicas[0]: 1e-99999999999999999999: want a whole number (YAML reads it as 0)"},
		{"  replicas: [-.inf]\n", "", "f.yaml:6: spec.replicas[0]: -.inf: want a whole number"},
		{"  replicas: [-9007199254740993.0]\n", "", "f.yaml:6: spec.replicas[0]: -9007199254740993.0: too large a number to be read exactly"},
		{"  replicas: [-99999999999999999999]\n", "", "f.yaml:6: spec.replicas[0]: -99999999999999999999: too large a number to be read exactly"},
		// An explicit float tag is read in base 8 as an int is.
		{"  replicas: [!!float 010]\n", "", "f.yaml:6: spec.replicas[0]: 010: YAML reads a leading 0 as octal (8); write 10"},
		// --set's, where the error names no line.
		{"", "replicas=[1.5, 4]", "f.yaml (--set): spec.replicas[0]: 1.5: want a whole number (YAML reads it as 1)"},
		{"", "trials=2.5", "f.yaml (--set): spec.trials: 2.5: want a whole number (YAML reads it as 2)"},
		{"", "trials={min: 3, max: 20.5}", "f.yaml (--set): spec.trials.max: 20.5: want a whole number (YAML reads it as 20)"},
		{"", "noise.repeats=0.5", "f.yaml (--set): spec.noise.repeats: 0.5: want a whole number (YAML reads it as 0)"},
		{"  workloads: [{name: t, tool: iperf3}]\n", "workloads.t.parallel=2.5",
			"f.yaml (--set): spec.workloads[0].parallel: 2.5: want a whole number (YAML reads it as 2)"},
		{"  datapaths: [{name: fv, type: calico-vxlan}]\n", "datapaths.fv.mtu=0.5",
			"f.yaml (--set): spec.datapaths[0].mtu: 0.5: want a whole number (YAML reads it as 0)"},
	})
	// A profile's, whether or not the run uses the profile.
	data := []byte(withDefaults("  replicas: [1]\n") + "profiles:\n  quick: {replicas: [1, 2.5]}\n  slow: {trials: {min: 3, max: 7.5}}\n")
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{}, `f.yaml:12: profile "quick": spec.replicas[1]: 2.5: want a whole number (YAML reads it as 2)`},
		{Options{Profile: "quick"}, `f.yaml:12: profile "quick": spec.replicas[1]: 2.5: want a whole number (YAML reads it as 2)`},
		{Options{Profile: "slow"}, `f.yaml:13: profile "slow": spec.trials.max: 7.5: want a whole number (YAML reads it as 7)`},
	} {
		if _, err := Parse("f.yaml", data, c.opt, testCatalog); err == nil || err.Error() != c.want {
			t.Errorf("%+v: got %v, want %s", c.opt, err, c.want)
		}
	}
}

// A float that is a whole number is that number, as the text shows:
// `2.0`, `1.4e3`, `trials: 3.0` (refused before, where `{min: 3.0}` was
// 3), from the file, a profile and --set.
func TestWholeFloatsAccepted(t *testing.T) {
	extra := "  datapaths: [{type: calico-vxlan, mtu: 1.4e3}]\n  replicas: [2.0, 4., 1_0.0]\n  trials: 3.0\n" +
		"  workloads: [{name: t, tool: iperf3, parallel: 20e-1}]\n"
	data := []byte(withDefaults(extra) + "profiles:\n  quick: {trials: {min: 2.0, max: 5e0}}\n")
	s, err := Parse("f.yaml", data, Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	sp := &s.Spec
	if r := sp.Replicas; len(r) != 3 || r[0] != 2 || r[1] != 4 || r[2] != 10 || sp.Datapaths[0].MTU != 1400 ||
		sp.Trials != Fixed(3) || sp.Workloads[0].Parallel != 2 {
		t.Errorf("replicas %v, mtu %d, trials %v, parallel %d; want [2 4 10], 1400, 3, 2",
			r, sp.Datapaths[0].MTU, sp.Trials, sp.Workloads[0].Parallel)
	}
	s, err = Parse("f.yaml", data, Options{Profile: "quick", Set: []string{"workloads.t.parallel=3.0"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Trials != (Trials{Min: 2, Max: 5}) || s.Spec.Workloads[0].Parallel != 3 {
		t.Errorf("trials %v, parallel %d; want 2-5, 3", s.Spec.Trials, s.Spec.Workloads[0].Parallel)
	}
	// A float field keeps its fraction.
	if _, err := Parse("f.yaml", []byte(withDefaults("  noise: {maxStealPct: 2.5}\n")), Options{}, testCatalog); err != nil {
		t.Error(err)
	}
}

// wholeText reads the text's digits, not the float's: the exponent moves
// the point either way, any run of 0s after it is whole.
func TestWholeText(t *testing.T) {
	for s, want := range map[string]bool{
		"2.0": true, "2.": true, "-0.0": true, "0e-999999999999999999999": true, "1.4e3": true, "1_000.000_0": true,
		"+20e-1": true, "0.0001e4": true, "12.5e1": true, "1e300": true,
		"2.5": false, ".5": false, "2.0000000000000001": false, "1.25e1": false, "15e-1": false,
		"1e-99999999999999999999": false, "0.5e0": false,
	} {
		if got := wholeText(s); got != want {
			t.Errorf("wholeText(%q) = %v, want %v", s, got, want)
		}
	}
	// Whole, but past what a float holds exactly (a file's 1e300 is
	// yaml.v3's type error first: past int64).
	if msg := fractionMessage(&yaml.Node{Kind: yaml.ScalarNode, Value: "1e300"}); !strings.HasPrefix(msg, "1e300: too large a number") {
		t.Errorf("1e300: %q", msg)
	}
}

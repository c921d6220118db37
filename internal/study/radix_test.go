package study

import (
	"strings"
	"testing"
)

// A number yaml.v3 reads in another base than ten (a leading 0 is
// octal: `mtu: 01400` was 768, `replicas: [010, 016]` 8 and 14, `trials:
// {min: 010}` 8 while `trials: 010` was 10) is refused where it fills a
// number of the study, at its line and field, with what YAML reads and
// what to write; from the file, a profile and --set alike.
func TestRadixNumbersRefused(t *testing.T) {
	checkRefusals(t, []refusal{
		{"  datapaths: [{type: calico-vxlan, mtu: 01400}]\n", "",
			"f.yaml:6: spec.datapaths[0].mtu: 01400: YAML reads a leading 0 as octal (768); write 1400"},
		{"  replicas:\n    - 1\n    - 016\n", "", "f.yaml:8: spec.replicas[1]: 016: YAML reads a leading 0 as octal (14); write 16"},
		{"  trials: {min: 010, max: 20}\n", "", "f.yaml:6: spec.trials.min: 010: YAML reads a leading 0 as octal (8); write 10"},
		{"  trials: 010\n", "", "f.yaml:6: spec.trials: 010: YAML reads a leading 0 as octal (8); write 10"},
		{"  datapaths: [{type: calico-vxlan, mtu: 0x578}]\n", "",
			"f.yaml:6: spec.datapaths[0].mtu: 0x578: YAML reads 0x as hexadecimal (1400); write 1400 (a study's numbers are decimal)"},
		{"  replicas: [0o16]\n", "", "f.yaml:6: spec.replicas[0]: 0o16: YAML reads 0o as octal (14); write 14"},
		{"  replicas: [0b11]\n", "", "f.yaml:6: spec.replicas[0]: 0b11: YAML reads 0b as binary (3); write 3"},
		{"  replicas: [0_16]\n", "", "f.yaml:6: spec.replicas[0]: 0_16: YAML reads a leading 0 as octal (14); write 16"},
		{"  reference: [{metric: bitrate, value: -010}]\n", "",
			"f.yaml:6: spec.reference[0].value: -010: YAML reads a leading 0 as octal (-8); write -10"},
		{"  reference: [{metric: bitrate, value: 1, cpu: 00}]\n", "", "f.yaml:6: spec.reference[0].cpu: 00: YAML reads a leading 0 as octal (0); write 0"},
		// --set's, where the error names no line.
		{"  datapaths: [{name: fv, type: calico-vxlan}]\n", "datapaths.fv.mtu=01400",
			"f.yaml (--set): spec.datapaths[0].mtu: 01400: YAML reads a leading 0 as octal (768); write 1400"},
		{"", "replicas=[1, 2, 016]", "f.yaml (--set): spec.replicas[2]: 016: YAML reads a leading 0 as octal (14); write 16"},
		{"", "trials=010", "f.yaml (--set): spec.trials: 010: YAML reads a leading 0 as octal (8); write 10"},
		{"", "trials={min: 3, max: 0x10}", "f.yaml (--set): spec.trials.max: 0x10: YAML reads 0x as hexadecimal (16); write 16"},
	})
	// A profile's number, whether or not the run uses the profile.
	data := []byte(withDefaults("  replicas: [1]\n") + "profiles:\n  quick: {replicas: [1, 010]}\n")
	want := `f.yaml:12: profile "quick": spec.replicas[1]: 010: YAML reads a leading 0 as octal (8); write 10`
	for _, opt := range []Options{{}, {Profile: "quick"}} {
		if _, err := Parse("f.yaml", data, opt, testCatalog); err == nil || err.Error() != want {
			t.Errorf("%+v: got %v, want %s", opt, err, want)
		}
	}
}

// What YAML reads as the text shows is taken: a decimal number, 018
// (not octal, so 18), a quoted number where a string is wanted, and a
// string field's number with a leading 0, which keeps its text (a
// sysctl's such is refused for the kernel's reading: tuning_test.go).
func TestDecimalNumbersAccepted(t *testing.T) {
	extra := "  datapaths: [{type: calico-vxlan, mtu: 1400}]\n  replicas: [1, 018, 1_0]\n" +
		"  tunings: [baseline, {name: s, sysctls: {net.core.busy_read: 50}}]\n"
	s, err := Parse("f.yaml", []byte(strings.Replace(withDefaults(extra), "name: f", "name: f\n  description: 0123", 1)), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Spec.Replicas; len(got) != 3 || got[1] != 18 || got[2] != 10 {
		t.Errorf("replicas %v, want [1 18 10]", got)
	}
	if s.Spec.Datapaths[0].MTU != 1400 || s.Metadata.Description != "0123" || s.Spec.Tunings[1].Sysctls["net.core.busy_read"] != "50" {
		t.Errorf("mtu %d, description %q, sysctl %q", s.Spec.Datapaths[0].MTU, s.Metadata.Description, s.Spec.Tunings[1].Sysctls["net.core.busy_read"])
	}
}

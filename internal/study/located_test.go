package study

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// A problem found after parsing is reported where the field's value came
// from: its line in the file, the profile that brought it, or --set.
func TestLocate(t *testing.T) {
	const src = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [calico-vxlan, flannel-vxlan]
  workloads:
    - {name: tcp, tool: iperf3}
  trials: 2
  duration: 3s
profiles:
  small:
    datapaths:
      - calico-vxlan
`
	parse := func(opt Options) *Study {
		t.Helper()
		s, err := Parse("s.yaml", []byte(src), opt, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cause := fmt.Errorf("kernel lacks it: %w", fs.ErrNotExist)
	for _, tc := range []struct {
		name string
		s    *Study
		err  error
		want string
	}{
		{"file", parse(Options{}), At("spec.datapaths[1]", cause), "s.yaml:5: spec.datapaths[1]: kernel lacks it: file does not exist"},
		{"below an entry", parse(Options{}), At("spec.workloads[0].target", cause), "s.yaml:7: spec.workloads[0].target: kernel lacks it: file does not exist"},
		{"profile", parse(Options{Profile: "small"}), At("spec.datapaths[0]", cause), `s.yaml:13: profile "small": spec.datapaths[0]: kernel lacks it: file does not exist`},
		{"--set", parse(Options{Set: []string{"datapaths=[calico-vxlan]"}}), At("spec.datapaths[0]", cause), "s.yaml (--set): spec.datapaths[0]: kernel lacks it: file does not exist"},
		{"wrapped", parse(Options{}), fmt.Errorf("preflight: %w", At("spec.trials", cause)), "s.yaml:8: spec.trials: kernel lacks it: file does not exist"},
		{"several", parse(Options{}), errors.Join(At("spec.datapaths[0]", cause), errors.New("b\nc"), errors.New("d")),
			"s.yaml:5: spec.datapaths[0]: kernel lacks it: file does not exist (and 2 more problems: run again after fixing this one to see the next)"},
		{"several, first of no field", parse(Options{}), errors.Join(errors.New("a\nb"), At("spec.trials", cause)),
			`s.yaml: a\nb (and 1 more problem: run again after fixing this one to see the next)`},
		{"of no field", parse(Options{}), cause, "kernel lacks it: file does not exist"},
		// Two %w make one problem and its cause, not two problems.
		{"one problem, two causes", parse(Options{}), fmt.Errorf("%w: load kubeconfig: %w", errors.New("cluster unreachable"), cause),
			"cluster unreachable: load kubeconfig: kernel lacks it: file does not exist"},
		{"a study built in code", &Study{Source: "x"}, At("spec.trials", cause), "spec.trials: kernel lacks it: file does not exist"},
	} {
		got := tc.s.Locate(tc.err)
		if got.Error() != tc.want || !errors.Is(got, fs.ErrNotExist) {
			t.Errorf("%s:\n got %v\nwant %s (wrapping the cause)", tc.name, got, tc.want)
		}
	}
	if (&Study{}).Locate(nil) != nil {
		t.Error("nil became an error")
	}
}

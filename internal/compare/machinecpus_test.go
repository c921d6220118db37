package compare

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A local run that recorded machine_cpus counts node CPU % and the
// one-core judgement over them, one before it over every CPU of
// /proc/stat: in a container given 2 of 8 CPUs the two runs' node CPU
// moved by the counting alone, and compare did not say why. Two runs
// that recorded the same set, or neither (clusters), differ in nothing;
// engines apart say so in their own line.
func TestDifferencesMachineCPUs(t *testing.T) {
	local := func(cpus ...int) results.Env { return results.Env{Engine: "local", MachineCPUs: cpus} }
	const why = " (env.json's machine_cpus: node CPU % and the one-core judgement count only these"
	for _, tc := range []struct {
		name string
		a, b results.Env
		want string // prefix; "" for no difference
	}{
		{"A before machine_cpus", local(), local(0, 1), "machine CPUs not recorded (every CPU of /proc/stat) / 0-1" + why},
		{"B before machine_cpus", local(2, 3, 4, 5), local(), "machine CPUs 2-5 / not recorded (every CPU of /proc/stat)" + why},
		{"two sets", local(0, 1), local(0, 1, 2, 3), "machine CPUs 0-1 / 0-3" + why},
		{"one set", local(0, 1), local(0, 1), ""},
		{"neither", local(), local(), ""},
		{"clusters", results.Env{Engine: "kube"}, results.Env{Engine: "kube"}, ""},
	} {
		got := strings.Join(Differences(tc.a, tc.b, nil), "; ")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) || strings.Contains(got, "; ") {
			t.Errorf("%s: differ %q, want %q...", tc.name, got, tc.want)
		}
	}
	if got := strings.Join(Differences(results.Env{Engine: "kube"}, local(0, 1), nil), "; "); got != "engine kube / local" {
		t.Errorf("kube against local: differ %q, want the engine alone", got)
	}
}

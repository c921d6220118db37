package report

import (
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// The environment's host, kernel and CPU lines say what env.json holds,
// and "unknown" for what it left blank (a cluster node its agent could
// not describe), not "0 × , 0 NUMA node(s)" or an empty host.
func TestEnvViewMachineBlanks(t *testing.T) {
	for _, tc := range []struct {
		name              string
		env               results.Env
		host, kernel, cpu string
	}{
		{"known", results.Env{Hostname: "node-a", Kernel: "6.1.0", CPUs: 64, CPUModel: "AMD EPYC", NUMANodes: 2},
			"node-a", "6.1.0", "64 × AMD EPYC, 2 NUMA node(s)"},
		{"not described", results.Env{}, "unknown", "unknown", "unknown"},
		{"no model", results.Env{Hostname: "node-a", Kernel: "6.1.0", CPUs: 8, NUMANodes: 1},
			"node-a", "6.1.0", "8 CPUs, model unknown, 1 NUMA node(s)"},
		{"no NUMA count", results.Env{Hostname: "node-a", Kernel: "6.1.0", CPUs: 8, CPUModel: "Node CPU"},
			"node-a", "6.1.0", "8 × Node CPU"},
	} {
		kv, _ := envView(&results.Run{HasEnv: true, Env: tc.env})
		got := map[string]string{}
		for _, p := range kv {
			got[p[0]] = p[1]
		}
		if got["host"] != tc.host || got["kernel"] != tc.kernel || got["CPU"] != tc.cpu {
			t.Errorf("%s: host %q, kernel %q, CPU %q; want %q, %q, %q", tc.name, got["host"], got["kernel"], got["CPU"], tc.host, tc.kernel, tc.cpu)
		}
	}
}

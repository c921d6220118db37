package report

import (
	"slices"
	"strings"
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

// A cluster run's workload image is shown beside its CNI, as env.json
// records it, with the images the nodes resolved it to (one tag may be
// several); a local run, which recorded none, has no such line.
func TestEnvViewWorkloadImage(t *testing.T) {
	const tag, a, b = "reg/cnibench:v1", "reg/cnibench@sha256:aaaa", "reg/cnibench@sha256:bbbb"
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{nil, tag},
		{[]string{a}, tag + " (resolved to " + a + ")"},
		{[]string{a, b}, tag + " (resolved to 2 different images: " + a + ", " + b + ")"},
	} {
		kv, _ := envView(&results.Run{HasEnv: true, Env: results.Env{Engine: "kube", Image: tag, ImageIDs: tc.ids}})
		i := slices.IndexFunc(kv, func(p [2]string) bool { return p[0] == "workload image" })
		if i < 0 || kv[i][1] != tc.want {
			t.Errorf("image IDs %v: lines %q, want workload image %q", tc.ids, kv, tc.want)
		}
	}
	img := "registry.example.com/cnibench@sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		env  results.Env
		want []string // the lines' names, in order, from CNI on
	}{
		{results.Env{Engine: "kube", CNI: &results.CNI{Name: "flannel"}, Image: img}, []string{"CNI", "workload image"}},
		{results.Env{Engine: "local"}, nil},
	} {
		kv, _ := envView(&results.Run{HasEnv: true, Env: tc.env})
		var names []string
		for _, p := range kv {
			if p[0] == "CNI" || p[0] == "workload image" {
				names = append(names, p[0])
			}
			if p[0] == "workload image" && p[1] != img {
				t.Errorf("workload image %q, want %q", p[1], img)
			}
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("engine %s: lines %q, want %q", tc.env.Engine, names, tc.want)
		}
	}
}

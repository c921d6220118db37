package study

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

func workloadStudy(workloads string) string {
	return strings.Replace(knobStudy, "workloads: [{tool: iperf3}]", "workloads: "+workloads, 1)
}

// Bounds, requirements and defaults come from the tools' descriptions;
// each error names file, line and the field (the scalar or the list's
// element).
func TestOptionsFromDescriptions(t *testing.T) {
	for _, tc := range []struct {
		workloads, want string
	}{
		{"[{tool: sockperf, messageSize: 1}]", "w.yaml:15: spec.workloads[0].messageSize: messageSize must be between 14 and 65000 (sockperf's smallest message is 14 B), got 1"},
		{"[{tool: sockperf, messageSizes: [14, 70000]}]", "spec.workloads[0].messageSizes[1]: messageSize must be between 14 and 65000"},
		{"[{tool: iperf3, parallels: [1, 200]}]", "spec.workloads[0].parallels[1]: parallel must be between 1 and 128 (iperf3's limit on -P), got 200"},
		{"[{tool: ab, concurrency: [1, 0]}]", "spec.workloads[0].concurrency[1]: concurrency must be between 1 and 20000"},
		{"[{tool: iperf3, protocol: udp}]", "spec.workloads[0].rate: a UDP test needs an offered bitrate (rate or rates): iperf3's UDP default"},
		{"[{tool: sockperf, size: 5M}]", "spec.workloads[0].size: tool sockperf has no option size (sockperf takes: messageSize, messageSizes, placement, pin, cpp, counters)"},
		{"[{tool: ab, protocol: udp}]", "spec.workloads[0].protocol: tool ab does not support protocol \"udp\" (supported: tcp)"},
	} {
		_, err := Parse("w.yaml", []byte(workloadStudy(tc.workloads)), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.workloads, err, tc.want)
		}
	}
	s, err := Parse("w.yaml", []byte(workloadStudy("[{tool: ab}, {tool: sockperf, protocol: udp}, {name: sw, tool: sockperf, messageSizes: [14, 100]}, {tool: iperf3}]")), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	ab, sp, sw, ip := s.Spec.Workloads[0], s.Spec.Workloads[1], s.Spec.Workloads[2], s.Spec.Workloads[3]
	if ab.Size != "5M" || len(ab.Concurrency) != 1 || ab.Concurrency[0] != 1 || ab.Placement != PlacementInterNode {
		t.Errorf("ab defaults: %+v", ab)
	}
	if sp.MessageSize != 64 || sw.MessageSize != 0 {
		t.Errorf("sockperf default message: %d; with a sweep: %d (want 64, 0)", sp.MessageSize, sw.MessageSize)
	}
	if ip.Length != "" || ip.Parallel != 0 || ip.Rate != "" {
		t.Errorf("iperf3 options left to iperf3 were filled: %+v", ip)
	}
}

func TestCheckDefault(t *testing.T) {
	for _, tools := range testTools {
		for _, o := range tools.Options {
			if err := CheckDefault(o); err != nil {
				t.Errorf("%s: %v", tools.Name, err)
			}
		}
	}
	if CheckDefault(spec.Option{Name: OptMessageSize, Default: "64B"}) == nil {
		t.Error("a non-integer messageSize default passes")
	}
	if CheckDefault(spec.Option{Name: "colour", Default: "red"}) == nil {
		t.Error("an unknown option passes")
	}
}

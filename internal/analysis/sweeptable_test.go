package analysis

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// Every sweep names its parameter and values as a reader knows them: a
// packet-size (MSS) sweep was "variant" and "mss88". Numeric sweeps have
// an axis their figures place the variants on by value.
func TestSweptParamValueAndAxis(t *testing.T) {
	for _, tc := range []struct {
		w           study.Workload
		param, axis string
		values      []string
		xs          []float64
	}{
		{study.Workload{Name: "m", Tool: "iperf3", MSSes: []int{88, 536, 1448}},
			"TCP MSS", "TCP MSS (B)", []string{"88 B", "536 B", "1448 B"}, []float64{88, 536, 1448}},
		{study.Workload{Name: "p", Tool: "iperf3", Parallels: []int{1, 2, 16}},
			"parallel streams", "parallel streams", []string{"1", "2", "16"}, []float64{1, 2, 16}},
		{study.Workload{Name: "s", Tool: "sockperf", MessageSizes: []int{64, 1024}},
			"message size", "message size (B)", []string{"64 B", "1024 B"}, []float64{64, 1024}},
		{study.Workload{Name: "r", Tool: "iperf3", Protocol: "udp", Rates: []string{"100M", "1.5G"}},
			"rate per stream", "rate per stream (Mbit/s)", []string{"100M", "1.5G"}, []float64{100, 1500}},
		{study.Workload{Name: "l", Tool: "iperf3", Lengths: []string{"1K", "128K"}},
			"write length", "write length (KiB)", []string{"1K", "128K"}, []float64{1, 128}},
		{study.Workload{Name: "h", Tool: "ab", Concurrency: []int{1, 50}},
			"concurrency", "concurrency", []string{"1", "50"}, []float64{1, 50}},
	} {
		if got := SweptParam(tc.w); got != tc.param {
			t.Errorf("%s: SweptParam %q, want %q", tc.w.Name, got, tc.param)
		}
		title, x, ok := SweptAxis(tc.w)
		if !ok || title != tc.axis {
			t.Errorf("%s: SweptAxis %q %v, want %q", tc.w.Name, title, ok, tc.axis)
			continue
		}
		var values []string
		var xs []float64
		for _, v := range tc.w.Variants() {
			values = append(values, SweptValue(tc.w, v))
			if f, ok := x(v); ok {
				xs = append(xs, f)
			}
		}
		if !slices.Equal(values, tc.values) || !slices.Equal(xs, tc.xs) {
			t.Errorf("%s: values %q at %v, want %q at %v", tc.w.Name, values, xs, tc.values, tc.xs)
		}
	}
	if _, _, ok := SweptAxis(study.Workload{Name: "one", Tool: "iperf3"}); ok {
		t.Error("a workload that sweeps nothing has a numeric axis")
	}
}

package gate

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		below  bool
		change float64
	}{
		{"bitrate < -5%", "bitrate", true, -0.05},
		{"bitrate<-5%", "bitrate", true, -0.05},
		{"rtt_p99_us > 10%", "rtt_p99_us", false, 0.10},
		{" cpp_total_ns > +2.5 % ", "cpp_total_ns", false, 0.025},
	} {
		r, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if r.Metric != tc.metric || r.Below != tc.below || math.Abs(r.Change-tc.change) > 1e-12 {
			t.Errorf("%q: got %+v", tc.in, r)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for in, want := range map[string]string{
		"bitrate":          "want METRIC",
		"bitrate < -5":     "needs %",
		"bitrate <= -5%":   "use < or >",
		"< -5%":            "not a metric name",
		"bit rate < -5%":   "not a metric name",
		"bitrate < x%":     "not a number",
		"bitrate < -100%":  "out of range",
		"bitrate < NaN%":   "not a number",
		"bitrate < 1e400%": "not a number",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	rise := Rule{Text: "rtt > 10%", Metric: "rtt", Below: false, Change: 0.10}
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		rule Rule
		cell Cell
		fail bool
	}{
		{"significant regression beyond threshold", drop, Cell{Metric: "bitrate", Ratio: 0.90, Low: 0.85, High: 0.95}, true},
		{"large but noisy", drop, Cell{Metric: "bitrate", Ratio: 0.80, Low: 0.55, High: 1.05}, false},
		{"significant but small", drop, Cell{Metric: "bitrate", Ratio: 0.98, Low: 0.97, High: 0.99}, false},
		{"improvement", drop, Cell{Metric: "bitrate", Ratio: 1.20, Low: 1.10, High: 1.30}, false},
		{"no interval", drop, Cell{Metric: "bitrate", Ratio: 0.5, Low: nan, High: nan}, false},
		{"latency rise", rise, Cell{Metric: "rtt", Ratio: 1.25, Low: 1.15, High: 1.35}, true},
		{"latency fall", rise, Cell{Metric: "rtt", Ratio: 0.75, Low: 0.70, High: 0.80}, false},
	} {
		vs, err := Check([]Rule{tc.rule}, []Cell{tc.cell})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].Fail != tc.fail || Failed(vs) != tc.fail || vs[0].Why == "" {
			t.Errorf("%s: %+v, want fail=%v", tc.name, vs, tc.fail)
		}
	}
	if _, err := Check([]Rule{drop}, []Cell{{Metric: "rtt", Ratio: 1, Low: 1, High: 1}}); err == nil {
		t.Error("a rule whose metric no cell has must be an error, not a silent pass")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"bitrate < -5%", "x>+1%", "a<%", "<>", "m < 1e309%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		if !metricName.MatchString(r.Metric) || math.IsNaN(r.Change) || r.Change <= -1 || r.Change > 100 {
			t.Fatalf("%q parsed to an invalid rule %+v", s, r)
		}
	})
}

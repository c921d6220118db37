package impair

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPresetsAreTableII: the sixteen rows of the paper's Table II, with
// their parameters written out here independently of presets.go, and the
// TC text of each parsing to the same Spec.
func TestPresetsAreTableII(t *testing.T) {
	type row struct {
		name          string
		delay, jitter time.Duration
		corr          float64
		loss, corrupt float64
	}
	want := []row{
		{"none", 0, 0, 0, 0, 0},
		{"delay-low", 10 * ms, 1 * ms, 25, 0, 0},
		{"delay-medium", 100 * ms, 10 * ms, 25, 0, 0},
		{"delay-high", 500 * ms, 50 * ms, 25, 0, 0},
		{"loss-low", 0, 0, 0, 5, 0},
		{"loss-medium", 0, 0, 0, 20, 0},
		{"loss-high", 0, 0, 0, 60, 0},
		{"corruption-low", 0, 0, 0, 0, 5},
		{"corruption-medium", 0, 0, 0, 0, 20},
		{"corruption-high", 0, 0, 0, 0, 40},
		{"delay-loss-low", 10 * ms, 1 * ms, 25, 5, 0},
		{"delay-loss-medium", 100 * ms, 10 * ms, 25, 5, 0},
		{"delay-loss-high", 500 * ms, 50 * ms, 25, 5, 0},
		{"delay-corruption-low", 10 * ms, 1 * ms, 25, 0, 5},
		{"delay-corruption-medium", 100 * ms, 10 * ms, 25, 0, 5},
		{"delay-corruption-high", 500 * ms, 50 * ms, 25, 0, 5},
	}
	ps := Presets()
	if len(ps) != len(want) {
		t.Fatalf("%d presets, want %d", len(ps), len(want))
	}
	for i, w := range want {
		p := ps[i]
		exp := Spec{Delay: w.delay, Jitter: w.jitter, DelayCorrelation: w.corr, Loss: w.loss, Corrupt: w.corrupt}
		if p.Name != w.name || p.Spec != exp {
			t.Errorf("preset %d = %s %+v, want %s %+v", i, p.Name, p.Spec, w.name, exp)
		}
		if err := p.Spec.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if !strings.Contains(p.Source, "Table II") {
			t.Errorf("%s: source %q does not cite Table II", p.Name, p.Source)
		}
		if p.Name == "none" {
			if !p.Spec.IsZero() {
				t.Error("none is not the zero Spec")
			}
			continue
		}
		got, err := Parse(p.TC)
		if err != nil || got != p.Spec {
			t.Errorf("%s: Parse(%q) = %+v, %v; want %+v", p.Name, p.TC, got, err, p.Spec)
		}
		if l, err := LookupPreset(p.Name); err != nil || l.Spec != p.Spec {
			t.Errorf("LookupPreset(%s) = %+v, %v", p.Name, l, err)
		}
	}
	if !slices.Equal(PresetNames(), func() []string {
		var n []string
		for _, w := range want {
			n = append(n, w.name)
		}
		return n
	}()) {
		t.Errorf("PresetNames() = %v", PresetNames())
	}
	_, err := LookupPreset("delay-extreme")
	if err == nil || !strings.Contains(err.Error(), `unknown impairment preset "delay-extreme"`) || !strings.Contains(err.Error(), "delay-corruption-high") {
		t.Errorf("LookupPreset(unknown) = %v, want the names listed", err)
	}
	for _, err := range []error{func() error { _, err := LookupPreset("dealy-low"); return err }(),
		func() error { _, err := Resolve("dealy-low", nil); return err }()} {
		if err == nil || !strings.Contains(err.Error(), `did you mean "delay-low"?`) {
			t.Errorf("a swapped preset name: %v, want the one meant", err)
		}
	}
	// Presets returns a copy.
	Presets()[1].Spec.Delay = 0
	if Presets()[1].Spec.Delay != 10*ms {
		t.Error("Presets() exposes the list")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"delay 10ms 1ms 25%", Spec{Delay: 10 * ms, Jitter: ms, DelayCorrelation: 25}},
		{"netem delay 100ms 10ms 25% distribution normal", Spec{Delay: 100 * ms, Jitter: 10 * ms, DelayCorrelation: 25, Distribution: Normal}},
		{"delay 10 msec 500usec", Spec{Delay: 10 * ms, Jitter: 500 * time.Microsecond}},
		{"latency 1.5s", Spec{Delay: 1500 * ms}},
		{"loss random 1% 25%", Spec{Loss: 1, LossCorrelation: 25}},
		{"loss 0.5", Spec{Loss: 0.5}},
		{"drop 3%", Spec{Loss: 3}},
		{"loss gemodel 1%", Spec{GE: &GilbertElliott{P: 1, R: 99, BadLoss: 100}}},
		{"loss gemodel 1% 10% 70% 0.1%", Spec{GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1}}},
		{"corrupt 5% 10%", Spec{Corrupt: 5, CorruptCorrelation: 10}},
		{"duplicate 1%", Spec{Duplicate: 1}},
		{"delay 10ms reorder 25% 50% gap 5", Spec{Delay: 10 * ms, Reorder: 25, ReorderCorrelation: 50, Gap: 5}},
		{"rate 100mbit limit 10000", Spec{Rate: 100_000_000, Limit: 10000}},
		{"rate 125kbps", Spec{Rate: 1_000_000}},
		{"500 ms 50ms 25% - corrupt 5%", Spec{Delay: 500 * ms, Jitter: 50 * ms, DelayCorrelation: 25, Corrupt: 5}},
		{"distribution uniform delay 1ms 1ms", Spec{Delay: ms, Jitter: ms}},
		{"", Spec{}},
		// tc reads the number with strtod: an exponent is no unit.
		{"delay 1e3ms 5E-1ms", Spec{Delay: time.Second, Jitter: 500 * time.Microsecond}},
		{"delay 1E1s", Spec{Delay: 10 * time.Second}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !equalSpec(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func equalSpec(a, b Spec) bool {
	ga, gb := a.GE, b.GE
	a.GE, b.GE = nil, nil
	if a != b || (ga == nil) != (gb == nil) {
		return false
	}
	return ga == nil || *ga == *gb
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, want string }{
		{"loss 120%", "loss: 120% is out of range 0..100%"},
		{"delay -10ms", "delay: -10ms is negative"},
		{"delay 10", `delay: "10" needs a number and a unit`},
		{"delay 10parsecs", `unknown time unit "parsecs"`},
		{"delay 5s 3s", "jitter: 3s is above netem's maximum"},
		{"reorder 5%", "reorder: needs a delay"},
		{"loss 5% loss 6%", "loss given twice"},
		{"loss state 1%", "4-state loss model"},
		{"jitter 1ms", `unknown netem keyword "jitter"`},
		{"delay", "delay: missing value"},
		{"rate 100", "rate: \"100\" needs a rate unit"},
		{"limit -1", "limit: \"-1\" is not a whole number"},
		{"delay 1ms 1ms distribution gamma", `unknown distribution "gamma"`},
		{"loss gemodel 0%", "gemodel.p: 0% never enters the bad state"},
		{"delay 1ms 5", `jitter: "5" needs a number and a unit`},
		// tc's rate PACKETOVERHEAD CELLSIZE: refused as such, not as a delay.
		{"rate 100mbit 20 1500", "rate: a packet overhead, cell size or cell overhead after the rate is not supported"},
		{"delay 1e3", `delay: "1e3" needs a number and a unit`},
		{"delay 1eams", `unknown time unit "eams"`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestParseField(t *testing.T) {
	var s Spec
	for _, kv := range [][2]string{
		{"delay", "10ms"}, {"jitter", "1 ms"}, {"delay_correlation", "25%"}, {"distribution", "pareto"},
		{"loss", "1%"}, {"loss_correlation", "2%"}, {"corrupt", "0.1%"}, {"corrupt_correlation", "3%"},
		{"duplicate", "4%"}, {"duplicate_correlation", "5%"}, {"reorder", "6%"}, {"reorder_correlation", "7%"},
		{"gap", "2"}, {"rate", "1gbit"}, {"limit", "20000"},
	} {
		if err := ParseField(&s, kv[0], kv[1]); err != nil {
			t.Errorf("ParseField(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	want := Spec{Delay: 10 * ms, Jitter: ms, DelayCorrelation: 25, Distribution: Pareto, Loss: 1, LossCorrelation: 2,
		Corrupt: 0.1, CorruptCorrelation: 3, Duplicate: 4, DuplicateCorrelation: 5, Reorder: 6, ReorderCorrelation: 7,
		Gap: 2, Rate: 1_000_000_000, Limit: 20000}
	if s != want {
		t.Errorf("ParseField built %+v\nwant %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	var g Spec
	if err := ParseField(&g, "gemodel", "1% 10% 70% 0.1%"); err != nil || !equalSpec(g, Spec{GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1}}) {
		t.Errorf("gemodel: %+v %v", g.GE, err)
	}
	for _, tt := range []struct{ key, val, want string }{
		{"loss", "1", `loss: "1" needs a % sign`},
		{"loss", "200%", "loss: 200% is out of range"},
		{"delay", "ten", `delay: "ten" needs a number and a unit`},
		{"gemodel", "1 10", "gemodel: \"1 10\": each probability needs a % sign"},
		{"gemodel", "", "want P [R [1-H [1-K]]]"},
		{"rate", "fast", `rate: "fast" needs a rate unit`},
		{"latency", "1ms", `unknown impairment field "latency"`},
	} {
		var s Spec
		err := ParseField(&s, tt.key, tt.val)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseField(%s, %q) = %v, want %q", tt.key, tt.val, err, tt.want)
		}
		var fe *FieldError
		if strings.HasPrefix(tt.want, tt.key+":") && !errors.As(err, &fe) {
			t.Errorf("ParseField(%s, %q): %v is not a *FieldError", tt.key, tt.val, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]uint64{
		"1gbit": 1e9, "100Mbit": 1e8, "1.5mbit": 1_500_000, "8bit": 8, "1kibit": 1024, "10mbps": 80_000_000, "0bit": 0,
	} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mbit", "-1mbit", "1 parsec", "1e30gbit", "NaNbit"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %d, want an error", in, got)
		}
	}
}

// TestStringRoundTrips: String is tc syntax that parses back to the same.
func TestStringRoundTrips(t *testing.T) {
	specs := []Spec{
		{Delay: 20 * ms, Jitter: 2500 * time.Microsecond, DelayCorrelation: 10.5, Distribution: ParetoNormal,
			Duplicate: 1, DuplicateCorrelation: 2, Reorder: 25, ReorderCorrelation: 50, Gap: 3,
			Corrupt: 0.5, CorruptCorrelation: 3, GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1},
			Rate: 8 * (1<<32 + 8), Limit: 5000},
		{Delay: 1234567 * time.Nanosecond},
	}
	for _, p := range Presets() {
		specs = append(specs, p.Spec)
	}
	for _, s := range specs {
		txt := s.String()
		if s.IsZero() {
			if txt != "none" {
				t.Errorf("zero Spec renders %q", txt)
			}
			continue
		}
		got, err := Parse(txt)
		if err != nil || !equalSpec(got, s) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", txt, got, err, s)
		}
	}
	if got := Presets()[13].Spec.String(); got != "delay 10ms 1ms 25% corrupt 5%" {
		t.Errorf("delay-corruption-low renders %q", got)
	}
}

// FuzzParse: Parse never panics, and what it accepts renders back to
// text that parses to the same netem.
func FuzzParse(f *testing.F) {
	for _, p := range Presets() {
		f.Add(p.TC)
	}
	for _, s := range []string{"loss gemodel 1% 10% 70% 0.1%", "delay 10ms reorder 25% 50% gap 5", "rate 1gbit limit 1",
		"delay 1ms 1ms distribution normal", "10 ms", "delay 1e3ms", "loss -0%", "delay 1ms 1ms 1e-300%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse(%q) returned an invalid Spec: %v", in, err)
		}
		back, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q does not parse: %v", in, s.String(), err)
		}
		if !back.Matches(s) || back.Distribution != s.Distribution {
			t.Fatalf("Parse(%q) = %+v; String %q parses to %+v", in, s, s.String(), back)
		}
	})
}

// FuzzParseField: one study-file value for any key; never panics, and
// what it accepts (and validates) renders back to the same netem.
func FuzzParseField(f *testing.F) {
	for i, k := range Fields() {
		f.Add(uint8(i), map[string]string{FieldDelay: "10ms", FieldJitter: "1 ms", FieldDistribution: "normal",
			FieldLossModel: "1% 10% 70% 0.1%", FieldGap: "5", FieldLimit: "1000", FieldRate: "1gbit"}[k])
		f.Add(uint8(i), "25%")
	}
	f.Fuzz(func(t *testing.T, key uint8, value string) {
		fields := Fields()
		s := Spec{Delay: 10 * ms, Jitter: ms, Reorder: 1} // so dependent fields can validate
		if err := ParseField(&s, fields[int(key)%len(fields)], value); err != nil || s.Validate() != nil {
			return
		}
		back, err := Parse(s.String())
		if err != nil || !back.Matches(s) {
			t.Fatalf("%s=%q: %+v renders %q, which parses to %+v (%v)", fields[int(key)%len(fields)], value, s, s.String(), back, err)
		}
	})
}

// FuzzDecode: the parser of the kernel's netem dump never panics.
func FuzzDecode(f *testing.F) {
	for _, p := range Presets() {
		o, _ := p.Spec.options()
		f.Add(o.Serialize()[4:])
	}
	f.Add(make([]byte, 30))
	f.Fuzz(func(t *testing.T, b []byte) {
		decode(b)
		tbfLimitRate(b)
	})
}

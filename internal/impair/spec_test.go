package impair

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// One case per class of bad input, with the field named and the reason.
func TestValidateRejects(t *testing.T) {
	ge := func(g GilbertElliott) *GilbertElliott { return &g }
	tests := []struct {
		name  string
		spec  Spec
		field string
		msg   string
	}{
		{"negative delay", Spec{Delay: -ms}, FieldDelay, "-1ms is negative"},
		{"delay beyond u32 ticks", Spec{Delay: MaxDelay + 1}, FieldDelay, "above netem's maximum"},
		{"negative jitter", Spec{Delay: ms, Jitter: -ms}, FieldJitter, "is negative"},
		{"jitter beyond INT_MAX ns", Spec{Delay: 10 * time.Second, Jitter: MaxJitter + 1}, FieldJitter, "2^31-1 ns"},
		{"jitter without delay", Spec{Jitter: ms}, FieldJitter, "needs a delay"},
		{"unknown distribution", Spec{Delay: ms, Jitter: ms, Distribution: "gamma"}, FieldDistribution, `unknown distribution "gamma"`},
		{"distribution without jitter", Spec{Delay: ms, Distribution: Normal}, FieldDistribution, "needs a delay and a jitter"},
		{"loss above 100", Spec{Loss: 120}, FieldLoss, "120% is out of range 0..100%"},
		{"negative loss", Spec{Loss: -1}, FieldLoss, "-1% is out of range"},
		{"NaN loss", Spec{Loss: math.NaN()}, FieldLoss, "out of range"},
		{"correlation above 100", Spec{Delay: ms, Jitter: ms, DelayCorrelation: 101}, FieldDelayCorrelation, "out of range"},
		{"delay correlation without jitter", Spec{Delay: ms, DelayCorrelation: 25}, FieldDelayCorrelation, "needs a jitter"},
		{"loss correlation without loss", Spec{LossCorrelation: 25}, FieldLossCorrelation, "needs a random loss"},
		{"corrupt above 100", Spec{Corrupt: 100.5}, FieldCorrupt, "out of range"},
		{"corrupt correlation without corrupt", Spec{CorruptCorrelation: 5}, FieldCorruptCorrelation, "needs a corruption"},
		{"duplicate correlation without duplicate", Spec{DuplicateCorrelation: 5}, FieldDuplicateCorrelation, "needs a duplication"},
		{"reorder without delay", Spec{Reorder: 25}, FieldReorder, "needs a delay"},
		{"reorder correlation without reorder", Spec{Delay: ms, ReorderCorrelation: 50}, FieldReorderCorrelation, "needs a reordering"},
		{"gap without reorder", Spec{Delay: ms, Gap: 5}, FieldGap, "needs a reordering"},
		{"gemodel and random loss", Spec{Loss: 1, GE: ge(GilbertElliott{P: 1, R: 10, BadLoss: 100})}, FieldLossModel, "exclusive"},
		{"gemodel p zero", Spec{GE: ge(GilbertElliott{R: 10, BadLoss: 100})}, "gemodel.p", "never enters the bad state"},
		{"gemodel r above 100", Spec{GE: ge(GilbertElliott{P: 1, R: 110})}, "gemodel.r", "out of range"},
		{"rate not whole bytes", Spec{Rate: 1001}, FieldRate, "not a whole number of bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want a *FieldError", err)
			}
			if fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) {
				t.Errorf("Validate() = %q, want field %s and %q", err, tt.field, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), tt.field+": ") {
				t.Errorf("message %q does not start with the field", err)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, s := range []Spec{
		{},
		{Delay: MaxDelay, Jitter: MaxJitter, DelayCorrelation: 100, Distribution: ParetoNormal},
		{Loss: 100, LossCorrelation: 100},
		{GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1}},
		{Delay: 10 * ms, Reorder: 25, ReorderCorrelation: 50, Gap: 5},
		{Duplicate: 1, DuplicateCorrelation: 10, Corrupt: 0.1, CorruptCorrelation: 5},
		{Rate: 100_000_000, Limit: 1},
		{Delay: ms, Jitter: 5 * ms}, // jitter above delay: netem clips at 0, as tc allows
		{Delay: ms, Jitter: ms, Distribution: "uniform"},
	} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// TestKernelFieldByField: the units netem gets, each field checked.
func TestKernelFieldByField(t *testing.T) {
	p, err := LookupPreset("delay-corruption-medium")
	if err != nil {
		t.Fatal(err)
	}
	k := p.Spec.Kernel()
	want := Kernel{
		Latency:     100_000_000,
		Jitter:      10_000_000,
		Limit:       1000,       // tc's default
		DelayCorr:   1073741824, // rint(0.25 * (2^32-1)) = rint(1073741823.75)
		CorruptProb: 214748365,  // rint(0.05 * (2^32-1)) = rint(214748364.75)
	}
	if k != want {
		t.Errorf("Kernel() = %+v\nwant       %+v", k, want)
	}

	full := Spec{
		Delay: 20 * ms, Jitter: 2 * ms, DelayCorrelation: 10,
		Duplicate: 1, DuplicateCorrelation: 2,
		Reorder: 25, ReorderCorrelation: 50,
		Corrupt: 0.5, CorruptCorrelation: 3,
		GE:   &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1},
		Rate: 8 * (1<<32 + 8), Limit: 5000,
	}
	k = full.Kernel()
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"Latency", uint64(k.Latency), 20_000_000},
		{"Jitter", uint64(k.Jitter), 2_000_000},
		{"DelayCorr", uint64(k.DelayCorr), 429496730},
		{"Duplicate", uint64(k.Duplicate), 42949673},
		{"DuplicateCorr", uint64(k.DuplicateCorr), 85899346},
		{"ReorderProb", uint64(k.ReorderProb), 1073741824},
		{"ReorderCorr", uint64(k.ReorderCorr), 2147483648},
		{"Gap (tc's default 1 with reorder)", uint64(k.Gap), 1},
		{"CorruptProb", uint64(k.CorruptProb), 21474836},
		{"CorruptCorr", uint64(k.CorruptCorr), 128849019},
		{"GEP", uint64(k.GEP), 42949673},
		{"GER", uint64(k.GER), 429496730},
		{"GEH = 1 - BadLoss", uint64(k.GEH), math.MaxUint32 - 3006477106}, // rint(0.7*(2^32-1)): 0.7 is a hair below 7/10,
		{"GEK1", uint64(k.GEK1), 4294967},
		{"Rate bytes/s", k.Rate, 1<<32 + 8},
		{"Limit", uint64(k.Limit), 5000},
		{"Loss (GE replaces it)", uint64(k.Loss), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if !k.GE {
		t.Error("GE not set")
	}
}

// TestNetlinkAttrsFieldByField: the vishvananda/netlink view of a Spec.
func TestNetlinkAttrsFieldByField(t *testing.T) {
	s := Spec{
		Delay: 100 * ms, Jitter: 10 * ms, DelayCorrelation: 25,
		Loss: 5, LossCorrelation: 1,
		Duplicate: 2, DuplicateCorrelation: 3,
		Reorder: 4, ReorderCorrelation: 6,
		Corrupt: 7, CorruptCorrelation: 8,
		Rate: 800, Gap: 9,
	}
	a := s.NetlinkAttrs()
	checks := []struct {
		name      string
		got, want float64
	}{
		{"Latency µs", float64(a.Latency), 100_000},
		{"Jitter µs", float64(a.Jitter), 10_000},
		{"DelayCorr", float64(a.DelayCorr), 25},
		{"Limit", float64(a.Limit), DefaultLimit},
		{"Loss", float64(a.Loss), 5},
		{"LossCorr", float64(a.LossCorr), 1},
		{"Gap", float64(a.Gap), 9},
		{"Duplicate", float64(a.Duplicate), 2},
		{"DuplicateCorr", float64(a.DuplicateCorr), 3},
		{"ReorderProb", float64(a.ReorderProb), 4},
		{"ReorderCorr", float64(a.ReorderCorr), 6},
		{"CorruptProb", float64(a.CorruptProb), 7},
		{"CorruptCorr", float64(a.CorruptCorr), 8},
		{"Rate64 bytes/s", float64(a.Rate64), 100},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestEncodeDecodeRoundTrip: what options() sends, parsed as the kernel
// dump is parsed, gives back the same Kernel values, and its fixed part
// is the struct tc sends.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	specs := []Spec{
		{Delay: 20 * ms, Jitter: 2 * ms, DelayCorrelation: 10, Distribution: Normal,
			Duplicate: 1, DuplicateCorrelation: 2, Reorder: 25, ReorderCorrelation: 50, Gap: 3,
			Corrupt: 0.5, CorruptCorrelation: 3, GE: &GilbertElliott{P: 1, R: 10, BadLoss: 70, GoodLoss: 0.1},
			Rate: 8 * (1<<32 + 8), Limit: 5000},
		{Delay: MaxDelay, Jitter: MaxJitter},
		{Rate: 100_000_000},
	}
	for _, p := range Presets() {
		specs = append(specs, p.Spec)
	}
	for _, s := range specs {
		o, err := s.options()
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		b := o.Serialize()[4:] // the payload, after the rtattr header
		k, err := decode(b)
		if err != nil {
			t.Fatalf("%v: decode: %v", s, err)
		}
		if k != s.Kernel() {
			t.Errorf("%v:\ndecoded %+v\nwant    %+v", s, k, s.Kernel())
		}
		if got := k.Spec(); !s.Matches(got) {
			t.Errorf("%v: Kernel().Spec() = %v does not match", s, got)
		}
		// The legacy u32 fields: ticks of 64 ns, as kernels before 4.15 read.
		if lat := le32(b[0:]); lat != ticks(int64(s.Delay)) {
			t.Errorf("%v: qopt.latency = %d ticks", s, lat)
		}
		if lim := le32(b[4:]); lim != s.normalized().Limit {
			t.Errorf("%v: qopt.limit = %d", s, lim)
		}
	}
	if _, err := decode(make([]byte, 10)); err == nil {
		t.Error("decode of a short payload: want an error")
	}
}

func le32(b []byte) uint32 { return binary.NativeEndian.Uint32(b) }

// TestPctSnapsBack: percentages read back are the decimals written.
func TestPctSnapsBack(t *testing.T) {
	for _, p := range []float64{0, 0.1, 1, 5, 20, 25, 33.3, 40, 60, 99.99, 100, 0.001} {
		if got := pct(prob(p)); got != p {
			t.Errorf("pct(prob(%v)) = %v", p, got)
		}
	}
	if prob(100) != math.MaxUint32 || prob(0) != 0 {
		t.Errorf("prob(100) = %d, prob(0) = %d", prob(100), prob(0))
	}
}

// TestUniformSendsNoTable: "uniform" is netem's default, no table sent;
// the others send theirs.
func TestUniformSendsNoTable(t *testing.T) {
	for d, want := range map[Distribution]int{"uniform": 0, Uniform: 0, Normal: 8192, Pareto: 8192, ParetoNormal: 8192} {
		o, err := Spec{Delay: ms, Jitter: ms, Distribution: d}.options()
		if err != nil {
			t.Fatal(err)
		}
		b := o.Serialize()[4:]
		got := len(attrMap(t, b[sizeofQopt:])[2]) // TCA_NETEM_DELAY_DIST
		if got != want {
			t.Errorf("%q: table of %d bytes, want %d", d, got, want)
		}
	}
}

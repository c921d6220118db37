package impair

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/vishvananda/netlink/nl"
)

// netem attribute numbers the nl package (v1.3.1) does not name
// (include/uapi/linux/pkt_sched.h).
const (
	tcaNetemLatency64 = 10
	tcaNetemJitter64  = 11
	netemLossGE       = 2 // inside TCA_NETEM_LOSS
	sizeofQopt        = 24
)

// Kernel is a Spec as netem holds it: probabilities scaled to u32
// (0 = never, 2^32-1 = always, rounded as tc rounds), times in ns, rate in
// bytes/s. Two Specs install the same netem exactly when their Kernel
// values are equal; the distribution table is not part of it (the kernel
// never reports it).
type Kernel struct {
	Latency, Jitter          int64
	Limit, Gap               uint32
	Loss, LossCorr           uint32
	DelayCorr                uint32
	Duplicate, DuplicateCorr uint32
	ReorderProb, ReorderCorr uint32
	CorruptProb, CorruptCorr uint32
	GE                       bool
	GEP, GER, GEH, GEK1      uint32
	Rate                     uint64 // bytes/s
}

// Kernel returns s in netem's units. s should be valid.
func (s Spec) Kernel() Kernel {
	s = s.normalized()
	k := Kernel{
		Latency:       int64(s.Delay),
		Jitter:        int64(s.Jitter),
		Limit:         s.Limit,
		Gap:           s.Gap,
		Loss:          prob(s.Loss),
		LossCorr:      prob(s.LossCorrelation),
		DelayCorr:     prob(s.DelayCorrelation),
		Duplicate:     prob(s.Duplicate),
		DuplicateCorr: prob(s.DuplicateCorrelation),
		ReorderProb:   prob(s.Reorder),
		ReorderCorr:   prob(s.ReorderCorrelation),
		CorruptProb:   prob(s.Corrupt),
		CorruptCorr:   prob(s.CorruptCorrelation),
		Rate:          s.Rate / 8,
	}
	if g := s.GE; g != nil {
		k.GE = true
		k.GEP, k.GER, k.GEK1 = prob(g.P), prob(g.R), prob(g.GoodLoss)
		// The kernel's h is the chance of NOT losing in the bad state
		// (it drops when a draw exceeds h); tc's "1-H" is BadLoss.
		k.GEH = math.MaxUint32 - prob(g.BadLoss)
	}
	return k
}

// Matches reports whether the netem read back (got) is what s installs,
// the distribution aside.
func (s Spec) Matches(got Spec) bool { return s.Kernel() == got.Kernel() }

// prob scales a percentage as tc's set_percent does: rint(p * UINT32_MAX).
func prob(pct float64) uint32 { return uint32(math.RoundToEven(pct / 100 * math.MaxUint32)) }

// pct is prob's inverse, snapped to the shortest decimal that scales back
// to the same u32, so a 5% read back is 5, not 5.0000000058.
func pct(v uint32) float64 {
	x := float64(v) / math.MaxUint32 * 100
	for d := 0; d <= 12; d++ {
		m := math.Pow10(d)
		if c := math.Round(x*m) / m; prob(c) == v {
			return c
		}
	}
	return x
}

// Spec converts back to human units (Distribution unknown: uniform).
func (k Kernel) Spec() Spec {
	s := Spec{
		Delay:                time.Duration(k.Latency),
		Jitter:               time.Duration(k.Jitter),
		DelayCorrelation:     pct(k.DelayCorr),
		Loss:                 pct(k.Loss),
		LossCorrelation:      pct(k.LossCorr),
		Duplicate:            pct(k.Duplicate),
		DuplicateCorrelation: pct(k.DuplicateCorr),
		Reorder:              pct(k.ReorderProb),
		ReorderCorrelation:   pct(k.ReorderCorr),
		Corrupt:              pct(k.CorruptProb),
		CorruptCorrelation:   pct(k.CorruptCorr),
		Gap:                  k.Gap,
		Rate:                 k.Rate * 8,
		Limit:                k.Limit,
	}
	if k.GE {
		s.GE = &GilbertElliott{P: pct(k.GEP), R: pct(k.GER), BadLoss: pct(math.MaxUint32 - k.GEH), GoodLoss: pct(k.GEK1)}
	}
	return s
}

// options builds the TCA_OPTIONS attribute `tc qdisc add ... netem`
// sends for s: struct tc_netem_qopt, then the nested attributes.
func (s Spec) options() (*nl.RtAttr, error) {
	k := s.Kernel()
	qopt := nl.TcNetemQopt{
		// The u32 tick fields are what kernels before 4.15 read; newer
		// ones take the 64-bit ns attributes below instead.
		Latency:   ticks(k.Latency),
		Jitter:    ticks(k.Jitter),
		Limit:     k.Limit,
		Loss:      k.Loss,
		Gap:       k.Gap,
		Duplicate: k.Duplicate,
	}
	o := nl.NewRtAttr(nl.TCA_OPTIONS, qopt.Serialize())
	o.AddRtAttr(tcaNetemLatency64, i64(k.Latency))
	o.AddRtAttr(tcaNetemJitter64, i64(k.Jitter))
	corr := nl.TcNetemCorr{DelayCorr: k.DelayCorr, LossCorr: k.LossCorr, DupCorr: k.DuplicateCorr}
	o.AddRtAttr(nl.TCA_NETEM_CORR, corr.Serialize())
	if k.ReorderProb > 0 {
		r := nl.TcNetemReorder{Probability: k.ReorderProb, Correlation: k.ReorderCorr}
		o.AddRtAttr(nl.TCA_NETEM_REORDER, r.Serialize())
	}
	if k.CorruptProb > 0 {
		c := nl.TcNetemCorrupt{Probability: k.CorruptProb, Correlation: k.CorruptCorr}
		o.AddRtAttr(nl.TCA_NETEM_CORRUPT, c.Serialize())
	}
	if k.GE {
		loss := o.AddRtAttr(int(nl.TCA_NETEM_LOSS|nl.NLA_F_NESTED), nil)
		loss.AddRtAttr(netemLossGE, u32s(k.GEP, k.GER, k.GEH, k.GEK1))
	}
	if k.Rate > 0 {
		r := nl.TcNetemRate{Rate: uint32(min(k.Rate, math.MaxUint32))}
		if k.Rate >= 1<<32 {
			o.AddRtAttr(nl.TCA_NETEM_RATE64, u64(k.Rate))
			r.Rate = math.MaxUint32
		}
		o.AddRtAttr(nl.TCA_NETEM_RATE, r.Serialize())
	}
	if d := s.normalized().Distribution; d != Uniform {
		t, err := DistTable(d)
		if err != nil {
			return nil, err
		}
		b := make([]byte, 2*len(t))
		for i, v := range t {
			binary.NativeEndian.PutUint16(b[2*i:], uint16(v))
		}
		o.AddRtAttr(nl.TCA_NETEM_DELAY_DIST, b)
	}
	return o, nil
}

// decode parses a netem TCA_OPTIONS payload as the kernel dumps it
// (netem_dump: the qopt, then LATENCY64, JITTER64, CORR, REORDER,
// CORRUPT, RATE, [RATE64], [ECN], [LOSS], [SLOT], PRNG_SEED).
func decode(b []byte) (Kernel, error) {
	if len(b) < sizeofQopt {
		return Kernel{}, fmt.Errorf("netem options: %d bytes, want at least %d", len(b), sizeofQopt)
	}
	q := nl.DeserializeTcNetemQopt(b)
	k := Kernel{
		Latency:   int64(q.Latency) * int64(psched),
		Jitter:    int64(q.Jitter) * int64(psched),
		Limit:     q.Limit,
		Loss:      q.Loss,
		Gap:       q.Gap,
		Duplicate: q.Duplicate,
	}
	attrs, err := parseAttrs(b[sizeofQopt:])
	if err != nil {
		return Kernel{}, fmt.Errorf("netem options: %w", err)
	}
	var rate32 uint64
	var rate64 uint64
	for _, a := range attrs {
		v := a.Value
		switch a.Type {
		case tcaNetemLatency64:
			if len(v) >= 8 {
				k.Latency = int64(binary.NativeEndian.Uint64(v))
			}
		case tcaNetemJitter64:
			if len(v) >= 8 {
				k.Jitter = int64(binary.NativeEndian.Uint64(v))
			}
		case nl.TCA_NETEM_CORR:
			if len(v) >= nl.SizeofTcNetemCorr {
				c := nl.DeserializeTcNetemCorr(v)
				k.DelayCorr, k.LossCorr, k.DuplicateCorr = c.DelayCorr, c.LossCorr, c.DupCorr
			}
		case nl.TCA_NETEM_REORDER:
			if len(v) >= nl.SizeofTcNetemReorder {
				r := nl.DeserializeTcNetemReorder(v)
				k.ReorderProb, k.ReorderCorr = r.Probability, r.Correlation
			}
		case nl.TCA_NETEM_CORRUPT:
			if len(v) >= nl.SizeofTcNetemCorrupt {
				c := nl.DeserializeTcNetemCorrupt(v)
				k.CorruptProb, k.CorruptCorr = c.Probability, c.Correlation
			}
		case nl.TCA_NETEM_RATE:
			if len(v) >= 4 {
				rate32 = uint64(binary.NativeEndian.Uint32(v))
			}
		case nl.TCA_NETEM_RATE64:
			if len(v) >= 8 {
				rate64 = binary.NativeEndian.Uint64(v)
			}
		case nl.TCA_NETEM_LOSS:
			inner, err := parseAttrs(v)
			if err != nil {
				return Kernel{}, fmt.Errorf("netem loss model: %w", err)
			}
			for _, l := range inner {
				if l.Type != netemLossGE {
					return Kernel{}, fmt.Errorf("netem loss model %d is not Gilbert-Elliott (the 4-state model is not supported)", l.Type)
				}
				if len(l.Value) < 16 {
					return Kernel{}, fmt.Errorf("netem gemodel: %d bytes", len(l.Value))
				}
				k.GE = true
				k.GEP = binary.NativeEndian.Uint32(l.Value[0:])
				k.GER = binary.NativeEndian.Uint32(l.Value[4:])
				k.GEH = binary.NativeEndian.Uint32(l.Value[8:])
				k.GEK1 = binary.NativeEndian.Uint32(l.Value[12:])
			}
		}
	}
	// As the kernel: RATE64 holds rates that do not fit RATE's u32.
	k.Rate = max(rate32, rate64)
	return k, nil
}

func ticks(ns int64) uint32 { return uint32(min(ns/int64(psched), math.MaxUint32)) }

func i64(v int64) []byte { return u64(uint64(v)) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint64(b, v)
	return b
}

func u32s(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.NativeEndian.PutUint32(b[4*i:], v)
	}
	return b
}

package study

import "fmt"

// Verdict holds the criteria of the verdict table (the seed-003 paper's
// Table IX): a cell of a datapath, protocol and impairment passes when
// every criterion of its protocol holds. A criterion left out is not
// checked; Defaults fills the documented defaults when spec.verdict is
// given without one.
type Verdict struct {
	UDP UDPVerdict `yaml:"udp,omitempty"`
	TCP TCPVerdict `yaml:"tcp,omitempty"`
	// Published are a paper's own verdicts, shown beside ours.
	Published []PublishedVerdict `yaml:"published,omitempty"`
}

// PublishedVerdict is one ✓ or ✗ of a published verdict table. Workload,
// when given, is the workload (each variant of its sweep) or the one
// variant (NAME@VALUE) the paper judged, as a reference's: the verdict is
// set beside that cell's alone, not beside a rate the paper never judged.
type PublishedVerdict struct {
	Datapath   string `yaml:"datapath" json:"datapath"`
	Protocol   string `yaml:"protocol" json:"protocol"`
	Workload   string `yaml:"workload,omitempty" json:"workload,omitempty"`
	Impairment string `yaml:"impairment" json:"impairment"`
	Pass       bool   `yaml:"pass" json:"pass"`
}

// UDPVerdict: lost datagrams at most MaxLossPct percent and a receiver
// bitrate of at least MinBitrateOfOffered of the offered rate.
type UDPVerdict struct {
	MaxLossPct          *float64 `yaml:"maxLossPct,omitempty"`
	MinBitrateOfOffered *float64 `yaml:"minBitrateOfOffered,omitempty"`
}

// TCPVerdict: a receiver goodput of at least MinGoodputOfUnimpaired of
// the same datapath and workload's unimpaired (none) cell.
type TCPVerdict struct {
	MinGoodputOfUnimpaired *float64 `yaml:"minGoodputOfUnimpaired,omitempty"`
}

func validateVerdict(s *Study, bad badFunc) {
	v := s.Spec.Verdict
	if v == nil {
		return
	}
	validatePublished(s, v.Published, bad)
	check := func(field string, p *float64, hi float64) {
		// "Not inside" refuses NaN (YAML .nan) too, which fails every
		// comparison and would make every cell pass or fail silently.
		if p != nil && !(*p >= 0 && *p <= hi) {
			bad("spec.verdict."+field, "%g is outside 0..%g", *p, hi)
		}
	}
	check("udp.maxLossPct", v.UDP.MaxLossPct, 100)
	check("udp.minBitrateOfOffered", v.UDP.MinBitrateOfOffered, 1)
	check("tcp.minGoodputOfUnimpaired", v.TCP.MinGoodputOfUnimpaired, 1)
}

// String describes the criteria for the report.
func (v Verdict) String() string {
	s := ""
	if p := v.UDP.MaxLossPct; p != nil {
		s += fmt.Sprintf("UDP: lost datagrams ≤ %g%%; ", *p)
	}
	if p := v.UDP.MinBitrateOfOffered; p != nil {
		s += fmt.Sprintf("UDP: receiver bitrate ≥ %g × offered; ", *p)
	}
	if p := v.TCP.MinGoodputOfUnimpaired; p != nil {
		s += fmt.Sprintf("TCP: goodput ≥ %g × the unimpaired cell's; ", *p)
	}
	if len(s) > 2 {
		s = s[:len(s)-2]
	}
	return s
}

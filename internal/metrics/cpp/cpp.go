// Package cpp measures the CPU cost per packet (seed 004's CPP): while a
// transfer runs, perf samples every CPU with the cpu-clock software event
// (hardware cycle counters are often unavailable in VMs), each sample is
// attributed to a kernel component by the symbol it hit (components.yaml),
// and the CPU time of each component is divided by the packets counted on
// an interface over the same window.
//
// Design notes: cpu-clock with a fixed period (-c, in ns of CPU time)
// makes each sample worth exactly that many ns, so component costs are
// nanoseconds, not cycles; the report says so. Samples are self time (no
// call graph), so a component's cost is the time spent in its own
// functions, not in what they call. Idle samples are dropped; samples of
// processes that are not the workload or a softirq context are dropped,
// so other users of a shared machine do not inflate the cost. The
// components add up to the total exactly by construction ("other" is
// what no rule matched).
package cpp

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed components.yaml
var componentsYAML []byte

// Idle and Other are the two fixed component names.
const (
	Idle  = "idle"
	Other = "other"
)

// Map attributes symbols and commands.
type Map struct {
	Components []Component `yaml:"components"`
	Commands   []string    `yaml:"commands"`
}

// Component is one named group of symbol globs.
type Component struct {
	Name    string   `yaml:"name"`
	Symbols []string `yaml:"symbols"`
}

// DefaultMap returns the embedded components.yaml.
func DefaultMap() (*Map, error) { return ParseMap(componentsYAML) }

// ParseMap reads a components file.
func ParseMap(b []byte) (*Map, error) {
	var m Map
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("components map: %w", err)
	}
	for _, c := range m.Components {
		for _, g := range c.Symbols {
			if _, err := path.Match(g, ""); err != nil {
				return nil, fmt.Errorf("components map: %s: bad pattern %q", c.Name, g)
			}
		}
	}
	return &m, nil
}

// Names lists the components in file order plus Other (Idle excluded).
func (m *Map) Names() []string {
	var out []string
	for _, c := range m.Components {
		if c.Name != Idle {
			out = append(out, c.Name)
		}
	}
	return append(out, Other)
}

// Classify returns the component of a symbol.
func (m *Map) Classify(sym string) string {
	for _, c := range m.Components {
		for _, g := range c.Symbols {
			if ok, _ := path.Match(g, sym); ok {
				return c.Name
			}
		}
	}
	return Other
}

// Counts reports whether samples of command comm count.
func (m *Map) Counts(comm string) bool {
	for _, g := range m.Commands {
		if ok, _ := path.Match(g, comm); ok {
			return true
		}
	}
	return false
}

// Profile is perf's sample counts by (command, symbol).
type Profile struct {
	// Samples maps command and symbol to the number of samples.
	Samples map[[2]string]float64
}

// ParseReport reads `perf report --stdio --no-children --sort comm,sym
// -F sample,comm,sym -t ';' -q` output: "count;comm;[k] symbol".
func ParseReport(out []byte) (*Profile, error) {
	p := &Profile{Samples: map[[2]string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, ";", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("perf report line %q: want count;comm;symbol", clip(line))
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("perf report line %q: bad sample count", clip(line))
		}
		comm := strings.TrimSpace(parts[1])
		sym := strings.TrimSpace(parts[2])
		// "[k] name" (kernel), "[.] name" (user); drop the marker.
		if len(sym) > 4 && sym[0] == '[' && sym[2] == ']' {
			sym = strings.TrimSpace(sym[3:])
		}
		p.Samples[[2]string{comm, sym}] += n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// Breakdown is the CPU time of a window split by component.
type Breakdown struct {
	// NsByComponent is CPU time in ns per component (idle excluded).
	NsByComponent map[string]float64
	// TotalNs is the sum over components.
	TotalNs float64
	// IdleNs and ExcludedNs are what was left out: idle CPU, and samples
	// of other processes.
	IdleNs, ExcludedNs float64
}

// Attribute splits a profile with sample period periodNs by component.
func (m *Map) Attribute(p *Profile, periodNs float64) Breakdown {
	b := Breakdown{NsByComponent: map[string]float64{}}
	for _, n := range m.Names() {
		b.NsByComponent[n] = 0
	}
	for k, n := range p.Samples {
		ns := n * periodNs
		if !m.Counts(k[0]) {
			b.ExcludedNs += ns
			continue
		}
		c := m.Classify(k[1])
		if c == Idle {
			b.IdleNs += ns
			continue
		}
		b.NsByComponent[c] += ns
		b.TotalNs += ns
	}
	return b
}

// Metric names: cpp_<component>_ns per packet, the total, and the packet
// count used.
const (
	MetricTotal   = "cpp_total_ns"
	MetricPackets = "cpp_packets_count"
	MetricSKBs    = "cpp_skbs_count"
	prefix        = "cpp_"
	suffix        = "_ns"
)

// MetricName is the metric of a component's ns per packet.
func MetricName(component string) string { return prefix + component + suffix }

// ComponentOf returns the component of a metric name, if it is one.
func ComponentOf(metric string) (string, bool) {
	if !strings.HasPrefix(metric, prefix) || !strings.HasSuffix(metric, suffix) || metric == MetricTotal {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(metric, prefix), suffix), true
}

// PerPacket returns the metrics of a breakdown over packets.
func (b Breakdown) PerPacket(packets float64) map[string]float64 {
	out := map[string]float64{MetricPackets: packets}
	if packets <= 0 {
		return out
	}
	names := make([]string, 0, len(b.NsByComponent))
	for n := range b.NsByComponent {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out[MetricName(n)] = b.NsByComponent[n] / packets
	}
	out[MetricTotal] = b.TotalNs / packets
	return out
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

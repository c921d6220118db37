// Package cpp measures the CPU cost per packet (seed 004's CPP): while a
// transfer runs, perf samples every CPU, each sample is attributed to a
// kernel component by the symbol it hit (components.yaml), and the cost
// of each component is divided by the packets counted on an interface
// over the same window.
//
// Design notes: the event is chosen per run (ChooseEvent in event.go):
// hardware cycles where the machine counts them, else the cpu-clock
// software event (hardware counters are often unavailable in VMs). With a
// fixed period (-c) each sample is worth exactly that many cycles or ns
// of CPU time, so component costs are in the event's unit, and the unit
// is part of every metric name (cpp_vxlan_cycles, cpp_vxlan_ns): the two
// are never mixed. Samples are self time (no call graph), so a
// component's cost is the time spent in its own functions, not in what
// they call. Idle samples are dropped; samples of processes that are not
// the workload (its tools, or pktgen's generator threads and receiver),
// a softirq context or the datapath's own per-packet processes
// (Map.Counting) are dropped, so other users of a shared machine do not
// inflate the cost, and their cost per packet is a metric of its own
// (ExcludedMetric). The components add up to the
// total exactly by construction ("other" is what no rule matched).
package cpp

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"path"
	"slices"
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
	// Commands, where given, limits the rule to samples of those
	// processes (globs on the command): a symbol can be one process's
	// waiting and another's work (pktgen's clock reads, components.yaml).
	Commands []string `yaml:"commands"`
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
		// Their metrics are the total's and the excluded cost's.
		if c.Name == "total" || c.Name == Excluded {
			return nil, fmt.Errorf("components map: %q names no component (cpp_%s_* is not one)", c.Name, c.Name)
		}
		for _, g := range slices.Concat(c.Symbols, c.Commands) {
			if _, err := path.Match(g, ""); err != nil {
				return nil, fmt.Errorf("components map: %s: bad pattern %q", c.Name, g)
			}
		}
	}
	for _, g := range m.Commands {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("components map: commands: bad pattern %q", g)
		}
	}
	return &m, nil
}

// Names lists the components in file order plus Other, last (Idle
// excluded). A rule named Other (one that keeps symbols from a later
// rule) adds no second Other.
func (m *Map) Names() []string {
	var out []string
	for _, c := range m.Components {
		if c.Name != Idle && c.Name != Other && !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return append(out, Other)
}

// Classify returns the component of a symbol, by the rules that hold
// for every process (no commands of their own).
func (m *Map) Classify(sym string) string { return m.ClassifyIn("", sym) }

// ClassifyIn returns the component of a symbol a sample of command comm
// hit: a rule limited to some commands applies to theirs alone.
func (m *Map) ClassifyIn(comm, sym string) string {
	for _, c := range m.Components {
		if len(c.Commands) > 0 && !matchAny(c.Commands, comm) {
			continue
		}
		if matchAny(c.Symbols, sym) {
			return c.Name
		}
	}
	return Other
}

// Counts reports whether samples of command comm count.
func (m *Map) Counts(comm string) bool { return matchAny(m.Commands, comm) }

// Counting returns m with the samples of commands counted too: a
// datapath's own processes that carry every packet (flannel-udp's
// flanneld, datapath.PacketProcesses), attributed by symbol like the
// workload's. m itself is left as it is. Each command is taken as
// written, not as a glob.
func (m *Map) Counting(commands ...string) *Map {
	if len(commands) == 0 {
		return m
	}
	out := *m
	out.Commands = slices.Clone(m.Commands)
	for _, c := range commands {
		out.Commands = append(out.Commands, globQuote(c))
	}
	return &out
}

// globQuote escapes the characters path.Match reads as a pattern.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// matchAny reports whether s matches one of globs (checked by ParseMap).
func matchAny(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok {
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

// Breakdown is the CPU cost of a window split by component, in the unit
// of the sampled event (ns of CPU time or cycles).
type Breakdown struct {
	// ByComponent is the cost per component (idle excluded).
	ByComponent map[string]float64 `json:"by_component"`
	// Total is the sum over components.
	Total float64 `json:"total"`
	// Idle and Excluded are what was left out: idle CPU (and a packet
	// generator waiting for its next packet's time), and samples of
	// other processes (written per packet as the Excluded metric, so a
	// reader sees what the total leaves out: on a shared machine other
	// users' work, on wireguard the kworker threads' crypto).
	Idle     float64 `json:"idle"`
	Excluded float64 `json:"excluded"`
}

// Attribute splits a profile whose samples are each worth period units
// by component.
func (m *Map) Attribute(p *Profile, period float64) Breakdown {
	b := Breakdown{ByComponent: map[string]float64{}}
	for _, n := range m.Names() {
		b.ByComponent[n] = 0
	}
	for k, n := range p.Samples {
		v := n * period
		if !m.Counts(k[0]) {
			b.Excluded += v
			continue
		}
		c := m.ClassifyIn(k[0], k[1])
		if c == Idle {
			b.Idle += v
			continue
		}
		b.ByComponent[c] += v
		b.Total += v
	}
	return b
}

// Metric names: cpp_<component>_<unit> per packet, cpp_total_<unit>,
// cpp_excluded_<unit> (what the total leaves out, ExcludedMetric), and
// the packet counts used.
const (
	MetricTotal       = prefix + "total_" + UnitNs
	MetricTotalCycles = prefix + "total_" + UnitCycles
	MetricPackets     = "cpp_packets_count"
	MetricSKBs        = "cpp_skbs_count"
	// MetricSocketSegments is the data segments the measured devices'
	// TCP sockets carried in the busier direction: the packet count
	// where it is more than 1.5 times the devices' (packetsOf).
	MetricSocketSegments = "cpp_socket_segments_count"
	prefix               = "cpp_"
)

// Units lists the units CPP metrics come in.
var Units = []string{UnitNs, UnitCycles}

// MetricName is the metric of a component's cost per packet in unit.
func MetricName(component, unit string) string { return prefix + component + "_" + unit }

// TotalMetric is the metric of the total cost per packet in unit.
func TotalMetric(unit string) string { return MetricName("total", unit) }

// Excluded names the samples of processes that do not count.
const Excluded = "excluded"

// ExcludedMetric is the metric of the cost per packet in unit of the
// processes left out of the total (Breakdown.Excluded): not a component,
// and not in the total.
func ExcludedMetric(unit string) string { return MetricName(Excluded, unit) }

// ComponentOf returns the component and unit of a per-component metric,
// if it is one (the total and the excluded cost are not).
func ComponentOf(metric string) (component, unit string, ok bool) {
	if !strings.HasPrefix(metric, prefix) {
		return "", "", false
	}
	for _, u := range Units {
		if strings.HasSuffix(metric, "_"+u) && metric != TotalMetric(u) && metric != ExcludedMetric(u) {
			c := strings.TrimSuffix(strings.TrimPrefix(metric, prefix), "_"+u)
			if c != "" {
				return c, u, true
			}
		}
	}
	return "", "", false
}

// PerPacket returns the metrics of a breakdown in unit over packets.
func (b Breakdown) PerPacket(packets float64, unit string) map[string]float64 {
	out := map[string]float64{MetricPackets: packets}
	if packets <= 0 {
		return out
	}
	names := make([]string, 0, len(b.ByComponent))
	for n := range b.ByComponent {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out[MetricName(n, unit)] = b.ByComponent[n] / packets
	}
	out[TotalMetric(unit)] = b.Total / packets
	out[ExcludedMetric(unit)] = b.Excluded / packets
	return out
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

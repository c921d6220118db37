package advise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// Predicate is one condition of a rule. In YAML it is a string, "FACT OP
// NUMBER" (ops <, <=, >, >=, ==, !=), "FACT" or "not FACT" for a yes/no
// fact, or a mapping with one key: offload_off / offload_on FEATURE (the
// underlay NIC), tunnel_offload_off / tunnel_offload_on FEATURE (the
// overlay's tunnel device, see primaryTunnel), cni [names]. An offload
// predicate fails where the state it looks for is [fixed] (on every port
// that has it): the rules that use them propose changing the feature,
// which ethtool -K cannot do to a fixed one.
type Predicate struct {
	Text    string
	kind    string // compare, bool, offload, tunnel_offload, cni
	fact    string
	op      string
	num     float64
	want    bool
	feature string
	names   []string
}

var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// UnmarshalYAML parses and validates a predicate.
func (p *Predicate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.Text = n.Value
		if err := p.parseString(n.Value); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return fmt.Errorf("line %d: a predicate is a string or a mapping with one key", n.Line)
	}
	key, val := n.Content[0].Value, n.Content[1]
	switch key {
	case "offload_off", "offload_on", "tunnel_offload_off", "tunnel_offload_on":
		if val.Kind != yaml.ScalarNode || !slices.Contains(inspect.Features, val.Value) {
			return fmt.Errorf("line %d: %s: %q is not an inspected feature (%s)", n.Line, key, val.Value, strings.Join(inspect.Features, ", "))
		}
		p.kind, p.feature, p.want = "offload", val.Value, strings.HasSuffix(key, "_on")
		if strings.HasPrefix(key, "tunnel_") {
			p.kind = "tunnel_offload"
		}
		p.Text = key + ": " + val.Value
	case "cni":
		if err := val.Decode(&p.names); err != nil || len(p.names) == 0 {
			return fmt.Errorf("line %d: cni: want a list of CNI names", n.Line)
		}
		p.kind = "cni"
		p.Text = "cni in [" + strings.Join(p.names, ", ") + "]"
	default:
		return fmt.Errorf("line %d: unknown predicate %q (offload_off, offload_on, tunnel_offload_off, tunnel_offload_on, cni, or a string)", n.Line, key)
	}
	return nil
}

func (p *Predicate) parseString(s string) error {
	f := strings.Fields(s)
	switch {
	case len(f) == 1:
		p.kind, p.fact, p.want = "bool", f[0], true
	case len(f) == 2 && f[0] == "not":
		p.kind, p.fact, p.want = "bool", f[1], false
	case len(f) == 3 && slices.Contains(ops, f[1]):
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%q: %q is not a number", s, f[2])
		}
		p.kind, p.fact, p.op, p.num = "compare", f[0], f[1], v
	default:
		return fmt.Errorf("%q: want \"FACT OP NUMBER\", \"FACT\" or \"not FACT\"", s)
	}
	if _, ok := facts[p.fact]; !ok {
		return fmt.Errorf("%q: unknown fact %q (known: %s)", s, p.fact, strings.Join(FactNames(), ", "))
	}
	return nil
}

// eval says whether the predicate holds, with what was read; an error
// means the inspection cannot tell.
func (p *Predicate) eval(in *inspect.Inspection) (bool, string, error) {
	switch p.kind {
	case "compare", "bool":
		// The caller puts the predicate's text, which names the fact,
		// in front of an error.
		v, err := facts[p.fact](in)
		if err != nil {
			return false, "", err
		}
		if p.kind == "bool" {
			if !v.isBool {
				return false, "", fmt.Errorf("%s is a number, not yes/no", p.fact)
			}
			read := fmt.Sprintf("%s = %v", p.fact, v.yes)
			if v.note != "" {
				read += "; " + v.note
			}
			return v.yes == p.want, read, nil
		}
		if v.isBool {
			return false, "", fmt.Errorf("%s is yes/no, not a number", p.fact)
		}
		return compare(v.num, p.op, p.num), fmt.Sprintf("%s = %s", p.fact, v), nil
	case "offload":
		// Over a bond: on when every port has it on, off when any port
		// has it off (the knob then goes on every port).
		ns, err := nics(in)
		if err == nil {
			err = knownEach(in, "offloads", ns)
		}
		if err != nil {
			return false, "", err
		}
		on, changeable := true, false
		var read []string
		for _, n := range ns {
			o, ok := n.Offloads[p.feature]
			if !ok {
				return false, "", fmt.Errorf("%s does not report %s", n.Name, p.feature)
			}
			on = on && o.On
			changeable = changeable || (o.On == p.want && !o.Fixed)
			read = append(read, fmt.Sprintf("%s %s = %s%s", n.Name, p.feature, onOff(o.On), fixed(o)))
		}
		if on == p.want && !changeable {
			return false, strings.Join(read, ", ") + ": fixed by the driver", nil
		}
		return on == p.want, strings.Join(read, ", "), nil
	case "tunnel_offload":
		t := primaryTunnel(in)
		if t == nil {
			return false, "no tunnel device", known(in, "devices")
		}
		if err := known(in, "offloads "+t.Name); err != nil {
			return false, "", err
		}
		o, ok := t.Offloads[p.feature]
		if !ok {
			return false, "", fmt.Errorf("%s does not report %s", t.Name, p.feature)
		}
		read := fmt.Sprintf("%s %s = %s%s", t.Name, p.feature, onOff(o.On), fixed(o))
		if o.On == p.want && o.Fixed {
			return false, read + ": fixed by the driver", nil
		}
		return o.On == p.want, read, nil
	case "cni":
		return slices.Contains(p.names, in.CNI.Name), "cni = " + cniString(in.CNI), nil
	}
	return false, "", fmt.Errorf("predicate %q: unknown kind", p.Text)
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func fixed(o inspect.Offload) string {
	if o.Fixed {
		return " [fixed]"
	}
	return ""
}

func cniString(c inspect.CNI) string {
	if c.Mode != "" {
		return c.Name + " (" + c.Mode + ")"
	}
	return c.Name
}

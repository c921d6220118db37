package study

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/impair"
)

// Impairment is one entry of spec.impairments: a network impairment (a
// netem specification) applied for each trial of a cell. It is written
// either as the name of a built-in preset (impair.Presets: "none" and the
// seed-003 paper's Table II, "delay-low" ... "delay-corruption-high") or as
// a mapping that defines one with impair.ParseField's keys:
//
//   - name: wan
//     delay: 50ms
//     jitter: 5ms
//     loss: 1%
//
// The spec is resolved by Netem, and checked by Validate (file:line:field).
type Impairment struct {
	Name string `yaml:"name"`
	// Fields are the inline definition's netem fields (delay, jitter,
	// loss, ...), as written; empty for a preset.
	Fields map[string]string `yaml:",inline"`
}

// NoImpairment is the preset that changes nothing; its cells have an
// empty results.Cell.Impairment, as runs made before impairments existed.
const NoImpairment = "none"

// ImpairAt says where a study's impairments are applied.
type ImpairAt struct {
	// Where is the device: client-tunnel (the paper's "client's flannel
	// interface", the default), server-tunnel, underlay (the client
	// node's), client-pods (the measured client pods' host-side veths).
	Where string `yaml:"where,omitempty"`
	// Direction is egress (the default) or ingress (through an ifb).
	Direction string `yaml:"direction,omitempty"`
}

// Where an impairment goes.
const (
	WhereClientTunnel = "client-tunnel"
	WhereServerTunnel = "server-tunnel"
	WhereUnderlay     = "underlay"
	WhereClientPods   = "client-pods"
	DirEgress         = "egress"
	DirIngress        = "ingress"
)

// Wheres lists the valid devices.
func Wheres() []string {
	return []string{WhereClientTunnel, WhereServerTunnel, WhereUnderlay, WhereClientPods}
}

// UnmarshalYAML accepts a preset name or a definition.
func (m *Impairment) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*m = Impairment{Name: n.Value}
		return nil
	}
	type plain Impairment
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*m = Impairment(p)
	return nil
}

// MarshalYAML writes a preset by name and a definition in full.
func (m Impairment) MarshalYAML() (any, error) {
	if len(m.Fields) == 0 {
		return m.Name, nil
	}
	type plain Impairment
	return plain(m), nil
}

// IsNone reports whether the impairment changes nothing.
func (m Impairment) IsNone() bool {
	s, err := m.Netem()
	return err == nil && s.IsZero()
}

// CellName is the impairment's name in a results.Cell: "" for none.
func (m Impairment) CellName() string {
	if m.Name == NoImpairment && len(m.Fields) == 0 {
		return ""
	}
	return m.Name
}

// Netem resolves the impairment to its netem specification. A field error
// names the field as "FIELD" (a key of the definition) or "" (the name).
func (m Impairment) Netem() (impair.Spec, error) {
	if len(m.Fields) == 0 {
		p, err := impair.LookupPreset(m.Name)
		if err != nil {
			return impair.Spec{}, &impairmentError{msg: fmt.Sprintf("unknown impairment preset %q (built-in: %s; or define one with name and netem fields)",
				m.Name, strings.Join(impair.PresetNames(), ", "))}
		}
		return p.Spec, nil
	}
	var s impair.Spec
	keys := make([]string, 0, len(m.Fields))
	for k := range m.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := impair.ParseField(&s, k, m.Fields[k]); err != nil {
			return s, &impairmentError{field: k, msg: err.Error()}
		}
	}
	if err := s.Validate(); err != nil {
		var fe *impair.FieldError
		field := ""
		if ok := asFieldError(err, &fe); ok {
			field = fe.Field
		}
		return s, &impairmentError{field: field, msg: err.Error()}
	}
	return s, nil
}

type impairmentError struct{ field, msg string }

func (e *impairmentError) Error() string { return e.msg }

func asFieldError(err error, fe **impair.FieldError) bool {
	f, ok := err.(*impair.FieldError)
	if ok {
		*fe = f
	}
	return ok
}

// Impairment returns the study's impairment whose cell name is name (""
// is none, whether or not the study lists it).
func (s *Study) Impairment(name string) (Impairment, bool) {
	for _, m := range s.Spec.Impairments {
		if m.CellName() == name {
			return m, true
		}
	}
	if name == "" {
		return Impairment{Name: NoImpairment}, true
	}
	return Impairment{}, false
}

// ImpairmentCells lists the cell names of the study's impairments, in
// order; one "" (none) when the study has no impairments.
func (s *Study) ImpairmentCells() []string {
	if len(s.Spec.Impairments) == 0 {
		return []string{""}
	}
	out := make([]string, len(s.Spec.Impairments))
	for i, m := range s.Spec.Impairments {
		out[i] = m.CellName()
	}
	return out
}

// Impaired reports whether any of the study's impairments changes
// something.
func (s *Study) Impaired() bool {
	for _, m := range s.Spec.Impairments {
		if !m.IsNone() {
			return true
		}
	}
	return false
}

// ImpairDefaults fills spec.impairAt's defaults.
func (sp *Spec) impairDefaults() {
	if sp.ImpairAt.Where == "" {
		sp.ImpairAt.Where = WhereClientTunnel
	}
	if sp.ImpairAt.Direction == "" {
		sp.ImpairAt.Direction = DirEgress
	}
}

// validateImpairments checks spec.impairments and spec.impairAt.
func validateImpairments(sp *Spec, bad badFunc) {
	sp.impairDefaults()
	if !contains(Wheres(), sp.ImpairAt.Where) {
		bad("spec.impairAt.where", "unknown device %q (one of %s)", sp.ImpairAt.Where, strings.Join(Wheres(), ", "))
	}
	if d := sp.ImpairAt.Direction; d != DirEgress && d != DirIngress {
		bad("spec.impairAt.direction", "unknown direction %q (egress or ingress)", d)
	}
	seen := map[string]bool{}
	for i, m := range sp.Impairments {
		f := fmt.Sprintf("spec.impairments[%d]", i)
		if strings.TrimSpace(m.Name) == "" {
			bad(f+".name", "missing")
			continue
		}
		if !nameRE.MatchString(m.Name) {
			bad(f+".name", "%q: use letters, digits, '.', '_' and '-'", m.Name)
		}
		if len(m.Fields) > 0 {
			if _, err := impair.LookupPreset(m.Name); err == nil {
				bad(f+".name", "%q is a built-in preset; give the definition another name", m.Name)
			}
		}
		if seen[m.Name] {
			bad(f+".name", "duplicate impairment %q", m.Name)
		}
		seen[m.Name] = true
		if _, err := m.Netem(); err != nil {
			ie, _ := err.(*impairmentError)
			switch {
			case ie != nil && ie.field != "" && len(m.Fields) > 0:
				bad(f+"."+ie.field, "%s", strings.TrimPrefix(ie.msg, ie.field+": "))
			default:
				bad(f, "%v", err)
			}
		}
	}
}

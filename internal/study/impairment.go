package study

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Impairment is one entry of spec.impairments: a network impairment (a
// netem specification) applied for each trial of a cell. It is written
// either as the name of a built-in preset (package impair: "none" and the
// seed-003 paper's Table II, "delay-low" ... "delay-corruption-high") or as
// a mapping that defines one with netem fields (impair.ParseField's keys):
//
//   - name: wan
//     delay: 50ms
//     jitter: 5ms
//     loss: 1%
//
// The study stays pure data: impair.Resolve turns it into a netem
// specification, and Validate checks it through Catalog.CheckImpairment
// (file:line:field).
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

// Carries is the way of the traffic the netem at this place impairs
// (defaults for empty fields: client-tunnel, egress). netem acts on what
// a device sends (egress), or through an ifb on what it receives
// (ingress). The client node's tunnel device and underlay send
// client->server; the server node's tunnel device sends server->client,
// and so do the client pods' host-side veths, which send into the pods.
func (a ImpairAt) Carries() spec.Flow {
	f := spec.ClientToServer
	if a.Where == WhereServerTunnel || a.Where == WhereClientPods {
		f = spec.ServerToClient
	}
	if a.Direction == DirIngress {
		return f.Reverse()
	}
	return f
}

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

// IsNone reports whether the impairment is the "none" preset.
func (m Impairment) IsNone() bool { return m.Name == NoImpairment && len(m.Fields) == 0 }

// CellName is the impairment's name in a results.Cell: "" for none.
func (m Impairment) CellName() string {
	if m.IsNone() {
		return ""
	}
	return m.Name
}

// ImpairmentError is what Catalog.CheckImpairment returns for a bad
// field of a definition: Field is its key.
type ImpairmentError struct {
	Field string
	Err   error
}

func (e *ImpairmentError) Error() string { return e.Err.Error() }
func (e *ImpairmentError) Unwrap() error { return e.Err }

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

// Impaired reports whether the study has an impairment other than none.
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

// validateImpairments checks spec.impairments and spec.impairAt; the
// catalog's CheckImpairment (when set) resolves each impairment.
func validateImpairments(sp *Spec, cat Catalog, bad badFunc) {
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
		if len(m.Fields) > 0 && m.Name == NoImpairment {
			bad(f+".name", "%q is the built-in preset that changes nothing; give the definition another name", m.Name)
		}
		// A definition named as a preset would be taken for it where
		// cells match by name: compare lines up impaired cells of two
		// runs by the impairment's name alone.
		if len(m.Fields) > 0 && m.Name != NoImpairment && cat.CheckImpairment != nil && cat.CheckImpairment(Impairment{Name: m.Name}) == nil {
			bad(f+".name", "%q is a built-in preset (Table II); give the definition another name, or name the preset alone", m.Name)
		}
		if seen[m.Name] {
			bad(f+".name", "duplicate impairment %q", m.Name)
		}
		seen[m.Name] = true
		if cat.CheckImpairment == nil {
			continue
		}
		if err := cat.CheckImpairment(m); err != nil {
			var ie *ImpairmentError
			if errors.As(err, &ie) && ie.Field != "" && len(m.Fields) > 0 {
				bad(f+"."+ie.Field, "%s", strings.TrimPrefix(ie.Err.Error(), ie.Field+": "))
			} else {
				bad(f, "%v", err)
			}
		}
	}
}

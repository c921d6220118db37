// Package advise turns an inspection of a node into candidate knobs that
// may make its pod network faster, each with the evidence behind it, its
// risk and how to make it permanent. The rules are data: one YAML file
// per rule under rules/, listed in ruleFiles; the conditions they may
// state are a few typed predicates evaluated here (facts.go), never code.
//
// Nothing here changes the machine: a candidate is a proposal printed for
// review. Measuring it (--prove) is internal/prove's: each rule states its A/B.
package advise

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/advise/inspect"

	"github.com/cnibench/cnibench/internal/suggest"
)

// ruleFiles is the one list of rules: a new rule is a file under rules/
// and a line here.
var ruleFiles = []string{
	"rfs.yaml",
	"tunnel-mtu.yaml",
	"tunnel-gro.yaml",
	"nic-gro.yaml",
	"overlay-offload.yaml",
	"native-routing.yaml",
	"netfilter-rules.yaml",
	"conntrack-size.yaml",
	"macvlan.yaml",
	"numa-placement.yaml",
	"irq-spread.yaml",
	"busy-poll.yaml",
	"cpu-idle.yaml",
}

//go:embed rules/*.yaml
var ruleFS embed.FS

// Rule is one rule file.
type Rule struct {
	Name  string `yaml:"name" json:"name"`
	Title string `yaml:"title" json:"title"`
	// When holds the predicates; the rule proposes its knobs when all hold.
	When      []Predicate `yaml:"when" json:"-"`
	Knobs     []Knob      `yaml:"knobs" json:"knobs"`
	Effect    string      `yaml:"effect" json:"effect"`
	Evidence  []Evidence  `yaml:"evidence" json:"evidence"`
	Risk      string      `yaml:"risk" json:"risk"`
	Permanent []Permanent `yaml:"permanent" json:"permanent"`
	// Prove is the A/B that `advise --prove` runs for the candidate: spec
	// fields (ProveFields) set over the workload-shape study, as
	// `cnibench run --set KEY=VALUE` would, values with {placeholders}.
	// The first tuning (or datapath) is A, this machine as it is; the
	// second is B, the candidate. Empty: the rule cannot be shown on
	// emulated nodes, and NoProof says why.
	Prove   yaml.Node `yaml:"prove,omitempty" json:"-"`
	NoProof string    `yaml:"noProof,omitempty" json:"no_proof,omitempty"`
	// Answers are the findings of a run (Findings; `advise --run`) the
	// candidate addresses: a sighting of one is shown with it.
	Answers []string `yaml:"answers,omitempty" json:"answers,omitempty"`
}

// ProveFields are the spec fields a rule's prove may set: what makes the
// A and the B, never the workload, so the user's study keeps its shape.
var ProveFields = []string{"datapaths", "tunings", "baseline", "nodes", "link"}

// ShapeFields are the spec fields a rule's prove may also set, for the
// built-in workload shape only (no --study): where the candidate's
// effect shows, when the built-in A/B's bulk TCP would not show it
// (busy polling shortens request/response round trips). A --study keeps
// its own.
var ShapeFields = []string{"workloads", "replicas"}

// Knob is one change a candidate proposes, with its exact parameters.
// Device and parameter values may hold {placeholders} that the
// inspection fills (see params.go).
type Knob struct {
	// Kind says which knob --prove will apply (see KnobKinds).
	Kind   string            `yaml:"kind" json:"kind"`
	Device string            `yaml:"device,omitempty" json:"device,omitempty"`
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
}

// KnobKinds are the knob kinds a rule may propose.
var KnobKinds = []string{"rfs", "mtu", "offload", "overlay", "routing", "netfilter", "conntrack", "attachment", "placement", "irq-affinity", "sysctl", "cpu-idle"}

// Evidence is a published source and what it found.
type Evidence struct {
	Source  string `yaml:"source" json:"source"`
	Finding string `yaml:"finding" json:"finding"`
}

// Permanent is how to make a knob outlive a reboot, for review.
type Permanent struct {
	// Kind: sysctl.d, modules-load.d, modprobe.d, udev, systemd,
	// cni-config, daemonset, kubelet, command.
	Kind string `yaml:"kind" json:"kind"`
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	Text string `yaml:"text" json:"text"`
}

var permanentKinds = []string{"sysctl.d", "modules-load.d", "modprobe.d", "udev", "systemd", "cni-config", "daemonset", "kubelet", "command"}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Rules returns every rule, in ruleFiles order.
func Rules() ([]*Rule, error) {
	var out []*Rule
	for _, f := range ruleFiles {
		b, err := ruleFS.ReadFile("rules/" + f)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", f, err)
		}
		r, err := ParseRule(b)
		if err != nil {
			return nil, fmt.Errorf("rules/%s: %w", f, err)
		}
		if r.Name+".yaml" != f {
			return nil, fmt.Errorf("rules/%s: name %q does not match the file name", f, r.Name)
		}
		out = append(out, r)
	}
	return out, nil
}

// Names lists the rule names, in ruleFiles order.
func Names() []string {
	out := make([]string, len(ruleFiles))
	for i, f := range ruleFiles {
		out[i] = strings.TrimSuffix(f, ".yaml")
	}
	return out
}

// Lookup returns the named rules, in the order asked and each once; an
// unknown name is an error that lists the known ones.
func Lookup(names ...string) ([]*Rule, error) {
	all, err := Rules()
	if err != nil {
		return nil, err
	}
	byName := map[string]*Rule{}
	for _, r := range all {
		byName[r.Name] = r
	}
	var out []*Rule
	seen := map[string]bool{}
	for _, n := range names {
		r, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown rule %q (%sknown: %s)", n, suggest.Hint(n, Names()), strings.Join(Names(), ", "))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseRule reads and validates one rule file.
func ParseRule(b []byte) (*Rule, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var r Rule
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *Rule) validate() error {
	switch {
	case !nameRE.MatchString(r.Name):
		return fmt.Errorf("name %q: want lower-case words joined by -", r.Name)
	case r.Title == "" || r.Effect == "" || r.Risk == "":
		return fmt.Errorf("rule %s: title, effect and risk are required", r.Name)
	case len(r.When) == 0:
		return fmt.Errorf("rule %s: when: at least one predicate", r.Name)
	case len(r.Knobs) == 0:
		return fmt.Errorf("rule %s: knobs: at least one", r.Name)
	case len(r.Evidence) == 0:
		return fmt.Errorf("rule %s: evidence: at least one source", r.Name)
	case len(r.Permanent) == 0:
		return fmt.Errorf("rule %s: permanent: at least one form", r.Name)
	}
	for _, a := range r.Answers {
		if !slices.Contains(Findings, a) {
			return fmt.Errorf("rule %s: answers: %q is not a finding (%s)", r.Name, a, strings.Join(Findings, ", "))
		}
	}
	if err := checkPlaceholders(r.Effect); err != nil {
		return fmt.Errorf("rule %s: effect: %w", r.Name, err)
	}
	for i, k := range r.Knobs {
		if !slices.Contains(KnobKinds, k.Kind) {
			return fmt.Errorf("rule %s: knobs[%d]: kind %q is not one of %s", r.Name, i, k.Kind, strings.Join(KnobKinds, ", "))
		}
		if err := checkPlaceholders(k.Device); err != nil {
			return fmt.Errorf("rule %s: knobs[%d].device: %w", r.Name, i, err)
		}
		for p, v := range k.Params {
			if err := checkPlaceholders(v); err != nil {
				return fmt.Errorf("rule %s: knobs[%d].params.%s: %w", r.Name, i, p, err)
			}
		}
	}
	if err := r.validateProve(); err != nil {
		return err
	}
	for i, e := range r.Evidence {
		if e.Source == "" || e.Finding == "" {
			return fmt.Errorf("rule %s: evidence[%d]: source and finding are required", r.Name, i)
		}
	}
	for i, p := range r.Permanent {
		if !slices.Contains(permanentKinds, p.Kind) {
			return fmt.Errorf("rule %s: permanent[%d]: kind %q is not one of %s", r.Name, i, p.Kind, strings.Join(permanentKinds, ", "))
		}
		if p.Text == "" {
			return fmt.Errorf("rule %s: permanent[%d]: text is required", r.Name, i)
		}
		for _, s := range []string{p.Path, p.Text} {
			if err := checkPlaceholders(s); err != nil {
				return fmt.Errorf("rule %s: permanent[%d]: %w", r.Name, i, err)
			}
		}
	}
	return nil
}

// ProvesDatapaths reports whether the rule's A/B sets datapaths.
func (r *Rule) ProvesDatapaths() bool {
	for i := 0; i+1 < len(r.Prove.Content); i += 2 {
		if r.Prove.Content[i].Value == "datapaths" {
			return true
		}
	}
	return false
}

// Provable reports whether the rule has an A/B.
func (r *Rule) Provable() bool { return r.Prove.Kind == yaml.MappingNode && len(r.Prove.Content) > 0 }

func (r *Rule) validateProve() error {
	if !r.Provable() && r.NoProof == "" {
		return fmt.Errorf("rule %s: give prove (the A/B) or noProof (why it cannot be measured on emulated nodes)", r.Name)
	}
	if r.Prove.Kind != 0 && r.Prove.Kind != yaml.MappingNode {
		return fmt.Errorf("rule %s: prove: a mapping of spec fields", r.Name)
	}
	for i := 0; i+1 < len(r.Prove.Content); i += 2 {
		if k := r.Prove.Content[i].Value; !slices.Contains(ProveFields, k) && !slices.Contains(ShapeFields, k) {
			return fmt.Errorf("rule %s: prove.%s: may set only %s, and for the built-in workload shape %s",
				r.Name, k, strings.Join(ProveFields, ", "), strings.Join(ShapeFields, ", "))
		}
	}
	check := func(s string) (string, error) { return s, checkPlaceholders(s) }
	if _, err := r.proveSets(ProveFields, check); err != nil {
		return err
	}
	_, err := r.proveSets(ShapeFields, check)
	return err
}

// ProveSets are the rule's prove as --set overrides, placeholders filled
// from the inspection, in a stable order.
func (r *Rule) ProveSets(in *inspect.Inspection) ([]string, error) {
	return r.proveSets(ProveFields, func(s string) (string, error) { return fill(s, in) })
}

// ShapeSets are the rule's prove fields of ShapeFields as --set
// overrides: the workload shape its A/B needs when the user gives none.
func (r *Rule) ShapeSets(in *inspect.Inspection) ([]string, error) {
	return r.proveSets(ShapeFields, func(s string) (string, error) { return fill(s, in) })
}

// proveSets are the rule's prove fields among fields as --set overrides.
func (r *Rule) proveSets(fields []string, f func(string) (string, error)) ([]string, error) {
	var out []string
	for i := 0; i+1 < len(r.Prove.Content); i += 2 {
		k, n := r.Prove.Content[i].Value, *r.Prove.Content[i+1]
		if !slices.Contains(fields, k) {
			continue
		}
		flowStyle(&n)
		b, err := yaml.Marshal(&n)
		if err != nil {
			return nil, fmt.Errorf("rule %s: prove.%s: %w", r.Name, k, err)
		}
		// A value that is only a placeholder is quoted by the encoder
		// ("{tunnel_mtu}"); unquoted, it fills in as the number it is.
		text := bareRE.ReplaceAllString(strings.TrimSpace(string(b)), "$1")
		v, err := f(text)
		if err != nil {
			return nil, fmt.Errorf("rule %s: prove.%s: %w", r.Name, k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

var bareRE = regexp.MustCompile(`["'](\{[a-z_]+\})["']`)

// flowStyle writes a node on one line, as a --set value is; the node's
// children are copied first, so the rule keeps its own.
func flowStyle(n *yaml.Node) {
	n.Style |= yaml.FlowStyle
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	kids := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		cc := *c
		flowStyle(&cc)
		kids[i] = &cc
	}
	n.Content = kids
}

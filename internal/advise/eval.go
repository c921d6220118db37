package advise

import (
	"errors"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// Status of a rule on one inspection.
const (
	// Candidate: every predicate holds; the knobs are proposed.
	Candidate = "candidate"
	// NotApplicable: a predicate does not hold.
	NotApplicable = "not applicable"
	// Unknown: no predicate fails but the inspection cannot tell one of
	// them, or cannot fill a parameter.
	Unknown = "unknown"
)

// Result is one rule evaluated on one inspection.
type Result struct {
	Rule   *Rule  `json:"-"`
	Name   string `json:"rule"`
	Status string `json:"status"`
	// Why holds what was read for each predicate, or the reason the rule
	// does not apply or cannot be decided.
	Why []string `json:"why"`
	// Knobs and Permanent are the rule's, with placeholders filled (set
	// for candidates only).
	Knobs     []Knob      `json:"knobs,omitempty"`
	Effect    string      `json:"effect,omitempty"`
	Permanent []Permanent `json:"permanent,omitempty"`
}

// Evaluate runs a rule on an inspection. A predicate that fails decides
// (not applicable) even when another is unknown.
func Evaluate(r *Rule, in *inspect.Inspection) Result {
	res := Result{Rule: r, Name: r.Name}
	var failed, unknown, live []string
	for i := range r.When {
		p := &r.When[i]
		if p.needsMachine(in) {
			live = append(live, p.Text)
			continue
		}
		ok, read, err := p.eval(in)
		switch {
		case err != nil:
			unknown = append(unknown, p.Text+": "+err.Error())
		case !ok:
			failed = append(failed, p.Text+": no ("+read+")")
		default:
			res.Why = append(res.Why, p.Text+": yes ("+read+")")
		}
	}
	switch {
	case len(failed) > 0:
		res.Status, res.Why = NotApplicable, failed
		return res
	case len(live) > 0:
		res.Status, res.Why = LeftOut, leftOutWhy(in, live)
		return res
	case len(unknown) > 0:
		res.Status, res.Why = Unknown, unknown
		return res
	}
	knobs, perm, err := r.fill(in)
	if err == nil {
		res.Effect, err = fill(r.Effect, in)
	}
	if lp := (liveParam{}); errors.As(err, &lp) {
		res.Status, res.Why = LeftOut, leftOutWhy(in, []string{"{" + lp.name + "}"})
		return res
	}
	if err != nil {
		res.Status, res.Why = Unknown, []string{"parameter " + err.Error()}
		return res
	}
	res.Status, res.Knobs, res.Permanent = Candidate, knobs, perm
	return res
}

// EvaluateAll runs rules on an inspection, in the rules' order.
func EvaluateAll(rules []*Rule, in *inspect.Inspection) []Result {
	out := make([]Result, 0, len(rules))
	for _, r := range rules {
		out = append(out, Evaluate(r, in))
	}
	return out
}

func (r *Rule) fill(in *inspect.Inspection) ([]Knob, []Permanent, error) {
	var knobs []Knob
	for _, k := range r.Knobs {
		d, err := fill(k.Device, in)
		if err != nil {
			return nil, nil, err
		}
		var ps map[string]string
		if len(k.Params) > 0 {
			ps = map[string]string{}
		}
		keys := make([]string, 0, len(k.Params))
		for p := range k.Params {
			keys = append(keys, p)
		}
		sort.Strings(keys)
		for _, p := range keys {
			v, err := fill(k.Params[p], in)
			if err != nil {
				return nil, nil, err
			}
			ps[p] = v
		}
		// A bond's ports ({nic} = "eth0|eth1"): the same knob on each.
		for _, dev := range strings.Split(d, "|") {
			knobs = append(knobs, Knob{Kind: k.Kind, Device: dev, Params: ps})
		}
	}
	var perm []Permanent
	for _, p := range r.Permanent {
		path, err := fill(p.Path, in)
		if err != nil {
			return nil, nil, err
		}
		text, err := fill(p.Text, in)
		if err != nil {
			return nil, nil, err
		}
		perm = append(perm, Permanent{Kind: p.Kind, Path: path, Text: text})
	}
	return knobs, perm, nil
}

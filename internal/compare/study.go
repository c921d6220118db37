package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"
)

// notMeasuring are the spec fields that do not change what a cell
// measures: how many trials it gets and when it stops (trials,
// precision, budget), how it is judged against the baseline or a paper
// (baseline, margin, verdict, reference), which cells run (only,
// skipUnavailable; cells match by name anyway) and the replica counts
// (part of a cell's name, so unmatched counts have no row). Every other
// field, unknown future ones included, is compared.
var notMeasuring = map[string]bool{
	"trials": true, "precision": true, "budget": true, "margin": true, "baseline": true, "verdict": true,
	"reference": true, "only": true, "skipUnavailable": true, "replicas": true,
}

// namedLists are the spec's lists whose entries name cells: entries are
// compared by name, and one that a run lacks has no cell in common, so
// it is no difference here (Holds says what each run has).
var namedLists = map[string]string{"datapaths": "datapath", "tunings": "tuning", "workloads": "workload", "impairments": "impairment"}

// studyFile is what compare reads of a run's study.yaml (the resolved
// study): its name and its spec, kept generic so that a field added
// later is compared without a change here.
type studyFile struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec map[string]any `yaml:"spec"`
}

// StudyDifferences lists what differs between two runs' study.yaml that
// changes what their common cells measure, each as "study WHAT A / B"
// ("study duration 10s / 30s", "study workload tcp length 128K / 64K"):
// cells match by name, so two studies that name a cell alike but
// measure it differently would otherwise be compared silently. Runs of
// different studies may be compared on purpose, so this is said, not
// refused.
func StudyDifferences(a, b []byte) []string {
	var sa, sb studyFile
	errA, errB := yaml.Unmarshal(a, &sa), yaml.Unmarshal(b, &sb)
	if errA != nil || errB != nil {
		return []string{fmt.Sprintf("study (not compared: study.yaml of A: %v, of B: %v)", errOK(errA), errOK(errB))}
	}
	var out []string
	if sa.Metadata.Name != sb.Metadata.Name {
		out = append(out, fmt.Sprintf("study %s / %s", orNone(sa.Metadata.Name), orNone(sb.Metadata.Name)))
	}
	for _, k := range unionKeys(sa.Spec, sb.Spec) {
		switch {
		case notMeasuring[k]:
		case namedLists[k] != "":
			out = append(out, entryDifferences(namedLists[k], sa.Spec[k], sb.Spec[k])...)
		default:
			out = append(out, leafDifferences("study "+k, sa.Spec[k], sb.Spec[k])...)
		}
	}
	return out
}

func errOK(err error) string {
	if err == nil {
		return "read"
	}
	return err.Error()
}

// entryDifferences compares the entries of a named list that both runs
// have: "study workload tcp length 128K / 64K".
func entryDifferences(what string, a, b any) []string {
	ea, eb := byName(a), byName(b)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(ea)) {
		if y, ok := eb[name]; ok {
			out = append(out, leafDifferences(fmt.Sprintf("study %s %s", what, name), ea[name], y)...)
		}
	}
	return out
}

// byName indexes a named list's entries by name. An entry may be a bare
// name (a built-in tuning, a datapath of defaults): it is the entry
// {name: NAME}, so "bridge" and {name: bridge} do not differ. An entry
// without a name is known by its position.
func byName(list any) map[string]map[string]any {
	out := map[string]map[string]any{}
	items, _ := list.([]any)
	for i, it := range items {
		switch e := it.(type) {
		case string:
			out[e] = map[string]any{}
		case map[string]any:
			name, _ := e["name"].(string)
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			rest := maps.Clone(e)
			delete(rest, "name")
			out[name] = rest
		default:
			out[fmt.Sprintf("#%d", i+1)] = map[string]any{"": e}
		}
	}
	return out
}

// leafDifferences compares two values field by field (a map's fields
// each under its own name; a list or a scalar whole), each difference
// as "PATH A / B".
func leafDifferences(path string, a, b any) []string {
	fa, fb := map[string]string{}, map[string]string{}
	flatten(path, a, fa)
	flatten(path, b, fb)
	var out []string
	for _, p := range unionKeys(fa, fb) {
		if fa[p] != fb[p] {
			out = append(out, fmt.Sprintf("%s %s / %s", p, orNone(fa[p]), orNone(fb[p])))
		}
	}
	return out
}

// flatten puts v's leaves into out under path: a map's fields under
// "path field", anything else whole, as compact text.
func flatten(path string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := path
			if k != "" {
				p += " " + k
			}
			flatten(p, x, out)
		}
		return
	}
	out[path] = text(v)
}

// text is a value as a difference shows it: a scalar as written, a list
// as compact JSON ([500M,1G]).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		b, err := json.Marshal(x)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}

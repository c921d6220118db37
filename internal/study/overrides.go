package study

// Overrides: a profile merged over the spec, then each --set.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// applyProfile merges the profile over spec and returns the nodes it
// brought, so that errors in them can name the profile.
func applyProfile(file string, root *yaml.Node, name string) (origins, error) {
	profiles := child(root, "profiles")
	var prof *yaml.Node
	if profiles != nil {
		prof = child(profiles, name)
	}
	if prof != nil && prof.Kind != yaml.MappingNode {
		return origins{}, &FieldError{File: file, Line: prof.Line, Field: "profiles." + name,
			Msg: "a profile is a mapping of spec fields to merge over spec, e.g. {trials: 2, duration: 4s}"}
	}
	if prof == nil {
		var have []string
		for i := 0; profiles != nil && i+1 < len(profiles.Content); i += 2 {
			have = append(have, profiles.Content[i].Value)
		}
		msg := fmt.Sprintf("study has no profile %q", name)
		if len(have) > 0 {
			msg += fmt.Sprintf(" (%shave: %s)", suggest.Hint(name, have), strings.Join(have, ", "))
		} else {
			// The usual way to get here: a file saved from `cnibench
			// show`, which writes the one profile shown, not the list.
			msg += " (it has no profiles: a file saved from `cnibench show` keeps only the profile it was shown with)"
		}
		// No Field: a Field without a line reads "(--set)", and this is
		// the flag's value. --quick is the profile "quick", and which of
		// the two the user typed is not known here: name both.
		flag := "--profile"
		if name == "quick" {
			flag = "--quick (--profile quick)"
		}
		return origins{}, &FieldError{File: file, Msg: flag + ": " + msg}
	}
	spec := child(root, "spec")
	if spec == nil {
		// At the document's first line: a Field without a line
		// reads "(--set)", and no --set is at fault.
		return origins{}, &FieldError{File: file, Line: max(root.Line, 1), Field: "spec",
			Msg: fmt.Sprintf("missing: the study has no spec to merge profile %q over", name)}
	}
	o := origins{name: name, nodes: map[*yaml.Node]bool{}}
	for i := 0; i+1 < len(prof.Content); i += 2 {
		if err := dottedKey(file, name, prof.Content[i], prof.Content[i+1]); err != nil {
			return origins{}, err
		}
		setChild(spec, prof.Content[i].Value, prof.Content[i+1])
		o.add(prof.Content[i+1])
		o.keys = append(o.keys, prof.Content[i])
	}
	return o, nil
}

// dottedKey refuses a profile key that is a --set path (`trials.min: 3`):
// merged as it stands it is one unknown field, reported at the file's
// trials line and naming no profile. A profile's keys are spec's
// top-level fields, each replacing the whole field.
func dottedKey(file, name string, k, v *yaml.Node) error {
	if !strings.Contains(k.Value, ".") {
		return nil
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(k.Value, "spec."), ".")
	val := "VALUE"
	if v.Kind == yaml.ScalarNode {
		val = v.Value
	}
	return &FieldError{File: file, Line: k.Line, Field: "profiles." + name, Msg: fmt.Sprintf(
		"key %q: profile keys are top-level fields of spec, each replacing the whole field: give %s whole here, or use --set %s=%s for one subfield",
		k.Value, top, k.Value, val)}
}

// profileSet refuses a --set of the file's profiles: the run's profile
// is merged over spec before any --set, and the others are not used, so
// `--set profiles.paper.trials=3` would change nothing, silently.
func profileSet(kv string) error {
	k, _, _ := strings.Cut(kv, "=")
	if top, _, _ := strings.Cut(k, "."); top == "profiles" {
		return fmt.Errorf("--set changes spec after the profile is merged, so a profile's key changes nothing: use --profile NAME, then --set spec keys (trials=3)")
	}
	return nil
}

var topLevel = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "spec": true, "profiles": true}

func applySet(root *yaml.Node, kv string) error { return applySetIn(root, kv, nil) }

// applySetIn is applySet; touched, when given, maps the mapping or list
// of the tree whose entry the value replaced or was added to to the
// --set key, so that an error about that whole mapping or list
// (`spec.trials: must be between 1 and 1000, got 0` after `--set
// setValue is a --set value as YAML reads it. A value written as a list,
// a mapping or an alias that YAML cannot read is that error ("[baseline,
// rps" was taken for a string, and the error said the field wants a
// list); any other text is the string it reads as.
func setValue(v string) (*yaml.Node, error) {
	var val yaml.Node
	err := yaml.Unmarshal([]byte(v), &val)
	if err == nil && len(val.Content) > 0 {
		return val.Content[0], nil
	}
	if t := strings.TrimSpace(v); err != nil && t != "" && strings.ContainsRune("[{*&", rune(t[0])) {
		return nil, fmt.Errorf("%q does not read as YAML: %s (text that starts so is quoted inside the value: '\"%s\"')",
			v, strings.TrimPrefix(err.Error(), "yaml: "), v)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, nil
}

// trials.min=0`) names --set beside the line the file gave it.
func applySetIn(root *yaml.Node, kv string, touched map[*yaml.Node]string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("override must be key=value")
	}
	if i := strings.IndexAny(k, "[]"); i >= 0 {
		list := k[:i]
		if j := strings.LastIndex(list, "."); j >= 0 {
			list = list[j+1:]
		}
		// A path with an index would be one unknown key, and errors
		// locate "x[0]" as the file's entry x[0].
		return fmt.Errorf("a key names a list's entry by its name (%s.NAME.FIELD, in datapaths, tunings, workloads and impairments), not by an index; or give the whole list (%s=[...])", list, list)
	}
	mark := func(n *yaml.Node) {
		if touched != nil && !slices.Contains(strings.Split(touched[n], ", "), k) {
			touched[n] = strings.TrimPrefix(touched[n]+", "+k, ", ")
		}
	}
	parts := dottedKeys(strings.Split(k, "."))
	if !topLevel[parts[0]] {
		parts = append([]string{"spec"}, parts...)
	}
	val, err := setValue(v)
	if err != nil {
		return err
	}
	// A value's aliases and merge keys are expanded as the file's are
	// (merge.go): a custom decoder would take "<<" for a field.
	node, err := expandAliases(val, "")
	var fe *FieldError
	if errors.As(err, &fe) {
		// The line and path are of the value's own text, which the
		// error names already: --set's.
		fe.Line, fe.Field = 0, ""
	}
	if err != nil {
		return err
	}
	zeroLines(node)
	cur := root
	for i, p := range parts {
		if cur.Kind == yaml.SequenceNode {
			// A list's entry by its name: workloads.udp.sender=pktgen.
			j, err := namedEntry(cur, strings.Join(parts[:i], "."), p, i < len(parts)-1)
			if err != nil {
				return err
			}
			if i == len(parts)-1 {
				cur.Content[j] = node
				mark(cur)
				return nil
			}
			cur = cur.Content[j]
			continue
		}
		if cur.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 {
			if i == 1 && parts[0] == "spec" && namedLists[p] {
				pickNamed(p, node, child(cur, p))
			}
			setChild(cur, p, node)
			mark(cur)
			return nil
		}
		next := child(cur, p)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			setChild(cur, p, next)
		}
		cur = next
	}
	return nil
}

// dottedKeys joins what follows "sysctls" in a --set key into one key:
// a sysctl's name has dots of its own (tunings.rps.sysctls.net.core.busy_read=50
// sets net.core.busy_read, not a mapping net).
func dottedKeys(parts []string) []string {
	for i, p := range parts {
		if p == "sysctls" && i+2 < len(parts) {
			return append(parts[:i+1:i+1], strings.Join(parts[i+1:], "."))
		}
	}
	return parts
}

// namedEntry is the index of list's entry named name (entryName), for
// `--set LIST.NAME.FIELD=value`; where is the list's path, for errors.
// An entry given as a plain name whose fields are to be set (inner) is
// first spelled out in place.
func namedEntry(list *yaml.Node, where, name string, inner bool) (int, error) {
	var names []string
	for j, e := range list.Content {
		n := entryName(strings.TrimPrefix(where, "spec."), e)
		if n == name {
			if inner && e.Kind != yaml.MappingNode {
				m, err := spelledOut(strings.TrimPrefix(where, "spec."), name)
				if err != nil {
					return 0, fmt.Errorf("%s: %q is a plain name there (%w); give the whole entry (%s=[...]) to set its fields", where, name, err, strings.TrimPrefix(where, "spec."))
				}
				list.Content[j] = m
			}
			return j, nil
		}
		if n != "" {
			names = append(names, n)
		}
	}
	return 0, fmt.Errorf("%s has no entry named %q (%sit has: %s)", where, name, suggest.Hint(name, names), strings.Join(names, ", "))
}

// entryName is the name entry e of spec list `list` goes by in its
// cells: a plain name, a mapping's name: field, or where it has none the
// name it defaults to (a workload's tool-protocol, iperf3-udp; a
// datapath's type), by the defaulting its decoding applies. "" when it
// has none (validation refuses it).
func entryName(list string, e *yaml.Node) string {
	if e.Kind == yaml.ScalarNode {
		return e.Value
	}
	if e.Kind != yaml.MappingNode {
		return ""
	}
	if c := child(e, "name"); c != nil {
		return c.Value
	}
	scalar := func(key string) string {
		if c := child(e, key); c != nil && c.Kind == yaml.ScalarNode {
			return c.Value
		}
		return ""
	}
	switch list {
	case "workloads":
		if w := (Workload{Tool: scalar("tool"), Protocol: scalar("protocol")}); w.Tool != "" {
			w.nameDefaults()
			return w.Name
		}
	case "datapaths":
		d := Datapath{Type: scalar("type")}
		d.nameDefaults()
		return d.Name
	}
	return ""
}

// spelledOut is the mapping a plain name in list stands for, so that
// --set can set one of its fields: a datapath's name is {name: X} (its
// type defaults to its name); a built-in tuning's is its definition in
// full (the tuning then is the study's own, under the same name).
// An impairment preset's netem fields are not study fields.
func spelledOut(list, name string) (*yaml.Node, error) {
	var v any
	switch list {
	case "datapaths":
		v = map[string]string{"name": name}
	case "tunings":
		t, ok := builtinTunings[name]
		if !ok {
			return nil, fmt.Errorf("no built-in tuning %q", name)
		}
		type plain Tuning // in full, not by name (Tuning.MarshalYAML)
		v = plain(t)
	default:
		return nil, fmt.Errorf("its fields are not study fields")
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	zeroLines(&n) // from --set: its errors say so (origin.go, atLine)
	return &n, nil
}

// namedLists are the spec lists whose entries may be mappings with a
// name: `--set datapaths=[flannel,kube-router]` picks the study's own
// entries of those names, knobs and all (cni-compare's "flannel" is
// flannel-vxlan with Flannel's rules), and a name the study does not
// define stays a catalog or built-in name.
var namedLists = map[string]bool{"datapaths": true, "tunings": true, "workloads": true, "impairments": true}

// pickNamed replaces each plain name in the new list by the old list's
// mapping entry of that name (entryName: its default name too), key
// being the list's.
func pickNamed(key string, list, old *yaml.Node) {
	if list.Kind != yaml.SequenceNode || old == nil || old.Kind != yaml.SequenceNode {
		return
	}
	for i, it := range list.Content {
		if it.Kind != yaml.ScalarNode {
			continue
		}
		for _, e := range old.Content {
			if e.Kind == yaml.MappingNode && entryName(key, e) == it.Value {
				list.Content[i] = e
				break
			}
		}
	}
}

func zeroLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		zeroLines(c)
	}
}

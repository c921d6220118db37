package study

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// A number or duration field the format reads as "left out" when 0 (a workload's
// messageSize, parallel, mss, pods and requests, a datapath's mtu,
// nodes.underlayMTU, netfilter's services and endpoints, a reference's
// replicas, ceilingSearch.probe) cannot tell a 0 the user wrote from one
// never written once decoded: `messageSize: 0` ran qperf at its default
// 1 B, though the bounds refuse values below 1. The tree tells them
// apart: an explicit 0 is refused where 0 is below the field's bounds;
// only a field left out takes the default.
//
// Each such field says what its 0 is by a `zero` tag, read once from the
// types (zeroTagged), so that a new one cannot be missed:
// TestEveryDefaultedFieldSaysWhatItsZeroIs fails for a number or
// Duration field with omitempty that has none. The tag is
//   - "ok": 0 is a value of its own (warmup: 0s, budget: 0, none) or
//     in bounds (noise's "0 for the default");
//   - "option": a workload's tool option, bounded by its tool (spec.Option);
//   - a key of zeroRefusals: 0 is below the bounds, refused with its words.

// zeroPaths are the paths of the mapping values under n written as the
// number 0 or a duration of 0 (0s: isZero); list entries are not (a
// list's 0 is checked as its other values are).
func zeroPaths(n *yaml.Node, path string, out []string) []string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode {
				if isZero(v) {
					out = append(out, p)
				}
				continue
			}
			out = zeroPaths(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			out = zeroPaths(it, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
	return out
}

// isZero is a scalar written as the number 0, or as a duration of 0
// (`probe: 0s`). A float counts: yaml.v3 decodes any float into an int
// field, cutting its fraction off; one with a fraction is refused
// before this (fraction.go), and a whole one, `mtu: 0.0` (-0.0, 0e0),
// is the 0 it shows.
func isZero(v *yaml.Node) bool {
	switch v.ShortTag() {
	case "!!int":
		z, err := strconv.ParseInt(v.Value, 0, 64)
		return err == nil && z == 0
	case "!!float":
		var z float64
		return v.Decode(&z) == nil && z == 0
	case "!!str":
		d, err := time.ParseDuration(v.Value)
		return err == nil && d == 0
	}
	return false
}

// zeroRefusals are the bound errors (validate.go's words) of the fields
// whose 0 is below their bounds, by their zero tag.
var zeroRefusals = map[string]string{
	"mtu":         fmt.Sprintf("must be between %d and %d, got 0 (leave mtu out, or --set it to null, for the CNI's own)", MinMTU, MaxMTU),
	"underlayMTU": fmt.Sprintf("must be between %d and %d, got 0 (leave it out, or --set it to null, for 1500)", MinUnderlayMTU, MaxMTU),
	"services":    fmt.Sprintf("must be between 1 and %d (or left out, or --set to null, for %d), got 0", MaxServices, DefaultServices),
	"endpoints":   fmt.Sprintf("must be between 1 and %d (or left out, or --set to null, for %d), got 0", MaxEndpoints, DefaultEndpoints),
	// A reference has no --set key (a list without names): left out.
	"replicas": fmt.Sprintf("must be between 1 and %d (or left out for any), got 0", MaxReplicas),
	"probe": fmt.Sprintf("must be whole seconds, from 1s (iperf3 -t) to %s, got 0 (leave it out, or --set it to null, for %s)",
		ShortDuration(MaxCeilingProbe), ShortDuration(DefaultCeilingProbe)),
}

// zeroTagged are the zero tags of the format's fields, by path with list
// indices left out (spec.datapaths[].mtu).
var zeroTagged = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	walkFields(reflect.TypeFor[Study](), "", func(path string, f reflect.StructField) {
		if tag, ok := f.Tag.Lookup("zero"); ok {
			out[path] = tag
		}
	})
	return out
})

// walkFields calls visit with each field of the format's struct type t
// and the structs below it, and the field's path under path: its YAML
// key, a list's entries as [] (spec.workloads[].mss). A Duration is a
// value, not walked into; nor are maps (a map's keys are the user's).
func walkFields(t reflect.Type, path string, visit func(string, reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlKey(f)
		if !ok {
			continue
		}
		p := strings.TrimPrefix(path+"."+name, ".")
		if inline {
			p = path
		} else {
			visit(p, f)
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			if ft.Kind() == reflect.Slice {
				p += "[]"
			}
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() && ft != reflect.TypeFor[Duration]() {
			walkFields(ft, p, visit)
		}
	}
}

var (
	listIndex     = regexp.MustCompile(`\[\d+\]`)
	workloadField = regexp.MustCompile(`^spec\.workloads\[(\d+)\]\.(\w+)$`)
)

// zeroProblems are the explicit 0s of the tree that the study, decoded,
// took for fields left out. A workload option's bounds are its tool's
// (spec.Option), as validateOptions checks them.
func zeroProblems(root *yaml.Node, sp *Spec, cat Catalog) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	for _, p := range zeroPaths(root, "", nil) {
		tag := zeroTagged()[listIndex.ReplaceAllString(p, "[]")]
		if msg, ok := zeroRefusals[tag]; ok {
			bad(p, "%s", msg)
		}
		m := workloadField.FindStringSubmatch(p)
		if tag != "option" || m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		fd, ok := fieldOf(m[2])
		if !ok || fd.scalar == nil || i >= len(sp.Workloads) {
			continue
		}
		w := &sp.Workloads[i]
		t, ok := cat.Tool(w.Tool)
		if !ok {
			continue // Validate names the unknown tool
		}
		o, ok := t.Option(m[2])
		switch {
		case !ok:
			bad(p, "tool %s has no option %s (%s takes: %s)", w.Tool, m[2], w.Tool, strings.Join(t.OptionNames(), ", "))
		case o.MinOf(w.Protocol) > 0:
			bad(p, "%s", boundMsg(o, w.Protocol, 0))
		}
	}
	return errs
}

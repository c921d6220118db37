package study

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A number field the format reads as "left out" when 0 (a workload's
// messageSize, parallel, mss, pods and requests, a datapath's mtu,
// nodes.underlayMTU, netfilter's services and endpoints) cannot tell a 0
// the user wrote from one never written once decoded: `messageSize: 0`
// ran qperf at its default 1 B, though the bounds refuse values below
// 1. The tree tells them apart: an explicit 0 is refused where 0 is
// below the field's bounds; only a field left out takes the default.

// zeroPaths are the paths of the mapping values under n written as the
// whole number 0; list entries are not (a list's 0 is checked as its
// other values are).
func zeroPaths(n *yaml.Node, path string, out []string) []string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" {
				if z, err := strconv.ParseInt(v.Value, 0, 64); err == nil && z == 0 {
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

// zeroRefused are the fields outside workloads whose 0 means "left out"
// and is below their bounds, with the bound's error (validate.go's words).
var zeroRefused = []struct {
	re  *regexp.Regexp
	msg string
}{
	{regexp.MustCompile(`^spec\.datapaths\[\d+\]\.mtu$`),
		fmt.Sprintf("must be between %d and %d, got 0 (leave mtu out, or --set it to null, for the CNI's own)", MinMTU, MaxMTU)},
	{regexp.MustCompile(`^spec\.nodes\.underlayMTU$`),
		fmt.Sprintf("must be between %d and %d, got 0 (leave it out, or --set it to null, for 1500)", MinUnderlayMTU, MaxMTU)},
	{regexp.MustCompile(`^spec\.datapaths\[\d+\]\.netfilter\.services$`),
		fmt.Sprintf("must be between 1 and %d (or left out, or --set to null, for %d), got 0", MaxServices, DefaultServices)},
	{regexp.MustCompile(`^spec\.datapaths\[\d+\]\.netfilter\.endpoints$`),
		fmt.Sprintf("must be between 1 and %d (or left out, or --set to null, for %d), got 0", MaxEndpoints, DefaultEndpoints)},
}

var workloadField = regexp.MustCompile(`^spec\.workloads\[(\d+)\]\.(\w+)$`)

// zeroProblems are the explicit 0s of the tree that the study, decoded,
// took for fields left out. A workload option's bounds are its tool's
// (spec.Option), as validateOptions checks them.
func zeroProblems(root *yaml.Node, sp *Spec, cat Catalog) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	for _, p := range zeroPaths(root, "", nil) {
		for _, z := range zeroRefused {
			if z.re.MatchString(p) {
				bad(p, "%s", z.msg)
			}
		}
		m := workloadField.FindStringSubmatch(p)
		if m == nil {
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

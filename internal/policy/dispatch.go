package policy

import (
	"fmt"
	"sort"
)

// The workload dispatch chains' names (felix/rules/rule_defs.go).
const (
	dispatchFrom = "cali-from-wl-dispatch"
	dispatchTo   = "cali-to-wl-dispatch"
)

// tree is the shallow prefix tree Felix divides the endpoints'
// interface names into for its dispatch chains, so that a packet does
// not pass one rule per endpoint before its own (v3.29.7
// felix/rules/dispatch.go, sortAndDivideEndpointNamesToPrefixTree): the
// names sorted, their common prefix, and the names binned by the
// character after it, bins in sorted order.
type tree struct {
	common   string
	prefixes []string
	names    map[string][]string
}

// divide builds the tree of names. Felix logs and skips a name given
// twice; here it is an error, as two endpoints cannot share a device.
func divide(names []string) (tree, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	t := tree{common: commonPrefix(sorted), names: map[string][]string{}}
	for i, n := range sorted {
		if i > 0 && n == sorted[i-1] {
			return tree{}, fmt.Errorf("two endpoints on host interface %s", n)
		}
		p := t.common
		if len(n) > len(t.common) {
			p = n[:len(t.common)+1]
		}
		if _, ok := t.names[p]; !ok {
			t.prefixes = append(t.prefixes, p)
		}
		t.names[p] = append(t.names[p], n)
	}
	return t, nil
}

// PrefixTree is Felix's shallow prefix tree of endpoint interface names
// (divide), for the other chains Felix dispatches with it (the IPVS
// support's cali-set-endpoint-mark, internal/netfilter): the common
// prefix, the bins' prefixes in sorted order, and each bin's names.
func PrefixTree(names []string) (common string, prefixes []string, bins map[string][]string, err error) {
	t, err := divide(names)
	return t.common, t.prefixes, t.names, err
}

// commonPrefix is felix/stringutils CommonPrefix: the longest prefix
// every name shares ("" for none).
func commonPrefix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	p := names[0]
	for _, n := range names[1:] {
		i := 0
		for i < len(p) && i < len(n) && p[i] == n[i] {
			i++
		}
		p = p[:i]
	}
	return p
}

// child is the name of root's child chain for a bin: root, "-" and the
// bin's character after the common prefix.
func (t tree) child(root, prefix string) string { return root + "-" + prefix[len(t.common):] }

// chains are the dispatch chains the tree needs, as they are declared:
// per direction the child chains (one per bin of two or more names),
// then the root.
func (t tree) chains() []string {
	var out []string
	for _, root := range []string{dispatchFrom, dispatchTo} {
		for _, p := range t.prefixes {
			if len(t.names[p]) > 1 {
				out = append(out, t.child(root, p))
			}
		}
		out = append(out, root)
	}
	return out
}

// write writes both directions' dispatch chains as
// buildSingleDispatchChains does: in the root, a bin of one name is
// that name's rule (a goto to its endpoint chain, without an extra
// goto); a bin of more goes to its child chain on the prefix match
// (caliX+), and the child holds the names' rules. Every chain ends with
// the drop of unknown interfaces, since a goto does not come back.
func (t tree) write(r *rules) {
	for _, d := range []struct{ root, flag, endpoint string }{
		{dispatchFrom, "-i", "cali-fw-"}, {dispatchTo, "-o", "cali-tw-"},
	} {
		for _, p := range t.prefixes {
			names := t.names[p]
			if len(names) == 1 {
				r.add(d.root, "%s %s -g %s%s", d.flag, names[0], d.endpoint, names[0])
				continue
			}
			child := t.child(d.root, p)
			r.add(d.root, "%s %s+ -g %s", d.flag, p, child)
			for _, n := range names {
				r.add(child, "%s %s -g %s%s", d.flag, n, d.endpoint, n)
			}
			r.add(child, "-j DROP")
		}
		r.add(d.root, "-j DROP")
	}
}

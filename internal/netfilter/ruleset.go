// Package netfilter writes the iptables state the real CNI daemons and
// kube-proxy install on a Kubernetes node, so the local engine's emulated
// CNIs carry the same netfilter work per packet as a real cluster (seed
// 004's Table III: chains and rules a packet traverses, per CNI).
//
// Design notes:
//   - Generators are pure: a Node (pod CIDR, cluster CIDR, pod
//     interfaces...) in, a Ruleset out. Applying it (iptables-restore
//     --noflush, inside a namespace) and reading counters back
//     (iptables-save -c, parsed by internal/metrics/iptables) are the
//     only kernel steps, in kernel.go.
//   - Each chain and rule is modelled on the daemon's own source; the
//     comment above each generator names the file and function. The
//     daemons match pod and host sets with ipsets (Calico, Weave,
//     kube-router); here a set is written as the CIDRs it would hold
//     (-s/-d), so no ipset support is needed. A rule that matches costs
//     the same order either way.
//   - Only user chains are declared (":CHAIN - [0:0]"): with --noflush
//     iptables-restore flushes a declared chain, so re-applying replaces
//     the CNI's chains, while the jumps from built-in chains (hooks) are
//     added to what the chain holds and must be applied once per
//     namespace.
//   - A hook goes where its daemon puts it: appended (Append, iptables
//     -A) or at the top of the built-in chain (Insert, iptables -I), so
//     a rule set applied after another (the CNI's after kube-proxy's)
//     lands before or after the other's hooks as on a real node.
package netfilter

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Tables in the order iptables-save prints them.
var tableOrder = []string{"raw", "mangle", "filter", "nat"}

// builtin are the built-in chains of each table; they are hooked into,
// never declared.
var builtin = map[string]map[string]bool{
	"raw":    {"PREROUTING": true, "OUTPUT": true},
	"mangle": {"PREROUTING": true, "INPUT": true, "FORWARD": true, "OUTPUT": true, "POSTROUTING": true},
	"filter": {"INPUT": true, "FORWARD": true, "OUTPUT": true},
	"nat":    {"PREROUTING": true, "INPUT": true, "OUTPUT": true, "POSTROUTING": true},
}

// Rule is one "-A CHAIN SPEC" (or, Top, "-I CHAIN SPEC") line of a
// table.
type Rule struct {
	Table, Chain string
	// Spec is the rule after the chain name, as iptables-restore reads
	// it (a comment with spaces in double quotes).
	Spec string
	// Top: the rule goes to the top of its (built-in) chain, before the
	// rules the chain already holds, instead of after them.
	Top bool
}

// Ruleset is iptables-restore input: user chains and rules per table.
type Ruleset struct {
	chains map[string][]string // table -> user chains, in declaration order
	rules  []Rule
}

// New returns an empty rule set.
func New() *Ruleset { return &Ruleset{chains: map[string][]string{}} }

// Chain declares user chains in a table (again is a no-op).
func (rs *Ruleset) Chain(table string, names ...string) {
	for _, n := range names {
		if !rs.HasChain(table, n) {
			rs.chains[table] = append(rs.chains[table], n)
		}
	}
}

// HasChain reports whether the rule set declares a user chain.
func (rs *Ruleset) HasChain(table, name string) bool {
	for _, c := range rs.chains[table] {
		if c == name {
			return true
		}
	}
	return false
}

// Append adds a rule; format and args build its spec.
func (rs *Ruleset) Append(table, chain, format string, args ...any) {
	rs.rules = append(rs.rules, Rule{Table: table, Chain: chain, Spec: fmt.Sprintf(format, args...)})
}

// Insert adds a hook at the top of a built-in chain, as a daemon that
// inserts its jumps (iptables -I) or keeps them first does: applied to
// a chain that already holds rules, it goes before them. Several
// Inserts into one chain keep the order they are made in.
func (rs *Ruleset) Insert(table, chain, format string, args ...any) {
	rs.rules = append(rs.rules, Rule{Table: table, Chain: chain, Spec: fmt.Sprintf(format, args...), Top: true})
}

// Rules returns the rules in the order they were added.
func (rs *Ruleset) Rules() []Rule { return append([]Rule(nil), rs.rules...) }

// ChainRules returns the specs of one chain's rules in the order the
// chain holds them once rs is applied to it empty: the inserted ones
// first.
func (rs *Ruleset) ChainRules(table, chain string) []string {
	var top, end []string
	for _, r := range rs.rules {
		switch {
		case r.Table != table || r.Chain != chain:
		case r.Top:
			top = append(top, r.Spec)
		default:
			end = append(end, r.Spec)
		}
	}
	return append(top, end...)
}

// ReplaceChain drops a chain's rules (declaring it if needed) so a
// caller can write them again.
func (rs *Ruleset) ReplaceChain(table, chain string) {
	rs.Chain(table, chain)
	kept := rs.rules[:0]
	for _, r := range rs.rules {
		if r.Table != table || r.Chain != chain {
			kept = append(kept, r)
		}
	}
	rs.rules = kept
}

// Merge appends other's chains and rules to rs.
func (rs *Ruleset) Merge(other *Ruleset) {
	for _, t := range tableOrder {
		rs.Chain(t, other.chains[t]...)
	}
	rs.rules = append(rs.rules, other.rules...)
}

// Chains returns the declared user chains as "table/chain", sorted.
func (rs *Ruleset) Chains() []string {
	var out []string
	for t, cs := range rs.chains {
		for _, c := range cs {
			out = append(out, t+"/"+c)
		}
	}
	sort.Strings(out)
	return out
}

// Count returns the number of user chains declared and rules added
// (hooks in built-in chains, appended or inserted, included).
func (rs *Ruleset) Count() (chains, rules int) {
	for _, cs := range rs.chains {
		chains += len(cs)
	}
	return chains, len(rs.rules)
}

// Validate checks that every rule's chain is built in or declared, and
// every jump or goto to a chain that is neither built in nor a standard
// target names a declared chain.
func (rs *Ruleset) Validate() error {
	for _, r := range rs.rules {
		if _, ok := builtin[r.Table]; !ok {
			return fmt.Errorf("rule in unknown table %q", r.Table)
		}
		if !builtin[r.Table][r.Chain] && !rs.HasChain(r.Table, r.Chain) {
			return fmt.Errorf("%s: rule in undeclared chain %s: %s", r.Table, r.Chain, r.Spec)
		}
		// A declared chain is flushed and written whole: "the top" of
		// it means nothing, and would read as a second order.
		if r.Top && !builtin[r.Table][r.Chain] {
			return fmt.Errorf("%s: rule inserted at the top of user chain %s: %s", r.Table, r.Chain, r.Spec)
		}
		if t := target(r.Spec); t != "" && isChainName(t) && !rs.HasChain(r.Table, t) {
			return fmt.Errorf("%s/%s: jump to undeclared chain %s", r.Table, r.Chain, t)
		}
	}
	return nil
}

// target returns the chain or target after -j or -g.
func target(spec string) string {
	f := strings.Fields(spec)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-j" || f[i] == "-g" {
			return f[i+1]
		}
	}
	return ""
}

// isChainName tells user chains from targets (ACCEPT, MARK, DNAT...):
// every chain these generators declare has a '-' or '_' and targets
// have neither.
func isChainName(s string) bool { return strings.ContainsAny(s, "-_") }

// Bytes renders iptables-restore input for --noflush. Inserted rules
// come first, as "-I CHAIN" (position 1) lines in reverse: each goes
// before the one written above it, so the chain ends up holding them
// in the order they were added, above what it held; appended rules
// follow as "-A" lines.
func (rs *Ruleset) Bytes() []byte {
	var b bytes.Buffer
	for _, t := range tableOrder {
		var top, end []Rule
		for _, r := range rs.rules {
			switch {
			case r.Table != t:
			case r.Top:
				top = append(top, r)
			default:
				end = append(end, r)
			}
		}
		if len(rs.chains[t]) == 0 && len(top)+len(end) == 0 {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", t)
		for _, c := range rs.chains[t] {
			fmt.Fprintf(&b, ":%s - [0:0]\n", c)
		}
		for i := len(top) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "-I %s %s\n", top[i].Chain, top[i].Spec)
		}
		for _, r := range end {
			fmt.Fprintf(&b, "-A %s %s\n", r.Chain, r.Spec)
		}
		fmt.Fprintln(&b, "COMMIT")
	}
	return b.Bytes()
}

// Parse reads iptables-restore input (as Bytes writes it, or
// internal/policy's output) back into a Ruleset. Built-in chain
// declarations are skipped. "-I CHAIN" lines (no rule number: position
// 1) are inserted rules; as iptables-restore would, the later of two
// goes first, so Parse(rs.Bytes()) lists them as rs does.
func Parse(in []byte) (*Ruleset, error) {
	rs := New()
	table := ""
	var top []Rule // the table's "-I" rules, in file order
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "*"):
			table = l[1:]
			if _, ok := builtin[table]; !ok {
				return nil, fmt.Errorf("line %d: unknown table %q", n, table)
			}
		case l == "COMMIT":
			for i := len(top) - 1; i >= 0; i-- {
				rs.rules = append(rs.rules, top[i])
			}
			table, top = "", nil
		case table == "":
			return nil, fmt.Errorf("line %d: %q outside a table", n, l)
		case strings.HasPrefix(l, ":"):
			f := strings.Fields(l[1:])
			if len(f) == 0 {
				return nil, fmt.Errorf("line %d: empty chain declaration", n)
			}
			if !builtin[table][f[0]] {
				rs.Chain(table, f[0])
			}
		case strings.HasPrefix(l, "-A "):
			chain, spec, _ := strings.Cut(strings.TrimPrefix(l, "-A "), " ")
			rs.rules = append(rs.rules, Rule{Table: table, Chain: chain, Spec: spec})
		case strings.HasPrefix(l, "-I "):
			chain, spec, _ := strings.Cut(strings.TrimPrefix(l, "-I "), " ")
			// A rule number would place the rule elsewhere than the top.
			if f := strings.Fields(spec); len(f) > 0 && strings.Trim(f[0], "0123456789") == "" {
				return nil, fmt.Errorf("line %d: insert at a rule number %q", n, l)
			}
			top = append(top, Rule{Table: table, Chain: chain, Spec: spec, Top: true})
		default:
			return nil, fmt.Errorf("line %d: unsupported line %q", n, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if table != "" {
		return nil, fmt.Errorf("table %s has no COMMIT", table)
	}
	return rs, nil
}

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
//     appended and must be applied once per namespace.
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

// Rule is one "-A CHAIN SPEC" line of a table.
type Rule struct {
	Table, Chain string
	// Spec is the rule after the chain name, as iptables-restore reads
	// it (a comment with spaces in double quotes).
	Spec string
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

// Rules returns the rules in order.
func (rs *Ruleset) Rules() []Rule { return append([]Rule(nil), rs.rules...) }

// ChainRules returns the specs of one chain's rules, in order.
func (rs *Ruleset) ChainRules(table, chain string) []string {
	var out []string
	for _, r := range rs.rules {
		if r.Table == table && r.Chain == chain {
			out = append(out, r.Spec)
		}
	}
	return out
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

// Count returns the number of user chains declared and rules appended
// (hooks in built-in chains included).
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

// Bytes renders iptables-restore input for --noflush.
func (rs *Ruleset) Bytes() []byte {
	var b bytes.Buffer
	for _, t := range tableOrder {
		var rules []Rule
		for _, r := range rs.rules {
			if r.Table == t {
				rules = append(rules, r)
			}
		}
		if len(rs.chains[t]) == 0 && len(rules) == 0 {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", t)
		for _, c := range rs.chains[t] {
			fmt.Fprintf(&b, ":%s - [0:0]\n", c)
		}
		for _, r := range rules {
			fmt.Fprintf(&b, "-A %s %s\n", r.Chain, r.Spec)
		}
		fmt.Fprintln(&b, "COMMIT")
	}
	return b.Bytes()
}

// Parse reads iptables-restore input (as Bytes writes it, or
// internal/policy's output) back into a Ruleset. Built-in chain
// declarations are skipped.
func Parse(in []byte) (*Ruleset, error) {
	rs := New()
	table := ""
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
			table = ""
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

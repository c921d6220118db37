// Package nftables reads `nft -j list ruleset` (the nf_tables ruleset as
// JSON, with rule counters) and tells which chains and rules packets
// traversed over a window: the nftables counterpart of package iptables,
// for datapaths and kube-proxies that program nf_tables natively.
//
// Design notes:
//
//   - An nftables rule has no counter unless it carries a counter
//     statement: an anonymous `counter` (its packets in the rule) or a
//     reference to a named counter object (`counter name "c"`, its packets
//     in the object). A rule without one cannot be seen to be traversed,
//     so traversed rules are found among the counted ones only, and the
//     number of counted rules is reported beside them.
//   - Rules are matched across two reads by family, table, chain and their
//     expressions with counter values blanked (the n-th identical rule of a
//     chain keeps its index), not by handle: a ruleset rewritten with the
//     same rules (iptables-nft-restore, as kube-proxy does) still matches.
//   - Such a rewrite restarts the counters from 0 (new rules, new counter
//     objects): a counter that went back between the reads was reset, and
//     its rule counts as traversed when it counted since (moved); the
//     resets are counted (Path.Resets), since what a rule counted before
//     its reset is not seen.
//   - Tables that iptables-nft manages are nf_tables tables too, so they
//     appear here as well as in iptables-save: the nft metrics describe the
//     whole nf_tables ruleset, the iptables metrics what iptables-save shows
//     of it (with the legacy backend, nothing of it).
package nftables

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Ruleset is one network namespace's nf_tables state.
type Ruleset struct {
	// Tables are "family/table".
	Tables []string
	// Chains are "family/table/chain".
	Chains []string
	// Rules are in listing order.
	Rules []Rule
}

// Rule is one rule with its counter, if it has one.
type Rule struct {
	Family, Table, Chain string
	// Spec is the rule's expressions, compacted, with counter values
	// blanked: its identity across reads.
	Spec string
	// Counted is true when the rule has a counter statement.
	Counted        bool
	Packets, Bytes uint64
}

// ChainKey is "family/table/chain" of the rule.
func (r Rule) ChainKey() string { return r.Family + "/" + r.Table + "/" + r.Chain }

// Key identifies a rule across two reads (with its index among identical
// rules of its chain, see Traversed).
func (r Rule) Key() string { return r.ChainKey() + " " + r.Spec }

type listing struct {
	Nftables []map[string]json.RawMessage `json:"nftables"`
}

type object struct {
	Family string `json:"family"`
	Table  string `json:"table"`
	Name   string `json:"name"`
	Chain  string `json:"chain"`
	// Rules
	Expr []json.RawMessage `json:"expr"`
	// Named counters
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

type counterValue struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Parse reads `nft -j list ruleset` output.
func Parse(out []byte) (*Ruleset, error) {
	var l listing
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("nft -j list ruleset: %w", err)
	}
	if l.Nftables == nil {
		return nil, errors.New(`nft -j list ruleset: no "nftables" list`)
	}
	rs := &Ruleset{}
	named := map[string]counterValue{}
	type ref struct {
		rule int
		name string
	}
	var refs []ref
	for i, el := range l.Nftables {
		if len(el) != 1 {
			return nil, fmt.Errorf("nft -j list ruleset: element %d has %d keys, want one", i, len(el))
		}
		for kind, raw := range el {
			switch kind {
			case "table", "chain", "rule", "counter":
			default:
				continue // metainfo, sets, maps, flowtables...: not counted
			}
			var o object
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, fmt.Errorf("nft -j list ruleset: %s %d: %w", kind, i, err)
			}
			switch kind {
			case "table":
				rs.Tables = append(rs.Tables, o.Family+"/"+o.Name)
			case "chain":
				rs.Chains = append(rs.Chains, o.Family+"/"+o.Table+"/"+o.Name)
			case "counter":
				named[o.Family+"/"+o.Table+"/"+o.Name] = counterValue{o.Packets, o.Bytes}
			case "rule":
				r := Rule{Family: o.Family, Table: o.Table, Chain: o.Chain}
				spec, anon, refName, err := ruleSpec(o.Expr)
				if err != nil {
					return nil, fmt.Errorf("nft -j list ruleset: rule %d in %s: %w", i, r.ChainKey(), err)
				}
				r.Spec = spec
				if anon != nil {
					r.Counted, r.Packets, r.Bytes = true, anon.Packets, anon.Bytes
				}
				if refName != "" {
					refs = append(refs, ref{len(rs.Rules), o.Family + "/" + o.Table + "/" + refName})
				}
				rs.Rules = append(rs.Rules, r)
			}
		}
	}
	// Named counters may be listed before or after the rules using them.
	for _, rf := range refs {
		if c, ok := named[rf.name]; ok {
			r := &rs.Rules[rf.rule]
			r.Counted = true
			r.Packets += c.Packets
			r.Bytes += c.Bytes
		}
	}
	return rs, nil
}

// ruleSpec compacts a rule's expressions with counter values blanked and
// returns its anonymous counter (summed if several) and the name of a
// named counter it references.
func ruleSpec(expr []json.RawMessage) (spec string, anon *counterValue, named string, err error) {
	var b strings.Builder
	for i, e := range expr {
		if i > 0 {
			b.WriteByte(';')
		}
		var one map[string]json.RawMessage
		if json.Unmarshal(e, &one) == nil && len(one) == 1 {
			if c, ok := one["counter"]; ok {
				var v counterValue
				var name string
				switch {
				case json.Unmarshal(c, &name) == nil:
					named = name
					b.WriteString(`{"counter":` + string(c) + `}`)
					continue
				case json.Unmarshal(c, &v) == nil:
					if anon == nil {
						anon = &counterValue{}
					}
					anon.Packets += v.Packets
					anon.Bytes += v.Bytes
					b.WriteString(`{"counter":{}}`)
					continue
				default:
					return "", nil, "", fmt.Errorf("counter %s: not a counter", clip(string(c)))
				}
			}
		}
		var cb bytes.Buffer
		if err := json.Compact(&cb, e); err != nil {
			return "", nil, "", err
		}
		b.Write(cb.Bytes())
	}
	return b.String(), anon, named, nil
}

// Path is what packets traversed between two reads.
type Path struct {
	// Chains and Rules were traversed: counted rules whose packets grew,
	// and the chains holding them.
	Chains, Rules int
	// TotalChains, TotalRules and CountedRules describe the ruleset after
	// the window; CountedRules have counters, the only ones a traversal
	// can be seen on.
	TotalChains, TotalRules, CountedRules int
	// Resets counts the counted rules whose packets went back between the
	// reads: reset by a rewrite of the ruleset (moved).
	Resets int
}

// Traversed compares two reads of one namespace.
func Traversed(before, after *Ruleset) Path {
	p := Path{TotalChains: len(after.Chains), TotalRules: len(after.Rules)}
	chains := map[string]bool{}
	for _, r := range after.Rules {
		if r.Counted {
			p.CountedRules++
		}
	}
	rules, resets := grown(before, after)
	for _, r := range rules {
		p.Rules++
		chains[r.ChainKey()] = true
	}
	p.Chains, p.Resets = len(chains), resets
	return p
}

// TraversedRules lists the keys of the rules Traversed counts, sorted
// (for tests and diagnostics).
func TraversedRules(before, after *Ruleset) []string {
	var out []string
	rules, _ := grown(before, after)
	for _, r := range rules {
		out = append(out, r.Key())
	}
	sort.Strings(out)
	return out
}

// moved reports whether a counter read at was and then now moved in
// between, and whether it was reset: one that went back restarted from
// 0 (its rule or counter object rewritten), so it moved when it is above
// 0 now.
func moved(was, now uint64) (moved, reset bool) {
	if now < was {
		return now > 0, true
	}
	return now > was, false
}

// grown returns the counted rules of after whose packets moved since
// before (a rule new in after counts from zero), and how many of them
// went back (moved).
func grown(before, after *Ruleset) ([]Rule, int) {
	old := map[string][]uint64{}
	for _, r := range before.Rules {
		if r.Counted {
			old[r.Key()] = append(old[r.Key()], r.Packets)
		}
	}
	seen := map[string]int{}
	var out []Rule
	resets := 0
	for _, r := range after.Rules {
		if !r.Counted {
			continue
		}
		k := r.Key()
		i := seen[k]
		seen[k]++
		var was uint64
		if i < len(old[k]) {
			was = old[k][i]
		}
		m, reset := moved(was, r.Packets)
		if reset {
			resets++
		}
		if m {
			out = append(out, r)
		}
	}
	return out, resets
}

// Add sums two paths (of two nodes).
func (p Path) Add(q Path) Path {
	return Path{Chains: p.Chains + q.Chains, Rules: p.Rules + q.Rules, TotalChains: p.TotalChains + q.TotalChains,
		TotalRules: p.TotalRules + q.TotalRules, CountedRules: p.CountedRules + q.CountedRules, Resets: p.Resets + q.Resets}
}

// Metric names.
const (
	MetricChains       = "nft_chains_count"
	MetricRules        = "nft_rules_count"
	MetricCountedRules = "nft_counted_rules_count"
	MetricPathChains   = "nft_path_chains_count"
	MetricPathRules    = "nft_path_rules_count"
	// MetricResets is Path.Resets: counters that restarted in the
	// window, each a rule whose earlier packets went unseen.
	MetricResets = "nft_counter_resets_count"
)

// Metrics returns a path as metrics.
func (p Path) Metrics() map[string]float64 {
	return map[string]float64{
		MetricChains: float64(p.TotalChains), MetricRules: float64(p.TotalRules), MetricCountedRules: float64(p.CountedRules),
		MetricPathChains: float64(p.Chains), MetricPathRules: float64(p.Rules), MetricResets: float64(p.Resets),
	}
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

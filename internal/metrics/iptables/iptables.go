// Package iptables reads `iptables-save -c` (rules with their packet and
// byte counters) and tells which chains and rules packets traversed over a
// window: those whose counters grew, seed 004's Table III ("iptables
// chains and rules a packet traverses").
package iptables

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Ruleset is one namespace's iptables state.
type Ruleset struct {
	// Chains maps "table/chain" to the chain's policy packet counter
	// (0 for user chains, which have no policy).
	Chains map[string]uint64
	// Rules are in file order; their identity is table, chain and spec.
	Rules []Rule
}

// Rule is one "-A" line with its counters.
type Rule struct {
	Table, Chain, Spec string
	Packets, Bytes     uint64
}

// Key identifies a rule across two reads (the n-th identical rule in a
// chain keeps its index).
func (r Rule) Key() string { return r.Table + "/" + r.Chain + " " + r.Spec }

// Parse reads iptables-save -c output.
func Parse(out []byte) (*Ruleset, error) {
	rs := &Ruleset{Chains: map[string]uint64{}}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case line == "COMMIT":
			table = ""
		case strings.HasPrefix(line, ":"):
			if table == "" {
				return nil, fmt.Errorf("iptables-save line %d: chain outside a table", n)
			}
			f := strings.Fields(line[1:])
			if len(f) < 2 {
				return nil, fmt.Errorf("iptables-save line %d: bad chain %q", n, line)
			}
			var pk uint64
			if len(f) >= 3 {
				pk, _, _ = counters(f[2])
			}
			rs.Chains[table+"/"+f[0]] = pk
		case strings.HasPrefix(line, "["):
			end := strings.IndexByte(line, ']')
			if end < 0 || table == "" {
				return nil, fmt.Errorf("iptables-save line %d: bad rule %q", n, clip(line))
			}
			pk, by, ok := counters(line[:end+1])
			if !ok {
				return nil, fmt.Errorf("iptables-save line %d: bad counters %q", n, clip(line))
			}
			rest := strings.TrimSpace(line[end+1:])
			if !strings.HasPrefix(rest, "-A ") {
				return nil, fmt.Errorf("iptables-save line %d: want -A after counters: %q", n, clip(line))
			}
			f := strings.SplitN(strings.TrimPrefix(rest, "-A "), " ", 2)
			r := Rule{Table: table, Chain: f[0], Packets: pk, Bytes: by}
			if len(f) == 2 {
				r.Spec = f[1]
			}
			rs.Rules = append(rs.Rules, r)
		case strings.HasPrefix(line, "-A "):
			return nil, fmt.Errorf("iptables-save line %d: rule without counters (use iptables-save -c)", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rs, nil
}

// counters reads "[packets:bytes]".
func counters(s string) (pk, by uint64, ok bool) {
	if len(s) < 5 || s[0] != '[' || s[len(s)-1] != ']' {
		return 0, 0, false
	}
	a, b, found := strings.Cut(s[1:len(s)-1], ":")
	if !found {
		return 0, 0, false
	}
	p, err1 := strconv.ParseUint(a, 10, 64)
	q, err2 := strconv.ParseUint(b, 10, 64)
	return p, q, err1 == nil && err2 == nil
}

// Path is what packets traversed between two reads.
type Path struct {
	Chains, Rules int // traversed
	// TotalChains and TotalRules describe the ruleset after the window.
	TotalChains, TotalRules int
}

// Traversed compares two reads: a rule is on the path when its packet
// counter grew; a chain when one of its rules is, or its policy counter
// grew.
func Traversed(before, after *Ruleset) Path {
	p := Path{TotalChains: len(after.Chains), TotalRules: len(after.Rules)}
	old := map[string][]uint64{}
	for _, r := range before.Rules {
		old[r.Key()] = append(old[r.Key()], r.Packets)
	}
	seen := map[string]int{}
	chains := map[string]bool{}
	for _, r := range after.Rules {
		k := r.Key()
		i := seen[k]
		seen[k]++
		var was uint64
		if i < len(old[k]) {
			was = old[k][i]
		}
		if r.Packets > was {
			p.Rules++
			chains[r.Table+"/"+r.Chain] = true
		}
	}
	for c, pk := range after.Chains {
		if pk > before.Chains[c] {
			chains[c] = true
		}
	}
	p.Chains = len(chains)
	return p
}

// Metric names.
const (
	MetricChains     = "iptables_chains_count"
	MetricRules      = "iptables_rules_count"
	MetricPathChains = "iptables_path_chains_count"
	MetricPathRules  = "iptables_path_rules_count"
)

// Metrics returns a path as metrics.
func (p Path) Metrics() map[string]float64 {
	return map[string]float64{
		MetricChains: float64(p.TotalChains), MetricRules: float64(p.TotalRules),
		MetricPathChains: float64(p.Chains), MetricPathRules: float64(p.Rules),
	}
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

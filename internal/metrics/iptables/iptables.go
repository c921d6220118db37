// Package iptables reads `iptables-save -c` (rules with their packet and
// byte counters) and tells which chains and rules packets traversed over a
// window: those whose counters moved, seed 004's Table III ("iptables
// chains and rules a packet traverses"), a counter that went back taken
// as restarted by a rewrite of its chain (Moved).
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
	// Resets counts the counters (rules' and chain policies') that went
	// back between the reads: their chain was rewritten (kube-proxy's
	// iptables-restore flushes and refills the chains it writes), which
	// restarts them from 0 (Moved).
	Resets int
}

// Moved reports whether a counter that read was at the window's start
// and now at its end moved in the window, and whether it was reset: one
// that went back restarted from 0 (its chain rewritten), so it moved
// when it is above 0 now. Packets it counted between the first read and
// the reset are not seen: a rule that counted then and not since is
// missed.
func Moved(was, now uint64) (moved, reset bool) {
	if now < was {
		return now > 0, true
	}
	return now > was, false
}

// Traversed compares two reads: a rule is on the path when its packet
// counter moved (Moved: grew, or restarted and counted since); a chain
// when one of its rules is, or its policy counter moved.
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
		moved, reset := Moved(was, r.Packets)
		if reset {
			p.Resets++
		}
		if moved {
			p.Rules++
			chains[r.Table+"/"+r.Chain] = true
		}
	}
	for c, pk := range after.Chains {
		moved, reset := Moved(before.Chains[c], pk)
		if reset {
			p.Resets++
		}
		if moved {
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
	// MetricResets is Path.Resets: counters that restarted in the
	// window, each a rule or chain whose earlier packets went unseen.
	MetricResets = "iptables_counter_resets_count"
)

// Add sums two paths (of two nodes).
func (p Path) Add(q Path) Path {
	return Path{Chains: p.Chains + q.Chains, Rules: p.Rules + q.Rules, TotalChains: p.TotalChains + q.TotalChains,
		TotalRules: p.TotalRules + q.TotalRules, Resets: p.Resets + q.Resets}
}

// Metrics returns a path as metrics.
func (p Path) Metrics() map[string]float64 {
	return map[string]float64{
		MetricChains: float64(p.TotalChains), MetricRules: float64(p.TotalRules),
		MetricPathChains: float64(p.Chains), MetricPathRules: float64(p.Rules), MetricResets: float64(p.Resets),
	}
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

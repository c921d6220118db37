package netfilter

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// With the nf_tables backend of iptables a built-in chain exists only
// once something is written to it, and then it hooks every packet of its
// hook. iptables-save prints a table's built-in chains whether or not
// they exist, so restoring a snapshot (Restore) creates all of them: an
// undo left raw, mangle, filter and nat hooked on every packet, and a
// later pod set's counters counted those chains as traversed. BaseChains
// reads which built-in chains exist before; PruneBaseChains deletes,
// after a Restore, the ones that did not and hold no rule. With the
// legacy backend nft lists none of iptables' tables and both do nothing.

// BaseChains returns the iptables tables ("raw") and built-in chains
// ("raw/PREROUTING") of family ip that exist as nf_tables objects where
// run runs; empty without nft.
func BaseChains(ctx context.Context, run Runner) (map[string]bool, error) {
	if _, err := exec.LookPath("nft"); err != nil {
		return map[string]bool{}, nil
	}
	out, err := run(ctx, []string{"nft", "list", "chains", "ip"}, nil)
	if err != nil {
		return nil, fmt.Errorf("nft list chains ip: %w", err)
	}
	return parseBaseChains(out), nil
}

// parseBaseChains reads `nft list chains ip`: the tables iptables-nft
// owns and their chains that have a hook.
func parseBaseChains(out []byte) map[string]bool {
	got := map[string]bool{}
	table, chain := "", ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "table" && f[1] == "ip":
			table, chain = "", ""
			if isIptablesTable(f[2]) {
				table = f[2]
				got[table] = true
			}
		case table != "" && len(f) >= 2 && f[0] == "chain":
			chain = f[1]
		case table != "" && chain != "" && len(f) >= 1 && f[0] == "type" && strings.Contains(sc.Text(), " hook "):
			got[table+"/"+chain] = true
		}
	}
	return got
}

func isIptablesTable(t string) bool {
	for _, b := range builtinChains {
		if b.table == t {
			return true
		}
	}
	return false
}

// PruneBaseChains deletes the built-in chains that exist now but were
// not in before (from BaseChains) and hold no rule, then the tables that
// were not in before and are left without a chain.
func PruneBaseChains(ctx context.Context, run Runner, before map[string]bool) error {
	now, err := BaseChains(ctx, run)
	if err != nil {
		return err
	}
	for _, b := range builtinChains {
		for _, c := range strings.Fields(b.chains) {
			k := b.table + "/" + c
			if !now[k] || before[k] {
				continue
			}
			out, err := run(ctx, []string{"nft", "list", "chain", "ip", b.table, c}, nil)
			if err != nil {
				return fmt.Errorf("nft list chain ip %s %s: %w", b.table, c, err)
			}
			if chainHasRules(out) {
				continue
			}
			if _, err := run(ctx, []string{"nft", "delete", "chain", "ip", b.table, c}, nil); err != nil {
				return fmt.Errorf("nft delete chain ip %s %s: %w", b.table, c, err)
			}
		}
		if !now[b.table] || before[b.table] {
			continue
		}
		out, err := run(ctx, []string{"nft", "list", "table", "ip", b.table}, nil)
		if err != nil {
			return fmt.Errorf("nft list table ip %s: %w", b.table, err)
		}
		if !bytes.Contains(out, []byte("chain ")) {
			if _, err := run(ctx, []string{"nft", "delete", "table", "ip", b.table}, nil); err != nil {
				return fmt.Errorf("nft delete table ip %s: %w", b.table, err)
			}
		}
	}
	return nil
}

// chainHasRules reads `nft list chain`: anything inside the chain's
// braces besides its type line is a rule.
func chainHasRules(out []byte) bool {
	depth := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasSuffix(l, "{"):
			depth++
		case l == "}":
			depth--
		case depth >= 2 && l != "" && !strings.HasPrefix(l, "type "):
			return true
		}
	}
	return false
}

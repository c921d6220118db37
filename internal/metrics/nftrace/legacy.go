package nftrace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LegacyTables lists the x_tables ("iptables-legacy") tables registered in
// the network namespace whose /proc/net is procNet, as "ip filter",
// "ip6 nat" and so on. Their rules run on the netfilter hooks beside
// nf_tables but never appear in an nf_tables trace: on a node that has
// them (kube-proxy or a CNI plugin in legacy mode) a trace would show
// only part of the path, so Start does not trace there (the counters
// collector reads both kinds). iptables-nft registers none of these.
func LegacyTables(procNet string) ([]string, error) {
	var out []string
	for _, f := range []struct{ fam, file string }{{"ip", "ip_tables_names"}, {"ip6", "ip6_tables_names"}} {
		b, err := os.ReadFile(filepath.Join(procNet, f.file))
		if errors.Is(err, fs.ErrNotExist) {
			continue // module not loaded: no table of that family
		}
		if err != nil {
			return nil, fmt.Errorf("legacy iptables tables: %w", err)
		}
		for _, name := range strings.Fields(string(b)) {
			out = append(out, f.fam+" "+name)
		}
	}
	return out, nil
}

// CheckLegacy returns an error naming the legacy tables of procNet's
// namespace, if it has any: the reason a trace there would be partial.
func CheckLegacy(procNet string) error {
	t, err := LegacyTables(procNet)
	if err != nil {
		return err
	}
	if len(t) > 0 {
		return fmt.Errorf("iptables-legacy tables are in use (%s): an nf_tables trace cannot see their rules; the counters collector counts them", strings.Join(t, ", "))
	}
	return nil
}

package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/iptables"
)

// iptablesCounts counts chains and rules per table of the node's
// network namespace (the numbers of cni-compare's Table III come from the
// same output), read with the iptables-save of the backend that holds the
// node's rules: both backends' where the image has them, picked as
// kube-proxy's iptables-wrapper picks (iptables.PickSave), for the
// image's default iptables-save sees its own backend's rules alone and a
// node's kube-proxy may write the other's. from names the program read
// and, where the other backend holds rules too, says so.
func iptablesCounts() (counts map[string]int, from string, err error) {
	legacy, _ := runSave(iptables.LegacySave)
	nft, _ := runSave(iptables.NftSave)
	save, other, rules := iptables.PickSave(legacy, nft)
	out := map[string][]byte{iptables.LegacySave: legacy, iptables.NftSave: nft}[save]
	if save == iptables.Save {
		if out, err = runSave(save); err != nil {
			return nil, "", err
		}
	}
	from = save
	if other != "" {
		from += fmt.Sprintf("; %s holds %d rules too, not counted", other, rules)
	}
	counts, err = CountIptables(out)
	return counts, from, err
}

// runSave runs the iptables-save program prog; errNoIptables where the
// image has no such program.
func runSave(prog string) ([]byte, error) {
	bin, err := exec.LookPath(prog)
	if err != nil {
		return nil, errNoIptables
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", prog, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// CountIptables counts chains (":NAME ...") and rules ("-A ...") of
// iptables-save output, per table and in total: keys "TABLE/chains",
// "TABLE/rules", "chains", "rules". A line it cannot read (over 1 MiB)
// is an error: the counts would stop there and read as a smaller
// ruleset.
func CountIptables(out []byte) (map[string]int, error) {
	m := map[string]int{}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "*"):
			table = strings.TrimPrefix(line, "*")
		case strings.HasPrefix(line, ":"):
			m[table+"/chains"]++
			m["chains"]++
		case strings.HasPrefix(line, "-A "):
			m[table+"/rules"]++
			m["rules"]++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("iptables-save output, line %d: %w", n+1, err)
	}
	return m, nil
}

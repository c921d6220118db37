package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// iptablesCounts runs iptables-save in the node's network namespace and
// counts chains and rules per table (the numbers of cni-compare's Table
// III come from the same output).
func iptablesCounts() (map[string]int, error) {
	bin, err := exec.LookPath("iptables-save")
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
		return nil, fmt.Errorf("iptables-save: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return CountIptables(out)
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

package netfilter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/netns"
)

// ErrNoIptables is returned when iptables-restore or iptables-save is
// not installed.
var ErrNoIptables = errors.New("iptables-restore and iptables-save are needed (apt-get install iptables)")

// Runner runs a program (no shell) where the rules live, stdin (when not
// nil) on its standard input, and returns what it printed. Rule text
// reaches a program on its stdin, never on a command line or through a
// shell, and never in a file: a file is left behind when cnibench is
// killed (kill -9) while the program runs.
type Runner func(ctx context.Context, argv []string, stdin []byte) ([]byte, error)

// InNetns runs programs inside a named network namespace ("" = host).
func InNetns(ns string) Runner {
	return func(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		if err := netns.Start(ns, nil, cmd); err != nil {
			return nil, fmt.Errorf("%s in netns %s: %w", argv[0], ns, err)
		}
		if err := cmd.Wait(); err != nil {
			return out.Bytes(), fmt.Errorf("%s in netns %s: %w: %s", argv[0], ns, err, bytes.TrimSpace(stderr.Bytes()))
		}
		return out.Bytes(), nil
	}
}

// OnNode runs programs on an engine node. Input on stdin (Apply, Test,
// Restore, ApplyNFT) needs a node that takes it, an
// engine.InputStarter (the local engine's).
func OnNode(n engine.Node) Runner {
	return func(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
		start := n.Start
		if stdin != nil {
			is, ok := n.(engine.InputStarter)
			if !ok {
				return nil, fmt.Errorf("%s on node %s: the node takes no input on stdin", argv[0], n.Name())
			}
			start = func(ctx context.Context, argv []string) (engine.Process, error) {
				return is.StartInput(ctx, argv, stdin)
			}
		}
		p, err := start(ctx, argv)
		if err != nil {
			return nil, err
		}
		out, _, err := p.Wait()
		return out, err
	}
}

// Available reports ErrNoIptables when the tools are missing.
func Available() error {
	for _, t := range []string{"iptables-restore", "iptables-save"} {
		if _, err := exec.LookPath(t); err != nil {
			return ErrNoIptables
		}
	}
	return nil
}

// Apply installs rs where run runs: iptables-restore --noflush reading
// the rules on its stdin (no shell, no rule text on a command line, no
// file). dir is no longer used (the rules were once written to a file
// in it, which a kill -9 left behind); callers still pass one. The
// CNI's user chains are flushed and rewritten; the hooks in built-in
// chains are appended, so apply a rule set once per namespace.
func Apply(ctx context.Context, run Runner, rs *Ruleset) error {
	return restore(ctx, run, rs, false)
}

// Test checks rs with iptables-restore --test (nothing is changed).
func Test(ctx context.Context, run Runner, rs *Ruleset) error {
	return restore(ctx, run, rs, true)
}

func restore(ctx context.Context, run Runner, rs *Ruleset, test bool) error {
	if err := Available(); err != nil {
		return err
	}
	if err := rs.Validate(); err != nil {
		return err
	}
	// iptables-restore reads stdin when given no file
	// (iptables-restore(8): "from data specified on STDIN or in file").
	argv := []string{"iptables-restore", "--noflush"}
	if test {
		argv = []string{"iptables-restore", "--test", "--noflush"}
	}
	if _, err := run(ctx, argv, input(rs.Bytes())); err != nil {
		return fmt.Errorf("iptables-restore: %w", err)
	}
	return nil
}

// input is data as a Runner's stdin: never nil, so that a program given
// no data reads an empty input rather than inheriting none.
func input(data []byte) []byte {
	if data == nil {
		return []byte{}
	}
	return data
}

// Save reads the rules and their counters (iptables-save -c).
func Save(ctx context.Context, run Runner) (*iptables.Ruleset, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	out, err := run(ctx, []string{"iptables-save", "-c"}, nil)
	if err != nil {
		return nil, fmt.Errorf("iptables-save: %w", err)
	}
	return iptables.Parse(out)
}

// Moved is what packets traversed between two reads: the chains
// ("table/chain") one of whose rules, or whose policy, counted a packet,
// and those rules. Built-in chains count like user chains, as
// iptables.Traversed counts them.
type Moved struct {
	Chains []string
	Rules  []iptables.Rule
}

// Traversed compares two reads (taken with Save) and names what moved;
// its counts agree with internal/metrics/iptables.Traversed.
func Traversed(before, after *iptables.Ruleset) Moved {
	old := map[string][]uint64{}
	for _, r := range before.Rules {
		old[r.Key()] = append(old[r.Key()], r.Packets)
	}
	seen := map[string]int{}
	chains := map[string]bool{}
	var m Moved
	for _, r := range after.Rules {
		k := r.Key()
		i := seen[k]
		seen[k]++
		var was uint64
		if i < len(old[k]) {
			was = old[k][i]
		}
		// A counter that went back restarted with a rewrite of its chain
		// (iptables.Moved), as the collector counts it.
		if moved, _ := iptables.Moved(was, r.Packets); moved {
			m.Rules = append(m.Rules, r)
			chains[r.Table+"/"+r.Chain] = true
		}
	}
	for c, pk := range after.Chains {
		if moved, _ := iptables.Moved(before.Chains[c], pk); moved {
			chains[c] = true
		}
	}
	for c := range chains {
		m.Chains = append(m.Chains, c)
	}
	sort.Strings(m.Chains)
	return m
}

// Has reports whether the chain "table/chain" moved.
func (m Moved) Has(chain string) bool {
	for _, c := range m.Chains {
		if c == chain {
			return true
		}
	}
	return false
}

package netfilter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/netns"
)

// ErrNoIptables is returned when iptables-restore or iptables-save is
// not installed.
var ErrNoIptables = errors.New("iptables-restore and iptables-save are needed (apt-get install iptables)")

// Runner runs a program (no shell) where the rules live and returns
// what it printed.
type Runner func(ctx context.Context, argv []string) ([]byte, error)

// InNetns runs programs inside a named network namespace ("" = host).
func InNetns(ns string) Runner {
	return func(ctx context.Context, argv []string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := netns.Start(ns, nil, cmd); err != nil {
			return nil, fmt.Errorf("%s in netns %s: %w", argv[0], ns, err)
		}
		if err := cmd.Wait(); err != nil {
			return out.Bytes(), fmt.Errorf("%s in netns %s: %w: %s", argv[0], ns, err, bytes.TrimSpace(stderr.Bytes()))
		}
		return out.Bytes(), nil
	}
}

// OnNode runs programs on an engine node. Apply and ApplyNFT hand the
// program a file written on this machine, so they need a node that
// shares its file system (the local engine's).
func OnNode(n engine.Node) Runner {
	return func(ctx context.Context, argv []string) ([]byte, error) {
		p, err := n.Start(ctx, argv)
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

// Apply installs rs where run runs: iptables-restore --noflush reading a
// file written in dir (no shell, no rule text on a command line). The
// CNI's user chains are flushed and rewritten; the hooks in built-in
// chains are appended, so apply a rule set once per namespace.
func Apply(ctx context.Context, run Runner, dir string, rs *Ruleset) error {
	return restore(ctx, run, dir, rs, false)
}

// Test checks rs with iptables-restore --test (nothing is changed).
func Test(ctx context.Context, run Runner, dir string, rs *Ruleset) error {
	return restore(ctx, run, dir, rs, true)
}

func restore(ctx context.Context, run Runner, dir string, rs *Ruleset, test bool) error {
	if err := Available(); err != nil {
		return err
	}
	if err := rs.Validate(); err != nil {
		return err
	}
	argv := []string{"iptables-restore", "--noflush"}
	if test {
		argv = []string{"iptables-restore", "--test", "--noflush"}
	}
	if err := runWithFile(ctx, run, dir, ".netfilter-*.rules", rs.Bytes(), argv); err != nil {
		return fmt.Errorf("iptables-restore: %w", err)
	}
	return nil
}

// runWithFile writes data to a new file in dir and runs argv with the
// file's path as its last argument where run runs, then removes the
// file: rule text reaches the program in a file, never on a command
// line or through a shell.
func runWithFile(ctx context.Context, run Runner, dir, pattern string, data []byte, argv []string) error {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("input file: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("input file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("input file: %w", err)
	}
	_, err = run(ctx, append(append([]string(nil), argv...), filepath.Clean(f.Name())))
	return err
}

// Save reads the rules and their counters (iptables-save -c).
func Save(ctx context.Context, run Runner) (*iptables.Ruleset, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	out, err := run(ctx, []string{"iptables-save", "-c"})
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
		if r.Packets > was {
			m.Rules = append(m.Rules, r)
			chains[r.Table+"/"+r.Chain] = true
		}
	}
	for c, pk := range after.Chains {
		if pk > before.Chains[c] {
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

package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
)

// table is a filter table as iptables-restore --noflush leaves it after
// one or more rule sets (declare flushes, -I goes to the top, -X
// deletes), for the walker below.
type table map[string][]string

func newTable() table { return table{"FORWARD": nil} }

// load applies restore input to tb as iptables-restore --noflush would.
func (tb table) load(t *testing.T, restore []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(restore))
	for sc.Scan() {
		l := sc.Text()
		f := strings.Fields(l)
		switch {
		case l == "*filter" || l == "COMMIT":
		case strings.HasPrefix(l, ":"):
			tb[f[0][1:]] = nil
		case f[0] == "-A" || f[0] == "-I":
			if _, ok := tb[f[1]]; !ok {
				t.Fatalf("rule in undeclared chain: %s", l)
			}
			spec := strings.TrimPrefix(l, f[0]+" "+f[1]+" ")
			if f[0] == "-I" {
				tb[f[1]] = append([]string{spec}, tb[f[1]]...)
			} else {
				tb[f[1]] = append(tb[f[1]], spec)
			}
		case f[0] == "-X":
			delete(tb, f[1])
		default:
			t.Fatalf("unknown line %q", l)
		}
	}
}

// packet is what the rule set's matches look at.
type packet struct {
	in, out, proto string
	src            net.IP
	state          string // conntrack: NEW, ESTABLISHED, INVALID
	dport          int
	mark           uint32
}

// walk sends p through FORWARD and returns the verdict and the rules it
// was tested against, per chain (a chain entered twice adds up).
func (tb table) walk(t *testing.T, p packet) (string, map[string]int) {
	t.Helper()
	seen := map[string]int{}
	type frame struct {
		chain string
		next  int
	}
	stack := []frame{{"FORWARD", 0}}
	for steps := 0; len(stack) > 0; steps++ {
		if steps > 10000 {
			t.Fatal("rule set loops")
		}
		top := &stack[len(stack)-1]
		rules, ok := tb[top.chain]
		if !ok {
			t.Fatalf("jump to missing chain %s", top.chain)
		}
		if top.next >= len(rules) {
			stack = stack[:len(stack)-1] // end of chain: return (FORWARD: policy ACCEPT)
			continue
		}
		spec := rules[top.next]
		top.next++
		seen[top.chain]++
		target, args := matchRule(t, spec, &p)
		switch target {
		case "":
		case "ACCEPT", "DROP":
			return target, seen
		case "RETURN":
			stack = stack[:len(stack)-1]
		case "MARK":
			v, m := markArg(t, args)
			p.mark = p.mark&^m ^ v
		default:
			if strings.HasPrefix(args, "goto") {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, frame{target, 0})
		}
	}
	return "ACCEPT", seen
}

// matchRule returns the target of spec if p matches it ("" if not), and
// the target's arguments ("goto" for -g).
func matchRule(t *testing.T, spec string, p *packet) (string, string) {
	t.Helper()
	f := fields(spec)
	for i := 0; i < len(f); i++ {
		arg := func() string { i++; return f[i] }
		switch f[i] {
		case "-m":
			arg()
		case "--comment":
			arg()
		case "-i", "-o":
			dev := p.in
			if f[i] == "-o" {
				dev = p.out
			}
			if w := arg(); !(dev == w || strings.HasSuffix(w, "+") && strings.HasPrefix(dev, strings.TrimSuffix(w, "+"))) {
				return "", ""
			}
		case "-p":
			if arg() != p.proto {
				return "", ""
			}
		case "-s":
			_, n, err := net.ParseCIDR(arg())
			if err != nil || !n.Contains(p.src) {
				return "", ""
			}
		case "--ctstate":
			if !strings.Contains(arg(), p.state) {
				return "", ""
			}
		case "--dport":
			if arg() != strconv.Itoa(p.dport) {
				return "", ""
			}
		case "--mark":
			v, m := markArg(t, arg())
			if p.mark&m != v {
				return "", ""
			}
		case "-j":
			return arg(), strings.Join(f[i+1:], " ")
		case "-g":
			return arg(), "goto"
		default:
			t.Fatalf("walker does not know %q in %q", f[i], spec)
		}
	}
	return "", ""
}

// fields splits a rule spec as a shell would, keeping a quoted comment
// whole.
func fields(spec string) []string {
	var out []string
	for spec = strings.TrimSpace(spec); spec != ""; spec = strings.TrimSpace(spec) {
		if spec[0] == '"' {
			end := strings.Index(spec[1:], `"`) + 2
			out, spec = append(out, spec[:end]), spec[end:]
			continue
		}
		w, rest, _ := strings.Cut(spec, " ")
		out, spec = append(out, w), rest
	}
	return out
}

// markArg reads "V/M" (after --set-xmark, or alone).
func markArg(t *testing.T, s string) (uint32, uint32) {
	t.Helper()
	s = strings.TrimPrefix(s, "--set-xmark ")
	var v, m uint32
	if _, err := fmt.Sscanf(s, "0x%x/0x%x", &v, &m); err != nil {
		t.Fatalf("mark %q: %v", s, err)
	}
	return v, m
}

package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Declared returns the chains a rule set declares, in its order.
func Declared(restore []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(restore))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, ":") {
			out = append(out, strings.Fields(l[1:])[0])
		}
	}
	return out
}

// Retire returns restore with the chains stale deleted in the same
// transaction: each declared (which flushes it, and with it the jumps
// one stale chain makes to another) and then deleted with -X before
// COMMIT. A rewrite for fewer pods leaves chains no rule reaches any
// more (the endpoint chains of deleted pods, dispatch child chains of
// bins that shrank to one name); deleting them keeps the node's tables
// what the rule set says, which Count reports. Chains restore declares
// itself are never deleted.
func Retire(restore []byte, stale []string) ([]byte, error) {
	keep := map[string]bool{}
	for _, c := range Declared(restore) {
		keep[c] = true
	}
	var decl, del bytes.Buffer
	for _, c := range stale {
		if !keep[c] {
			fmt.Fprintf(&decl, ":%s - [0:0]\n", c)
			fmt.Fprintf(&del, "-X %s\n", c)
		}
	}
	if decl.Len() == 0 {
		return restore, nil
	}
	head, rest, ok := bytes.Cut(restore, []byte("*filter\n"))
	body, tail, ok2 := bytes.Cut(rest, []byte("COMMIT\n"))
	if !ok || !ok2 || len(head) != 0 || len(tail) != 0 {
		return nil, fmt.Errorf("internal/policy: rule set is not one filter table")
	}
	var out bytes.Buffer
	out.WriteString("*filter\n")
	out.Write(decl.Bytes())
	out.Write(body)
	out.Write(del.Bytes())
	out.WriteString("COMMIT\n")
	return out.Bytes(), nil
}

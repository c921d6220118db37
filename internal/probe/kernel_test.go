package probe

import (
	"strings"
	"testing"
)

// TestIFBHostEffect: probing ifb loads ifb.ko, which makes ifb0 and ifb1
// in the host's namespace (numifbs=2) until it is unloaded; doctor said
// nothing of it, and said of the measured ones "every network
// namespace", which holds for tunnel modules' fallback devices only.
func TestIFBHostEffect(t *testing.T) {
	n := hostEffectNote(IFB, nil)
	if !strings.Contains(n, "loads module ifb") || !strings.Contains(n, "ifb0, ifb1 to the host's network namespace") {
		t.Errorf("ifb note = %q", n)
	}
	if n := hostEffectNote(IFB, []string{"ifb0", "ifb1"}); !strings.Contains(n, "added ifb0, ifb1 to the host's network namespace") {
		t.Errorf("measured ifb note = %q", n)
	}
	if n := hostEffectNote(IPIP, nil); !strings.Contains(n, "tunl0 to every network namespace;") {
		t.Errorf("ipip note = %q", n)
	}
}

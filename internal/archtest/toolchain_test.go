package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// scripts/setup.sh fetches go.mod's Go toolchain on a machine without one
// and checks it against scripts/go-toolchain.sha256: a go line raised
// without its checksums would make the README's first command fail on a
// fresh machine, long after the change.
func TestGoToolchainPinned(t *testing.T) {
	m := findModule(t)
	mod, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	v := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(mod)
	if v == nil {
		t.Fatal("go.mod has no go line")
	}
	sums, err := os.ReadFile(filepath.Join(m.dir, "scripts", "go-toolchain.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(string(v[1])) + ` ` + arch + ` [0-9a-f]{64}$`)
		if !re.Match(sums) {
			t.Errorf("scripts/go-toolchain.sha256 has no sha256 for Go %s on %s", v[1], arch)
		}
	}
}

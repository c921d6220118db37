package kerneltest

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HasModule says whether the running kernel has module mod (Kconfig
// symbol config): loaded (/sys/module/MOD), or built in (config=y in
// /proc/config.gz, MOD.ko in modules.builtin; a built-in module without
// parameters has no /sys/module entry). Read after a program that needs
// the module failed (the kernel loads a module on first use where it
// can), it tells a kernel without the feature, where a test skips, from
// a feature present but broken, where it fails; it asks the kernel's own
// files, never the code under test.
func HasModule(mod, config string) bool {
	if _, err := os.Stat(filepath.Join("/sys/module", mod)); err == nil {
		return true
	}
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil && hasLine(z, config+"=y") {
			return true
		}
	}
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	b, err := os.Open(filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "modules.builtin"))
	if err != nil {
		return false
	}
	defer b.Close()
	sc := bufio.NewScanner(b)
	for sc.Scan() {
		if filepath.Base(sc.Text()) == mod+".ko" {
			return true
		}
	}
	return false
}

func hasLine(r io.Reader, line string) bool {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if sc.Text() == line {
			return true
		}
	}
	return false
}

// RequireNfTables skips without nft or where the kernel has no nf_tables,
// and fails where both are there but nft cannot list namespace ns's
// tables (or anywhere inside the full-kernel VM, which loads nf_tables at
// boot), so that a test's own nft commands after it fail, not skip.
func RequireNfTables(t testing.TB, ns string) {
	t.Helper()
	RequireRoot(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("skipped: nft is not installed (apt-get install nftables)")
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "tables").CombinedOutput()
	if err == nil {
		return
	}
	if os.Getenv("CNIBENCH_IN_VM") == "" && !HasModule("nf_tables", "CONFIG_NF_TABLES") {
		t.Skipf("skipped: the kernel has no nf_tables (nft list tables: %v: %s)", err, out)
	}
	t.Fatalf("nf_tables is there, but nft list tables in %s: %v: %s", ns, err, out)
}

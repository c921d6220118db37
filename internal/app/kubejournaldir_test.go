package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// A kube run refuses a --journal-dir local runs journal in, exit 2,
// before anything is contacted or made: the default directory, one the
// machine's record names, or a link to one. `cnibench cleanup` replays
// those against this machine; a kube run's controller journals name the
// cluster nodes' values. Before, it journaled there, and a local cleanup
// wrote its values back here.
func TestKubeRunRefusesLocalJournalDir(t *testing.T) {
	old := dirsRecord
	dirsRecord = filepath.Join(t.TempDir(), "journal-dirs")
	t.Cleanup(func() { dirsRecord = old })
	recorded, own := t.TempDir(), t.TempDir()
	if err := os.WriteFile(dirsRecord, []byte(recorded+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(recorded, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{journal.DefaultDir, journal.DefaultDir + "/", recorded, link} {
		for _, args := range [][]string{
			{"run", "rps-rfs", "--quick", "--dry-run", "--engine", "kube", "--kubeconfig", "/nonexistent/kubeconfig", "--journal-dir", dir, "--out", t.TempDir() + "/r"},
			{"advise", "--prove", "--engine", "kube", "--kubeconfig", "/nonexistent/kubeconfig", "--journal-dir", dir, "--out", t.TempDir() + "/a"},
		} {
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, &out, &errb)
			if code != ExitBadInput || !strings.Contains(errb.String(), "--journal-dir "+dir+": local runs journal there") {
				t.Errorf("%s --journal-dir %s: exit %d: %s", args[0], dir, code, errb.String())
			}
		}
	}
	for _, dir := range []string{"", own, journal.DefaultDir + "/kube"} {
		if err := refuseLocalJournalDir(dir); err != nil {
			t.Errorf("kube run of --journal-dir %q: %v, want it taken", dir, err)
		}
	}
}

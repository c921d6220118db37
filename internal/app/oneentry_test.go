package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneEntryStudy is a study file named name whose one datapath entry,
// entry, is its line 6.
func oneEntryStudy(name, entry string) string {
	return `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: ` + name + `}
spec:
  datapaths:
    - ` + entry + `
  workloads: [{tool: iperf3}]
  trials: 1
  duration: 3s
`
}

// dryRunRefused runs `run --dry-run` on study text file and wants it
// refused as bad input (exit 2), saying want.
func dryRunRefused(t *testing.T, file, want string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if code := Main(context.Background(), []string{"run", "--dry-run", path}, &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), want) {
		t.Errorf("run --dry-run: exit %d, want %d saying %q\n%s", code, ExitBadInput, want, errb.String())
	}
}

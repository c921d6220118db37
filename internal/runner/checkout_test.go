package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new run's --out may be missing or an empty directory; a file or a
// directory with anything in it is refused as a preflight error (exit 2),
// by the run and by its dry run alike.
func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	used := filepath.Join(dir, "used")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(used, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{filepath.Join(dir, "new"), t.TempDir()} {
		if err := CheckOut(ok); err != nil {
			t.Errorf("CheckOut(%s) = %v, want nil", ok, err)
		}
	}
	for path, want := range map[string]string{file: "is not a directory", used: "is not empty"} {
		err := CheckOut(path)
		if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOut(%s) = %v, want a preflight error saying %q", path, err, want)
		}
	}
}

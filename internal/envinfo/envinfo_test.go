package envinfo

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Version runs a program's own version argv (ab -V, nginx -v on stderr)
// and keeps the first line; a missing program gives "".
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = -v ] || exit 3\necho 'fake/1.2' >&2\necho second line >&2\n"
	if err := os.WriteFile(filepath.Join(dir, "cnbfake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got := Version([]string{"cnbfake", "-v"}); got != "fake/1.2" {
		t.Errorf("Version = %q, want fake/1.2", got)
	}
	if got := Version([]string{"cnbmissing", "--version"}); got != "" {
		t.Errorf("missing program: %q", got)
	}
	if got := Version(nil); got != "" {
		t.Errorf("no argv: %q", got)
	}
}

// A program that hangs instead of printing its version (a test fixture:
// a script that never exits) gives "" at the deadline.
func TestVersionOfAProgramThatHangs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := versionTimeout
	versionTimeout = 200 * time.Millisecond
	t.Cleanup(func() { versionTimeout = saved })
	done := make(chan string, 1)
	go func() { done <- Version([]string{path, "--version"}) }()
	select {
	case v := <-done:
		if v != "" {
			t.Errorf("Version = %q, want \"\"", v)
		}
	case <-time.After(time.Minute):
		t.Fatal("Version did not return a minute after its 200ms deadline")
	}
}

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

// A directory a killed run left before it recorded anything (study.yaml,
// empty samples.jsonl and cpu.jsonl, no env.json) is refused with what it
// is and what to do, by a new run and by --resume alike: before, the
// first said "continue it with --resume" and the second "start it again
// in a new directory", each pointing at the other.
func TestCheckOutUnrecorded(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"study.yaml", "samples.jsonl", "cpu.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "study.yaml"), []byte("spec: {duration: 3s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckOut(dir)
	if !IsPreflight(err) || !strings.Contains(err.Error(), "ended before it recorded anything") || strings.Contains(err.Error(), "--resume") {
		t.Errorf("new run: %v; want the unrecorded run named, no --resume advice", err)
	}
	_, _, err = previousRun(Options{OutDir: dir}, localEngine)
	if err == nil || !strings.Contains(err.Error(), "nothing to continue") || strings.Contains(err.Error(), "new directory") {
		t.Errorf("--resume: %v; want nothing to continue, run it again", err)
	}
}

// A directory with samples but no env.json (a study of several
// datapaths whose first set-up was given up, then stopped) cannot be
// resumed: a new run's refusal does not send the user to --resume.
func TestCheckOutWithoutEnv(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"study.yaml": "spec: {duration: 3s}\n", "samples.jsonl": "{}\n", "cpu.jsonl": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := CheckOut(dir)
	if !IsPreflight(err) || !strings.Contains(err.Error(), "which --resume cannot continue") || strings.Contains(err.Error(), "continue it with --resume") {
		t.Errorf("new run: %v; want no --resume advice for a run without env.json", err)
	}
}

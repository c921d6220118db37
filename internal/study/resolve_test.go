package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path-like argument is a file even where its cleaned form is a
// built-in study's name: `cnibench run ./rps-rfs` with a file rps-rfs in
// the current directory runs the file, not the built-in study. Only a
// bare name means a built-in one.
func TestResolvePathLikeIsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine, err := os.ReadFile("testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"rps-rfs", "rps-rfs.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), mine, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, arg := range []string{"./rps-rfs", "sub/../rps-rfs", "./sub/../rps-rfs", "rps-rfs.yaml", filepath.Join(dir, "rps-rfs")} {
		if _, ok := BuiltinSource(arg); ok {
			t.Errorf("BuiltinSource(%q) took a path for a built-in study's name", arg)
		}
		s, err := Resolve(arg, Options{}, testCatalog)
		if err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		if s.Builtin() || s.Metadata.Name != "minimal" || s.Source != arg {
			t.Errorf("%s: resolved %s (%s), want the file", arg, s.Metadata.Name, s.Source)
		}
	}
	// The bare name is the built-in study, file or not.
	if s, err := Resolve("rps-rfs", Options{}, testCatalog); err != nil || !s.Builtin() || s.Metadata.Name != "rps-rfs" {
		t.Errorf("bare rps-rfs: %v", err)
	}
	// A path-like name that is no file says so, not "no built-in study".
	_, err = Resolve("./cni-compare", Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), `"./cni-compare": no such file`) {
		t.Errorf("./cni-compare: %v", err)
	}
}

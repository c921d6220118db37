package app

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// `cnibench show STUDY --quick > f.yaml` is where a study file starts,
// and its output was refused when loaded again: it kept the references
// to cells the profile left out, and not the profile. Every built-in
// study's show, with each of its profiles, loads as a file; the
// references left out are said in a comment.
func TestShownStudiesLoadAgain(t *testing.T) {
	dir := t.TempDir()
	for _, name := range study.Builtins() {
		for _, args := range [][]string{nil, {"--quick"}, {"--profile", "paper"}} {
			var out, errb bytes.Buffer
			argv := append([]string{"show", name}, args...)
			if code := Main(context.Background(), argv, &out, &errb); code != 0 {
				if strings.Contains(errb.String(), "no profile") {
					continue
				}
				t.Fatalf("%v: exit %d: %s", argv, code, errb.String())
			}
			f := filepath.Join(dir, "shown.yaml")
			if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			errb.Reset()
			if code := Main(context.Background(), []string{"show", f}, io.Discard, &errb); code != 0 {
				t.Errorf("%v, loaded again: exit %d: %s", argv, code, errb.String())
			}
		}
	}
}

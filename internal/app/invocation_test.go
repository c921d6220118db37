package app

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// The command a run records is what the user gave, in words a rerun can
// extend: flags in name order, --set values in their order, switches
// alone, and neither --out nor the journal directory.
func TestInvocation(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	given := []string{"run", "./my study.yaml", "--set", "trials=3", "--quick", "--out", "/tmp/x", "--budget", "90m",
		"--set", "replicas=[1,4]", "--journal-dir", "/tmp/j", "--engine=kube", "--server-node", "w1"}
	cmd, rest, err := root.Find(given)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	got := invocation(cmd, cmd.Flags().Args(), "out", "journal-dir")
	want := []string{"cnibench", "run", "./my study.yaml", "--budget", "90m", "--engine", "kube", "--quick",
		"--server-node", "w1", "--set", "trials=3", "--set", "replicas=[1,4]"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	cmd, rest, _ = newRoot(io.Discard, io.Discard).Find([]string{"run", "rps-rfs", "--quick=false"})
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	if got := invocation(cmd, cmd.Flags().Args()); !slices.Equal(got, []string{"cnibench", "run", "rps-rfs", "--quick=false"}) {
		t.Errorf("a switch set off: %q", got)
	}
}

// An advise rerun on a cluster repeats the cluster flags given, and only
// them.
func TestKubeFlagsGiven(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var kf kubeFlags
	kf.register(fs)
	fs.String("engine", "", "")
	if err := fs.Parse([]string{"--engine", "kube", "--server-node", "w1", "--kubeconfig", "/etc/k 2", "--pod-timeout", "5m"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"--kubeconfig", "/etc/k 2", "--pod-timeout", "5m0s", "--server-node", "w1"}
	if got := kf.given(fs); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A kubeconfig given relative is recorded by its absolute path: the
	// rerun command a report prints works from any directory.
	wd, _ := os.Getwd()
	if err := fs.Parse([]string{"--kubeconfig", "kc/admin.conf"}); err != nil {
		t.Fatal(err)
	}
	if got := kf.given(fs); !slices.Contains(got, filepath.Join(wd, "kc/admin.conf")) {
		t.Errorf("relative kubeconfig: got %q", got)
	}
}

// A run that stopped after recording its environment can be resumed, and
// says so; one that stopped before cannot.
func TestResumeHint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if h := resumeHint(dir); h != "" {
		t.Errorf("without env.json: %q", h)
	}
	if err := os.WriteFile(filepath.Join(dir, results.EnvFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h := resumeHint(dir); h != "; continue it with: cnibench run --resume '"+dir+"'" {
		t.Errorf("with env.json: %q", h)
	}
}

// A study file is recorded by its absolute path, so the rerun command a
// report prints works from any directory; a built-in study by its name.
func TestStudyArgs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	file := &study.Study{Source: "./my study.yaml"}
	if got := studyArgs([]string{"./my study.yaml"}, file); !slices.Equal(got, []string{filepath.Join(wd, "my study.yaml")}) {
		t.Errorf("file: %q", got)
	}
	if got := studyArgs([]string{"/abs/s.yaml"}, &study.Study{Source: "/abs/s.yaml"}); !slices.Equal(got, []string{"/abs/s.yaml"}) {
		t.Errorf("absolute file: %q", got)
	}
	s, err := study.Resolve("rps-rfs", study.Options{}, studyCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if got := studyArgs([]string{"rps-rfs"}, s); !slices.Equal(got, []string{"rps-rfs"}) {
		t.Errorf("built-in: %q", got)
	}
}

// A flag naming a file of this machine is recorded by its absolute path;
// a built-in study's name, an empty value and other flags as given.
func TestAbsFile(t *testing.T) {
	wd, _ := os.Getwd()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("study", "", "")
	fs.String("server-node", "", "")
	if err := cobra.MarkFlagFilename(fs, "study"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, value, want string }{
		{"study", "./my study.yaml", filepath.Join(wd, "my study.yaml")},
		{"study", "/abs/s.yaml", "/abs/s.yaml"},
		{"study", "rps-rfs", "rps-rfs"},
		// Path-like is a file, even where it cleans to a built-in's name.
		{"study", "./rps-rfs", filepath.Join(wd, "rps-rfs")},
		{"study", "sub/../rps-rfs", filepath.Join(wd, "rps-rfs")},
		{"study", "", ""},
		{"server-node", "w1", "w1"},
	} {
		if err := fs.Set(c.flag, c.value); err != nil {
			t.Fatal(err)
		}
		if got := absFile(fs.Lookup(c.flag)); got != c.want {
			t.Errorf("--%s %q: %q, want %q", c.flag, c.value, got, c.want)
		}
	}
}

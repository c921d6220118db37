package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// A slip in a command or flag name is bad input on one line that names
// what was likely meant; a group's unknown subcommand is refused too,
// not answered with its help and exit 0.
func TestUsageSlips(t *testing.T) {
	for args, want := range map[string]string{
		"rnu":                      `cnibench: unknown command "rnu" for "cnibench" (did you mean "run"?)`,
		"frobnicate":               `cnibench: unknown command "frobnicate" for "cnibench"`,
		"run rps-rfs --quik":       `cnibench: unknown flag: --quik (did you mean --quick?)`,
		"compare a b --fail-iff x": `cnibench: unknown flag: --fail-iff (did you mean --fail-if?)`,
		"kube instal":              `cnibench: unknown command "instal" for "cnibench kube" (did you mean "install"?)`,
		"run rps-rfs --zzz":        `cnibench: unknown flag: --zzz`,
		"kube objects --help":      `cnibench: unknown command "objects" for "cnibench kube"`,
		"agent --help srve":        `cnibench: unknown command "srve" for "cnibench agent" (did you mean "serve"?)`,
		// help of no command: cobra said "Unknown help topic" and exit 0.
		"help nosuch":       `cnibench: unknown command "nosuch" for "cnibench"`,
		"help rnu":          `cnibench: unknown command "rnu" for "cnibench" (did you mean "run"?)`,
		"help kube objects": `cnibench: unknown command "objects" for "cnibench kube"`,
		// A missing argument is named, as run names its STUDY, not
		// cobra's "accepts 1 arg(s), received 0".
		"show":      `cnibench: show needs a STUDY (a built-in name, see 'cnibench studies', or a file)`,
		"report":    `cnibench: report needs a run DIR (the directory a run wrote, e.g. results/rps-rfs-20261121-101500)`,
		"compare a": `cnibench: compare needs two run directories, DIR_A and DIR_B`,
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), strings.Fields(args), &out, &errb)
		if code != ExitBadInput || strings.TrimSuffix(errb.String(), "\n") != want || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want 2 and %q", args, code, errb.String(), out.String(), want)
		}
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"kube"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("kube alone: exit %d, want its help and 0:\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"kube", "--help"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("kube --help: exit %d, want its help and 0:\n%s%s", code, out.String(), errb.String())
	}
}

// help of a command still prints its help, exit 0; run's says a tuning
// may go to the client node (side:) and lists summary.json among the
// files it writes.
func TestHelpTopics(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "run"}, {"help", "kube", "manifests"}, {"run", "--help"}} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &out, &errb)
		if code != ExitOK || !strings.Contains(out.String(), "Usage:") || errb.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want its help and 0:\n%s", args, code, errb.String(), out.String())
		}
		if args[0] == "run" && (!strings.Contains(out.String(), "summary.json") || !strings.Contains(out.String(), "client node")) {
			t.Errorf("run --help names neither summary.json nor the client node's tunings:\n%s", out.String())
		}
	}
}

// --resume of something that is not a run directory says so (exit 2)
// before any lock, journal or preflight.
func TestResumeNotARun(t *testing.T) {
	file := t.TempDir() + "/study.yaml"
	if err := os.WriteFile(file, []byte("spec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, t.TempDir()} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"run", "--resume", dir}, &out, &errb)
		if want := "cnibench: --resume " + dir + " is not a run directory: "; code != ExitBadInput || !strings.HasPrefix(errb.String(), want) {
			t.Errorf("--resume %s: exit %d, stderr %q; want 2 and %q", dir, code, errb.String(), want)
		}
	}
}

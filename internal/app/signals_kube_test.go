package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/journal"
)

// kubeRunFlags are a kube run's flags as parsed: its context has a space
// (quoted in the hint), its image is no business of cleanup's.
func kubeRunFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	// No kubeconfig file: the hint names none (kube.Reach).
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	if args == nil {
		args = []string{"--context", "lab ctx", "--namespace", "bench", "--image", "reg/x:1"}
	}
	var kf kubeFlags
	var jdir string
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	kf.register(fs)
	fs.StringVar(&jdir, "journal-dir", "", "as run's")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

const kubeHint = "cnibench cleanup --kube --context 'lab ctx' --namespace bench"

// TestKubeRunNamesKubeCleanup: what a kube run leaves is undone by
// `cnibench cleanup --kube` with the run's cluster flags (quoted as the
// shell takes them back), and an exit without teardown (a panic,
// SIGQUIT) says that one. Before, it said `cnibench cleanup`, which reads
// /run/cnibench and leaves the cluster's pods, Services and Lease.
func TestKubeRunNamesKubeCleanup(t *testing.T) {
	st := &signalState{}
	ctx := context.WithValue(context.Background(), signalKey{}, st)
	noteCleanup(ctx, cmdline.Quote(kubeCleanupWords(kubeRunFlags(t))), true)
	dir := t.TempDir()
	noteJournalDir(ctx, dir)
	j, err := journal.Open(dir, "kquit", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.RecordDir(journal.TempDir(t.TempDir(), "kquit")); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var errb bytes.Buffer
	if code := leaving(st, &errb, "cnibench: SIGQUIT", 131); code != ExitAbandoned || !strings.Contains(errb.String(), "run: "+kubeHint+"\n") {
		t.Errorf("leaving: exit %d, said %q; want %d naming %q", code, errb.String(), ExitAbandoned, kubeHint)
	}
}

// TestKubeRunSignalsNameKubeCleanup: the second and third signal name
// the kube cleanup too.
func TestKubeRunSignalsNameKubeCleanup(t *testing.T) {
	var out lockedBuf
	exited := make(chan int, 1)
	ctx, stop := HandleSignals(context.Background(), &out, func(code int) { exited <- code })
	defer stop()
	noteCleanup(ctx, cmdline.Quote(kubeCleanupWords(kubeRunFlags(t))), true)
	for i := 0; i < 3; i++ {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			want := []string{"stopping", "leave the rest to: " + kubeHint + "\n"}[i]
			waitFor(t, want, func() bool { return strings.Contains(out.String(), want) })
		}
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("third signal did not exit")
	}
	if !strings.Contains(out.String(), "to undo what is left, run: "+kubeHint+"\n") {
		t.Errorf("third signal said %q; want %q", out.String(), kubeHint)
	}
}

// TestKubeCleanupNamesResolvedCluster: a run on $KUBECONFIG and its
// current context (no --kubeconfig, no --context) names the kubeconfig
// read and the context used in its cleanup hint, so the hint, run after
// a context switch or in another shell, cleans the run's cluster; before,
// it named no flag and cleaned whatever the current context was then.
// Several $KUBECONFIG files go through env; given flags are kept.
func TestKubeCleanupNamesResolvedCluster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my kube")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	conf := "apiVersion: v1\nkind: Config\ncurrent-context: lab\ncontexts:\n- name: lab\n  context: {cluster: c, user: u}\n- name: other\n  context: {cluster: c, user: u}\n"
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"KUBECONFIG, current context", a, []string{"--namespace", "bench"}, "cnibench cleanup --kube --kubeconfig '" + a + "' --context lab --namespace bench"},
		{"two KUBECONFIG files", a + ":" + b, []string{}, "env 'KUBECONFIG=" + a + ":" + b + "' cnibench cleanup --kube --context lab"},
		{"flags given", b, []string{"--kubeconfig", a, "--context", "other"}, "cnibench cleanup --kube --kubeconfig '" + a + "' --context other"},
		// The controller journal is in the run's --journal-dir.
		{"journal dir", a, []string{"--journal-dir", "/var/j"}, "cnibench cleanup --kube --kubeconfig '" + a + "' --context lab --journal-dir /var/j"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := kubeRunFlags(t, tc.args...)
			t.Setenv("KUBECONFIG", tc.env)
			if got := cmdline.Quote(kubeCleanupWords(fs)); got != tc.want {
				t.Errorf("hint %q, want %q", got, tc.want)
			}
		})
	}
}

package app

import (
	"bytes"
	"context"
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
func kubeRunFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	var kf kubeFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	kf.register(fs)
	if err := fs.Parse([]string{"--context", "lab ctx", "--namespace", "bench", "--image", "reg/x:1"}); err != nil {
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
	noteCleanup(ctx, cmdline.Quote(kubeCleanupWords(kubeRunFlags(t))))
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
	noteCleanup(ctx, cmdline.Quote(kubeCleanupWords(kubeRunFlags(t))))
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

package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
)

// Stopped is the cause of a context cancelled by a signal: a command
// that ends because of it exits 128+N, the shells' code for signal N,
// after its orderly teardown.
type Stopped struct{ Signal syscall.Signal }

func (s *Stopped) Error() string { return "stopped on " + s.Signal.String() }

// stoppedBy is the signal that cancelled ctx, or nil.
func stoppedBy(ctx context.Context) *Stopped {
	var s *Stopped
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}

// Signals, as a user meets them:
//   - SIGINT (Ctrl-C), SIGTERM and SIGHUP (a dropped SSH session) cancel
//     the context; the run tears down and reverts everything, then exits.
//     SIGHUP and SIGINT inherited as ignored (nohup, a background job)
//     stay ignored (handled).
//   - A second one prints what is still to be undone (read from the run's
//     own journal), so a slow teardown is not mistaken for a hang.
//   - A third exits at once: with ExitAbandoned, naming the journal, when
//     this process leaves one (leaving), else 128+N. The journal stays on
//     disk, and the kernel drops the run's locks, so `cnibench cleanup`
//     undoes the rest (`cnibench cleanup --kube`, with the run's cluster
//     flags, for a kube run: noteCleanup).
//   - A command stopped so, with its teardown done, exits 128+N (130 for
//     SIGINT), whatever error the cancellation surfaced as (Main).
//   - SIGQUIT (Ctrl-\) prints every goroutine's stack, as Go's default
//     does, and exits at once: ExitAbandoned when this process leaves a
//     journal (its changes are not undone), else 128+3; Go's own exit
//     code, 2, would say "bad input, host untouched".
//   - A panic on the command's goroutine is caught likewise (guard).
//   - SIGPIPE is caught and dropped: with `cnibench run ... | tee log`,
//     Ctrl-C also kills tee, and the next progress line must fail with
//     EPIPE (progress output ignores write errors) rather than kill the
//     run halfway through its teardown. Catching (not ignoring) keeps the
//     default SIGPIPE for the tools cnibench starts.

// signalState tells the signal handler which journal directories this
// process uses; commands note them in the context they run with.
type signalState struct {
	mu   sync.Mutex
	dirs []string
	// cleanup is the command that undoes what this process leaves, as
	// printed (noteCleanup); empty: `cnibench cleanup`.
	cleanup string
	// remote says the process runs on a cluster (noteCleanup): what it
	// leaves when it exits at once is there too (its pods, Lease and the
	// agents' node changes), which no local journal shows, so it always
	// names the cleanup --kube.
	remote bool
	// undoing are the journals of dead runs this process is undoing
	// (`cnibench cleanup`, noteUndoing): not its own, yet left on disk,
	// with their runs' processes and namespaces, if it exits at once.
	undoing map[string]bool
}

type signalKey struct{}

// noteJournalDir records that this process journals in dir, so a second
// signal can say what is still to be undone.
func noteJournalDir(ctx context.Context, dir string) {
	if st, ok := ctx.Value(signalKey{}).(*signalState); ok {
		st.mu.Lock()
		st.dirs = append(st.dirs, dir)
		st.mu.Unlock()
	}
}

// noteUndoing records that this process is undoing a dead run's journal
// at path, until the returned func is called: a signal meanwhile counts
// it as left behind, as it counts this process's own journals.
func noteUndoing(ctx context.Context, path string) (done func()) {
	st, ok := ctx.Value(signalKey{}).(*signalState)
	if !ok {
		return func() {}
	}
	st.mu.Lock()
	if st.undoing == nil {
		st.undoing = map[string]bool{}
	}
	st.undoing[path] = true
	st.mu.Unlock()
	return func() {
		st.mu.Lock()
		delete(st.undoing, path)
		st.mu.Unlock()
	}
}

// noteCleanup records the command that undoes what this process leaves:
// a kube run's objects are in a cluster that the local cleanup never
// touches, and a local run's journal outside the default directory needs
// --journal-dir (journal.CleanupFor). remote: the process runs on a
// cluster, so exiting at once leaves what it made there whether or not a
// local journal is on disk (leaving).
func noteCleanup(ctx context.Context, command string, remote bool) {
	if st, ok := ctx.Value(signalKey{}).(*signalState); ok {
		st.mu.Lock()
		st.cleanup, st.remote = command, remote
		st.mu.Unlock()
	}
}

// cleanupCommand is the command the hints name (noteCleanup).
func cleanupCommand(st *signalState) string {
	if st == nil {
		return journal.DefaultCleanup
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return cmp.Or(st.cleanup, journal.DefaultCleanup)
}

// kubeCleanupWords is `cnibench cleanup --kube` reaching the cluster and
// namespaces a kube run used: the kubeconfig and context the run
// resolved (kube.Reach: its --kubeconfig or $KUBECONFIG's files or
// ~/.kube/config, absolute, and its --context or their current one),
// and its --namespace and --agent-namespace where they were given.
// Repeating only the flags given, a run on $KUBECONFIG or the current
// context named none: the hint, run after a context switch, cleaned
// another cluster (and deleted this host's journals of the run as dead).
// Several $KUBECONFIG files, which --kubeconfig cannot name, are given
// through env.
func kubeCleanupWords(fs *pflag.FlagSet) []string {
	var kubeconfig, kubeContext string
	if f := fs.Lookup("kubeconfig"); f != nil {
		kubeconfig = f.Value.String()
	}
	if f := fs.Lookup("context"); f != nil {
		kubeContext = f.Value.String()
	}
	words := kube.CleanupWords(kubeconfig, kubeContext)
	namespaces := []string{"namespace", "agent-namespace"}
	words = append(words, setFlags(fs, func(name string) bool { return slices.Contains(namespaces, name) })...)
	// The run's controller journal is there, not in kubeJournalDir:
	// cleanup --kube without it left the journal, which refused every
	// later run naming the same command.
	if f := fs.Lookup("journal-dir"); f != nil && f.Changed {
		words = append(words, "--journal-dir", absPath(f.Value.String()))
	}
	return words
}

// HandleSignals returns a context cancelled by the first SIGINT, SIGTERM
// or SIGHUP, and handles the later ones as the notes above say; exit is
// called after the third. stop ends the handling.
func HandleSignals(parent context.Context, stderr io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	st := &signalState{}
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, signalKey{}, st))
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, handled()...)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-ch:
			}
			switch sig {
			case syscall.SIGPIPE:
				continue
			case syscall.SIGQUIT:
				stderr.Write(allStacks())
				exit(leaving(st, stderr, "cnibench: SIGQUIT: exiting at once, without the teardown", 128+int(syscall.SIGQUIT)))
				return
			}
			n++
			switch n {
			case 1:
				fmt.Fprintf(stderr, "cnibench: %v: stopping; undoing every change (signal again to see what is left, a third time to exit at once)\n", sig)
				cancel(&Stopped{Signal: sig.(syscall.Signal)})
			case 2:
				fmt.Fprintln(stderr, "cnibench: still undoing: "+stillPending(st))
				fmt.Fprintf(stderr, "cnibench: signal once more to exit at once and leave the rest to: %s\n", cleanupCommand(st))
			default:
				// Exit 3 and the cleanup hint only when a journal of
				// this process is left: a teardown past its last
				// journaled change (writing results) leaves nothing.
				exit(leaving(st, stderr, fmt.Sprintf("cnibench: %v: exiting at once, without finishing the teardown", sig), 128+int(sig.(syscall.Signal))))
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// guard runs f, the command, and turns a panic on its goroutine into an
// exit code, printing the panic and its stack as Go does: ExitAbandoned
// when this process leaves a journal (the teardown did not run: cleanup
// undoes its changes once the process has exited), else ExitFailure;
// never Go's 2, which says "bad input, host untouched". A panic on
// another goroutine cannot be caught here: Go ends the process with 2
// and its stack, and the journal stays for cleanup (docs/safety.md).
func guard(ctx context.Context, stderr io.Writer, f func() int) (code int) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		fmt.Fprintf(stderr, "panic: %v\n\n%s\n", p, debug.Stack())
		st, _ := ctx.Value(signalKey{}).(*signalState)
		code = leaving(st, stderr, "cnibench: internal error (the panic above), exiting without the teardown", ExitFailure)
	}()
	return f()
}

// leaving says why the process ends without its teardown and what it
// leaves, and returns its exit code: ExitAbandoned when a journal of this
// process is still on disk, naming it, else otherwise.
func leaving(st *signalState, stderr io.Writer, why string, otherwise int) int {
	var paths []string
	for _, r := range ownJournals(st) {
		paths = append(paths, r.Path)
	}
	if len(paths) == 0 && st != nil && isRemote(st) {
		fmt.Fprintf(stderr, "%s; to undo what is left, run: %s\n", why, cleanupCommand(st))
		return ExitAbandoned
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, why)
		return otherwise
	}
	fmt.Fprintf(stderr, "%s; its changes are left in %s; to undo them, run: %s\n", why, strings.Join(paths, ", "), cleanupCommand(st))
	return ExitAbandoned
}

// isRemote says whether the process runs on a cluster (noteCleanup).
func isRemote(st *signalState) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.remote
}

// allStacks is every goroutine's stack, as Go prints them on SIGQUIT.
func allStacks() []byte {
	for n := 1 << 16; ; n *= 2 {
		buf := make([]byte, n)
		if m := runtime.Stack(buf, true); m < n || n >= 64<<20 {
			return buf[:m]
		}
	}
}

// ownJournals reads this process's journals still on disk in the
// directories it noted, and the dead runs' journals it is undoing
// (noteUndoing) while they are (nil st: none).
func ownJournals(st *signalState) []*journal.Replay {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	dirs := append([]string(nil), st.dirs...)
	var undoing []string
	for p := range st.undoing {
		undoing = append(undoing, p)
	}
	st.mu.Unlock()
	slices.Sort(undoing)
	var out []*journal.Replay
	for _, p := range undoing {
		if r, err := journal.ReadReplay(p); err == nil {
			out = append(out, r)
		}
	}
	for _, dir := range dirs {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), journal.Ext) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			r, err := journal.ReadReplay(filepath.Join(dir, e.Name()))
			if err == nil && r.Header.PID == os.Getpid() {
				out = append(out, r)
			}
		}
	}
	return out
}

// handled are the signals HandleSignals catches. SIGHUP and SIGINT are
// left out when the process started with them ignored: `nohup cnibench
// run ...` ignores SIGHUP so that the run outlives the login, and a shell
// without job control starts a background job (`cnibench run ... &`) with
// SIGINT ignored so that Ctrl-C does not reach it. Catching them would
// undo that (signal.Notify installs a handler over the inherited SIG_IGN)
// and tear the run down at logout; glibc's manual says likewise to leave
// a signal that was ignored at start ignored.
func handled() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGPIPE, syscall.SIGQUIT}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// stillPending describes the entries not yet undone in this process's
// journals.
func stillPending(st *signalState) string {
	var items []string
	for _, r := range ownJournals(st) {
		p := r.Pending()
		for i := len(p) - 1; i >= 0; i-- {
			items = append(items, describe(p[i]))
		}
	}
	if len(items) == 0 {
		return "no journaled change is left; finishing (closing files, writing results)"
	}
	const most = 8
	s := fmt.Sprintf("%d change(s), newest first: %s", len(items), strings.Join(items[:min(len(items), most)], "; "))
	if len(items) > most {
		s += fmt.Sprintf("; and %d more", len(items)-most)
	}
	return s
}

func describe(e journal.Entry) string {
	switch {
	case e.Set != nil:
		ns := e.Set.Netns
		if ns == "" {
			ns = "host"
		}
		return fmt.Sprintf("%s:%s back to %q", ns, e.Set.Path, e.Set.Old)
	case e.Object != nil && e.Object.Kind == journal.KindProcess:
		return fmt.Sprintf("process %s (pid %d)", e.Object.Name, e.Object.PID)
	case e.Object != nil:
		return e.Object.Kind + " " + e.Object.Name
	case e.Qdisc != nil:
		ns := e.Qdisc.Netns
		if ns == "" {
			ns = "host"
		}
		return fmt.Sprintf("%s:%s qdisc back (netem impairment)", ns, e.Qdisc.Dev)
	}
	return fmt.Sprintf("entry %d", e.Seq)
}

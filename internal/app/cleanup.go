package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
)

func newCleanupCmd() *cobra.Command {
	var opt cleanup.Options
	var kf kubeFlags
	var useKube, kubeAll bool
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove leftovers of crashed runs and revert their journaled host changes",
		Long: `Every change a run makes to the host is journaled (old value first) under
/run/cnibench before it is made. cleanup replays the journals of runs that are no
longer alive, there and in every other journal directory a local run has used (recorded
in /run/cnibench/journal-dirs), newest run first across them: it reverts sysfs/sysctl values to their exact previous values, stops
the runs' processes, deletes their namespaces and removes their state and temporary
directories. Namespaces named cnb-* whose run has no journal here are listed; with
--orphans (or --run naming the run) they are removed too. Live runs are never touched.
A journal damaged before its last line is undone as far as it can be read, then set
aside as RUN.journal.corrupt with its unreadable lines shown, to check by hand.`,
		Example: "  sudo cnibench cleanup\n  sudo cnibench cleanup --dry-run\n  sudo cnibench cleanup --run 3f9a2c\n  sudo cnibench cleanup --orphans\n  cnibench cleanup --kube --kubeconfig ~/.kube/config",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Run != "" {
				if err := checkCleanupRun(opt.Run); err != nil {
					return inputErr(err)
				}
			}
			if err := checkCleanupMode(cmd, &kf, useKube); err != nil {
				return err
			}
			if useKube {
				return kubeCleanup(cmd.Context(), cmd.OutOrStdout(), &kf, kubeCleanupOptions{
					only: opt.Run, all: kubeAll, dryRun: opt.DryRun, journalDir: opt.JournalDir})
			}
			if opt.JournalDir == "" {
				// Every directory local runs journaled in, newest run
				// first across them.
				opt.DirsRecord = dirsRecord
			} else if err := checkJournalDir(opt.JournalDir); err != nil {
				return inputErr(err)
			}
			// A third signal while a dead run is being undone exits 3,
			// naming its journal, which is still on disk.
			opt.Undoing = func(path string) func() { return noteUndoing(cmd.Context(), path) }
			rep, err := cleanup.Run(cmd.Context(), opt)
			for _, line := range rep.Actions {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			if be := (*journal.BusyError)(nil); errors.As(err, &be) {
				return inputErr(err) // nothing touched: a run or cleanup is live
			}
			if le := (*journal.LockError)(nil); errors.As(err, &le) {
				return inputErr(err) // nothing touched: not root, as run says
			}
			if err != nil {
				return err
			}
			if len(rep.Actions) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to clean up")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opt.DryRun, "dry-run", false, "print what would be done, change nothing")
	cmd.Flags().StringVar(&opt.Run, "run", "", "clean up only this run ID (env.json's run_id, or one of its run_ids for a resumed run's parts, e.g. 3f9a2c; not a namespace name); default: every run that is no longer alive")
	cmd.Flags().BoolVar(&opt.Orphans, "orphans", false, "also remove cnb-* namespaces and state directories of runs that have no journal (a run or test journaling elsewhere may own them)")
	// Shown (hidden on run and advise): refusals and kept journals name
	// `cleanup --journal-dir DIR`, and a mistyped one needs its hint.
	cmd.Flags().StringVar(&opt.JournalDir, "journal-dir", "", "replay this journal directory's dead runs alone (default: /run/cnibench and every directory runs recorded)")
	cmd.Flags().BoolVar(&useKube, "kube", false, "clean up kube runs instead: agents revert node knobs, then every object with the run's label is deleted")
	cmd.Flags().BoolVar(&kubeAll, "all", false, "with --kube: also runs started from other machines (their controller cannot be checked from here)")
	kf.register(cmd.Flags())
	return cmd
}

// checkCleanupMode refuses the flags of the other cleanup than the one
// asked for: without --kube, --all and the cluster's flags would be
// ignored and this machine cleaned instead; with it, --orphans (this
// machine's namespaces) would be.
func checkCleanupMode(cmd *cobra.Command, kf *kubeFlags, useKube bool) error {
	if useKube {
		if cmd.Flags().Changed("orphans") {
			return inputErr(errors.New("--orphans removes this machine's leftover namespaces; --kube cleans up a cluster: use them apart"))
		}
		// The nodes and image are a run's: cleanup finds every run's
		// objects by label and asks every agent.
		return refuseUnused(cmd, "cleanup --kube", "kube", "all", "run", "dry-run", "journal-dir",
			"kubeconfig", "context", "namespace", "agent-namespace", "pod-timeout")
	}
	if cmd.Flags().Changed("all") {
		return inputErr(errors.New("--all needs --kube"))
	}
	return kf.refuseWithout(cmd.Flags(), "--kube")
}

// checkCleanupRun refuses a --run value that can never name a run, which
// would otherwise clean up nothing and say so, exit 0, as if that run had
// left nothing. It says what a run ID looks like and, for the names a
// user may have copied instead (a namespace cnb-RUN-..., a results
// directory), which run ID they meant.
func checkCleanupRun(id string) error {
	if journal.CheckRunID(id) == nil {
		return nil
	}
	msg := fmt.Sprintf("--run %q is not a run ID: a run ID is letters, digits, '_' and '.' (env.json's run_id in the run's results directory, e.g. 3f9a2c)", id)
	if run, ok := cleanup.RunOf(id, cleanup.DefaultPrefix); ok && journal.CheckRunID(run) == nil {
		return fmt.Errorf("%s; %s is a namespace name of run %s: --run %s", msg, id, run, run)
	}
	if b, err := os.ReadFile(filepath.Join(id, results.EnvFile)); err == nil {
		var env results.Env
		if json.Unmarshal(b, &env) == nil && journal.CheckRunID(env.RunID) == nil {
			return fmt.Errorf("%s; %s is the results directory of run %s: --run %s", msg, id, env.RunID, env.RunID)
		}
	}
	return errors.New(msg)
}

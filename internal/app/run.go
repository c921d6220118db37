package app

import (
	"cmp"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

type runFlags struct {
	studyFlags
	out        string
	engine     string
	journalDir string
	kube       kubeFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run STUDY",
		Short: "Run a study end to end and write its report",
		Long: `Run a built-in study (see 'cnibench studies') or a study file. The local engine
builds two nodes and their pods as network namespaces on this machine (root needed),
applies each tuning to the server node, runs the workload, reverts every change, and
writes a run directory with raw samples, summary.csv, summary.md and report.html.`,
		Example: "  sudo cnibench run rps-rfs --quick\n" +
			"  sudo cnibench run rps-rfs --set replicas=[1,16] --set trials=5 --out /tmp/rps\n" +
			"  sudo cnibench run ./my-study.yaml\n" +
			"  cnibench run rps-rfs --quick --engine kube --server-node worker-1 --client-node worker-2",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.load(args[0])
			if err != nil {
				return err
			}
			out := f.out
			if out == "" {
				// Validation refused such a name already; this keeps a name
				// like ../../etc/x from ever reaching the path.
				if !study.ValidName(s.Metadata.Name) {
					return &study.FieldError{File: s.Source, Field: "metadata.name", Msg: "not usable in the default run directory; give --out"}
				}
				out = filepath.Join("results", s.Metadata.Name+"-"+time.Now().Format("20060102-150405"))
			}
			prog := progress.New(cmd.ErrOrStderr())
			opt := runner.Options{
				Engine:     f.engine,
				Study:      s,
				OutDir:     out,
				JournalDir: f.journalDir,
				Progress:   prog,
			}
			if f.engine == "kube" {
				quietKlog()
				opt.Kube = f.kube.config()
				if opt.JournalDir == "" {
					opt.JournalDir = kubeJournalDir
				}
			}
			// One run or cleanup at a time on this host, and none while a
			// dead run's journal waits for cleanup.
			jdir := cmp.Or(opt.JournalDir, journal.DefaultDir)
			lock, err := journal.BeginRun(jdir)
			if err != nil {
				return inputErr(err)
			}
			defer lock.Release()
			noteJournalDir(cmd.Context(), jdir)
			dir, err := runner.Run(cmd.Context(), opt)
			if err != nil {
				if runner.IsPreflight(err) {
					return inputErr(err)
				}
				if dir != "" {
					return fmt.Errorf("%w (partial results in %s)", err, dir)
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(dir, "report.html"))
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "run directory (default ./results/STUDY-TIMESTAMP)")
	cmd.Flags().StringVar(&f.engine, "engine", "local", "where nodes and pods come from: local (network namespaces on this machine) or kube (a real cluster, see --kubeconfig)")
	f.kube.register(cmd.Flags())
	cmd.Flags().StringVar(&f.journalDir, "journal-dir", "", "where host changes are journaled for crash recovery (default /run/cnibench)")
	_ = cmd.Flags().MarkHidden("journal-dir")
	return cmd
}

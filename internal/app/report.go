package app

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/report"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Rebuild summary.csv, summary.json, summary.md and report.html from a run directory's raw files",
		Example: "  cnibench report results/rps-rfs-20261121-101500\n" +
			"  xdg-open results/rps-rfs-20261121-101500/report.html",
		Args: needArgs(1, "a run DIR (the directory a run wrote, e.g. results/rps-rfs-20261121-101500)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Not a run directory, or one whose raw files do not read
			// (a corrupt line names its file and line), is bad input
			// (exit 2), as for compare; failing to write the pages is not.
			if err := checkRunDir(args[0]); err != nil {
				return err
			}
			run, s, err := report.Open(args[0])
			if err != nil {
				return inputErr(err)
			}
			if err := report.Write(run, s); err != nil {
				return err
			}
			// What loading tolerated (a line cut by a crash, a trial
			// removed by hand since): the page says it too.
			for _, w := range run.Warnings {
				fmt.Fprintln(cmd.OutOrStdout(), "warning: "+w)
			}
			// The decisions and reruns, as the run printed them at its end
			// (a study the format no longer reads is left to the pages).
			if s := runStudy(args[0]); s != nil {
				printOutcome(cmd.OutOrStdout(), run, s)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(args[0], "report.html"))
			return nil
		},
	}
}

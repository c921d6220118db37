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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.Build(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(args[0], "report.html"))
			return nil
		},
	}
}

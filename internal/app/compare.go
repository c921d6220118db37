package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/compare"
	"github.com/cnibench/cnibench/internal/results"
)

func newCompareCmd() *cobra.Command {
	var metrics []string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Set two runs side by side: B relative to A per cell, with 95% intervals and Welch's p",
		Long: `compare matches the cells of two run directories by tuning, workload and replica count
(and datapath when the runs have several) and prints a Markdown table: each run's mean
with its 95% interval, the ratio B/A with Fieller's interval, and Welch's p. Use it for the
same study on two machines, on the local and the kube engine, or before and after a change.`,
		Example: "  cnibench compare results/rps-local results/rps-kube\n" +
			"  cnibench compare before/ after/ --metric bitrate --metric retransmits",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := results.Load(args[0])
			if err != nil {
				return inputErr(fmt.Errorf("run A: %w", err))
			}
			b, err := results.Load(args[1])
			if err != nil {
				return inputErr(fmt.Errorf("run B: %w", err))
			}
			rows := compare.Runs(a.Samples, b.Samples, metrics)
			return compare.WriteMarkdown(cmd.OutOrStdout(), args[0], args[1], rows)
		},
	}
	cmd.Flags().StringArrayVar(&metrics, "metric", []string{"bitrate"}, "metric to compare (repeatable; \"\" for every metric both runs have)")
	return cmd
}

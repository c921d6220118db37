package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
)

type adviseFlags struct {
	out    string
	rules  []string
	prove  bool
	engine string
}

func newAdviseCmd() *cobra.Command {
	var f adviseFlags
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "Inspect this machine and propose the knobs that may speed up its pod network",
		Long: `advise reads, and only reads, what decides how fast this node's pod network can be:
CPUs and NUMA nodes, NIC queues, RSS, IRQ affinity, RPS/RFS, offloads (GRO, tunnel
segmentation), the MTU of underlay, tunnel and pod devices, the CNI, netfilter and
conntrack sizes, qdiscs, busy polling and the kernel. Its rules (one file each, with the
study or kernel documentation they cite) turn that into candidate knobs, each with its
predicted effect, risk and how to make it permanent. Nothing is applied. The pages
(advice.md, advice.html, advice.json, inspection.json) go to --out and the Markdown to
stdout. Measuring each candidate (--prove) and other nodes (--engine kube) come later.`,
		Example: "  sudo cnibench advise\n  sudo cnibench advise --rule rfs --rule tunnel-mtu --out /tmp/advice",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.prove {
				return inputErr(errors.New("--prove is not built yet: advise only proposes candidates for now"))
			}
			switch f.engine {
			case "local":
			case "kube":
				return inputErr(errors.New("--engine kube is not built yet: advise inspects this machine only for now"))
			default:
				return inputErr(fmt.Errorf("unknown engine %q (local, kube)", f.engine))
			}
			rules, err := advise.Rules()
			if len(f.rules) > 0 {
				rules, err = advise.Lookup(f.rules...)
			}
			if err != nil {
				return inputErr(err)
			}
			out := f.out
			if out == "" {
				out = filepath.Join("results", "advise-"+time.Now().Format("20060102-150405"))
			}
			in := inspect.Inspect(cmd.Context(), inspect.Host())
			in.Source = "this machine"
			if h, err := os.Hostname(); err == nil {
				in.Source += " (" + h + ")"
			}
			rep := advise.Build(rules, in, time.Now())
			if err := rep.WriteDir(out); err != nil {
				return err
			}
			if err := rep.WriteMarkdown(cmd.OutOrStdout()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", filepath.Join(out, advise.FileHTML))
			return nil
		},
	}
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "directory for the pages (default ./results/advise-TIMESTAMP)")
	cmd.Flags().StringArrayVar(&f.rules, "rule", nil, "evaluate only this rule (repeatable; default every rule)")
	cmd.Flags().BoolVar(&f.prove, "prove", false, "measure each candidate with an A/B run (not built yet)")
	cmd.Flags().StringVar(&f.engine, "engine", "local", "where to inspect: local (this machine); kube is not built yet")
	return cmd
}

package app

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check privileges, kernel features and tools; say which datapaths and studies can run",
		Long: `doctor probes by trying: it creates and deletes a throw-away device of each kind in a
scratch network namespace, adds and removes qdiscs, loads a trivial BPF program, and
looks for the tools. One line per check, then which datapaths and built-in studies are
available here and why not.`,
		Example: "  sudo cnibench doctor",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			res := probe.Run(cmd.Context())
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CHECK\tKIND\tSTATUS\tDETAIL\tAFFECTS")
			for _, r := range res {
				status := "ok"
				if !r.OK {
					status = "MISSING"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Kind, status, r.Detail, strings.Join(affects(r.Name), ", "))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out)
			w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "DATAPATH\tSTATUS\tREASON")
			for _, d := range catalog.All() {
				if err := probe.Require(d.Features()...); err != nil {
					fmt.Fprintf(w, "%s\tunavailable\t%v\n", d.Name(), err)
				} else {
					fmt.Fprintf(w, "%s\tavailable\t\n", d.Name())
				}
			}
			return w.Flush()
		},
	}
}

// affects lists the datapaths and built-in studies that need a feature.
func affects(feature string) []string {
	var out []string
	needs := map[string]bool{}
	for _, d := range catalog.All() {
		for _, f := range d.Features() {
			if f == feature {
				out = append(out, "datapath "+d.Name())
				needs[d.Name()] = true
			}
		}
	}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, studyCatalog())
		if err != nil {
			continue
		}
		hit := false
		for _, d := range s.Spec.Datapaths {
			hit = hit || needs[d.Type]
		}
		for _, w := range s.Spec.Workloads {
			hit = hit || w.Tool == feature
		}
		for _, t := range s.Spec.Tunings {
			hit = hit || (t.RPS != nil && feature == probe.RPS) || (t.RFS != nil && feature == probe.RFS)
		}
		if hit {
			out = append(out, "study "+name)
		}
	}
	return out
}

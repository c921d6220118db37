package app

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check privileges, kernel features and tools; say which datapaths and studies can run",
		Long: `doctor probes by trying: it creates and deletes a throw-away device of each kind in a
scratch network namespace, adds and removes qdiscs, loads a trivial BPF program, and
looks for the tools and the reference CNI plugins. One line per check, then which
datapaths and built-in studies are available here and why not, and whether each datapath
can be wired through the reference CNI plugins (wiring cni).`,
		Example: "  sudo cnibench doctor",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			// The workload programs are the drivers' (registry); probe sits
			// below them and gets them handed in.
			res := append(probe.Run(cmd.Context()), probe.Programs(cmd.Context(), registry.AllPrograms())...)
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
			fmt.Fprintln(w, "DATAPATH\tSTATUS\tWIRING CNI\tREASON")
			for _, d := range datapaths() {
				status, reason := "available", ""
				if err := probe.Require(d.features...); err != nil {
					status, reason = "unavailable", err.Error()
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", d.label, status, wiringCNI(d.d), reason)
			}
			return w.Flush()
		},
	}
}

// wiringCNI says whether d can be wired through the reference CNI
// plugins here: "yes", "no: its CNI has its own plugin", "no: host
// network", or "no: PLUGIN plugin missing".
func wiringCNI(d datapath.Datapath) string {
	err := local.CheckWiring(d, local.WiringCNI, nil)
	var ue *probe.UnsupportedError
	switch {
	case err == nil:
		return "yes"
	case datapath.IsHostNetwork(d):
		return "no: host network"
	case errors.Is(err, local.ErrNoCNIDelegate):
		return "no: its CNI has its own plugin"
	case errors.As(err, &ue):
		return "no: " + strings.TrimPrefix(ue.Name, "cni-") + " plugin missing"
	}
	return "no: " + err.Error()
}

// doctorDatapath is a row of doctor's datapath table: a catalog
// datapath, or one built by another implementation (study
// `implementation`), which may need more (calico-routed by bird needs
// BIRD).
type doctorDatapath struct {
	label    string
	d        datapath.Datapath
	key      string // implKey of the study entries it stands for
	features []string
}

// implKey names what a study datapath entry builds: its type and, unless
// builtin, its implementation.
func implKey(typ, impl string) string {
	if impl == study.ImplBuiltin {
		impl = ""
	}
	return typ + "/" + impl
}

func datapaths() []doctorDatapath {
	var out []doctorDatapath
	for _, d := range catalog.All() {
		out = append(out, doctorDatapath{d.Name(), d, implKey(d.Name(), ""), d.Features()})
	}
	for _, o := range catalog.Variants() {
		d, err := catalog.Build(o)
		if err != nil {
			continue // TestVariantsBuild keeps this from happening
		}
		out = append(out, doctorDatapath{fmt.Sprintf("%s (implementation: %s)", o.Type, o.Implementation), d, implKey(o.Type, o.Implementation), d.Features()})
	}
	return out
}

// affects lists the datapaths and built-in studies that need a feature,
// and the datapaths whose wiring cni needs a reference plugin.
func affects(feature string) []string {
	var out []string
	needs := map[string]bool{}
	for _, d := range datapaths() {
		for _, f := range d.features {
			if f == feature {
				out = append(out, "datapath "+d.label)
				needs[d.key] = true
			}
		}
		if del, ok := d.d.(datapath.CNIDelegate); ok {
			for _, p := range append([]string{cniconf.TypeLoopback}, del.CNIPlugins()...) {
				if probe.CNIPlugin(p) == feature {
					out = append(out, "wiring cni of "+d.label)
				}
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
			hit = hit || needs[implKey(d.Type, d.Implementation)]
		}
		for _, w := range s.Variants() {
			for _, p := range registry.Programs(w) {
				hit = hit || p.Name == feature
			}
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

package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

func newDoctorCmd() *cobra.Command {
	var engine string
	var kf kubeFlags
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check privileges, kernel features and tools; say which datapaths and studies can run",
		Long: `doctor probes by trying: it creates and deletes a throw-away device of each kind in a
scratch network namespace, adds and removes qdiscs, loads BPF programs, checks iptables
and nftables rule sets and ipsets there, and looks for the tools and the reference CNI
plugins. One line per check, then which datapaths are available here and why not, and
whether each datapath can be wired through the reference CNI plugins (wiring cni); last,
for each built-in study and profile, whether it runs here (the preflight of 'run
--dry-run', which builds nothing) and its machine time in trials.

Probing is not free of effects on this host: the kernel loads the module of each device,
qdisc, rule and set kind tried, and it stays loaded. Some of those add devices to the
host until unloaded: ipip adds tunl0 and ip_gre gre0, gretap0 and erspan0 (in every
network namespace), ifb adds ifb0 and ifb1 and dummy dummy0 (in the host's); the Open
vSwitch probe runs modprobe openvswitch. Each such line says so; see docs/safety.md.

With --engine kube it checks a cluster instead: for each built-in study and profile,
whether it runs there (the kube engine's preflight: permissions, nodes, the agents, the
nodes' kernel features, the CNI, which picks a study's datapath among several), and why
not; nothing is created.`,
		Example: "  sudo cnibench doctor\n  cnibench doctor --engine kube --kubeconfig ~/.kube/config",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if err := runner.CheckEngine(engine); err != nil {
				return inputErr(err)
			}
			if engine != "kube" {
				if err := kf.refuseWithout(cmd.Flags(), "--engine kube"); err != nil {
					return err
				}
			}
			if engine == "kube" {
				if err := refuseInstallOnly(cmd.Flags(), "doctor --engine kube"); err != nil {
					return err
				}
				quietKlog()
				cfg := kf.config()
				if err := cfg.Validate(); err != nil {
					return inputErr(err)
				}
				// The cluster itself first: unreachable, or without the
				// permissions or nodes a run needs, every study would
				// say the same. The studies' preflights then share what
				// it and each other asked (kube.Memo).
				cfg.Memo = &kube.Memo{}
				_, cs, err := cfg.Memo.Connect(cfg.Kubeconfig, cfg.Context)
				if err == nil {
					var place kube.Placement
					if place, err = cfg.Memo.Preflight(cmd.Context(), cs, *cfg); err == nil {
						fmt.Fprintf(out, "cluster: reachable, permissions granted; server node %s, client node %s\n", place.Server.Name, place.Client.Name)
					}
				}
				if err != nil {
					return inputErr(err) // as run's preflight: a missing prerequisite
				}
				fmt.Fprintln(out, "Each built-in study's preflight there (the nodes' agents, kernel features and CNI; this machine's own kernel and tools are not what runs there):")
				return writeStudies(cmd.Context(), out, runner.Options{Engine: engine, Kube: cfg}, "THERE")
			}
			// The workload programs are the drivers' (registry); probe sits
			// below them and gets them handed in.
			res := append(probe.Run(cmd.Context()), probe.Programs(cmd.Context(), registry.AllPrograms())...)
			if err := writeDoctor(out, uniqueChecks(res)); err != nil {
				return err
			}
			fmt.Fprintln(out)
			return writeStudiesHere(cmd.Context(), out, os.Geteuid() == 0)
		},
	}
	cmd.Flags().StringVar(&engine, "engine", "local", "local (this machine) or kube (a cluster, see --kubeconfig)")
	kf.register(cmd.Flags())
	return cmd
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
	features []string
}

func datapaths() []doctorDatapath {
	var out []doctorDatapath
	for _, d := range catalog.All() {
		out = append(out, doctorDatapath{d.Name(), d, d.Features()})
	}
	for _, o := range catalog.Variants() {
		d, err := catalog.Build(o)
		if err != nil {
			continue // TestVariantsBuild keeps this from happening
		}
		out = append(out, doctorDatapath{fmt.Sprintf("%s (implementation: %s)", o.Type, o.Implementation), d, d.Features()})
	}
	return out
}

// affected is what a missing feature keeps from running.
type affected struct {
	datapaths, wiring, studies []string
}

// String is one line per kind: "datapaths: a, b; wiring cni: c; studies: d".
func (a affected) String() string {
	var parts []string
	for _, x := range []struct {
		name string
		list []string
	}{{"datapaths", a.datapaths}, {"wiring cni", a.wiring}, {"studies", a.studies}} {
		if len(x.list) > 0 {
			parts = append(parts, x.name+": "+strings.Join(x.list, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// needsOf is what doctor says a missing feature affects from: its
// datapath rows, and the features each built-in study needs, by study
// name, over its default and every profile: the runner's own list
// (runner.LocalNeeds, what its preflight refuses or skips with) and its
// workloads' programs.
type needsOf struct {
	datapaths []doctorDatapath
	studies   map[string][]string
	order     []string
}

// builtinNeeds gathers needsOf for the built-in studies, with needs the
// runner's list of one study.
func builtinNeeds(dps []doctorDatapath, needs func(*study.Study) ([]string, error)) needsOf {
	n := needsOf{datapaths: dps, studies: map[string][]string{}}
	for _, name := range study.Builtins() {
		base, err := study.Resolve(name, study.Options{}, studyCatalog())
		if err != nil {
			continue
		}
		n.order = append(n.order, name)
		for _, profile := range append([]string{""}, base.ProfileNames()...) {
			s, err := study.Resolve(name, study.Options{Profile: profile}, studyCatalog())
			if err != nil {
				continue
			}
			if f, err := needs(s); err == nil {
				n.studies[name] = append(n.studies[name], f...)
			}
			for _, w := range s.Variants() {
				for _, p := range registry.Programs(w) {
					n.studies[name] = append(n.studies[name], p.Name)
				}
			}
		}
	}
	return n
}

// affects lists the datapaths and built-in studies that need a feature,
// and the datapaths whose wiring cni needs a reference plugin.
func (n needsOf) affects(feature string) affected {
	var out affected
	for _, d := range n.datapaths {
		if slices.Contains(d.features, feature) {
			out.datapaths = append(out.datapaths, d.label)
		}
		if del, ok := d.d.(datapath.CNIDelegate); ok {
			for _, p := range append([]string{cniconf.TypeLoopback}, del.CNIPlugins()...) {
				if probe.CNIPlugin(p) == feature {
					out.wiring = append(out.wiring, d.label)
				}
			}
		}
	}
	for _, name := range n.order {
		if slices.Contains(n.studies[name], feature) {
			out.studies = append(out.studies, name)
		}
	}
	return out
}

// uniqueChecks keeps the first result of each check: a program both a
// datapath's knob and a workload's collector run (nft) is probed as a
// tool and as a program, and is one check.
func uniqueChecks(res []probe.Result) []probe.Result {
	seen := map[string]bool{}
	return slices.DeleteFunc(res, func(r probe.Result) bool {
		key := r.Kind + "/" + r.Name
		dup := seen[key]
		seen[key] = true
		return dup
	})
}

// doctorWidth is the terminal width doctor's output fits: a check's
// reason and what it affects go on indented lines below it, wrapped,
// instead of columns that made 250-character lines.
const doctorWidth = 100

func writeDoctor(out io.Writer, res []probe.Result) error {
	return writeDoctorWith(out, res, runner.LocalNeeds)
}

// writeDoctorWith is writeDoctor with the runner's list of a study's
// needs handed in (a test's).
func writeDoctorWith(out io.Writer, res []probe.Result, needs func(*study.Study) ([]string, error)) error {
	dps := datapaths()
	var n needsOf
	if slices.ContainsFunc(res, func(r probe.Result) bool { return !r.OK }) {
		n = builtinNeeds(dps, needs)
	}
	nameW, kindW := len("CHECK"), len("KIND")
	for _, r := range res {
		nameW, kindW = max(nameW, len(r.Name)), max(kindW, len(r.Kind))
	}
	// The detail column starts after the three short ones; what it says
	// wraps within the width, continuation lines aligned under it.
	pad := strings.Repeat(" ", nameW+kindW+len("MISSING")+6)
	fmt.Fprintf(out, "%-*s  %-*s  %-7s  %s\n", nameW, "CHECK", kindW, "KIND", "STATUS", "DETAIL")
	for _, r := range res {
		status := "ok"
		detail := r.Detail
		if !r.OK {
			status = "MISSING"
			if a := n.affects(r.Name).String(); a != "" {
				detail += "; affects " + a
			}
		}
		line := fmt.Sprintf("%-*s  %-*s  %-7s", nameW, r.Name, kindW, r.Kind, status)
		if text := strings.TrimPrefix(wrap(detail, pad, doctorWidth), pad); text != "" {
			line += "  " + text
		} else {
			line = strings.TrimRight(line, " ") + "\n"
		}
		if _, err := fmt.Fprint(out, line); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DATAPATH\tSTATUS\tWIRING CNI")
	var reasons []string
	for _, d := range dps {
		status := "available"
		if err := probe.Require(d.features...); err != nil {
			status = "unavailable"
			reasons = append(reasons, wrap(d.label+": "+err.Error(), "  ", doctorWidth))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", d.label, status, wiringCNI(d.d))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(reasons) > 0 {
		fmt.Fprintln(out, "\nwhy unavailable:")
		fmt.Fprint(out, strings.Join(reasons, ""))
	}
	return nil
}

// wrap breaks text into lines of at most width columns, each starting
// with indent; a word longer than a line (a path) is cut.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	var words []string
	room := max(width-len(indent), 8)
	for _, word := range strings.Fields(text) {
		for len(word) > room {
			words = append(words, word[:room])
			word = word[room:]
		}
		words = append(words, word)
	}
	for _, word := range words {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	if line != indent {
		b.WriteString(line + "\n")
	}
	return b.String()
}

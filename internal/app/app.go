// Package app is the cnibench command line: one file per subcommand, each
// with a flag struct; only Main turns errors into exit codes.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/suggest"
	"github.com/cnibench/cnibench/internal/version"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// Exit codes. Besides these, a command stopped by signal N (SIGINT,
// SIGTERM, SIGHUP) exits 128+N once its teardown has undone everything.
const (
	ExitOK       = 0
	ExitFailure  = 1 // the run failed while measuring
	ExitBadInput = 2 // bad flags, study, or a missing prerequisite; host untouched
	// ExitAbandoned: the command ended with changes its journal keeps
	// for cleanup (a third signal, SIGQUIT, an undo that failed, a
	// panic), or a cleanup left a dead run's journal (an undo failed,
	// or it was stopped before the run); apart from 128+N and 1 so a script can tell "stopped, all
	// undone" and "failed" from "run cnibench cleanup".
	ExitAbandoned = 3
	// ExitOutput: the command's output could not be written (a closed
	// pipe, a full disk). Apart from ExitFailure so that compare's exit 1
	// means only a failed regression gate, never a table that was lost.
	ExitOutput = 4
)

// InputError marks errors found before anything touched the host.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}

// outputError marks an error writing a command's output (ExitOutput).
type outputError struct{ err error }

func (e *outputError) Error() string { return e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

func outputErr(err error) error { return &outputError{err: err} }

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return guard(ctx, stderr, func() int { return execute(ctx, args, stdout, stderr) })
}

func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil && cmd != nil {
		// A group's unknown subcommand ("kube objects", also with
		// --help, which cobra answers before any RunE; group).
		err = strayCommand(cmd)
	}
	return exitCode(ctx, root, err, stderr)
}

// exitCode says err and returns the exit code it means.
func exitCode(ctx context.Context, root *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	if s := stoppedBy(ctx); s != nil {
		// Whatever the cancellation surfaced as (a trial's "context
		// canceled", an interrupted preflight), the user stopped it.
		fmt.Fprintln(stderr, "cnibench: "+s.Error()+": "+err.Error())
		if journalKept(err) {
			return ExitAbandoned
		}
		return 128 + int(s.Signal)
	}
	fmt.Fprintln(stderr, "cnibench: "+err.Error()+commandHint(root, err))
	if journalKept(err) {
		return ExitAbandoned
	}
	var ie *InputError
	var fe *study.FieldError
	if errors.As(err, &ie) || errors.As(err, &fe) || isUsage(err) {
		return ExitBadInput
	}
	var oe *outputError
	if errors.As(err, &oe) {
		return ExitOutput
	}
	return ExitFailure
}

// journalKept says whether err tells of a journal kept because changes
// are left: a command's own (*journal.PendingError) or a dead run's that
// cleanup left (*cleanup.KeptError: an undo failed, or cleanup was
// stopped before the run). It decides the exit code whatever else
// happened: 128+N and 1 would say nothing is left to undo.
func journalKept(err error) bool {
	var kept *journal.PendingError
	var left *cleanup.KeptError
	return errors.As(err, &kept) || errors.As(err, &left)
}

type usageError struct{ error }

var (
	unknownFlagRE    = regexp.MustCompile(`^unknown flag: --(\S+)`)
	unknownCommandRE = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)
)

// flagHint adds the flag an unknown one was likely meant to be (--quik:
// --quick) to pflag's error.
func flagHint(cmd *cobra.Command, err error) error {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if c := suggest.Closest(m[1], names); c != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, c)
	}
	return err
}

// commandHint is " (did you mean "run"?)" for an unknown subcommand that
// is a slip of one, on the error's line.
func commandHint(root *cobra.Command, err error) string {
	m := unknownCommandRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	parent := root
	if c, _, ferr := root.Find(strings.Fields(m[2])[1:]); ferr == nil {
		parent = c
	}
	var names []string
	for _, c := range parent.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if c := suggest.Closest(m[1], names); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

func isUsage(err error) bool {
	var u usageError
	// cobra reports an unknown subcommand of the root from its command
	// lookup, before any validator of ours runs, with this wording only.
	return errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command ")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "cnibench",
		Short: "Measure and tune pod networking",
		Long: `cnibench runs container-networking studies end to end: it builds nodes and pods
(network namespaces on this machine, or a real Kubernetes cluster), wires them with
real kernel datapaths, applies tunings that it always reverts, runs the workloads,
and writes a report with figures, confidence intervals and the published numbers.`,
		Example:       "  sudo cnibench run rps-rfs --quick\n  cnibench studies\n  sudo cnibench doctor",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{flagHint(cmd, err)} })
	// cobra's own suggestion for an unknown command spans three lines;
	// Main adds it to the error's one line (commandHint).
	root.DisableSuggestions = true
	root.AddCommand(newRunCmd(), newCompareCmd(), newStudiesCmd(), newShowCmd(), newReportCmd(), newCleanupCmd(), newDoctorCmd(),
		newKubeCmd(), newAgentCmd(), newAdviseCmd())
	// A wrong argument count or an unknown command is bad input (exit 2),
	// like a bad flag: for compare, exit 1 means the gate failed, and a CI
	// job with an empty $B must not read as a regression.
	strictHelp(root)
	usageArgs(root)
	for _, c := range root.Commands() {
		if c.HasSubCommands() && !c.Runnable() {
			group(c)
		}
	}
	return root
}

// groupAnnotation marks a command of subcommands (group).
const groupAnnotation = "cnibench/group"

// group makes a command of subcommands (kube, agent) refuse an unknown
// subcommand as bad input, naming the likely one, where cobra printed
// the group's help and exited 0, also with --help; alone it still
// prints its help.
func group(cmd *cobra.Command) {
	cmd.Annotations = map[string]string{groupAnnotation: "true"}
	cmd.Args = cobra.ArbitraryArgs
	// With or without --help, a stray subcommand reaches the help, which
	// then prints nothing: Main reports it (strayCommand).
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if strayCommand(c) == nil {
			help(c, args)
		}
	})
}

// strayCommand is the error for a group given a subcommand it does not
// have (its parsed arguments), nil for any other command.
func strayCommand(c *cobra.Command) error {
	if c.Annotations[groupAnnotation] == "" || c.Flags().NArg() == 0 {
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q for %q", c.Flags().Arg(0), c.CommandPath())}
}

// strictHelp makes `cnibench help TOPIC` for a command that does not
// exist bad input (exit 2), as `cnibench TOPIC` is, with the same line
// and hint, where cobra's help printed "Unknown help topic" and the usage
// and exited 0: a script checking a command's help must see it fail.
func strictHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, h := range root.Commands() {
		if h.Name() != "help" || h.Run == nil {
			continue
		}
		show := h.Run
		h.Run = nil
		h.RunE = func(c *cobra.Command, args []string) error {
			found, rest, err := c.Root().Find(args)
			switch {
			case err != nil:
				return usageError{err}
			case len(rest) > 0:
				// A group's or a command's word that is no subcommand
				// ("help kube objects"): Find stops at the last known one.
				return usageError{fmt.Errorf("unknown command %q for %q", rest[0], found.CommandPath())}
			}
			show(c, args)
			return nil
		}
	}
}

// needArgs is cobra.ExactArgs(n) that, given fewer, says what the
// command needs (as run does: "run needs a STUDY ...") instead of
// cobra's "accepts 1 arg(s), received 0".
func needArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return fmt.Errorf("%s needs %s", cmd.Name(), what)
		}
		return cobra.ExactArgs(n)(cmd, args)
	}
}

// usageArgs marks the argument errors of c and its subcommands as usage
// errors.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// catalog tells study validation what this binary can run.
func studyCatalog() study.Catalog {
	return study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools(), CheckDatapath: checkDatapath, CheckImpairment: checkImpairment,
		CollectorMetrics: collectorMetrics()}
}

// fitsDatapath refuses, as bad input before anything is built, CNI
// rules on a datapath whose nodes lack what they match
// (netfilter.Generator.Fits): the bridge the pods hang off, a tunnel,
// devices of the CNI's own (Cilium's, Calico's cali+). What a datapath's nodes have is
// fixed by its type and implementation, and the datapath says it
// (netfilter.DatapathNode); the knob checks the built nodes again. A
// datapath that cannot be built is catalog.Check's to report.
func fitsDatapath(g netfilter.Generator, d study.Datapath) error {
	dp, ok := entryDatapath(d)
	if !ok {
		return nil
	}
	n, err := netfilter.DatapathNode(dp)
	if err == nil {
		err = g.Fits(n)
	}
	if err != nil {
		return fmt.Errorf("datapath %s: %w", d.Type, err)
	}
	return nil
}

// entryDatapath is study entry d's datapath built as an object (nothing
// on the host), for what its type and implementation fix (its tunnel,
// its pods' bridge, its devices); ok is false when it does not build,
// which catalog.Check reports. The MTU is left out: its bound is
// Check's to report, not a reason to know nothing of the rest.
func entryDatapath(d study.Datapath) (datapath.Datapath, bool) {
	o := catalog.FromStudy(d)
	o.MTU = 0
	dp, err := catalog.Build(o)
	if err != nil {
		return nil, false
	}
	return dp, true
}

// entryTunnel is the tunnel device of study entry d's datapath ("" for
// none); ok is false when it does not build (entryDatapath).
func entryTunnel(d study.Datapath) (tunnel string, ok bool) {
	dp, ok := entryDatapath(d)
	if !ok {
		return "", false
	}
	return dp.Tunnel(), true
}

func collectorMetrics() []string {
	var out []string
	for _, e := range collect.List {
		out = append(out, e.Metrics...)
	}
	return out
}

// checkDatapath checks a study entry's knobs against its datapath.
func checkDatapath(d study.Datapath, underlayMTU int) map[string]string {
	problems := catalog.Check(catalog.FromStudy(d), underlayMTU)
	if nf := d.Netfilter; nf != nil && nf.CNI != "" {
		g, err := netfilter.Lookup(nf.CNI)
		if err == nil {
			err = fitsDatapath(g, d)
		}
		if err != nil {
			problems["netfilter.cni"] = err.Error()
		}
	}
	checkOffloadDevices(d, problems)
	return problems
}

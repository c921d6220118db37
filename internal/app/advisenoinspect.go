package app

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// advise --run DIR --no-inspect reads the run's record (its env.json,
// inspect.FromEnv) in place of a machine: a run copied from where it ran
// (a cluster's CI) is read on a laptop, without root.

// checkNoInspect: --no-inspect reads a run's record in place of a
// machine, so it needs --run; --prove, whose A/Bs are built from the
// inspection and run where it was made, makes no sense with it, nor do
// --engine and the cluster's flags, which say what to inspect and how.
// It runs before check's engine checks: their "--kubeconfig needs
// --engine kube" would ask for a flag refused here.
func (f *adviseFlags) checkNoInspect(cmd *cobra.Command) error {
	switch {
	case !f.noInspect:
		return nil
	case f.prove:
		return errors.New("--prove measures the candidates on this machine (or, with --engine kube, the cluster) from its inspection, and --no-inspect inspects nothing: give one of them")
	case f.fromRun == "":
		return errors.New("--no-inspect needs --run DIR: it advises from that run's env.json instead of this machine")
	}
	for _, name := range append([]string{"engine"}, f.kube.names...) {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s is for inspecting this machine or, with --engine kube, a cluster's node, and --no-inspect inspects nothing: "+
				"leave --%s out (--no-inspect reads a run of either engine without it)", name, name)
		}
	}
	return nil
}

// rootNote is what advise --run says on standard error where it inspects
// this machine without root (euid): what needs root is unknown, and the
// run may have been copied from the machine it measured, whose own
// record --no-inspect reads.
func rootNote(euid int, f *adviseFlags) string {
	if euid == 0 || f.fromRun == "" || f.noInspect || f.engine != "local" {
		return ""
	}
	return "note: advise is not root, so what this machine's inspection needs root for is unknown; to advise from the machine the run measured instead, as its env.json recorded it, give --no-inspect"
}

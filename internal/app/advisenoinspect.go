package app

import (
	"errors"

	"github.com/spf13/cobra"
)

// advise --run DIR --no-inspect reads the run's record (its env.json,
// inspect.FromEnv) in place of a machine: a run copied from where it ran
// (a cluster's CI) is read on a laptop, without root.

// checkNoInspect: --no-inspect reads a run's record in place of a
// machine, so it needs --run; --prove, whose A/Bs are built from the
// inspection and run where it was made, and --engine, which says what to
// inspect, make no sense with it.
func (f *adviseFlags) checkNoInspect(cmd *cobra.Command) error {
	switch {
	case !f.noInspect:
		return nil
	case f.prove:
		return errors.New("--prove measures the candidates on this machine (or, with --engine kube, the cluster) from its inspection, and --no-inspect inspects nothing: give one of them")
	case f.fromRun == "":
		return errors.New("--no-inspect needs --run DIR: it advises from that run's env.json instead of this machine")
	case cmd.Flags().Changed("engine"):
		return errors.New("--engine says what to inspect, and --no-inspect inspects nothing: leave --engine out (a run of either engine is read)")
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

package app

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/study"
)

// invocation is the command line as the user gave it, in words: the
// command path, its arguments and every flag set (repeated flags in their
// order), but not the flags named in skip (where the files go). env.json
// records it; a report offers reruns built from it.
func invocation(cmd *cobra.Command, args []string, skip ...string) []string {
	words := append(strings.Fields(cmd.CommandPath()), args...)
	return append(words, setFlags(cmd.Flags(), func(name string) bool { return !slices.Contains(skip, name) })...)
}

// studyArgs are run's arguments as a rerun from anywhere needs them: a
// study file by its absolute path (a built-in study by its name), so the
// rerun command a report prints does not depend on where it is read.
func studyArgs(args []string, s *study.Study) []string {
	if len(args) != 1 || s.Builtin() {
		return args
	}
	return []string{absPath(args[0])}
}

// absFile is a flag's value, by its absolute path if the flag names a
// file of this machine (cobra.MarkFlagFilename), so a recorded command
// works from any directory.
func absFile(f *pflag.Flag) string {
	if _, ok := f.Annotations[cobra.BashCompFilenameExt]; !ok {
		return f.Value.String()
	}
	return absPath(f.Value.String())
}

// absPath is path made absolute; empty, absolute and a built-in study's
// name (which a study flag may give instead of a file) as they are.
func absPath(path string) string {
	if _, builtin := study.BuiltinSource(path); builtin || path == "" || filepath.IsAbs(path) {
		return path
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// setFlags are the flags of fs set on the command line that keep
// accepts, in words: a switch as --name (--name=false), a valued flag as
// --name VALUE (a file by its absolute path), a repeatable one once per
// value.
func setFlags(fs *pflag.FlagSet, keep func(name string) bool) []string {
	var words []string
	fs.Visit(func(f *pflag.Flag) {
		if !keep(f.Name) {
			return
		}
		switch v := f.Value.(type) {
		case pflag.SliceValue:
			for _, x := range v.GetSlice() {
				words = append(words, "--"+f.Name, x)
			}
		default:
			if f.Value.Type() == "bool" {
				// A switch takes no separate word: --quick, --quick=false.
				w := "--" + f.Name
				if f.Value.String() != "true" {
					w += "=" + f.Value.String()
				}
				words = append(words, w)
				return
			}
			words = append(words, "--"+f.Name, absFile(f))
		}
	})
	return words
}

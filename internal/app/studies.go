package app

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/study"
)

func newStudiesCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "studies",
		Short:   "List the built-in studies",
		Example: "  cnibench studies\n  cnibench show rps-rfs --quick",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tPROFILES\tDESCRIPTION")
			for _, name := range study.Builtins() {
				s, err := study.Resolve(name, study.Options{}, studyCatalog())
				if err != nil {
					return fmt.Errorf("built-in study %s: %w", name, err)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", name, join(s.ProfileNames()), s.Metadata.Description)
			}
			return w.Flush()
		},
	}
}

func newShowCmd() *cobra.Command {
	var f studyFlags
	cmd := &cobra.Command{
		Use:     "show STUDY",
		Short:   "Print a study resolved: profile and --set overrides applied, defaults filled",
		Example: "  cnibench show rps-rfs\n  cnibench show rps-rfs --quick --set trials=3\n  cnibench show ./my-study.yaml",
		Args:    needArgs(1, "a STUDY (a built-in name, see 'cnibench studies', or a file)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.load(cmd.ErrOrStderr(), args[0])
			if err != nil {
				return err
			}
			b, err := s.Shown()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	f.register(cmd)
	return cmd
}

// studyFlags are the flags every command that loads a study shares.
type studyFlags struct {
	quick   bool
	profile string
	set     []string
}

func (f *studyFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.quick, "quick", false, "use the study's quick profile (same study, fewer points; minutes, not hours)")
	cmd.Flags().StringVar(&f.profile, "profile", "", "use a named profile of the study")
	cmd.Flags().StringArrayVar(&f.set, "set", nil, "override a field, e.g. --set trials=5 --set replicas=[1,4] (repeatable)")
}

// load resolves the study the command names, and says on stderr (w)
// what of it is likely a slip but cannot be refused: a reference's metric
// no tool or collector of it reports (study.ReferenceWarnings).
func (f *studyFlags) load(w io.Writer, nameOrPath string) (*study.Study, error) {
	opt := study.Options{Profile: f.profile, Set: f.set}
	if f.quick {
		if f.profile != "" && f.profile != "quick" {
			return nil, inputErr(fmt.Errorf("--quick and --profile %s both given; pick one", f.profile))
		}
		opt.Profile = "quick"
	}
	s, err := study.Resolve(nameOrPath, opt, studyCatalog())
	if err != nil {
		return nil, inputErr(err)
	}
	for _, l := range s.ReferenceWarnings(studyCatalog()) {
		fmt.Fprintln(w, "warning: "+l)
	}
	return s, nil
}

// loadFile resolves a recorded study file (a run's study.yaml) as it is:
// no profile, no --set, and read as stored (its references may name
// datapaths the run left out).
func (f *studyFlags) loadFile(path string) (*study.Study, error) {
	s, err := study.Resolve(path, study.Options{Stored: true}, studyCatalog())
	return s, inputErr(err)
}

func join(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := ss[0]
	for _, s := range ss[1:] {
		out += "," + s
	}
	return out
}

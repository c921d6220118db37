package study

import (
	"errors"
	"fmt"
	"strings"
)

// checkProfiles decodes the file with each of its profiles but the one
// opt applied, so that a slip in a profile (`quick: {trails: 2}`, a
// value of the wrong kind, a number in octal) is refused whichever
// profile a run uses, not only by the run that uses it, and checks the
// bounds of single values (profileBounds: `paper: {trials: 5000}`).
// Each is decoded over the file as written, without --set: a --set is
// this run's, the profiles are the file's. The rest of Validate, the
// rules that relate fields above all, is left to the run that uses the
// profile, with its --set: a profile may be meant to be completed by
// one (a UDP workload whose rate each run sets), and checked here it
// would stop every run of the file. A file that is not valid without the
// profile or --set this run gives is left to them (its errors are no
// profile's).
func checkProfiles(file string, data []byte, s *Study, opt Options, cat Catalog) error {
	names := s.ProfileNames()
	if len(names) == 0 || len(names) == 1 && names[0] == opt.Profile {
		return nil
	}
	if opt.Profile != "" || len(opt.Set) > 0 {
		if _, err := parse(file, data, Options{}, cat); err != nil {
			return nil
		}
	}
	for _, name := range names {
		if name == opt.Profile {
			continue
		}
		d, err := decode(file, data, Options{Profile: name}, cat)
		if err == nil {
			err = profileBounds(file, d)
		}
		var fe *FieldError
		switch {
		case err == nil:
		case errors.As(err, &fe):
			// An error at the file's own text, the profile being what
			// made it one (an only entry the profile's replicas lack),
			// names the profile too.
			if fe.Origin == "" && !strings.HasPrefix(fe.Field, "profiles.") {
				fe.Origin = fmt.Sprintf("with profile %q", name)
			}
			return fe
		default:
			return fmt.Errorf("profile %q: %w", name, err)
		}
	}
	return nil
}

// profileBounds is the first problem checkValueBounds and
// checkReferences find in d, the file decoded with one of its profiles,
// located in the file (the profile's line, or the file's where the
// profile changed none of it); nil when none. The file's own spec has
// none of them by now (checkProfiles), so each is the profile's doing.
func profileBounds(file string, d *decoded) error {
	var errs []*FieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	checkValueBounds(d.study, bad)
	checkReferences(&d.study.Spec, bad)
	if len(errs) == 0 {
		return nil
	}
	w := whose{file: file, root: d.root, prof: d.prof}
	w.locate(errs[0])
	errs[0].Msg += moreProblems(len(errs) - 1)
	return errs[0]
}

package study

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldProblem is an error about one field of a study found after it
// parsed: at preflight, against this machine or cluster (a datapath its
// kernel cannot build, CPUs it does not have). Study.Locate turns it
// into a FieldError at the field's file and line, as parse errors are.
type FieldProblem struct {
	Field string // dotted path as FieldError's: spec.datapaths[1]
	Err   error
}

func (e *FieldProblem) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldProblem) Unwrap() error { return e.Err }

// At marks err as a problem of field; nil stays nil.
func At(field string, err error) error {
	if err == nil {
		return nil
	}
	return &FieldProblem{Field: field, Err: err}
}

// locator finds a field's line in the study's text after profile and
// --set (0 for a --set value) and the profile it came from, if any.
type locator func(field string) (line int, origin string)

func newLocator(root *yaml.Node, prof origins) locator {
	return func(field string) (int, string) {
		line, n := locate(root, field)
		return line, prof.of(n)
	}
}

// joined are the problems of an errors.Join, nil for any other error. An
// error of fmt.Errorf with two %w also unwraps to several, but it is one
// problem with its cause ("cluster unreachable: load kubeconfig: ..."):
// only a join's text is its parts' texts, one per line.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	errs := j.Unwrap()
	texts := make([]string, len(errs))
	for i, e := range errs {
		texts[i] = e.Error()
	}
	if strings.Join(texts, "\n") != err.Error() {
		return nil
	}
	return errs
}

// Locate returns err with its FieldProblem located in the study's file:
// "my.yaml:5: spec.datapaths[1]: datapath calico-ipip: ...". An error of
// several problems (errors.Join) is reported by its first, with how many
// more there are, so that it stays one line. Other errors, and any error
// of a study that was not parsed from text, are returned as they are.
func (s *Study) Locate(err error) error {
	if err == nil || s.where == nil {
		return err
	}
	first, more := err, 0
	if errs := joined(err); len(errs) > 1 {
		first, more = errs[0], len(errs)-1
	}
	fe := &FieldError{File: s.Source, Msg: oneLine(first.Error()), Err: err}
	var p *FieldProblem
	if errors.As(first, &p) {
		fe.Field, fe.Msg = p.Field, oneLine(p.Err.Error())
		fe.Line, fe.Origin = s.where(p.Field)
	} else if more == 0 {
		return err
	}
	fe.Msg += moreProblems(more)
	return fe
}

// moreProblems tells, after the one problem an error reports, how many
// more were found: bad input gets one error, and the user learns there is
// more to fix before running again.
func moreProblems(more int) string {
	switch {
	case more <= 0:
		return ""
	case more == 1:
		return " (and 1 more problem: run again after fixing this one to see the next)"
	}
	return fmt.Sprintf(" (and %d more problems: run again after fixing this one to see the next)", more)
}

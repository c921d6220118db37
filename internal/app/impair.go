package app

import (
	"errors"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/study"
)

// checkImpairment resolves a study impairment (a preset or a netem
// definition) for validation; a bad field of a definition is named.
func checkImpairment(m study.Impairment) error {
	_, err := impair.Resolve(m.Name, m.Fields)
	var fe *impair.FieldError
	if errors.As(err, &fe) {
		return &study.ImpairmentError{Field: fe.Field, Err: err}
	}
	return err
}

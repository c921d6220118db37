package impair

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
)

// ErrUnknownPreset is wrapped when a name is no preset.
var ErrUnknownPreset = errors.New("unknown impairment preset")

// Resolve turns a study's impairment into its Spec: a preset by name
// when fields is empty, else the definition fields give (ParseField's
// keys and values), validated. A field's error is a *FieldError naming it.
func Resolve(name string, fields map[string]string) (Spec, error) {
	if len(fields) == 0 {
		p, err := LookupPreset(name)
		if err != nil {
			return Spec{}, fmt.Errorf("%w %q (%sbuilt-in: %s; or define one with name and netem fields)",
				ErrUnknownPreset, name, suggest.Hint(name, PresetNames()), strings.Join(PresetNames(), ", "))
		}
		return p.Spec, nil
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s Spec
	for _, k := range keys {
		if err := ParseField(&s, k, fields[k]); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return s, err
			}
			return s, &FieldError{Field: k, Msg: err.Error()}
		}
	}
	return s, s.Validate()
}

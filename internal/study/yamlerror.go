package study

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// yaml.v3's errors, turned into FieldErrors a study author can act on.

// yamlError turns a yaml.v3 error into a FieldError with file and line,
// and for a type error the field and what it wants where the document
// root is given.
func yamlError(file string, root *yaml.Node, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.File = file
		// A custom decoder's error names its node, not its field.
		if fe.Field == "" && root != nil {
			fe.Field, _ = nodePath(root, fe.node)
		}
		return fe
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		line := 0
		if strings.HasPrefix(msg, "line ") {
			rest := strings.TrimPrefix(msg, "line ")
			if i := strings.Index(rest, ":"); i > 0 {
				line, _ = strconv.Atoi(rest[:i])
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
		if root != nil {
			if field, why, ok := typeError(root, line, msg); ok {
				return &FieldError{File: file, Line: line, Field: field, Msg: why}
			}
			// An unknown field is named by its key's path, found as
			// --set's are (overrideError).
			if sub := unknownRE.FindStringSubmatch(msg); sub != nil {
				if parent, ok := lastNode(root, "", hasKeyAt(sub[1], line)); ok {
					return &FieldError{File: file, Line: line, Field: parent + "." + sub[1], Msg: oneLine(friendly(msg))}
				}
			}
		}
		return &FieldError{File: file, Line: line, Msg: oneLine(friendly(msg))}
	}
	msg := stripYAMLPrefix(err.Error())
	line := 0
	if strings.HasPrefix(msg, "line ") {
		rest := strings.TrimPrefix(msg, "line ")
		if i := strings.Index(rest, ":"); i > 0 {
			line, _ = strconv.Atoi(rest[:i])
			problem := strings.TrimSpace(rest[i+1:])
			msg = "malformed YAML: " + problem
			if in, ok := parserProblems[problem]; ok {
				line++
				if in != "" {
					msg += " (in the " + in + " that starts on this line)"
				}
			}
		}
	}
	return &FieldError{File: file, Line: line, Msg: oneLine(msg)}
}

// parserProblems are the problems yaml.v3's parser (parserc.go) reports,
// with what the line it gives starts. Their line is counted from 0 (its
// decode.go fail() adds 1 for scanner errors only: go-yaml/yaml#205) and
// is that of the construct the problem was found in, where it has one:
// an unclosed '[' two lines up is reported at the '['.
var parserProblems = map[string]string{
	"did not find expected key":              "mapping",
	"did not find expected '-' indicator":    "list",
	"did not find expected ',' or ']'":       "[...] list",
	"did not find expected ',' or '}'":       "{...} mapping",
	"did not find expected node content":     "",
	"did not find expected <document start>": "",
	"did not find expected <stream-start>":   "",
	"found undefined tag handle":             "",
	"found incompatible YAML document":       "",
	"found duplicate %YAML directive":        "",
	"found duplicate %TAG directive":         "",
}

// oneLine keeps an error on one line: yaml.v3 quotes offending values
// verbatim, newlines included.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

var (
	lineRE    = regexp.MustCompile(`^line [0-9]+: `)
	unknownRE = regexp.MustCompile(`field (\S+) not found in type study\.(\w+)`)
)

// friendly rewords yaml.v3's messages for study authors, with the field
// an unknown one was most likely meant to be: one of the same part of the
// study, else one of another part ("duration" is the spec's, not a
// workload's: a slip of place, not of spelling).
func friendly(msg string) string {
	return unknownRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unknownRE.FindStringSubmatch(m)
		name, in := sub[1], sub[2]
		if c := suggest.Closest(name, fieldNames()[in]); c != "" {
			return fmt.Sprintf("unknown field %q (did you mean %q?)", name, c)
		}
		// A short list of the part's fields is worth reading; a
		// workload's 30-odd are not.
		var list string
		if known := fieldNames()[in]; len(known) <= 10 {
			list = "known: " + strings.Join(known, ", ")
			if in == "Study" {
				list += ", and x-... keys of your own"
			}
		}
		if why := joinHint(placeHint(name, in), list); why != "" {
			return fmt.Sprintf("unknown field %q of %s (%s)", name, partName(in), why)
		}
		return fmt.Sprintf("unknown field %q (not part of the cnibench/v1alpha1 study format)", name)
	})
}

// joinHint joins a hint and a list of known names in one parenthesis: a
// question ends "?", a statement is followed by "; ".
func joinHint(hint, list string) string {
	switch {
	case hint == "" || list == "":
		return hint + list
	case strings.HasSuffix(hint, "?"):
		return hint + " " + list
	}
	return hint + "; " + list
}

// placeHint says where an unknown field of the part of Go type in
// belongs: `"duration" is a field of spec`, or `did you mean "duration",
// a field of spec?` for a slip of one; "" when no part has it.
func placeHint(name, in string) string {
	c, of := elsewhere(name, in)
	switch {
	case of == "":
		return ""
	case c == name:
		return fmt.Sprintf("%q is a field of %s", c, partName(of))
	}
	return fmt.Sprintf("did you mean %q, a field of %s?", c, partName(of))
}

// elsewhere is the field of another part of the study format that name
// is, or is most likely meant to be, and that part's type: in parts'
// order, the spec's first (the commonest slip of place is a spec field
// inside an entry); "" when none is near.
func elsewhere(name, in string) (field, of string) {
	// A field some part has as it is written beats a near one of a part
	// looked at earlier ("cpus" is a node's, not a slip of "cpu").
	for _, p := range parts {
		if p.goType != in && slices.Contains(fieldNames()[p.goType], name) {
			return name, p.goType
		}
	}
	for _, p := range parts {
		if c := suggest.Closest(name, fieldNames()[p.goType]); p.goType != in && c != "" {
			return c, p.goType
		}
	}
	return "", ""
}

// parts name the struct types of the study format as an author knows
// them, in the order elsewhere looks for a field misplaced. Every type
// of fieldNames is here (TestPartsNameEveryType) but Duration, a value.
var parts = []struct{ goType, name string }{
	{"Spec", "spec"}, {"Workload", "a workload"}, {"Tuning", "a tuning"}, {"Datapath", "a datapath entry"},
	{"Impairment", "an impairment"}, {"Trials", "spec.trials"}, {"Precision", "spec.precision"},
	{"Noise", "spec.noise"}, {"Nodes", "spec.nodes"}, {"NodeSpec", "a node of spec.nodes"},
	{"Pin", "a workload's pin"}, {"Background", "a workload's background"},
	{"CeilingSearch", "a workload's ceilingSearch"}, {"RPS", "a tuning's rps"}, {"RFS", "a tuning's rfs"},
	{"CPUIdle", "a tuning's cpuIdle"}, {"Netfilter", "a datapath's netfilter"}, {"Reference", "a reference"},
	{"Link", "spec.link"}, {"ImpairAt", "spec.impairAt"},
	{"Verdict", "spec.verdict"}, {"UDPVerdict", "spec.verdict.udp"}, {"TCPVerdict", "spec.verdict.tcp"},
	{"PublishedVerdict", "an entry of spec.verdict.published"}, {"CellSelector", "an entry of spec.only"},
	{"Metadata", "metadata"}, {"Study", "the study's top level"},
}

// partName is how an error names a part of the study by its Go type.
func partName(goType string) string {
	for _, p := range parts {
		if p.goType == goType {
			return p.name
		}
	}
	return strings.ToLower(goType)
}

func stripYAMLPrefix(s string) string {
	s = strings.TrimPrefix(s, "yaml: unmarshal errors:\n  ")
	return strings.TrimPrefix(s, "yaml: ")
}

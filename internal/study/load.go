package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// FieldError is a problem in a study file, located by file, line and field.
type FieldError struct {
	File  string
	Line  int    // 0 when the value came from --set
	Field string // dotted path, e.g. spec.replicas[2]
	// Origin names where a value came from when it is not the file's own
	// text: `profile "quick"`; empty otherwise.
	Origin string
	Msg    string
	// Err is the error Msg says, when it came from one (Study.Locate).
	Err error
}

func (e *FieldError) Unwrap() error { return e.Err }

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	} else if e.Field != "" && e.File != "" {
		b.WriteString(" (--set)")
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Origin != "" {
		b.WriteString(e.Origin)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Options change a study as it is loaded.
type Options struct {
	// Profile names an entry of the study's profiles to merge over spec.
	Profile string
	// Set holds key=value overrides; keys are dotted paths below spec
	// ("trials", "nodes.server.cpus") or full paths ("spec.trials",
	// "metadata.name"); values are YAML ("[1,2]", "5s").
	Set []string
}

// Parse decodes, overrides and validates a study. It touches nothing but
// memory; every error names file, line and field.
func Parse(file string, data []byte, opt Options, cat Catalog) (*Study, error) {
	root, err := decodeStrict(file, data)
	if err != nil {
		return nil, err
	}
	var prof origins
	if opt.Profile != "" {
		if prof, err = applyProfile(file, root, opt.Profile); err != nil {
			return nil, err
		}
	}
	touched := map[*yaml.Node]string{}
	for _, kv := range opt.Set {
		if err := applySetIn(root, kv, touched); err != nil {
			return nil, &FieldError{File: file, Field: oneLine(kv), Msg: oneLine(err.Error())}
		}
	}
	// yaml.v3 drops a null decoded into a list of values: `only: [~]`
	// would run every cell, `replicas: [1, ~]` one count.
	if field, n := nullEntry(root, ""); n != nil {
		return nil, &FieldError{File: file, Line: n.Line, Field: field, Origin: prof.of(n),
			Msg: "a list entry is empty (null): give a value or remove the entry"}
	}
	// Decode the overridden tree strictly again, so that a --set with an
	// unknown key is reported too.
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("%s: re-encode study: %w", file, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	var s Study
	if err := dec.Decode(&s); err != nil {
		return nil, overrideError(file, root, out, prof, err)
	}
	s.Source, s.Profile = file, opt.Profile
	s.where = newLocator(root, prof)
	s.Defaults()
	s.toolDefaults(cat)
	if errs := s.Validate(cat); len(errs) > 0 {
		for _, fe := range errs {
			fe.File = file
			if fe.Line == 0 {
				var n *yaml.Node
				fe.Line, n = locate(root, fe.Field)
				fe.Origin = prof.of(n)
				if k, ok := touched[n]; ok && fe.Line > 0 {
					// A mapping or list --set changed an entry of:
					// the file's line alone would blame the file.
					fe.Origin = strings.TrimPrefix(fe.Origin+", with --set "+k, ", ")
				}
			}
		}
		return nil, errs[0]
	}
	return &s, nil
}

// decodeStrict decodes the text as written, strictly (unknown fields and
// type errors with the file's own line numbers), and returns the root
// mapping of its one document.
func decodeStrict(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var strict Study
	var doc yaml.Node
	if err := dec.Decode(&strict); err != nil {
		if errors.Is(err, io.EOF) {
			// yaml.v3 says only "EOF" of a file with no document.
			return nil, &FieldError{File: file, Line: 1, Msg: "the file holds no study (it is empty or only comments): a study file is a YAML mapping (`cnibench show rps-rfs` prints one)"}
		}
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			return nil, yamlError(file, nil, err)
		}
		return nil, yamlError(file, doc.Content[0], err)
	}
	// A second document would be ignored silently: the user meant it to
	// count (two studies pasted into one file, or a stray "---").
	var extra yaml.Node
	if err := dec.Decode(&extra); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(file, nil, err)
	} else if err == nil && !emptyDoc(&extra) {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, &FieldError{File: file, Line: line, Msg: "a second YAML document begins here: a study file holds one study (put another study in a file of its own)"}
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, nil, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FieldError{File: file, Line: 1, Msg: "a study file must be a YAML mapping"}
	}
	return doc.Content[0], nil
}

// emptyDoc is a document with nothing in it, as a trailing "---" gives.
func emptyDoc(n *yaml.Node) bool {
	return n.Kind == 0 || len(n.Content) == 0 ||
		len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode && n.Content[0].ShortTag() == "!!null"
}

// nullEntry is the path and node of the first list entry under n, in
// document order, that is null (`~`, `null` or a blank `- ` item); the
// study's profiles are left out (the one applied is in spec by now).
func nullEntry(n *yaml.Node, path string) (string, *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if path == "" && n.Content[i].Value == "profiles" {
				continue
			}
			if f, c := nullEntry(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, ".")); c != nil {
				return f, c
			}
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if it.Kind == yaml.ScalarNode && it.ShortTag() == "!!null" {
				return p, it
			}
			if f, c := nullEntry(it, p); c != nil {
				return f, c
			}
		}
	}
	return "", nil
}

// yamlError turns a yaml.v3 error into a FieldError with file and line,
// and for a type error the field and what it wants where the document
// root is given.
func yamlError(file string, root *yaml.Node, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.File = file
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

func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setChild(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// locate finds the line of a dotted field path such as spec.replicas[2]
// in the (possibly overridden) tree, 0 if unknown or set from the CLI,
// and the node at the path (nil when the path is not in the tree).
func locate(root *yaml.Node, field string) (int, *yaml.Node) {
	// A key missing from the top (kind:) is the document's to have: its
	// first line, not "(--set)".
	cur, line := root, root.Line
	segs := strings.Split(field, ".")
	for si, seg := range segs {
		name, idx := seg, -1
		if i := strings.Index(seg, "["); i >= 0 && strings.HasSuffix(seg, "]") {
			name = seg[:i]
			idx, _ = strconv.Atoi(seg[i+1 : len(seg)-1])
		}
		// A path that ends below a value from --set (its nodes have
		// line 0) is the --set value's, not the line of the file's key
		// it replaced: `--set 'trials={min: 3}'` lacks max.
		if cur.Kind != yaml.MappingNode {
			return setLine(line, cur), cur
		}
		found := false
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == name {
				line = cur.Content[i].Line
				cur = cur.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			// A key with dots in it (a sysctl's name) is the rest of
			// the path.
			rest := strings.Join(segs[si:], ".")
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == rest {
					return setLine(cur.Content[i].Line, cur.Content[i+1]), cur.Content[i+1]
				}
			}
			return setLine(line, cur), cur
		}
		if idx >= 0 {
			if cur.Kind != yaml.SequenceNode || idx >= len(cur.Content) {
				return setLine(line, cur), cur
			}
			cur = cur.Content[idx]
			line = cur.Line
		}
	}
	return cur.Line, cur // 0 when the value came from --set
}

// setLine is line, or 0 when n, the value under it, came from --set.
func setLine(line int, n *yaml.Node) int {
	if n.Line == 0 {
		return 0
	}
	return line
}

// Marshal returns the resolved study as YAML (profiles dropped: they have
// been applied).
func (s *Study) Marshal() ([]byte, error) {
	c := *s
	c.Profiles = nil
	return yaml.Marshal(&c)
}

func sortStrings(s []string) { sort.Strings(s) }

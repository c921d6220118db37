package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
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
	// node is the YAML node a custom decoder found the problem at, until
	// its path is known (atNode).
	node *yaml.Node
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
	// Stored says the file is a run's study.yaml (a resume, advise --run,
	// compare, report): a record of what ran, not a user's input. Its
	// references' datapath and workload names are not checked against
	// it (refnames.go): it lists only the datapaths and workloads that
	// ran, and keeps every reference.
	Stored bool
}

// Parse decodes, overrides and validates a study, and checks each of
// its other profiles too (checkProfiles). It touches nothing but
// memory; every error names file, line and field.
func Parse(file string, data []byte, opt Options, cat Catalog) (*Study, error) {
	s, err := parse(file, data, opt, cat)
	if err != nil {
		return nil, err
	}
	if err := checkProfiles(file, data, s, opt, cat); err != nil {
		return nil, err
	}
	return s, nil
}

// parse is Parse for the profile opt names alone: the study decoded,
// then validated.
func parse(file string, data []byte, opt Options, cat Catalog) (*Study, error) {
	d, err := decode(file, data, opt, cat)
	if err != nil {
		return nil, err
	}
	if errs := problems(d.root, d.study, cat); len(errs) > 0 {
		w := whose{file: file, root: d.root, prof: d.prof, touched: d.touched}
		if len(opt.Set) > 0 {
			w.own = sync.OnceValue(func() map[string]bool { return ownProblems(file, data, opt.Profile, cat) })
		}
		if opt.Profile != "" {
			w.byProfile = sync.OnceValue(func() profileBlame { return blameProfile(file, data, opt, cat) })
		}
		for _, fe := range errs {
			w.locate(fe)
		}
		errs[0].Msg += moreProblems(len(errs) - 1)
		return nil, errs[0]
	}
	return d.study, nil
}

// decoded is a study decoded with its profile and --set, before the rules
// that relate fields are checked, with the tree it was decoded from.
type decoded struct {
	study   *Study
	root    *yaml.Node
	prof    origins
	touched map[*yaml.Node]string // the mappings and lists --set changed, by key
}

// decode reads the file, applies opt's profile and --set and decodes the
// result strictly: keys, types and values are checked, the rules that
// relate fields (Validate, zeroProblems) are not.
func decode(file string, data []byte, opt Options, cat Catalog) (*decoded, error) {
	root, err := decodeStrict(file, data)
	if err != nil {
		return nil, err
	}
	return decodeTree(file, root, opt, cat)
}

// decodeTree is decode of the file's tree, root, as decodeStrict gives
// it; it changes root.
func decodeTree(file string, root *yaml.Node, opt Options, cat Catalog) (*decoded, error) {
	var (
		prof origins
		err  error
	)
	written := writtenNames(root)
	if opt.Profile != "" {
		if prof, err = applyProfile(file, root, opt.Profile); err != nil {
			return nil, err
		}
	}
	touched := map[*yaml.Node]string{}
	for _, kv := range opt.Set {
		err := profileSet(kv)
		if err == nil {
			err = applySetIn(root, kv, touched)
		}
		if err != nil {
			return nil, &FieldError{File: file, Field: oneLine(kv), Msg: oneLine(err.Error())}
		}
	}
	// yaml.v3 drops a null decoded into a list of values: `only: [~]`
	// would run every cell, `replicas: [1, ~]` one count.
	if field, n := nullEntry(root, ""); n != nil {
		return nil, &FieldError{File: file, Line: n.Line, Field: field, Origin: prof.of(n),
			Msg: "a list entry is empty (null): give a value or remove the entry"}
	}
	if field, n, msg := misreadNumber(root); n != nil {
		return nil, &FieldError{File: file, Line: n.Line, Field: field, Origin: prof.of(n), Msg: msg}
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
	s.written = written
	s.stored = opt.Stored
	s.Defaults()
	s.toolDefaults(cat)
	return &decoded{study: &s, root: root, prof: prof, touched: touched}, nil
}

// problems are Validate's and the explicit 0s the decoded study took for
// fields left out (zeroProblems), of the study decoded from root.
func problems(root *yaml.Node, s *Study, cat Catalog) []*FieldError {
	return append(s.Validate(cat), zeroProblems(root, &s.Spec, cat)...)
}

// decodeStrict decodes the text as written, strictly (unknown fields and
// type errors with the file's own line numbers), and returns the root
// mapping of its one document, its aliases and merge keys expanded
// (merge.go).
func decodeStrict(file string, data []byte) (*yaml.Node, error) {
	if err := checkText(file, data); err != nil {
		return nil, err
	}
	if root, ok, err := decodeAliased(file, data); ok {
		return root, err
	}
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
	if err := secondDocument(file, dec); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, nil, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FieldError{File: file, Line: 1, Msg: "a study file must be a YAML mapping"}
	}
	return doc.Content[0], nil
}

// secondDocument refuses a document after the one dec has read: it
// would be ignored silently, and the user meant it to count (two studies
// pasted into one file, or a stray "---").
func secondDocument(file string, dec *yaml.Decoder) error {
	var extra yaml.Node
	if err := dec.Decode(&extra); err != nil && !errors.Is(err, io.EOF) {
		return yamlError(file, nil, err)
	} else if err == nil && !emptyDoc(&extra) {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return &FieldError{File: file, Line: line, Msg: "a second YAML document begins here: a study file holds one study (put another study in a file of its own)"}
	}
	return nil
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
// been applied; published verdicts and spec.only's selectors kept of the
// cells it measures; every reference kept, read again with
// Options.Stored). A spec.only none of whose selectors is left is an
// error (onlyLeft): written empty, it would select every cell.
func (s *Study) Marshal() ([]byte, error) {
	c := *s
	c.Profiles = nil
	only, err := s.onlyLeft()
	if err != nil {
		return nil, err
	}
	c.Spec.Only = only
	if v := s.Spec.Verdict; v != nil {
		// Only the published verdicts of cells the study measures: the
		// file's others name what its profile or --set left out, which
		// the stored study no longer knows (it is validated again on a
		// resume, a rerun and advise --run).
		pv := *v
		pv.Published = s.measurablePublished()
		c.Spec.Verdict = &pv
	}
	return yaml.Marshal(&c)
}

func sortStrings(s []string) { sort.Strings(s) }

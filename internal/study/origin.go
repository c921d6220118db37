package study

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// origins are the nodes a profile merged over spec. Profile nodes keep
// their lines in the file, so an error in one has a true line; naming
// the profile says why a value the spec does not show is there.
type origins struct {
	name  string
	nodes map[*yaml.Node]bool
	keys  []*yaml.Node // the profile's keys, in its order (profileblame.go)
}

func (o origins) add(n *yaml.Node) {
	o.nodes[n] = true
	for _, c := range n.Content {
		o.add(c)
	}
}

// of names the profile when n came from it, else "".
func (o origins) of(n *yaml.Node) string {
	if n != nil && o.nodes[n] {
		return fmt.Sprintf("profile %q", o.name)
	}
	return ""
}

// overrideError locates an error of the strict decode of the tree after
// profile and --set. yaml.v3 numbers lines of the re-encoded text (out),
// which are nobody's: the node at that line of out is found in the same
// place of root, which has the file's line for a file or profile value
// and line 0 for a --set value (FieldError then says "(--set)").
func overrideError(file string, root *yaml.Node, out []byte, prof origins, err error) error {
	line, msg, unknown := 0, "", ""
	var fe *FieldError
	var at *yaml.Node // the node a custom decoder's error names
	if errors.As(err, &fe) {
		line, msg, at = fe.Line, fe.Msg, fe.node
	} else {
		// yaml.v3 lists every error on its own line; the first is enough
		// and an error is one line.
		msg, _, _ = strings.Cut(stripYAMLPrefix(err.Error()), "\n  ")
		if m := lineRE.FindString(msg); m != "" {
			line, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m, "line "), ": "))
		}
		if sub := unknownRE.FindStringSubmatch(msg); sub != nil {
			unknown = sub[1]
		}
		msg = oneLine(friendly(lineRE.ReplaceAllString(msg, "")))
	}
	var enc yaml.Node
	if line > 0 && yaml.Unmarshal(out, &enc) == nil && len(enc.Content) > 0 {
		// The node is out's; its path is the same in root.
		if field, ok := nodePath(enc.Content[0], at); ok {
			line, n := locate(root, field)
			return &FieldError{File: file, Line: line, Field: field, Origin: prof.of(n), Msg: msg}
		}
		if field, why, ok := typeError(enc.Content[0], line, msg); ok {
			at, n := locate(root, field)
			return &FieldError{File: file, Line: at, Field: field, Origin: prof.of(n), Msg: why}
		}
		// An unknown field is named by its key, found as typeError finds
		// a value: in a flow entry of a profile that --set also changed,
		// every field shares the line.
		if parent, ok := lastNode(enc.Content[0], "", hasKeyAt(unknown, line)); ok {
			field := parent + "." + unknown
			at, n := locate(root, field)
			return &FieldError{File: file, Line: at, Field: field, Origin: prof.of(n), Msg: msg}
		}
		if field, n := atLine(enc.Content[0], root, line, ""); n != nil {
			return &FieldError{File: file, Line: n.Line, Field: field, Origin: prof.of(n), Msg: msg}
		}
	}
	return &FieldError{File: file, Msg: "in --set/profile values: " + msg}
}

// atLine walks enc (the re-encoded tree) and orig (the tree it was
// encoded from, the same shape) together and returns the path and orig's
// node of the first entry, in document order, whose key or item starts
// at line of enc. The first is the shallowest: a flow mapping from --set
// sits on one line, and its field is the one to name. But where a flow
// collection of the file or a profile holds, on that same line, a value
// --set put there (`--set workloads.udp.foo=1`, a plain name spelled out
// by `--set tunings.rps.pods=true`), that value is named: it is the one
// decoding newly met. (An unknown field is found by its key first:
// hasKeyAt.)
func atLine(enc, orig *yaml.Node, line int, path string) (string, *yaml.Node) {
	return walkLine(enc, orig, line, path, false)
}

// walkLine is atLine; fromSet looks only for values --set put there
// (line 0 in orig).
func walkLine(enc, orig *yaml.Node, line int, path string, fromSet bool) (string, *yaml.Node) {
	if enc.Kind != orig.Kind || len(enc.Content) != len(orig.Content) {
		return "", nil
	}
	at := func(encLine int, p string, e, o *yaml.Node) (string, *yaml.Node) {
		if encLine == line && (!fromSet || o.Line == 0) {
			if o.Line != 0 {
				if f, n := walkLine(e, o, line, p, true); n != nil {
					return f, n
				}
			}
			return p, o
		}
		return walkLine(e, o, line, p, fromSet)
	}
	switch enc.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(enc.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+enc.Content[i].Value, ".")
			if f, n := at(enc.Content[i].Line, p, enc.Content[i+1], orig.Content[i+1]); n != nil {
				return f, n
			}
		}
	case yaml.SequenceNode:
		for i, it := range enc.Content {
			if f, n := at(it.Line, fmt.Sprintf("%s[%d]", path, i), it, orig.Content[i]); n != nil {
				return f, n
			}
		}
	}
	return "", nil
}

// hasKeyAt matches a mapping with the key named key at line; nothing
// when key is "".
func hasKeyAt(key string, line int) func(*yaml.Node) bool {
	return func(n *yaml.Node) bool {
		for i := 0; key != "" && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value == key && k.Line == line {
				return true
			}
		}
		return false
	}
}

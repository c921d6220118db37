package study

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A custom UnmarshalYAML sees only its own node, not where in the study
// it sits: its error names the node (atNode), and the caller of the
// decode, which holds the whole tree, turns the node into the field's
// path (nodePath), so that `noise: {maxSteal: 1}` is refused at
// spec.noise.maxSteal as `--set noise.maxSteal=1` is.

// atNode is a FieldError about n (for a key, the key's node): its Field
// is filled in by yamlError or overrideError from n's place in the tree.
func atNode(n *yaml.Node, format string, a ...any) *FieldError {
	return &FieldError{Line: n.Line, node: n, Msg: fmt.Sprintf(format, a...)}
}

// nodePath is the dotted path under root (spec.tunings[2].pod) of the
// node target: a key's node names its key, a value's the key or list
// entry it is the value of. The node is looked for by identity first
// (a decode of the tree itself passes its own nodes), then by position
// and kind (a decode of the same text parses nodes of its own; a mapping
// and its first key start at one place, but differ in kind).
func nodePath(root, target *yaml.Node) (string, bool) {
	if target == nil {
		return "", false
	}
	if p, ok := findNode(root, "", func(n *yaml.Node) bool { return n == target }); ok {
		return p, true
	}
	return findNode(root, "", func(n *yaml.Node) bool {
		return target.Line > 0 && n.Line == target.Line && n.Column == target.Column && n.Kind == target.Kind
	})
}

// findNode is the path of the first node under n, in document order,
// that match accepts; path is n's.
func findNode(n *yaml.Node, path string, match func(*yaml.Node) bool) (string, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			if match(n.Content[i]) || match(n.Content[i+1]) {
				return p, true
			}
			if f, ok := findNode(n.Content[i+1], p, match); ok {
				return f, true
			}
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if match(it) {
				return p, true
			}
			if f, ok := findNode(it, p, match); ok {
				return f, true
			}
		}
	}
	return "", false
}

package study

// YAML aliases and merge keys (`<<: *base`, `<<: [*a, *b]`), expanded in
// the node tree before anything else reads it.
//
// yaml.v3 merges keys itself only where it decodes into a plain struct or
// map: the study's custom decoders (Tuning, Datapath, ...) walk the nodes
// by hand and would take "<<" for a field, and a profile and --set edit
// the nodes in place, where an alias shares its anchor's node: `--set
// nodes.server.cpus=0` changed nodes.client too when the client was
// `*server`, and replacing the anchored node left the alias pointing at
// nothing. So every alias becomes a copy of its anchor's node and every
// merge key the keys it brings; the copies keep the lines their text was
// written on, so an error inside a block written once and used twice is
// reported where it is written.
//
// Merge semantics are YAML 1.1's (and yaml.v3's decoder's): a key written
// in the mapping itself wins over a merged one, and of `<<: [*a, *b]` the
// earlier mapping wins.

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxAliasNodes bounds the nodes that expanding aliases may make: each
// level of aliases of aliases multiplies the copies ("billion laughs"),
// and yaml.v3's own bound on aliasing holds in its decoder only, not in
// a copy of the tree. A study file written by hand has a few thousand
// nodes.
const maxAliasNodes = 100_000

// expander copies a node tree with its aliases and merge keys expanded.
type expander struct {
	copied int                 // nodes made by expanding aliases
	alias  *yaml.Node          // the outermost alias being expanded, for the bound's error,
	at     string              // and its path
	open   map[*yaml.Node]bool // anchored nodes being expanded: an alias to one is a cycle
}

// hasAliases reports whether the tree holds an alias or a merge key,
// which expandAliases changes.
func hasAliases(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && isMergeKey(c) || hasAliases(c) {
			return true
		}
	}
	return false
}

// expandAliases returns a copy of the tree under n with no alias and no
// merge key, no node shared between two places and no anchor left; a
// merge value that is not a mapping (or list of them), an alias inside
// its own anchor and an expansion past maxAliasNodes are FieldErrors at
// their line, path names the place of n ("" at the top).
func expandAliases(n *yaml.Node, path string) (*yaml.Node, error) {
	x := &expander{open: map[*yaml.Node]bool{}}
	return x.expand(n, path)
}

func (x *expander) expand(n *yaml.Node, path string) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		return x.expandAlias(n, path)
	}
	if x.alias != nil {
		if x.copied++; x.copied > maxAliasNodes {
			return nil, &FieldError{Line: x.alias.Line, Field: x.at, Msg: fmt.Sprintf(
				"aliases expand the study past %d YAML nodes (each level of an alias of aliases multiplies them): write the blocks out, or alias fewer levels deep",
				maxAliasNodes)}
		}
	}
	if n.Anchor != "" {
		x.open[n] = true
		defer delete(x.open, n)
	}
	c := *n
	c.Anchor, c.Content = "", nil
	if n.Kind == yaml.MappingNode {
		content, err := x.mapping(n, path)
		if err != nil {
			return nil, err
		}
		c.Content = content
		return &c, nil
	}
	for i, item := range n.Content {
		p := path
		if n.Kind == yaml.SequenceNode {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		e, err := x.expand(item, p)
		if err != nil {
			return nil, err
		}
		c.Content = append(c.Content, e)
	}
	return &c, nil
}

// expandAlias is a copy of the alias's anchor node, with the anchor's
// lines.
func (x *expander) expandAlias(n *yaml.Node, path string) (*yaml.Node, error) {
	if n.Alias == nil {
		return nil, &FieldError{Line: n.Line, Field: path, Msg: fmt.Sprintf("alias *%s names no anchor", n.Value)}
	}
	if x.open[n.Alias] {
		return nil, &FieldError{Line: n.Line, Field: path, Msg: fmt.Sprintf(
			"alias *%s is inside the node it names (anchored &%s on line %d): it would repeat without end", n.Value, n.Value, n.Alias.Line)}
	}
	if x.alias == nil {
		x.alias, x.at = n, path
		defer func() { x.alias = nil }()
	}
	return x.expand(n.Alias, path)
}

// mapping is the expanded content of mapping n: its own keys where they
// are written, and in the place of its merge key the keys the merged
// mappings bring that n does not have, of each the first one.
func (x *expander) mapping(n *yaml.Node, path string) ([]*yaml.Node, error) {
	var own, merged []*yaml.Node
	at := -1 // index in own of the merge key's place
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			if at >= 0 {
				return nil, &FieldError{Line: k.Line, Field: joinPath(path, "<<"), Msg: "a second merge key (<<) in one mapping: merge several mappings with one, <<: [*a, *b]"}
			}
			at = len(own)
			var err error
			if merged, err = x.mergeSources(v, joinPath(path, "<<")); err != nil {
				return nil, err
			}
			continue
		}
		ek, err := x.expand(k, path)
		if err != nil {
			return nil, err
		}
		ev, err := x.expand(v, joinPath(path, k.Value))
		if err != nil {
			return nil, err
		}
		own = append(own, ek, ev)
	}
	if at < 0 {
		return own, nil
	}
	have := keySet(own)
	// yaml.v3 counts the merge key among the mapping's own keys: a
	// quoted "<<" key that a merge brings is dropped, so that a study
	// reads as yaml.v3 decodes it.
	have["<<"] = true
	var add []*yaml.Node
	for _, m := range merged {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if id, ok := keyID(m.Content[i]); !ok || !have[id] {
				add = append(add, m.Content[i], m.Content[i+1])
				if ok {
					have[id] = true
				}
			}
		}
	}
	return append(own[:at:at], append(add, own[at:]...)...), nil
}

// mergeSources are the expanded mappings a merge key's value v brings,
// in order: a mapping, an alias of one, or a list of those.
func (x *expander) mergeSources(v *yaml.Node, path string) ([]*yaml.Node, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []*yaml.Node
	for _, it := range items {
		target := it
		if it.Kind == yaml.AliasNode && it.Alias != nil {
			target = it.Alias
		}
		if target.Kind != yaml.MappingNode {
			return nil, &FieldError{Line: it.Line, Field: path, Msg: fmt.Sprintf(
				"a merge key's value is a mapping, an alias of one (<<: *base) or a list of those (<<: [*a, *b]), not %s", nodeKind(it))}
		}
		m, err := x.expand(it, path)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// isMergeKey is yaml.v3's test for the merge key: a plain "<<" (a quoted
// one is a key named "<<").
func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.ShortTag() == "!!merge")
}

// keyID is the identity of a mapping key for merging: its decoded value,
// as yaml.v3 compares keys (1 and 0x1 are one key, 1 and "1" two); ok
// is false for a key that is no scalar, which nothing is the same as.
func keyID(k *yaml.Node) (any, bool) {
	if k.Kind != yaml.ScalarNode {
		return nil, false
	}
	var v any
	if k.Decode(&v) != nil {
		return "\x00" + k.ShortTag() + k.Value, true
	}
	switch v.(type) {
	case string, int, int64, uint64, float64, bool, nil:
		return v, true
	}
	return fmt.Sprint(k.ShortTag(), "\x00", v), true
}

// keySet is the identities of a mapping content's keys.
func keySet(content []*yaml.Node) map[any]bool {
	have := map[any]bool{}
	for i := 0; i+1 < len(content); i += 2 {
		if id, ok := keyID(content[i]); ok {
			have[id] = true
		}
	}
	return have
}

// nodeKind names a node's kind for an error.
func nodeKind(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case n == nil:
		return "an alias of nothing"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return "null"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "a document"
}

func joinPath(path, key string) string { return strings.TrimPrefix(path+"."+key, ".") }

// decodeAliased is decodeStrict for a study that has aliases, merge keys
// or extension keys (ok): aliases are expanded first, then extension keys
// dropped; ok is false for one without,
// which decodeStrict decodes as it is written (and for text yaml.v3
// cannot read or that is no mapping, whose errors it gives).
func decodeAliased(file string, data []byte) (root *yaml.Node, ok bool, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if dec.Decode(&doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode ||
		!hasAliases(doc.Content[0]) && !hasExtensions(doc.Content[0]) {
		return nil, false, nil
	}
	if err := secondDocument(file, dec); err != nil {
		return nil, true, err
	}
	if root, err = expandAliases(doc.Content[0], ""); err != nil {
		return nil, true, yamlError(file, nil, err)
	}
	dropExtensions(root) // extension.go: after expanding, their anchors used

	// Decoded from the tree, an error has the line its text is written
	// on (a copy's is its anchor's); the decoded text of the tree would
	// number lines of its own.
	var s Study
	if err := root.Decode(&s); err != nil {
		return nil, true, yamlError(file, root, err)
	}
	// Node.Decode has no KnownFields: unknown fields are found in the
	// tree re-encoded, and their lines in the tree as --set's are.
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil, true, fmt.Errorf("%s: re-encode study: %w", file, err)
	}
	strict := yaml.NewDecoder(bytes.NewReader(out))
	strict.KnownFields(true)
	if err := strict.Decode(&s); err != nil {
		return nil, true, overrideError(file, root, out, origins{}, err)
	}
	return root, true, nil
}

package study

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// typeErrRE is yaml.v3's type error after its "line N: ": the value's
// tag, the value (cut to 7 characters and "..." beyond 10) for a scalar,
// and the Go type it did not fit.
var typeErrRE = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")

// typeError rewords a yaml.v3 type error found at line of the document
// under root for a study author: the field (spec.workloads[0].concurrency)
// and what it wants ("want a list of whole numbers, e.g. [1, 8], not
// "abc""). yaml.v3 gives neither, only the line, and a flow mapping puts
// a whole workload on one line; the field is the first node in document
// order at that line with the error's tag and value whose field has the
// error's Go type (typedNode: `{parallel: x, length: x}` is parallel's,
// length being a string), else the last such node of any type: the
// innermost, as the sequence of spec.workloads starts on the line of its
// first flow mapping, whose list in turn holds the value. ok is false
// when msg is not a type error or no node matches.
func typeError(root *yaml.Node, line int, msg string) (field, friendly string, ok bool) {
	m := typeErrRE.FindStringSubmatch(msg)
	if m == nil {
		return "", "", false
	}
	tag, value, goType := m[1], m[2], m[3]
	prefix, cut := strings.CutSuffix(value, "...")
	match := func(n *yaml.Node) bool {
		if n.Line != line || n.ShortTag() != tag {
			return false
		}
		if n.Kind != yaml.ScalarNode {
			return true
		}
		return n.Value == value || cut && strings.HasPrefix(n.Value, prefix)
	}
	if goType == "study.Study" && match(root) {
		// The document itself: a list, a number.
		return "", "a study file is a YAML mapping (apiVersion, kind, metadata, spec), not " + article(tag), true
	}
	// Of the nodes that match, the one whose field has the error's Go
	// type: `{parallel: x, length: x}` is parallel's error (an int), not
	// length's (a string, which "x" fits).
	field, found := typedNode(root, reflect.TypeFor[Study](), "", goType, match)
	if !found {
		field, found = lastNode(root, "", match)
	}
	if !found {
		return "", "", false
	}
	got := value
	switch tag {
	case "!!map":
		got = "a mapping"
	case "!!seq":
		got = "a list"
	case "!!str":
		got = fmt.Sprintf("%q", value)
	}
	return field, fmt.Sprintf("want %s, not %s", wantOf(goType), got), true
}

// typedNode is the path of the first node under n, in document order,
// that match accepts and whose place in the study format (t, the Go type
// n decodes into; nil where unknown) has the Go type goType, as yaml.v3
// names it in a type error (a pointer's element: it decodes into that).
// The first, as yaml.v3 lists its errors in document order and the
// first is reported: of `{parallel: x, mss: x}`, parallel.
func typedNode(n *yaml.Node, t reflect.Type, path, goType string, match func(*yaml.Node) bool) (string, bool) {
	visit := func(c *yaml.Node, ct reflect.Type, p string) (string, bool) {
		ct = deref(ct)
		if ct != nil && ct.String() == strings.TrimPrefix(goType, "*") && match(c) {
			return p, true
		}
		return typedNode(c, ct, p, goType, match)
	}
	t = deref(t)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if f, ok := visit(n.Content[i+1], fieldType(t, key), strings.TrimPrefix(path+"."+key, ".")); ok {
				return f, true
			}
		}
	case yaml.SequenceNode:
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i, it := range n.Content {
			if f, ok := visit(it, et, fmt.Sprintf("%s[%d]", path, i)); ok {
				return f, true
			}
		}
	}
	return "", false
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldType is the Go type of the mapping key key of a value of type t:
// a struct's field by its yaml name (inline structs' too), a map's
// element; nil where unknown.
func fieldType(t reflect.Type, key string) reflect.Type {
	switch {
	case t == nil:
		return nil
	case t.Kind() == reflect.Map:
		return t.Elem()
	case t.Kind() != reflect.Struct:
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			if ft := fieldType(deref(f.Type), key); ft != nil {
				return ft
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f.Type
		}
	}
	return nil
}

// lastNode is the path of the last node under n, in document order,
// that match accepts.
func lastNode(n *yaml.Node, path string, match func(*yaml.Node) bool) (string, bool) {
	field, found := "", false
	visit := func(c *yaml.Node, p string) {
		if match(c) {
			field, found = p, true
		}
		if f, ok := lastNode(c, p, match); ok {
			field, found = f, true
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			visit(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			visit(it, fmt.Sprintf("%s[%d]", path, i))
		}
	}
	return field, found
}

// wantOf says what a Go type of the study format takes, in the words of
// the format's documentation.
// article names a YAML tag's kind of value for a message: "a list".
func article(tag string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	}
	return "a single value"
}

func wantOf(goType string) string {
	switch goType {
	case "int", "int64", "uint64":
		return "a whole number"
	case "float64":
		return "a number"
	case "string":
		return "one value (a name, a size such as 5M, a duration such as 30s)"
	case "bool":
		return "true or false"
	case "[]int":
		return "a list of whole numbers, e.g. [1, 8]"
	case "[]string":
		return "a list of names"
	case "map[string]string":
		return "a mapping of names to values"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list (docs/study-format.md)"
	}
	if strings.HasPrefix(goType, "*study.") || strings.HasPrefix(goType, "study.") || strings.HasPrefix(goType, "map[") {
		return "a mapping (docs/study-format.md)"
	}
	return goType
}

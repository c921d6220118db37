package study

import (
	"reflect"
	"strings"
	"sync"
)

// fieldNames are the YAML keys of each struct type of the study format,
// by Go type name (as yaml.v3 names the type in "field x not found in
// type study.Spec"), read from the types' tags so that they cannot drift
// from the format.
var fieldNames = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Study]().PkgPath() {
			return
		}
		if _, seen := out[t.Name()]; seen {
			return
		}
		out[t.Name()] = yamlKeys(t)
		for i := range t.NumField() {
			// An unexported field (Study.written) is no part of the format.
			if t.Field(i).IsExported() {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeFor[Study]())
	return out
})

// yamlKeys are a struct's YAML keys, inlined structs' keys included.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		key, inline, ok := yamlKey(f)
		switch {
		case !ok:
		case inline && f.Type.Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(f.Type)...)
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

// yamlKey is f's key as yaml.v3 reads it (its tag's name, else the
// field's name in lower case), and whether f is inlined (its struct's
// keys are its parent's); not ok for a field that is no part of the
// format (unexported, or tagged "-"). fieldNames and zeroTagged both
// read the types through it, so they name the fields alike.
func yamlKey(f reflect.StructField) (key string, inline, ok bool) {
	name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return "", false, false
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, strings.Contains(opts, "inline"), true
}

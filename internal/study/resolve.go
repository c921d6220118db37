package study

// Built-in studies, and resolving a study's name or path.

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtins lists the names of the studies embedded in the binary.
func Builtins() []string {
	ents, _ := builtinFS.ReadDir("builtin")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// BuiltinSource returns the YAML text of a built-in study. Only a bare
// name can be one: anything path-like ("./rps-rfs", "sub/../rps-rfs",
// "rps-rfs.yaml") names a file, even where its cleaned form would be a
// built-in's name.
func BuiltinSource(name string) ([]byte, bool) {
	if !bareName(name) {
		return nil, false
	}
	b, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	return b, err == nil
}

// bareName says whether name could be a built-in study's name: not empty,
// no path separator, not "." or "..", and no .yaml/.yml suffix (a name
// with one is a file).
func bareName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) &&
		!strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml")
}

// Resolve loads a built-in study by a bare name, or else a study file by
// path: "./rps-rfs" is the file rps-rfs, never the built-in study.
func Resolve(nameOrPath string, opt Options, cat Catalog) (*Study, error) {
	if b, ok := BuiltinSource(nameOrPath); ok {
		return Parse(builtinPrefix+nameOrPath, b, opt, cat)
	}
	b, err := os.ReadFile(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !bareName(nameOrPath) {
			return nil, fmt.Errorf("study %q: no such file (a path names a file; built-in studies are named bare: %s)",
				nameOrPath, strings.Join(Builtins(), ", "))
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("study %q: no built-in study of that name (%shave: %s) and no such file",
				nameOrPath, suggest.Hint(nameOrPath, Builtins()), strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("read study: %w", err)
	}
	return Parse(nameOrPath, b, opt, cat)
}

// builtinPrefix marks a built-in study's Source.
const builtinPrefix = "builtin:"

// Builtin says whether the study is a built-in one (named, not a file).
func (s *Study) Builtin() bool { return strings.HasPrefix(s.Source, builtinPrefix) }

package study

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Extension keys: a top-level key that begins with "x-" is the user's
// own, as in Docker Compose files, and the study ignores it. It is where
// a block that anchors reuse can be written without being a study field
// itself (an anchor must otherwise sit on its first real use), or notes
// for the reader:
//
//	x-fast-node: &fast {cpus: "2-3"}
//	spec:
//	  nodes: {server: *fast, client: *fast}
//
// They are dropped after aliases are expanded, before anything decodes
// the tree, so a typo elsewhere ("spec.trails") is still refused.

// extensionPrefix begins a key the study ignores.
const extensionPrefix = "x-"

// hasExtensions reports whether the root mapping has an extension key.
func hasExtensions(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strings.HasPrefix(root.Content[i].Value, extensionPrefix) {
			return true
		}
	}
	return false
}

// dropExtensions removes the root mapping's extension keys.
func dropExtensions(root *yaml.Node) {
	kept := root.Content[:0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if !strings.HasPrefix(root.Content[i].Value, extensionPrefix) {
			kept = append(kept, root.Content[i], root.Content[i+1])
		}
	}
	root.Content = kept
}

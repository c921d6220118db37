package advise

import (
	"os"
	"strings"
	"testing"
)

// The rule template in docs/advise.md's "Adding a rule", with its name
// filled in, is a rule ParseRule takes: it once lacked prove and
// noProof, which every rule must give one of.
func TestDocsRuleTemplateParses(t *testing.T) {
	b, err := os.ReadFile("../../docs/advise.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Adding a rule\n")
	if !ok {
		t.Fatal(`docs/advise.md has no "## Adding a rule"`)
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal(`docs/advise.md's "Adding a rule" has no yaml block`)
	}
	// The block is indented under its list item.
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "   "))
	}
	text := strings.Replace(strings.Join(lines, "\n"), "name: NAME ", "name: my-rule ", 1)
	if _, err := ParseRule([]byte(text)); err != nil {
		t.Errorf("the template in docs/advise.md: %v\n%s", err, text)
	}
}

package cli

import "strings"

// ManSections makes the help's headings (a line in capitals) the man page's subsections and keeps its indented
// lines (commands, lists) as written.
func ManSections(long string) string {
	var b strings.Builder
	for _, l := range strings.Split(long, "\n") {
		switch {
		case Heading.MatchString(l):
			b.WriteString("\n## " + l + "\n\n")
		case strings.HasPrefix(l, " "):
			b.WriteString("\n    " + strings.TrimSpace(l) + "\n\n")
		default:
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

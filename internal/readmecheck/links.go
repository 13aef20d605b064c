package readmecheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// The relative links of a Markdown file: each must name a file or directory
// of the repository, and an anchor must name a heading of the Markdown file
// it points into.

var (
	inlineLinkRE = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLinkRE    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	schemeRE     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// Links returns the link targets of md, outside code blocks and code spans,
// with the line of each, counting from 1.
func Links(md string) []Link {
	var links []Link
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := refLinkRE.FindStringSubmatch(line); m != nil {
			links = append(links, Link{Line: i + 1, Target: m[1]})
			continue
		}
		for _, m := range inlineLinkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			links = append(links, Link{Line: i + 1, Target: m[1]})
		}
	}
	return links
}

// Link is one link target of a Markdown file.
type Link struct {
	Line   int
	Target string
}

// Anchors returns the anchors GitHub gives the headings of md: lower case,
// punctuation dropped, spaces turned into dashes, and "-1", "-2" after a
// repeated one.
func Anchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// BrokenLinks returns a problem for every relative link of the Markdown
// file at file (a path from the repository's root, whose text is md) that
// names no file or directory of the repository, or an anchor that no
// heading of its Markdown file has. Links with a scheme (https:, mailto:)
// are not followed.
func (c Checker) BrokenLinks(file, md string) []string {
	var problems []string
	for _, l := range Links(md) {
		if schemeRE.MatchString(l.Target) {
			continue
		}
		target, anchor, _ := strings.Cut(l.Target, "#")
		where := fmt.Sprintf("%s:%d: link %q", file, l.Line, l.Target)
		resolved := file
		if target != "" {
			resolved = path.Join(path.Dir(file), target)
			if strings.HasPrefix(resolved, "../") || resolved == ".." || path.IsAbs(target) {
				problems = append(problems, where+": outside the repository")
				continue
			}
			if _, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(resolved))); err != nil {
				problems = append(problems, where+": no such file or directory")
				continue
			}
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(resolved, ".md") {
			problems = append(problems, where+": an anchor into a file that is not Markdown")
			continue
		}
		text := md
		if resolved != file {
			b, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(resolved)))
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			text = string(b)
		}
		if !Anchors(text)[anchor] {
			problems = append(problems, fmt.Sprintf("%s: %s has no heading with the anchor #%s", where, resolved, anchor))
		}
	}
	return problems
}

package payments_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	payments "github.com/paymentsapi/payments-go"
)

// changelogRelease is one "## [x.y.z] - YYYY-MM-DD" heading of CHANGELOG.md.
type changelogRelease struct {
	Version string
	Line    int
}

var (
	changelogHeadingRE = regexp.MustCompile(`^## \[([^\]]+)\](.*)$`)
	changelogReleaseRE = regexp.MustCompile(`^ - \d{4}-\d{2}-\d{2}$`)
	semverRE           = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`)
)

// parseChangelog returns the released versions of a changelog in the order
// they appear, after checking that the first section is [Unreleased] and
// that every other heading is a semantic version with a date, with a link
// reference at the bottom.
func parseChangelog(md string) ([]changelogRelease, error) {
	var releases []changelogRelease
	sawUnreleased := false
	for i, line := range strings.Split(md, "\n") {
		m := changelogHeadingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, rest := m[1], m[2]
		if !strings.Contains(md, "\n["+name+"]: ") {
			return nil, lineErr(i, "no link reference [%s]: at the bottom", name)
		}
		if name == "Unreleased" {
			if sawUnreleased || len(releases) > 0 {
				return nil, lineErr(i, "[Unreleased] must be the first section, and only once")
			}
			sawUnreleased = true
			continue
		}
		if !sawUnreleased {
			return nil, lineErr(i, "the first section must be [Unreleased], found [%s]", name)
		}
		if !semverRE.MatchString(name) || !changelogReleaseRE.MatchString(rest) {
			return nil, lineErr(i, "want \"## [MAJOR.MINOR.PATCH] - YYYY-MM-DD\", got %q", line)
		}
		releases = append(releases, changelogRelease{Version: name, Line: i + 1})
	}
	if !sawUnreleased {
		return nil, lineErr(-1, "no [Unreleased] section")
	}
	return releases, nil
}

type changelogError struct {
	line int
	msg  string
}

func (e changelogError) Error() string {
	if e.line < 0 {
		return "CHANGELOG.md: " + e.msg
	}
	return "CHANGELOG.md:" + strconv.Itoa(e.line+1) + ": " + e.msg
}

func lineErr(i int, format string, args ...any) error {
	return changelogError{i, fmt.Sprintf(format, args...)}
}

// semverLess compares two versions that match semverRE.
func semverLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 3 {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// TestVersionIsLatestChangelogRelease keeps the one definition of Version,
// which every request's User-Agent carries, equal to the newest release that
// CHANGELOG.md records: releasing means moving the [Unreleased] entries under
// a new version heading and setting Version to it, in the same commit.
func TestVersionIsLatestChangelogRelease(t *testing.T) {
	md, err := os.ReadFile("CHANGELOG.md")
	require.NoError(t, err)
	releases, err := parseChangelog(string(md))
	require.NoError(t, err)
	require.NotEmpty(t, releases, "CHANGELOG.md records no release")

	assert.Equal(t, releases[0].Version, payments.Version,
		"Version in client.go must be the newest release of CHANGELOG.md (line %d)", releases[0].Line)
	for i := 1; i < len(releases); i++ {
		assert.True(t, semverLess(releases[i].Version, releases[i-1].Version),
			"CHANGELOG.md:%d: [%s] must be older than [%s] above it",
			releases[i].Line, releases[i].Version, releases[i-1].Version)
	}
}

// TestParseChangelogRefusesMalformedReleases shows that the version check
// above cannot pass on a changelog it misreads.
func TestParseChangelogRefusesMalformedReleases(t *testing.T) {
	const links = "\n[Unreleased]: u\n[1.2.0]: a\n[1.1.0]: b\n[v1.0.0]: c\n"
	good := "# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-01\n\n## [1.1.0] - 2026-11-01\n" + links
	releases, err := parseChangelog(good)
	require.NoError(t, err)
	assert.Equal(t, []changelogRelease{{"1.2.0", 5}, {"1.1.0", 7}}, releases)

	for name, md := range map[string]string{
		"no Unreleased":       "## [1.2.0] - 2026-12-01\n" + links,
		"Unreleased second":   "## [1.2.0] - 2026-12-01\n## [Unreleased]\n" + links,
		"no date":             "## [Unreleased]\n## [1.2.0]\n" + links,
		"v prefix":            "## [Unreleased]\n## [v1.0.0] - 2026-12-01\n" + links,
		"no link reference":   "## [Unreleased]\n## [1.3.0] - 2026-12-01\n" + links,
		"two Unreleased":      "## [Unreleased]\n## [Unreleased]\n" + links,
		"not a semantic one":  "## [Unreleased]\n## [1.2] - 2026-12-01\n\n[1.2]: x\n" + links,
		"a prerelease suffix": "## [Unreleased]\n## [1.2.0-rc.1] - 2026-12-01\n\n[1.2.0-rc.1]: x\n" + links,
	} {
		_, err := parseChangelog(md)
		assert.Error(t, err, name)
	}
	assert.True(t, semverLess("1.9.0", "1.10.0"))
	assert.False(t, semverLess("0.2.0", "0.1.9"))
}

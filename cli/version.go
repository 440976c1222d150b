package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release version, the one generated files' headers name.
// It is a fixed string in the source (release builds may set it with
// -ldflags "-X github.com/slatec/slatec/cli.Version=v1.2.3"), never derived
// from build-time information: `go build`, `go install` and a VCS-stamped
// build of one commit write the same header, so goldens do not drift with
// the build method. `slatec version` also shows the module version and the
// VCS revision the binary was built from.
var Version = "v0.1.0-dev"

// BuildInfo returns the version that goes into generated headers (always
// Version) and the VCS commit the binary was built from ("unknown" when the
// build was not stamped).
func BuildInfo() (version, commit string) {
	_, commit = buildDetails()
	return Version, commit
}

// stampedCommit is the commit make gpu-build stamps in with -ldflags -X
// (builds there carry no VCS information: GOFLAGS=-buildvcs=false), so that
// results measured with the binary name their commit. The VCS revision wins
// where there is one.
var stampedCommit string

// buildDetails reads the main module's version and the VCS revision from the
// build information, for display only.
func buildDetails() (module, commit string) {
	commit = "unknown"
	if stampedCommit != "" {
		commit = stampedCommit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", commit
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		module = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
			if len(commit) > 12 {
				commit = commit[:12]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "unknown" {
		commit += "-dirty"
	}
	return module, commit
}

// versionLine is what `slatec version` and `slatec --version` print.
func versionLine() string {
	module, commit := buildDetails()
	s := fmt.Sprintf("slatec %s (commit %s", Version, commit)
	if module != "" && module != Version {
		s += ", module " + module
	}
	return s + ")\n"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the slatec version and the commit it was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

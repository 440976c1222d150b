package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release version; release builds set it with
// -ldflags "-X github.com/slatec/slatec/cli.Version=v1.2.3".
var Version = "v0.1.0-dev"

// BuildInfo returns the version and the VCS commit the binary was built from.
func BuildInfo() (version, commit string) {
	version, commit = Version, "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		version = v
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
	return
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the slatec version and commit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c := BuildInfo()
			fmt.Fprintf(cmd.OutOrStdout(), "slatec %s (commit %s)\n", v, c)
			return nil
		},
	}
}

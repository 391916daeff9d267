package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newRootCmd builds the bus command tree. Output goes to stdout (version,
// help) and stderr (logs); nothing is printed for errors, which run does.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "bus",
		Short:         "bus is a NATS-protocol message server with persistent streams",
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newServeCmd(stderr), newVersionCmd(), newPasswdCmd(), newDLQCmd(), newLDMCmd(), newBackupCmd(), newRestoreCmd(), newStoreCmd())
	return root
}

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// newLDMCmd is `bus ldm`: put a running `bus serve` into lame-duck mode,
// as `nats-server --signal ldm=<pid>` does, by sending it the lame-duck
// signal (SIGUSR2; `kill -USR2 <pid>` does the same).
func newLDMCmd() *cobra.Command {
	var pid int
	var pidFile string
	cmd := &cobra.Command{
		Use:   "ldm",
		Short: "Put a running server into lame-duck mode",
		Long: `Put a running 'bus serve' into lame-duck mode: it stops accepting clients,
tells the connected ones to reconnect elsewhere, closes them over
lame_duck_duration (after lame_duck_grace_period) and stops. The same as
sending it SIGUSR2 (kill -USR2 <pid>).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (pid == 0) == (pidFile == "") {
				return &exitError{exitUsage, fmt.Errorf("ldm: give the server's --pid or --pid-file")}
			}
			if pidFile != "" {
				data, err := os.ReadFile(pidFile)
				if err != nil {
					return &exitError{exitUsage, fmt.Errorf("ldm: %w", err)}
				}
				if pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
					return &exitError{exitUsage, fmt.Errorf("ldm: %s holds no pid: %w", pidFile, err)}
				}
			}
			if pid <= 0 {
				return &exitError{exitUsage, fmt.Errorf("ldm: pid %d is not a process", pid)}
			}
			if err := signalLameDuck(pid); err != nil {
				return &exitError{exitFailure, fmt.Errorf("ldm: signal process %d: %w", pid, err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "lame-duck mode requested for process %d\n", pid)
			return nil
		},
	}
	cmd.Flags().IntVar(&pid, "pid", 0, "process id of the server")
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "`file` holding the server's process id")
	return cmd
}

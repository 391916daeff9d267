package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code.
// Errors go to stderr, one problem per line.
func run(args []string, stdout, stderr io.Writer) int {
	args, err := natsArgs(args) // nats-server's command line (natsargs.go)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, err)
	var ee *exitError
	if !errors.As(err, &ee) {
		// cobra's own errors: unknown command or flag, wrong arguments.
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitCode(err)
}

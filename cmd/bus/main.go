// Command bus runs the bus message server.
//
//	bus serve [--config bus.yaml] [flags]   run until SIGINT or SIGTERM
//	bus version                              print the version
//
// Exit codes: 0 after a clean shutdown, 1 when the server fails to start or
// to stop (or a second signal cuts shutdown short), 2 for bad flags,
// arguments or configuration.
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

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"
)

// defaultBcryptCost is what `nats server passwd` uses.
const defaultBcryptCost = 11

func newPasswdCmd() *cobra.Command {
	var cost int
	cmd := &cobra.Command{
		Use:   "passwd",
		Short: "Print a bcrypt hash of a password, for the authorization block",
		Long: `Print a bcrypt hash of a password or token, to put in the authorization
block instead of the plain text (password: "$2a$11$..."), as
'nats server passwd' does.

The password is read from standard input: on a terminal it is asked for
twice without echo; otherwise the first line is taken (so it can come from
a pipe or a secrets manager, never from the command line).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
				return &exitError{exitUsage, fmt.Errorf("--cost %d is out of range %d..%d", cost, bcrypt.MinCost, bcrypt.MaxCost)}
			}
			pass, err := readPassword(cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return &exitError{exitUsage, err}
			}
			hash, err := bcrypt.GenerateFromPassword([]byte(pass), cost)
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("hash password: %w", err)}
			}
			if _, err := fmt.Fprintln(cmd.OutOrStdout(), string(hash)); err != nil {
				return &exitError{exitFailure, fmt.Errorf("print hash: %w", err)}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&cost, "cost", defaultBcryptCost, "bcrypt cost (work factor)")
	return cmd
}

// readPassword takes the password from in: prompted for twice on a
// terminal, else the first line.
func readPassword(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		first, err := readHidden(f, prompt, "Enter password: ")
		if err != nil {
			return "", err
		}
		again, err := readHidden(f, prompt, "Reenter password: ")
		if err != nil {
			return "", err
		}
		if first != again {
			return "", errors.New("passwords do not match")
		}
		return checkPassword(first)
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	return checkPassword(strings.TrimRight(line, "\r\n"))
}

// checkPassword refuses what cannot be a password: bcrypt hashes only
// the first 72 bytes, and an empty one would match an empty CONNECT.
func checkPassword(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty password")
	case len(p) > 72:
		return "", errors.New("password longer than 72 bytes, which bcrypt cannot hash")
	}
	return p, nil
}

// readHidden prompts and reads one line from a terminal with echo off.
func readHidden(f *os.File, prompt io.Writer, text string) (string, error) {
	fmt.Fprint(prompt, text)
	restore, err := noEcho(f)
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	restore()
	fmt.Fprintln(prompt)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

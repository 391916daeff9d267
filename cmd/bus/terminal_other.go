//go:build !linux

package main

import "os"

// isTerminal is false where bus cannot turn echo off: the password is
// then read as a line from standard input.
func isTerminal(*os.File) bool { return false }

func noEcho(*os.File) (func(), error) { return func() {}, nil }

package main

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// runInProcess runs the command tree with stdin, returning stdout,
// stderr and the exit code.
func runInProcess(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	_, err := root.ExecuteC()
	if err != nil {
		stderr.WriteString(err.Error())
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

func TestPasswdPrintsBcryptHash(t *testing.T) {
	t.Parallel()
	out, errOut, code := runInProcess(t, "s3cr3t\n", "passwd", "--cost", "4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	hash := strings.TrimSpace(out)
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cr3t")); err != nil {
		t.Errorf("hash %q does not match the password: %v", hash, err)
	}
	if c, err := bcrypt.Cost([]byte(hash)); err != nil || c != 4 {
		t.Errorf("cost %d, %v; want 4", c, err)
	}
	if strings.Contains(out+errOut, "s3cr3t") {
		t.Error("the password was printed")
	}
}

func TestPasswdDefaultCostIsNatsCLIs(t *testing.T) {
	t.Parallel()
	out, errOut, code := runInProcess(t, "x", "passwd")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if c, _ := bcrypt.Cost([]byte(strings.TrimSpace(out))); c != defaultBcryptCost {
		t.Errorf("cost %d, want %d", c, defaultBcryptCost)
	}
}

func TestPasswdRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"empty", "\n", nil, "empty password"},
		{"no input", "", nil, "empty password"},
		{"too long", strings.Repeat("x", 73) + "\n", nil, "72 bytes"},
		{"cost too low", "x\n", []string{"--cost", "1"}, "--cost 1"},
		{"argument", "x\n", []string{"secret"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runInProcess(t, tc.stdin, append([]string{"passwd"}, tc.args...)...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

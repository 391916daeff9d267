package conf

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Encryption at rest, nats-server's jetstream { cipher, key,
// prev_encryption_key } (and their aliases ek, encryption_key, prev_key,
// prev_ek). A key of the form $NAME is read from the environment
// variable NAME, so the secret need not be in the file: a .conf file's
// parser resolves it already (from a variable of the file or the
// environment), a YAML file's here. The values are secrets: no error
// repeats them.

// cipherValue reads cipher: chachapoly (or chacha) or aes, any case.
func cipherValue(p *string, raw any) error {
	s, ok := raw.(string)
	if !ok {
		return fmt.Errorf("%s is not a cipher name (chachapoly or aes)", describe(raw))
	}
	switch c := strings.ToLower(strings.TrimSpace(s)); c {
	case "chachapoly", "chacha":
		*p = "chachapoly"
	case "aes":
		*p = c
	default:
		return fmt.Errorf("unknown cipher %q (want chachapoly or aes)", s)
	}
	return nil
}

// secretValue reads an encryption key: a non-empty string, or $NAME for
// the environment variable NAME, which must be set and not empty.
func secretValue(p *string, raw any) error {
	s, ok := raw.(string)
	if !ok {
		return errors.New("not a string")
	}
	if name, ok := strings.CutPrefix(s, "$"); ok && name != "" {
		v, set := os.LookupEnv(name)
		if !set || v == "" {
			return fmt.Errorf("environment variable %s is not set", name)
		}
		s = v
	}
	if s == "" {
		return errors.New("empty key")
	}
	*p = s
	return nil
}

// checkEncryption refuses settings that would not encrypt what they seem
// to, as the server does (nats-server ignores a cipher without a key).
func (j JetStream) checkEncryption() error {
	switch {
	case j.Cipher != "" && j.Key == "":
		return errors.New("cipher: set without key, nothing would be encrypted")
	case j.PrevKey != "" && j.Key == "":
		return errors.New("prev_encryption_key: set without key")
	case j.Key != "" && j.PrevKey == j.Key:
		return errors.New("prev_encryption_key: equals key")
	}
	return nil
}

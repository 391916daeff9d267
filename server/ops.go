package server

// maxArgs is one more than any op takes, so "too many" is detectable.
const maxArgs = 5

// splitArgs splits an argument line on runs of spaces and tabs into out
// and returns how many fields there were (at most len(out)).
func splitArgs(line []byte, out *[maxArgs][]byte) int {
	n, start := 0, -1
	for i, b := range line {
		if b == ' ' || b == '\t' {
			if start >= 0 {
				if n == len(out) {
					return n
				}
				out[n] = line[start:i]
				n++
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 && n < len(out) {
		out[n] = line[start:]
		n++
	}
	return n
}

// parseSize reads a non-negative decimal byte count; -1 if it is not one.
func parseSize(b []byte) int {
	if len(b) == 0 || len(b) > 9 { // 9 digits is far beyond any payload limit
		return -1
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// parsePub fills o from "subject [reply] size" (PUB) or
// "subject [reply] hdr total" (HPUB).
func (o *op) parsePub(line []byte, hasHeaders bool) error {
	var f [maxArgs][]byte
	n := splitArgs(line, &f)
	*o = op{kind: opPub, hdr: -1}
	sizes := 1
	if hasHeaders {
		sizes = 2
	}
	switch n - sizes {
	case 1:
		o.subject = f[0]
	case 2:
		o.subject, o.reply = f[0], f[1]
	default:
		return errMalformed
	}
	o.size = parseSize(f[n-1])
	if o.size < 0 {
		return errMalformed
	}
	if hasHeaders {
		o.hdr = parseSize(f[n-2])
		if o.hdr < 0 || o.hdr > o.size {
			return errMalformed
		}
	}
	return nil
}

// parseSub fills o from "subject [queue] sid".
func (o *op) parseSub(line []byte) error {
	var f [maxArgs][]byte
	*o = op{kind: opSub}
	switch splitArgs(line, &f) {
	case 2:
		o.subject, o.sid = f[0], f[1]
	case 3:
		o.subject, o.queue, o.sid = f[0], f[1], f[2]
	default:
		return errMalformed
	}
	return nil
}

// parseUnsub fills o from "sid [max]".
func (o *op) parseUnsub(line []byte) error {
	var f [maxArgs][]byte
	*o = op{kind: opUnsub, max: -1}
	switch splitArgs(line, &f) {
	case 1:
		o.sid = f[0]
	case 2:
		// A max that is not a number unsubscribes at once, as in the reference.
		o.sid, o.max = f[0], parseSize(f[1])
	default:
		return errMalformed
	}
	return nil
}

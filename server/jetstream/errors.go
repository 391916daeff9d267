package jetstream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/bus-dev/bus/jetlog"
)

// apiError is a JetStream API error as clients decode it: an HTTP-like
// code, the NATS err_code they switch on, and the reference's wording.
type apiError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s (%d)", e.Description, e.ErrCode)
}

func newAPIError(code, errCode int, format string, args ...any) *apiError {
	return &apiError{Code: code, ErrCode: errCode, Description: fmt.Sprintf(format, args...)}
}

// The reference's error codes (JETSTREAM.md §2).
func errStreamNotFound() *apiError   { return newAPIError(404, 10059, "stream not found") }
func errConsumerNotFound() *apiError { return newAPIError(404, 10014, "consumer not found") }
func errNoMessageFound() *apiError   { return newAPIError(404, 10037, "no message found") }

// errStreamOffline is the reference's error for a stream that exists but
// cannot serve; bus adds what was found wrong with it.
func errStreamOffline(reason string) *apiError {
	return newAPIError(500, 10118, "stream is offline: %s", reason)
}
func errStreamNameInUse() *apiError {
	return newAPIError(400, 10058, "stream name already in use with a different configuration")
}
func errSubjectsOverlap() *apiError {
	return newAPIError(400, 10065, "subjects overlap with an existing stream")
}
func errStreamNameMismatch() *apiError {
	return newAPIError(400, 10056, "stream name in subject does not match request")
}
func errInvalidJSON(err error) *apiError { return newAPIError(400, 10025, "invalid JSON: %v", err) }
func errStreamConfig(format string, args ...any) *apiError {
	return newAPIError(500, 10052, format, args...)
}
func errReplicas() *apiError {
	return newAPIError(500, 10074, "replicas > 1 not supported in non-clustered mode")
}

// errStreamGeneric reports a failed stream operation without the
// server's paths (the caller logs the whole error).
func errStreamGeneric(err error) *apiError {
	if isNoSpace(err) {
		return errInsufficientStorage()
	}
	return newAPIError(500, 10049, "%s", publicError(err))
}

func errInsufficientResources() *apiError {
	return newAPIError(503, 10023, "insufficient resources")
}

func errInsufficientStorage() *apiError {
	return newAPIError(500, 10047, "insufficient storage resources available")
}
func errConsumerCreate(format string, args ...any) *apiError {
	return newAPIError(500, 10012, format, args...)
}
func errConsumerExists() *apiError { return newAPIError(400, 10148, "consumer already exists") }
func errConsumerDoesNotExist() *apiError {
	return newAPIError(400, 10149, "consumer does not exist")
}
func errMaxConsumers() *apiError {
	return newAPIError(400, 10026, "maximum consumers limit reached")
}
func errFilterMismatch() *apiError {
	return newAPIError(400, 10131, "Consumer create request did not match filtered subject from create subject")
}
func errDurableMismatch() *apiError {
	return newAPIError(400, 10017, "consumer name in subject does not match durable name in request")
}
func errWorkQueueUnfiltered() *apiError {
	return newAPIError(400, 10099, "multiple non-filtered consumers not allowed on workqueue stream")
}
func errWorkQueueNotUnique() *apiError {
	return newAPIError(400, 10100, "filtered consumer not unique on workqueue stream")
}
func errWorkQueueAckExplicit() *apiError {
	return newAPIError(400, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream")
}
func errDeliverCycle() *apiError {
	return newAPIError(400, 10081, "consumer deliver subject forms a cycle")
}
func errLastPerSubjectNeedsFilter() *apiError {
	return newAPIError(400, 10094, "consumer delivery policy is deliver last per subject, but optional filter subject is not set")
}

// Publish errors, carried in the pub ack.
func errWrongLastSeq(last uint64) *apiError {
	return newAPIError(400, 10071, "wrong last sequence: %d", last)
}
func errWrongLastMsgID(id string) *apiError {
	return newAPIError(400, 10070, "wrong last msg ID: %s", id)
}
func errExpectedStream() *apiError { return newAPIError(400, 10060, "expected stream does not match") }
func errMsgTooLarge() *apiError {
	return newAPIError(400, 10054, "message size exceeds maximum allowed")
}
func errMaxMsgs() *apiError  { return newAPIError(503, 10077, "maximum messages exceeded") }
func errMaxBytes() *apiError { return newAPIError(503, 10077, "maximum bytes exceeded") }
func errMaxMsgsPerSubject() *apiError {
	return newAPIError(503, 10077, "maximum messages per subject exceeded")
}
func errStoreFailed(err error) *apiError { return newAPIError(503, 10077, "%s", publicError(err)) }

// publicError is what a client may see of an internal error: its text
// with every file path cut to the file's own name, so that no machine
// path reaches a client (the server's log has the whole error).
func publicError(err error) string {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		msg = strings.ReplaceAll(msg, pe.Path, filepath.Base(pe.Path))
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, le.Old, filepath.Base(le.Old)), le.New, filepath.Base(le.New))
	}
	return absPath.ReplaceAllStringFunc(msg, filepath.Base)
}

// absPath matches an absolute path in an error text.
var absPath = regexp.MustCompile(`/[^\s:"']*/[^\s:"']*`)

func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// isDiskError reports whether err is the file system failing (a full or
// read-only disk, an I/O error), not a refusal of the message.
func isDiskError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le) || errors.Is(err, jetlog.ErrWriteFenced)
}

package jetstream

import (
	"reflect"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// jsonNames lists a struct's JSON field names, embedded structs
// included.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n != "" && n != "-" {
			out = append(out, n)
		}
	}
	return out
}

// The lists of fields the reference knows are the reference's: when the
// reference dependency moves, this says what to add.
func TestReferenceFieldsAreTheReferences(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		typ   reflect.Type
		known map[string]bool
	}{
		{"stream", reflect.TypeOf(natsserver.StreamConfig{}), referenceStreamFields},
		{"consumer", reflect.TypeOf(natsserver.ConsumerConfig{}), referenceConsumerFields},
	} {
		ref := jsonNames(c.typ)
		for _, n := range ref {
			if !c.known[n] {
				t.Errorf("%s config: the reference knows %q, bus's list does not", c.name, n)
			}
		}
		if len(ref) != len(c.known) {
			t.Errorf("%s config: the reference has %d fields, bus's list %d", c.name, len(ref), len(c.known))
		}
	}
	// Every field bus models is one the reference knows, or bus's own.
	for _, c := range []struct {
		name   string
		fields map[string]bool
		known  map[string]bool
	}{
		{"stream", knownStreamFields, referenceStreamFields},
		{"consumer", knownConsumerFields, referenceConsumerFields},
	} {
		for f := range c.fields {
			if !c.known[f] && !strings.HasPrefix(f, "x_bus_") {
				t.Errorf("%s config: bus models %q, which the reference does not know", c.name, f)
			}
		}
	}
}

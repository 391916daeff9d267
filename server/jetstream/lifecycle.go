package jetstream

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nuid"
)

// The reference's lifecycle advisories, which monitoring tools and
// audit streams listen to: a stream created, updated or deleted, a
// consumer created or deleted.

type streamActionAdvisory struct {
	Type   string    `json:"type"`
	ID     string    `json:"id"`
	Time   time.Time `json:"timestamp"`
	Stream string    `json:"stream"`
	Action string    `json:"action"` // create, modify, delete
	Domain string    `json:"domain,omitempty"`
}

type consumerActionAdvisory struct {
	Type     string    `json:"type"`
	ID       string    `json:"id"`
	Time     time.Time `json:"timestamp"`
	Stream   string    `json:"stream"`
	Consumer string    `json:"consumer"`
	Action   string    `json:"action"` // create, delete
	Domain   string    `json:"domain,omitempty"`
}

// The actions and the subject token each is published under.
var (
	actionCreate = advisoryAction{"create", "CREATED"}
	actionModify = advisoryAction{"modify", "UPDATED"}
	actionDelete = advisoryAction{"delete", "DELETED"}
)

type advisoryAction struct{ name, event string }

// adviseStream publishes $JS.EVENT.ADVISORY.STREAM.<CREATED|UPDATED|
// DELETED>.<stream>.
func (sh *shared) adviseStream(stream string, a advisoryAction) {
	b, _ := json.Marshal(streamActionAdvisory{ // plain fields cannot fail
		Type: "io.nats.jetstream.advisory.v1.stream_action", ID: nuid.Next(), Time: sh.now().UTC(),
		Stream: stream, Action: a.name, Domain: sh.domain,
	})
	sh.core.Publish("$JS.EVENT.ADVISORY.STREAM."+a.event+"."+stream, "", nil, b)
}

// adviseConsumer publishes $JS.EVENT.ADVISORY.CONSUMER.<CREATED|DELETED>.
// <stream>.<consumer>.
func (sh *shared) adviseConsumer(stream, consumer string, a advisoryAction) {
	b, _ := json.Marshal(consumerActionAdvisory{ // plain fields cannot fail
		Type: "io.nats.jetstream.advisory.v1.consumer_action", ID: nuid.Next(), Time: sh.now().UTC(),
		Stream: stream, Consumer: consumer, Action: a.name, Domain: sh.domain,
	})
	sh.core.Publish("$JS.EVENT.ADVISORY.CONSUMER."+a.event+"."+stream+"."+consumer, "", nil, b)
}

package jetstream

import (
	"bytes"
	"encoding/json"
	"errors"
)

// $JS.API.CONSUMER.UNPIN.<stream>.<consumer> with {"group": ...} drops
// the pin of a pinned_client consumer's group, as the reference does:
// the next delivery pins the client it goes to, and an unpinned advisory
// (reason "admin") goes out, also for a consumer of another policy.

const typeConsumerUnpin = "io.nats.jetstream.api.v1.consumer_unpin_response"

func (svc *Service) consumerUnpin(r apiRequest, streamName, name string) (any, *apiError) {
	var req struct {
		Group string `json:"group"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(r.body), &req); err != nil {
		return nil, errInvalidJSON(err)
	}
	if req.Group == "" {
		return nil, errInvalidJSON(errors.New("consumer group not specified"))
	}
	if !validGroupName.MatchString(req.Group) {
		return nil, checkGroupName(req.Group)
	}
	_, c, e := svc.lookupConsumer(streamName, name)
	if e != nil {
		return nil, e
	}
	if !c.unpinGroup(req.Group) {
		return nil, newAPIError(400, 10160, "Provided priority group does not exist for this consumer")
	}
	return struct {
		Type string `json:"type"`
	}{typeConsumerUnpin}, nil
}

// unpinGroup hands an unpin to the consumer's goroutine and reports
// whether group is one of the consumer's priority groups.
func (c *consumer) unpinGroup(group string) bool {
	found := false
	for _, g := range c.cfg.PriorityGroups {
		found = found || g == group
	}
	if !found || c.unpin == nil {
		return false
	}
	select {
	case c.unpin <- group:
	case <-c.done: // closed meanwhile: there is no pin left to drop
	}
	return true
}

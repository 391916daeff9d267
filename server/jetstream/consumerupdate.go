package jetstream

import "slices"

// checkConsumerUpdate refuses, as the reference does, an update that
// changes what a consumer is rather than how it behaves: where it starts,
// how it acks and replays, pull or push, heartbeats and flow control.
func checkConsumerUpdate(old, cfg consumerConfig) *apiError {
	if sameJSON(old, cfg) {
		return nil
	}
	startTime := func(c consumerConfig) int64 {
		if c.OptStartTime == nil {
			return 0
		}
		return c.OptStartTime.UnixNano()
	}
	switch {
	case old.DeliverPolicy != cfg.DeliverPolicy:
		return errConsumerCreate("deliver policy can not be updated")
	case old.MemoryStorage != cfg.MemoryStorage:
		return errConsumerCreate("storage type can not be updated")
	case old.OptStartSeq != cfg.OptStartSeq:
		return errConsumerCreate("start sequence can not be updated")
	case (old.OptStartTime == nil) != (cfg.OptStartTime == nil) || startTime(old) != startTime(cfg):
		return errConsumerCreate("start time can not be updated")
	case old.AckPolicy != cfg.AckPolicy:
		return errConsumerCreate("ack policy can not be updated")
	case old.ReplayPolicy != cfg.ReplayPolicy:
		return errConsumerCreate("replay policy can not be updated")
	case old.Heartbeat != cfg.Heartbeat:
		return errConsumerCreate("heart beats can not be updated")
	case old.FlowControl != cfg.FlowControl:
		return errConsumerCreate("flow control can not be updated")
	case old.DeliverSubject == "" && cfg.DeliverSubject != "":
		return errConsumerCreate("can not update pull consumer to push based")
	case old.DeliverSubject != "" && cfg.DeliverSubject == "":
		return errConsumerCreate("can not update push consumer to pull based")
	case old.MaxWaiting != cfg.MaxWaiting:
		return errConsumerCreate("max waiting can not be updated")
	case !sameGroupBy(old.GroupBy, cfg.GroupBy):
		return errGroupBy("x_bus_group_by can not be updated")
	case !slices.Equal(old.BackOff, cfg.BackOff) && len(cfg.BackOff) > 0 && cfg.MaxDeliver != -1 && len(cfg.BackOff) > cfg.MaxDeliver:
		return newAPIError(400, 10116, "max deliver is required to be > length of backoff values")
	}
	return nil
}

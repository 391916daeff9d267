package jetlog

// Apply runs fn on the state and journals every change it made as one
// write, synced once in DurabilityAlways: a batch of deliveries or acks
// costs one fsync rather than one each. fn must not keep the state.
func (c *Consumer) Apply(fn func(s *ConsumerState) error) error {
	return c.update(fn)
}

// ForgetChanges drops the changes a state records for its journal. A
// state from NewConsumerState records none, so for it this does nothing;
// it is kept for callers written before that.
func (s *ConsumerState) ForgetChanges() { s.ops = s.ops[:0] }

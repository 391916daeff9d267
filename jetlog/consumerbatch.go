package jetlog

// Apply runs fn on the state and journals every change it made as one
// write, synced once in DurabilityAlways: a batch of deliveries or acks
// costs one fsync rather than one each. fn must not keep the state.
func (c *Consumer) Apply(fn func(s *ConsumerState) error) error {
	return c.update(fn)
}

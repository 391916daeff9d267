package jetlog

// Apply runs fn on the state and journals every change it made as one
// write, synced once in DurabilityAlways: a batch of deliveries or acks
// costs one fsync rather than one each. fn must not keep the state.
func (c *Consumer) Apply(fn func(s *ConsumerState) error) error {
	return c.update(fn)
}

// ApplyLazy is Apply without waiting for the fsync: the changes are
// written at once and become durable with the next synced change (or the
// sync interval). Use it for changes whose loss in a power cut only means
// a redelivery, such as deliveries and acks nobody asked to confirm.
func (c *Consumer) ApplyLazy(fn func(s *ConsumerState) error) error {
	return c.updateSync(fn, false)
}
